"""What the ledger hands back: sources, snippets, retrievals, failures, attempts.

Each type knows its §5 JSON shape and its text lines, so the CLI and the MCP
server print exactly the same thing. Error and warning lines are formatted
here and nowhere else (:func:`error_lines`, :func:`warning_line`,
:func:`tool_error_lines`). Every text line passes what a source controls
(titles, file names, URLs, labels, command lines, page text, messages that
quote them) through the one display function,
:func:`~fetchledger.text.normalize.printable`: no field can start a line,
drive a terminal or reorder the text. JSON keeps every value exact;
:func:`json_text` only spells the characters a terminal would act on as
``\\u`` escapes.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .errors import FetchLedgerError, QuoteNotFound
from .hints import Front, phrased
from .records import quick
from .text.normalize import UNPRINTABLE_BEYOND_C0, one_line, printable, printable_line

__all__ = [
    "Attempt",
    "Copied",
    "Failure",
    "Outcome",
    "Quote",
    "ReadLine",
    "Reading",
    "Refreshed",
    "Retrieval",
    "SearchHit",
    "Snippet",
    "Source",
    "SourceDetails",
    "error_json",
    "error_json_of",
    "error_lines",
    "exit_code_for",
    "json_text",
    "page_suffix",
    "refresh_exit_code",
    "tool_error_lines",
    "warning_line",
]


# --- error and warning lines: the one place they are formatted -------------------------


def error_lines(message: str, hint: str | None = None) -> list[str]:
    """``fetchledger: error: MESSAGE`` and, when there is one, ``hint: HINT``: how every
    failure reads on stderr (each one line, whatever the message holds)."""
    lines = [f"fetchledger: error: {printable_line(message)}"]
    if hint:
        lines.append(f"hint: {printable_line(hint)}")
    return lines


def error_json(status: str, message: str, hint: str | None = None, **extra: Any
               ) -> dict[str, Any]:
    """The one JSON shape of a failure under ``--json``: ``{"error": {"status",
    "message", "hint"}}`` (a failed input's object in a verb's array is the same with
    ``"input"`` beside ``"error"``, DESIGN §5); ``extra`` adds members to ``error``."""
    return {"error": {"status": status, "message": message, "hint": hint, **extra}}


def error_json_of(error: FetchLedgerError) -> dict[str, Any]:
    """:func:`error_json` of an error (a quote not found names the nearest passage)."""
    extra: dict[str, Any] = {}
    if isinstance(error, QuoteNotFound):
        extra = {"source": error.source_id, "nearest": error.nearest}
    return error_json(error.status, error.message, error.hint, **extra)


def warning_line(message: str) -> str:
    """``fetchledger: warning: MESSAGE`` (one line)."""
    return f"fetchledger: warning: {printable_line(message)}"


def tool_error_lines(error: FetchLedgerError) -> list[str]:
    """An MCP tool error: ``STATUS: message`` and, when there is one, ``hint: HINT``
    (phrased for MCP: it names tools, never CLI verbs)."""
    lines = [f"{error.status}: {printable_line(error.message)}"]
    hint = phrased(error.hint, "mcp")
    if hint:
        lines.append(f"hint: {printable_line(hint)}")
    return lines


# What the display function escapes beyond C0 (JSON escapes C0 itself): JSON may hold
# them raw, and a terminal, a model or a careless log reader would act on them.
_RAW_IN_JSON = re.compile(f"[{UNPRINTABLE_BEYOND_C0}]")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a character beyond the BMP is a surrogate pair in JSON
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(data: Any, *, indent: int | None = 2) -> str:
    """``data`` as JSON for printing: every value exact, non-ASCII text as it is, but
    the characters the display function escapes written as ``\\uXXXX`` (the same
    JSON)."""
    return printable_json(json.dumps(data, ensure_ascii=False, indent=indent))


def printable_json(text: str) -> str:
    """JSON ``text`` (made by any serializer) with the characters the display function
    escapes written as ``\\uXXXX``: the same JSON, as outside its strings JSON holds
    none of them."""
    return _RAW_IN_JSON.sub(_json_escape, text)


@quick
@dataclass(frozen=True)
class Source:
    """One registered source, as of one of its versions (the latest unless stated)."""

    id: int
    kind: str
    locator: str  # display locator: secrets redacted
    title: str | None
    retrieved_at: str  # of this version
    sha256: str  # of this version's stored text
    versions: int
    version: int  # the version number these facts describe
    first_retrieved: str
    last_retrieved: str
    site: str | None = None
    author: str | None = None
    date: str | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def label(self) -> str:
        """Host, file name or command: what the header line shows beside the title."""
        if self.kind in ("web", "http"):
            locator = self.locator.split(" ", 1)[-1] if self.kind == "http" else self.locator
            return urlsplit(locator).hostname or locator
        if self.kind == "file":
            return posixpath.basename(self.locator) or self.locator
        return str(self.meta.get("command_line") or self.locator)

    def header(self) -> str:
        """``[3] Boiling point — en.wikipedia.org`` (never a full URL; what the source
        controls shown by the display function)."""
        title = one_line(self.title or "")
        label = self.label
        if self.kind == "command" and self.meta.get("signal"):
            label = f"{label} (killed by {self.meta['signal']})"
        elif self.kind == "command" and "exit_code" in self.meta:
            label = f"{label} (exit {self.meta['exit_code']})"
        shown = printable(label if not title or title == label else f"{title} — {label}")
        if shown.startswith('"'):  # `[3] "x"` would read as a snippet line (DESIGN §5)
            shown = "\\" + shown
        return f"[{self.id}] {shown}"

    def shown_title(self) -> str:
        """The title as people are shown it (the label when there is none): one line,
        what the source controls through the display function."""
        return printable(one_line(self.title or "") or self.label)

    def list_line(self) -> str:
        """The source as ``list`` prints it: its header, kind, versions, last retrieval."""
        versions = f", {self.versions} versions" if self.versions > 1 else ""
        return f"{self.header()}  ({self.kind}{versions}, {self.last_retrieved})"

    def to_json(self, *, with_versions: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "locator": self.locator,
            "title": self.title,
            "retrieved_at": self.retrieved_at,
            "sha256": self.sha256,
        }
        if with_versions:
            data["versions"] = self.versions
        return data


def page_suffix(page: int | None, label: str | None) -> str:
    """`` (p. 12)`` or `` (p. 12, printed xii)``; empty for unpaged sources."""
    if page is None:
        return ""
    if label and label != str(page):
        return f" (p. {page}, printed {printable(one_line(label))})"
    return f" (p. {page})"


@dataclass(frozen=True)
class Quote:
    """A verbatim span of one version of a source: ``text == stored_text[start:end]``
    of version ``version`` of source ``source_id`` (``page``/``page_label`` on paged
    sources). Read back from the ledger (:meth:`~fetchledger.Ledger.recorded_quotes`)
    it carries ``first_at``: when it was first handed out or confirmed."""

    source_id: int
    version: int
    start: int
    end: int
    page: int | None
    page_label: str | None
    text: str
    first_at: str | None = None


@quick
@dataclass(frozen=True, kw_only=True)
class Snippet(Quote):
    """A quote as handed out: ``line`` is how it is displayed, with "…" where it was
    cut (the quote itself never holds one)."""

    line: str

    @property
    def quote(self) -> str:
        """The verbatim text (the §5 JSON's ``quote``)."""
        return self.text

    def text_line(self) -> str:
        return (f'[{self.source_id}] "{printable(self.line)}"'
                f"{page_suffix(self.page, self.page_label)}")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.source_id,
            "quote": self.quote,
            "start": self.start,
            "end": self.end,
            "page": self.page,
            "line": self.line,
        }


