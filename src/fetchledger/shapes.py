"""JSON Schemas of the JSON the records print (DESIGN §5): what ``--json`` prints and
what the MCP tools return as structured content, one schema per shape.

:func:`json_schema` hands out a fresh copy of a named schema (JSON Schema 2020-12).
The shapes follow the records' ``to_json`` methods (:mod:`fetchledger.models`,
:mod:`fetchledger.batch.lines`, :mod:`fetchledger.cite`); the MCP server declares
them as its tools' ``outputSchema`` and its tests validate real results against
them, so a field added to a record without its schema fails there. Objects list
every member (``additionalProperties: false``) except ``meta``, which is the
adapters' own facts about a version.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["SHAPES", "json_schema"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _object(properties: dict[str, Any], *, optional: tuple[str, ...] = (),
            description: str | None = None) -> dict[str, Any]:
    """An object with exactly these members (all required but ``optional``)."""
    shape: dict[str, Any] = {
        "type": "object", "properties": properties,
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False}
    if description:
        shape["description"] = description
    return shape


def _list(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": item}


_ID = {"type": "integer", "minimum": 1}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string"}
_MAYBE_TEXT = {"type": ["string", "null"]}
_MAYBE_COUNT = {"type": ["integer", "null"], "minimum": 0}
_TIME = {"type": "string", "description": "UTC, ISO 8601 (2026-12-01T10:00:00Z)"}
_SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}

_SOURCE_FIELDS: dict[str, Any] = {
    "id": _ID,
    "kind": {"type": "string", "enum": ["web", "http", "file", "command"]},
    "locator": {**_TEXT, "description": "what was retrieved, secrets redacted"},
    "title": _MAYBE_TEXT,
    "retrieved_at": {**_TIME, "description": "when this version was retrieved"},
    "sha256": {**_SHA256, "description": "of this version's stored text"},
}
SOURCE = _object(_SOURCE_FIELDS, description="A registered source, as of its latest version.")
SOURCE_WITH_VERSIONS = _object({**_SOURCE_FIELDS, "versions": _ID})

SNIPPET = _object({
    "id": _ID,
    "quote": {**_TEXT, "description": "verbatim: the stored text's [start:end]"},
    "start": {**_COUNT, "description": "code-point offset in the stored text"},
    "end": _COUNT,
    "page": {"type": ["integer", "null"], "minimum": 1},
    "line": {**_TEXT, "description": "the quote as displayed, with … where it was cut"},
})

_WARNINGS = _list(_TEXT)
RETRIEVAL = _object({"source": SOURCE, "snippets": _list(SNIPPET), "warnings": _WARNINGS},
                    optional=("warnings",),
                    description="A registered source and the snippets handed out for it.")

ERROR = _object({"status": {"type": "string", "pattern": "^[a-z_]+$"}, "message": _TEXT})
FAILURE = _object({"input": _TEXT, "error": ERROR},
                  description="An input that did not register (bad input or a failed "
                              "retrieval): no id.")

_VERSION = _object({
    "version": _ID, "retrieved_at": _TIME, "sha256": _SHA256,
    "raw_sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
    "extractor": _TEXT, "extractor_version": _TEXT,
    "meta": {"type": "object", "description": "what the adapter recorded about it"},
    "characters": _COUNT, "raw_size": _MAYBE_COUNT, "raw_stored": _MAYBE_COUNT,
})
_SEARCH_HIT = _object({
    "query": _MAYBE_TEXT, "engine": _MAYBE_TEXT, "rank": _ID, "title": _MAYBE_TEXT,
    "snippet": {**_MAYBE_TEXT, "description": "the engine's words about the page, never a quote"},
    "at": {"type": ["string", "null"]},
})
SOURCE_DETAILS = _object({
    **_SOURCE_FIELDS,
    "versions": _list(_VERSION), "display": _TEXT, "site": _MAYBE_TEXT,
    "author": _MAYBE_TEXT, "date": _MAYBE_TEXT, "first_retrieved": _TIME,
    "last_retrieved": _TIME, "aliases": _list(_TEXT),
    "quotes": {**_COUNT, "description": "quotes handed out or confirmed"},
    "search": _list(_SEARCH_HIT),
}, description="Everything the ledger knows about one source (show N --json).")

RENDERED = _object({
    "style": {"type": "string", "enum": ["markdown", "plain", "footnotes", "bibtex",
                                         "csl-json", "evidence"]},
    "changed": {"type": "boolean", "description": "whether text differs from the draft"},
    "numbers": {"type": "object", "additionalProperties": _ID,
                "description": "each number shown in the draft → its ledger id"},
    "sources": _list(SOURCE),
    "block": _TEXT,
    "text": {**_TEXT, "description": "the draft with the Sources block at its end"},
}, optional=("text",))

_PROBLEM = _object({
    "line": _ID, "column": _ID,
    "severity": {"type": "string", "enum": ["error", "warning"]},
    "rule": _TEXT, "message": _TEXT, "ids": _list(_ID), "hint": _MAYBE_TEXT,
})
CHECK_REPORT = _object({"ok": {"type": "boolean"}, "problems": _list(_PROBLEM)},
                       description="check --json: the findings, in draft order.")

_READ_LINE = _object({
    **SNIPPET["properties"],
    "number": {**_ID, "description": "the passage's place in its version, in text order"},
    "page_label": _MAYBE_TEXT,
    "heading": {"type": "boolean",
                "description": "a heading: its line starts with § (never its quote)"},
})
READING = _object({
    "source": SOURCE_WITH_VERSIONS,
    "version": _ID,
    "start": {**_ID, "description": "the first passage number of the window"},
    "next": {"type": ["integer", "null"], "minimum": 1,
             "description": "the passage to go on from (start=); null at the end"},
    "total": {**_COUNT, "description": "passages in this version"},
    "outline": {"type": "boolean", "description": "only headings are listed"},
    "pages": {"type": ["array", "null"], "items": _ID, "description": "the pages read"},
    "passages": _list(_READ_LINE),
}, description="A source read in order (show N --passages --json): whole passages, each "
               "a snippet.")

_DRIFTED = _object({"quote": _TEXT, "start": _COUNT, "end": _COUNT, "version": _ID})
REFRESHED = _object({
    "source": SOURCE_WITH_VERSIONS,
    "changed": {"type": "boolean", "description": "a new version was made"},
    "version": _ID,
    "drifted": _list(_DRIFTED),
    "skipped": _object({"reason": _TEXT, "message": _TEXT}),
    "error": ERROR,
}, optional=("skipped", "error"), description="refresh --json: one line per source.")

_BATCH_LINE = {"oneOf": [
    _object({"input": _TEXT, **RETRIEVAL["properties"]}, optional=("warnings",)),
    FAILURE,
    _object({"input": _TEXT, "skipped": {"const": True}, "source": SOURCE}),
], "description": "batch --json / ingest --json: one line per input."}


def _results(item: dict[str, Any], description: str, **more: Any) -> dict[str, Any]:
    return _object({"results": _list(item), **more}, description=description)


SHAPES: dict[str, dict[str, Any]] = {
    "retrieval": RETRIEVAL,
    "failure": FAILURE,
    "quotes": _results(RETRIEVAL, "The sources whose passages match, best first."),
    "source-details": SOURCE_DETAILS,
    "rendered": RENDERED,
    "check-report": CHECK_REPORT,
    "reading": READING,
    "refreshed": _results(REFRESHED, "One object per source, as refresh --json prints "
                                     "its lines."),
    "batch": _results(_BATCH_LINE, "One object per input, as batch --json prints its "
                                   "lines, and the summary line.", summary=_TEXT),
}


def json_schema(name: str, *, or_failure: bool = False) -> dict[str, Any]:
    """A copy of the named schema (a key of :data:`SHAPES`), with its dialect. With
    ``or_failure``: that shape or the ``failure`` shape, an object either way (an MCP
    tool's ``outputSchema``: some clients validate a tool error's structured content
    against it too)."""
    if name not in SHAPES:
        from .errors import InvalidArgument

        raise InvalidArgument(f"no JSON shape named {name!r}", hint="one of: " + ", ".join(SHAPES))
    shape = copy.deepcopy(SHAPES[name])
    if or_failure:
        shape = {"type": "object", "anyOf": [shape, copy.deepcopy(FAILURE)],
                 "description": f"The {name} on success; the failure of a tool error."}
    return {"$schema": _DIALECT, **shape}
