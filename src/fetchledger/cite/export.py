"""Export the ledger (or the sources one draft cites): an evidence pack, CSL-JSON,
BibTeX, or a WARC 1.1 archive.

- ``pack`` (:mod:`.pack`): a folder with ``sources.json``, ``quotes.jsonl``,
  ``sources.md`` and the stored text of each version (with ``with_raw``, its
  raw bytes too); :func:`read_pack` reads one back.
- ``csl-json``: a JSON array of CSL items; ``bibtex``: one entry per source.
- ``warc`` (:mod:`.warc`): the exchanges as a crawler writes them, with the
  stored text and the ledger's facts beside them.

Exports only read the ledger. Outputs are written to a temporary name first
and moved into place, so a failed export leaves nothing half-written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument, InvalidPath
from ..models import json_text
from .bibliography import bibtex_entry, csl_item
from .entries import pages_text
from .outputs import Selection, atomic_file, name_usable, output_path, select
from .pack import Pack, read_pack, write_pack
from .warc import write_warc

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FORMATS", "ExportSummary", "Pack", "export", "read_pack"]

FORMATS = ("pack", "csl-json", "bibtex", "warc")


@dataclass(frozen=True)
class ExportSummary:
    format: str
    path: Path
    sources: int
    versions: int
    quotes: int

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "path": str(self.path), "sources": self.sources,
                "versions": self.versions, "quotes": self.quotes}

    def line(self) -> str:
        return (f"exported {self.sources} source{'' if self.sources == 1 else 's'} "
                f"({self.versions} version{'' if self.versions == 1 else 's'}, "
                f"{self.quotes} quote{'' if self.quotes == 1 else 's'}) as {self.format} "
                f"to {self.path}")


def export(ledger: Ledger, format: str, path: str | os.PathLike[str], *,
           cited_by: str | None = None, with_raw: bool = False) -> ExportSummary:
    """Write the ledger to ``path`` in ``format`` (one of :data:`FORMATS`): every source,
    or with ``cited_by`` (a draft's text) only the sources it cites. ``with_raw`` adds
    each version's raw bytes to a pack (a WARC always holds them)."""
    if format not in FORMATS:
        raise InvalidArgument(f"unknown export format {format!r}",
                              hint="one of: " + ", ".join(FORMATS))
    if with_raw and format != "pack":
        raise InvalidArgument(f"--with-raw adds raw bytes to a pack, not to {format}",
                              hint="a WARC always holds the raw bytes")
    name_usable(path)  # empty, too long, a NUL byte: before Path("") becomes "."
    target = Path(path)
    if format != "pack":
        output_path(target, ledger)  # refused before any work
    elif not target.parent.is_dir():
        raise InvalidPath(f"no such folder: {target.parent}")
    chosen = select(ledger, cited_by)
    if format == "pack":
        write_pack(ledger, chosen, target, with_raw=with_raw)
    elif format == "warc":
        with atomic_file(target, ledger) as out:
            write_warc(ledger, chosen, out, gzip=target.name.endswith(".gz"), name=target.name)
    else:
        with atomic_file(target, ledger) as out:
            out.write(_bibliography(chosen, format).encode("utf-8"))
    versions = sum(s.versions for s in chosen.sources)
    return ExportSummary(format, target, len(chosen.sources), versions, len(chosen.quotes))


def _bibliography(chosen: Selection, format: str) -> str:
    entries = chosen.entries()
    if format == "csl-json":
        items = [csl_item(e.source, key=f"fetchledger-{e.number}",
                          pages=pages_text(e.pages()).partition(" ")[2] or None)
                 for e in entries]
        return json_text(items) + "\n"  # C1, bidi, fillers as JSON escapes
    return "".join(bibtex_entry(e.source, key=f"fetchledger-{e.number}",
                                pages=pages_text(e.pages()).partition(" ")[2] or None) + "\n\n"
                   for e in entries)