@quick
@dataclass(frozen=True)
class Retrieval:
    """A registered source and the snippets handed out for it."""

    source: Source
    snippets: tuple[Snippet, ...]
    new_source: bool = False
    new_version: bool = False
    warnings: tuple[str, ...] = ()

    def text_lines(self) -> list[str]:
        return [self.source.header(), *(s.text_line() for s in self.snippets)]

    def warning_lines(self) -> list[str]:
        """One ``fetchledger: warning: [N] ...`` line per warning."""
        return [warning_line(f"[{self.source.id}] {w}") for w in self.warnings]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "source": self.source.to_json(),
            "snippets": [s.to_json() for s in self.snippets],
        }
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data


HEADING_MARK = "§ "  # leads a heading's display line (never its quote)


@dataclass(frozen=True, kw_only=True)
class ReadLine(Snippet):
    """One passage of a reading (:meth:`~fetchledger.Ledger.read_source`): a snippet
    whose ``number`` is the passage's place in its version (1-based); ``line`` starts
    with ``§ `` when the passage is a heading, and holds ``…`` where a long passage
    was cut (its quote, ``start`` and ``end`` never hold either)."""

    number: int
    heading: bool = False

    def outline_line(self) -> str:
        """The line with its passage number in front: ``41: [3] "§ Methods" (p. 3)``."""
        return f"{self.number}: {self.text_line()}"

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, **super().to_json(), "page_label": self.page_label,
                "heading": self.heading}


