"""A batch's lines: the inputs it reads (one URL or one JSON object per line) and
the outcomes it reports (one per input: a retrieval, a failure, or a skip), with
their JSON lines and the closing summary. Records only: no HTTP, no processes,
so front ends and library users can read and print batches cheaply."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import MAX_SNIPPETS
from ..models import Failure, Retrieval, SearchHit, Source, json_text

__all__ = [
    "BatchInput",
    "BatchOutcome",
    "Skipped",
    "batch_json",
    "batch_json_line",
    "batch_summary",
    "read_batch_inputs",
]


@dataclass(frozen=True)
class BatchInput:
    """One input: a URL, optionally with its own query and snippet count.

    ``line`` is where it stood in an input file (1-based); ``problem`` says why
    the line is not a usable input (it becomes a bad-input failure, exit 2);
    ``search`` is the search hit it came from (``ingest``), recorded with the source.
    """

    url: str
    query: str | None = None
    k: int | None = None
    line: int | None = None
    problem: str | None = None
    search: SearchHit | None = None


@dataclass(frozen=True)
class Skipped:
    """An input that already had a source (not fetched again without ``refresh``)."""

    input: str
    source: Source

    def text_lines(self) -> list[str]:
        return [self.source.header()]

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "skipped": True, "source": self.source.to_json()}


BatchOutcome = Retrieval | Failure | Skipped


def read_batch_inputs(lines: Iterable[str]) -> list[BatchInput]:
    """Inputs from the lines of a file: one URL per line, or a JSON object per line
    (``{"url": ..., "query": ..., "k": ...}``; other keys are ignored). Blank lines
    and lines starting with ``#`` are skipped; a malformed line becomes an input
    with a ``problem``."""
    inputs = []
    for number, text in enumerate(lines, start=1):
        stripped = text.strip().lstrip("\ufeff")
        if not stripped or stripped.startswith("#"):
            continue
        inputs.append(_json_input(stripped, number) if stripped.startswith("{")
                      else BatchInput(stripped, line=number))
    return inputs


def _json_input(text: str, number: int) -> BatchInput:
    def bad(why: str) -> BatchInput:
        return BatchInput(text, line=number, problem=f"line {number}: {why}")

    try:
        data = json.loads(text)
    except ValueError as exc:
        return bad(f"not valid JSON ({exc})")
    except RecursionError:  # [[[[… nested deeper than the parser goes
        return bad("not valid JSON (nested too deeply)")
    if not isinstance(data, dict):
        return bad('a JSON line must be an object such as {"url": "https://..."}')
    url, query, k = data.get("url"), data.get("query"), data.get("k")
    if not isinstance(url, str) or not url.strip():
        return bad('a JSON line needs a "url" string')
    if query is not None and not isinstance(query, str):
        return bad('"query" must be a string')
    if k is not None and (isinstance(k, bool) or not isinstance(k, int)
                          or not 1 <= k <= MAX_SNIPPETS):
        return bad(f'"k" must be a whole number from 1 to {MAX_SNIPPETS:,}')
    return BatchInput(url.strip(), query or None, k, number)


def batch_json(outcome: BatchOutcome, shown: str | None = None) -> dict[str, Any]:
    """The JSON of one input: the §5 object (with the ``input``), an error object, or a
    skipped object."""
    data = outcome.to_json()
    if isinstance(outcome, Retrieval):
        data = {"input": shown or outcome.source.locator, **data}
    return data


def batch_json_line(outcome: BatchOutcome, shown: str | None = None) -> str:
    """:func:`batch_json` as one line, as ``batch --json`` prints it."""
    return json_text(batch_json(outcome, shown), indent=None)


def batch_summary(outcomes: Sequence[BatchOutcome], seconds: float | None = None) -> str:
    """``12 inputs: 9 ok (7 new sources), 2 skipped, 1 http_error`` (then the time)."""
    counts: Counter[str] = Counter()
    new = 0
    for outcome in outcomes:
        if isinstance(outcome, Retrieval):
            counts["ok"] += 1
            new += outcome.new_source
        elif isinstance(outcome, Skipped):
            counts["skipped"] += 1
        else:
            counts[outcome.status] += 1
    parts = []
    if counts["ok"]:
        parts.append(f"{counts.pop('ok')} ok ({new} new source{'s' * (new != 1)})")
    if counts["skipped"]:
        parts.append(f"{counts.pop('skipped')} skipped")
    parts.extend(f"{n} {status}" for status, n in sorted(counts.items(),
                                                        key=lambda i: (-i[1], i[0])) if n)
    total = len(outcomes)
    line = f"{total} input{'s' * (total != 1)}: " + (", ".join(parts) or "nothing to do")
    return line + (f" in {seconds:.1f} s" if seconds is not None else "")
