"""Today's identity and redaction rules applied to what an older fetchledger stored.

A ledger written before keyed identities (and before the broader secret-name
rule and the dot-segment fixes) keeps its ids: a store migration asks
:func:`plan_upgrade` what to change and applies it in one transaction. The
plan is pure (rows in, changes out), so every backend applies the same one:

- each source's locator and aliases are recomputed under today's rules, so a
  new retrieval of the same resource finds the old id. A value the old rules
  redacted stays ``REDACTED`` (it is gone; :func:`.secrets.keyed_mark` leaves
  marks alone), so such a source is never matched to a new value it may not
  have been. Where two old sources now share one identity, the lower id takes
  it and the other keeps its old locator: ids are never renumbered or merged.
- displays, attempt locators and the URLs, command lines and request and
  answer headers (what a WARC export writes) in version metadata are redacted
  under today's rules (``accesstoken=``, ``sh -c`` scripts, webhook URLs and
  token formats were stored in clear).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidURL
from .command_secrets import redact_argv, redact_command_text
from .secrets import Mark, keyed_mark, redact_header
from .urls import normalize_url, redact_url, url_identity

__all__ = ["SourceRow", "UpgradePlan", "changed_meta", "plan_upgrade", "upgraded_display",
           "upgraded_meta"]


@dataclass(frozen=True)
class SourceRow:
    """A stored source: id, kind, canonical locator, display, and its alias locators."""

    id: int
    kind: str
    locator: str
    display: str
    aliases: tuple[str, ...] = ()


@dataclass
class UpgradePlan:
    """What to change: ``locators`` (source id → new canonical locator), ``aliases``
    to drop and to add (locator, source id), ``displays`` (source id → display)."""

    locators: dict[int, str] = field(default_factory=dict)
    drop_aliases: list[str] = field(default_factory=list)
    add_aliases: list[tuple[str, int]] = field(default_factory=list)
    displays: dict[int, str] = field(default_factory=dict)


def plan_upgrade(sources: Sequence[SourceRow], key: bytes) -> UpgradePlan:
    """The changes that bring stored identities under today's rules (see the module)."""
    plan = UpgradePlan()
    owner = {name: row.id for row in sources for name in (row.locator, *row.aliases)}
    for row in sorted(sources, key=lambda r: r.id):
        new = _upgraded_locator(row.kind, row.locator, key)
        if new != row.locator and owner.get(new, row.id) == row.id:
            plan.locators[row.id] = new
            _move(plan, owner, row.locator, new, row.id)
        for alias in row.aliases:
            moved = _upgraded_locator(row.kind, alias, key)
            if moved != alias and owner.get(moved, row.id) == row.id and alias != row.locator:
                _move(plan, owner, alias, moved, row.id)
        display = upgraded_display(row.kind, row.display)
        if display != row.display:
            plan.displays[row.id] = display
    return plan


def _move(plan: UpgradePlan, owner: dict[str, int], old: str, new: str, source_id: int) -> None:
    plan.drop_aliases.append(old)
    owner.pop(old, None)
    if new not in owner:
        plan.add_aliases.append((new, source_id))
        owner[new] = source_id


def _upgraded_locator(kind: str, locator: str, key: bytes) -> str:
    return _rewritten(kind, locator, lambda url: url_identity(url, key), keyed_mark(key))


def upgraded_display(kind: str, display: str) -> str:
    """A display form (or an attempt's locator) redacted under today's rules."""
    return _rewritten(kind, display, normalize_url, None)


# Before issue 13's fourth pass a stray ``%`` stayed as it was while the escapes after it
# were decoded: ``%b%41`` was stored as ``%bA``. Every real escape was uppercased, so an
# escape of a stored URL with a lowercase hex digit began with a stray ``%``.
_OLD_STRAY = re.compile(r"%(?=[0-9a-f][a-f]|[a-f][0-9A-F])")


def _rewritten(kind: str, text: str, url_form: Any, mark: Mark | None) -> str:
    try:
        if kind == "web":
            return str(url_form(_OLD_STRAY.sub("%25", text)))
        if kind == "http":
            method, _, rest = text.partition(" ")
            url, body, digest = rest.partition(" body:")
            return f"{method} {url_form(_OLD_STRAY.sub('%25', url))}{body}{digest}"
    except InvalidURL:
        return text  # not a URL today (a malformed host): left as it was
    if kind == "command":
        return _command(text, mark)
    return text


def _command(text: str, mark: Mark | None) -> str:
    line, sep, folder = text.rpartition(" (in ")
    if not sep:
        return text
    if line.startswith("stdin: "):
        label = line.removeprefix("stdin: ")
        return f"stdin: {redact_command_text(label, mark=mark)}{sep}{folder}"
    try:
        argv = shlex.split(line)
    except ValueError:
        return text
    clean_argv = redact_argv(argv, mark=mark)
    if clean_argv == argv:
        return text  # keep the spelling it was stored with
    return f"{shlex.join(clean_argv)}{sep}{folder}"


def upgraded_meta(kind: str, meta: dict[str, Any]) -> dict[str, Any]:
    """A version's metadata with its URLs and command lines redacted under today's rules."""
    clean = dict(meta)
    for name in ("final_url", "canonical_url"):
        if isinstance(clean.get(name), str):
            clean[name] = _url(clean[name])
    if isinstance(clean.get("redirects"), list):
        clean["redirects"] = [_url(u) if isinstance(u, str) else u for u in clean["redirects"]]
    if isinstance(clean.get("exchanges"), list):  # what a WARC export writes
        clean["exchanges"] = [_exchange(e) if isinstance(e, dict) else e
                              for e in clean["exchanges"]]
    if kind == "command":
        if isinstance(clean.get("argv"), list) and all(isinstance(a, str)
                                                       for a in clean["argv"]):
            clean["argv"] = redact_argv(clean["argv"])
        for name in ("command_line", "label"):
            if isinstance(clean.get(name), str):
                clean[name] = redact_command_text(clean[name])
    return clean


def _exchange(exchange: dict[str, Any]) -> dict[str, Any]:
    """A stored request and answer: its URL and headers redacted under today's rules."""
    clean = dict(exchange)
    if isinstance(clean.get("url"), str):
        clean["url"] = _url(clean["url"])
    for name in ("request_headers", "headers"):
        if isinstance(clean.get(name), list):
            clean[name] = [[pair[0], redact_header(pair[0], pair[1])]
                           if isinstance(pair, list) and len(pair) == 2
                           and all(isinstance(part, str) for part in pair) else pair
                           for pair in clean[name]]
    return clean


def _url(url: str) -> str:
    try:
        return redact_url(url)
    except InvalidURL:
        return url


def changed_meta(rows: Iterable[tuple[int, str, dict[str, Any]]]
                 ) -> list[tuple[int, dict[str, Any]]]:
    """``(version id, new meta)`` for each ``(version id, kind, meta)`` that changes."""
    return [(version_id, new) for version_id, kind, meta in rows
            if (new := upgraded_meta(kind, meta)) != meta]