@dataclass(frozen=True)
class Reading:
    """A window of a source's stored text, passage by passage, in order: ``lines`` from
    passage ``start`` on (headings only when ``outline``), ``next`` the passage number
    to go on from (None at the end), ``total`` how many passages the version holds.
    Reading records nothing and fetches nothing."""

    source: Source
    start: int
    next: int | None
    total: int
    lines: tuple[ReadLine, ...]
    outline: bool = False
    pages: tuple[int, int] | None = None  # the pages asked for, when they were

    def continuation(self) -> str:
        """``next start: 41 of 380 passages`` (``end of source: 380 passages`` at its end)."""
        if self.next is None:
            return f"end of source: {self.total} passages"
        return f"next start: {self.next} of {self.total} passages"

    def text_lines(self) -> list[str]:
        """The source's header, one line per passage, then how to go on."""
        shown = [line.outline_line() if self.outline else line.text_line()
                 for line in self.lines]
        if not self.lines:
            where = (f"pages {self.pages[0]}-{self.pages[1]}" if self.pages
                     else f"from passage {self.start}")
            shown = [f"no {'heading' if self.outline else 'text'} {where}"]
        return [self.source.header(), *shown, self.continuation()]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source.to_json(with_versions=True),
                "version": self.source.version, "start": self.start, "next": self.next,
                "total": self.total, "outline": self.outline,
                "pages": list(self.pages) if self.pages else None,
                "passages": [line.to_json() for line in self.lines]}


@dataclass(frozen=True)
class SearchHit:
    """Where a search found a source (``ingest``): the query, the engine, the rank, and
    the result's title and snippet as the engine gave them (the engine's words about
    the page, never a quote of it). ``at``: when it was recorded (read back)."""

    query: str | None
    engine: str | None
    rank: int
    title: str | None = None
    snippet: str | None = None
    at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "engine": self.engine, "rank": self.rank,
                "title": self.title, "snippet": self.snippet, "at": self.at}

    def text_line(self) -> str:
        """``found by:  brave "boiling point altitude" #3 (2026-12-01T10:00:00Z)``."""
        engine = one_line(self.engine) if self.engine else "a search"
        query = f' "{one_line(self.query)}"' if self.query else ""
        when = f" ({self.at})" if self.at else ""
        return printable(f"found by:  {engine}{query} #{self.rank}{when}")


@dataclass(frozen=True)
class SourceDetails:
    """Everything the ledger knows about one source (``show N``): with the searches
    that found it (``search``, from ``ingest``)."""

    source: Source
    versions: tuple[dict[str, Any], ...]
    aliases: tuple[str, ...]
    quotes: int
    searches: tuple[SearchHit, ...] = ()

    def text_lines(self) -> list[str]:
        s = self.source
        lines = [s.header(), f"kind:      {s.kind}", f"locator:   {s.locator}"]
        for name, value in (("site", s.site), ("author", s.author), ("date", s.date)):
            if value:
                lines.append(f"{name + ':':<10} {one_line(value)}")
        lines.append(f"retrieved: first {s.first_retrieved}, last {s.last_retrieved}")
        lines.append(f"quotes:    {self.quotes} handed out or confirmed")
        lines.extend(hit.text_line() for hit in self.searches)
        for version in self.versions:
            facts = ", ".join(f"{k}={v}" for k, v in sorted(version["meta"].items())
                              if not isinstance(v, (list, dict)))
            lines.append(
                f"version {version['version']}: {version['retrieved_at']}  "
                f"{version['characters']:,} characters  sha256 {version['sha256'][:12]}  "
                f"{version['extractor']} {version['extractor_version']}"
                + (f"  ({facts})" if facts else ""))
        return [printable(line) for line in lines]

    def to_json(self) -> dict[str, Any]:
        data = self.source.to_json(with_versions=True)
        data.update({
            "display": self.source.locator, "site": self.source.site,
            "author": self.source.author, "date": self.source.date,
            "first_retrieved": self.source.first_retrieved,
            "last_retrieved": self.source.last_retrieved,
            "versions": list(self.versions), "aliases": list(self.aliases),
            "quotes": self.quotes, "search": [hit.to_json() for hit in self.searches],
        })
        return data


