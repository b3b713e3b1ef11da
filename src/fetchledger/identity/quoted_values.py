"""Quoted values under secret-like names (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: JSON (``{"api_key": "V"}``), Python and
YAML-ish (``TOKEN = 'V'``, ``os.environ['TOKEN']='V'``), SQL (``PASSWORD 'V'``), in a
word or in a script's raw text (a heredoc's JSON)."""

from __future__ import annotations

import re
from operator import add, itemgetter

from .absent import AbsentHint
from .secrets import Mark, is_secret_name

__all__ = ["SQL_PASSWORD", "quoted_values_found", "redact_quoted_values", "sql_password"]

# A secret-like name, then (optionally its closing quote and bracket) `:` or `=`,
# then an opening quote: `"api_key": "`, `TOKEN = '`, `environ['TOKEN']='`.
# (One look-behind for both; the name possessive: what follows a name is never one of
# its characters, so giving some back never matches. The same matches, in about half
# the time of a look-behind in each and a name given back character by character.)
# (Not a quoted string ending in a name and `:`, its closing quote taken for a value's
# opening one: `expect "password:"; send "V"` is no `"password": "V"`.)
_NOT_A_PROMPT = r"""(?!(?<=")[^\W\d][\w.-]*+\s*[:=]\s*")(?!(?<=')[^\W\d][\w.-]*+\s*[:=]\s*')"""
_KEYED_QUOTE = re.compile(r"(?<![\w.-])" + _NOT_A_PROMPT + r"(?:([^\W\d][\w.-]*+)"
                          r"""(["']?\]?\s*[:=]\s*)(["'])"""
                          # SQL: ALTER USER x WITH PASSWORD 'V', CREATE USER x IDENTIFIED BY 'V'
                          r"|((?i:password|passwd|identified\s+by))(\s+)([\"']))")
SQL_PASSWORD = re.compile(r"(?i:password|passwd|identified\s+by)\s+[\"']")
# What any match of SQL_PASSWORD holds, spelled with each character that its
# case-insensitive letters match (the long s, dotted and dotless i too): a pattern with
# no case folding, many times faster over a long text where the words are not
_SQL_HINT = AbsentHint(re.compile("[pP][aA][sSſ][sSſ][wW]|[iIİı][dD][eE][nN][tT]"), 0)
# What any keyed quote of _KEYED_QUOTE_VALUE but SQL's holds: `:` or `=`, then a quote
_QUOTE_AFTER = AbsentHint(re.compile(r"""[:=]\s*["']"""), 0)  # (.absent: a nested level)
HINTS = True  # (tests turn them off to compare)


def _may_open(text: str) -> bool:
    """False when no keyed quote (of :data:`_KEYED_QUOTE` or :data:`_KEYED_QUOTE_VALUE`)
    can open in ``text``: neither hint is in it (C-level scans much faster than theirs)."""
    return not HINTS or _QUOTE_AFTER(text) or _SQL_HINT(text)


def sql_password(text: str) -> bool:
    """Whether :data:`SQL_PASSWORD` is found in ``text`` (asked after its hint)."""
    return (not HINTS or _SQL_HINT(text)) and SQL_PASSWORD.search(text) is not None
# The same places, with the value after the opening quote when it is simple (closed by
# the same quote, no backslash, and its closing quote not one of a name inside it, as in
# `"k": "password"="V"`); else the lone opening quote.
_KEYED_QUOTE_VALUE = re.compile(r"(?<![\w.-])" + _NOT_A_PROMPT + r"(?:([^\W\d][\w.-]*+)"
                                r"""["']?\]?\s*[:=]\s*"""
                                r"|(?i:password|passwd|identified\s+by)\s+)"
                                r"""(?:"([^"\\]*+)"(?!\]?\s*[:=]\s*["'])"""
                                r"""|'([^'\\]*+)'(?!\]?\s*[:=]\s*["'])|(["']))""")


def redact_quoted_values(text: str, found: list[str], mark: Mark) -> str:
    """``text`` with each quoted value under a secret-like name replaced (JSON,
    Python, YAML): one pass; once a quote is found unclosed from some place it is
    not searched for again, so unclosed quotes cost nothing more."""
    pieces: list[str] = []
    last = 0
    unclosed: dict[str, int] = {}
    for match in _KEYED_QUOTE.finditer(text):
        if match.start() < last or (match.group(1) and not is_secret_name(match.group(1))):
            continue
        quote = match.group(3) or match.group(6)
        if match.end() >= unclosed.get(quote, len(text) + 1):
            continue
        close = _closing(text, match.end(), quote)
        if close < 0:
            unclosed[quote] = match.end()
            continue
        value = text[match.end():close]
        if value:
            found.append(value.replace("\\" + quote, quote))
            pieces.extend((text[last:match.end()], mark(value)))
            last = close
    pieces.append(text[last:])
    return "".join(pieces)


def quoted_values_found(text: str, found: list[str], mark: Mark) -> None:
    """The values :func:`redact_quoted_values` finds in ``text``, appended to ``found``
    (and given to ``mark``, as it gives them), without the text it makes: for a script's
    raw text, whose words are redacted one by one (thousands of ``TOKEN="V"``).

    One C-level scan finds every place a keyed quote opens (no place starts inside
    another's name and separator) with its value when that is simple; when every one
    is, and no place opens inside a value (a second scan over the values alone, each
    followed by both quotes), the values are those of the scan in order, whatever
    names are secret. Else they are found the general way."""
    if len(text) < _LONG:  # (a short text, a word's script: the general way costs less)
        redact_quoted_values(text, found, mark)
        return
    if not _may_open(text):
        return  # (no place a keyed quote opens: what the scans below would find)
    places = _KEYED_QUOTE_VALUE.findall(text)
    lone = sum(map(bool, map(_LONE, places)))  # (the last one never closed: it holds nothing)
    if lone > 1 or (lone and not (places[-1][3] and _UNCLOSED_AT_END[places[-1][3]](
            text, max(0, len(text) - 256)))):
        redact_quoted_values(text, found, mark)
        return
    if lone:
        del places[-1]
    inside = list(map(add, map(_DOUBLE, places), map(_SINGLE, places)))  # each value, or ""
    if not any(inside):
        return
    # (each value followed by both quotes: what opens in it and closes on its own quote)
    values_joined = "\"'\0".join(filter(None, inside)) + "\"'"
    if _may_open(values_joined) and _KEYED_QUOTE.search(values_joined):
        redact_quoted_values(text, found, mark)
        return
    secret = is_secret_name
    values = [value for value, name in zip(inside, map(_NAME, places), strict=True)
              if value and (not name or secret(name))]
    found.extend(values)
    for value in values:
        mark(value)


_NAME, _DOUBLE, _SINGLE, _LONE = (itemgetter(i) for i in range(4))
_LONG = 1024
# A place opening a quote that nothing after it closes (a quote is needed to close it)
_UNCLOSED_AT_END = {quote: re.compile(r"(?<![\w.-])" + _NOT_A_PROMPT + r"(?:[^\W\d][\w.-]*+"
                                      r"""["']?\]?\s*[:=]\s*"""
                                      f"{quote}|(?i:password|passwd|identified\\s+by)\\s+{quote})"
                                      f"[^{quote}]*\\Z").search for quote in "\"'"}


def _closing(text: str, start: int, quote: str) -> int:
    """The index of the quote closing a string whose inside starts at ``start`` (a
    backslash escapes it), or -1; at most one look past each escaped quote."""
    at = text.find(quote, start)
    while at > 0 and text[at - 1] == "\\":
        at = text.find(quote, at + 1)
    return at