@dataclass(frozen=True)
class Failure:
    """One input that did not register: bad input (exit 2) or a failed retrieval (3)."""

    input: str
    status: str
    message: str
    exit_code: int
    hint: str | None = None

    @classmethod
    def from_error(cls, input: str, error: FetchLedgerError) -> Failure:
        return cls(input, error.status, error.message, error.exit_code, error.hint)

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "error": {"status": self.status, "message": self.message}}

    def error_lines(self, front: Front = "cli") -> list[str]:
        """The error line (and hint line) on stderr: a failed retrieval names its input
        and status; bad input's message names the input itself."""
        hint = phrased(self.hint, front)
        if self.exit_code == 2:
            return error_lines(self.message, hint)
        return error_lines(f"{self.input}: {self.status}: {self.message}", hint)


Outcome = Retrieval | Failure


@dataclass(frozen=True)
class Attempt:
    """One retrieval attempt, successful or not."""

    locator: str
    at: str
    status: str
    message: str
    kind: str = ""
    source_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"locator": self.locator, "at": self.at, "status": self.status,
                "message": self.message}

    def text_line(self) -> str:
        return printable(f"{self.at}  {self.status:<16} {self.locator}  {self.message}").rstrip()


@dataclass(frozen=True)
class Copied:
    """What ``copy`` moved: row counts of the destination ledger, which was empty."""

    source: str  # where from and where to, as they may be printed
    destination: str
    counts: dict[str, int]

    def text_line(self) -> str:
        c = self.counts
        return (f"copied {c['source']} sources ({c['version']} versions, {c['passage']} "
                f"passages, {c['quote']} quotes, {c['attempt']} attempts) from "
                f"{self.source} to {self.destination}")

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.destination, "rows": dict(self.counts)}


def exit_code_for(outcomes: Iterable[Outcome]) -> int:
    """2 if any input was bad, else 3 if any retrieval failed, else 0 (DESIGN §5)."""
    codes = {o.exit_code for o in outcomes if isinstance(o, Failure)}
    if 2 in codes:
        return 2
    return 3 if codes else 0


@dataclass(frozen=True)
class Refreshed:
    """What ``refresh`` or ``reextract`` did to one source, and which of its recorded
    quotes are not verbatim in its latest version.

    ``source`` is the source as of its latest version afterwards; ``changed`` says
    whether a new version was made; ``drifted`` are the recorded quotes (handed out or
    confirmed, of any version) that the latest version no longer holds; ``checked``
    how many recorded quotes were looked for. ``skipped`` is a reason code when the
    source was not tried at all, ``error`` the failure when it was and failed.
    """

    source: Source
    changed: bool
    drifted: tuple[Quote, ...]
    checked: int
    note: str  # what happened, one line: "unchanged (HTTP 304 Not Modified)", ...
    skipped: str | None = None
    error: Failure | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "source": self.source.to_json(with_versions=True),
            "changed": self.changed,
            "version": self.source.version,
            "drifted": [{"quote": q.text, "start": q.start, "end": q.end, "version": q.version}
                        for q in self.drifted],
        }
        if self.skipped:
            data["skipped"] = {"reason": self.skipped, "message": self.note}
        if self.error:
            data["error"] = {"status": self.error.status, "message": self.error.message}
        return data

    def text_lines(self) -> list[str]:
        """The source's header with what happened, then one line per drifted quote:
        ``[3] drifted: "..." (version 1, characters 120-160)``."""
        found = (f"; {len(self.drifted)} of {self.checked} recorded quote"
                 f"{'s' * (self.checked != 1)} drifted" if self.drifted else "")
        lines = [f"{self.source.header()}: {printable_line(self.note)}{found}"]
        for quote in self.drifted:
            where = f"version {quote.version}, characters {quote.start}-{quote.end}"
            if quote.page is not None:
                where += f", p. {quote.page}"
            lines.append(f'[{self.source.id}] drifted: "{printable(quote.text)}" ({where})')
        return lines

    def error_lines(self, front: Front = "cli") -> list[str]:
        return self.error.error_lines(front) if self.error else []


def refresh_exit_code(outcomes: Iterable[Refreshed]) -> int:
    """3 if a source could not be retrieved (or extracted) again, else 1 if any recorded
    quote drifted, else 0."""
    outcomes = list(outcomes)
    if any(o.error for o in outcomes):
        return 3
    return 1 if any(o.drifted for o in outcomes) else 0
