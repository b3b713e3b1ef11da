"""What an export writes (the sources chosen and their quotes), and how a file is
written so that a failed export leaves nothing half-written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import InvalidPath
from ..models import Quote, Source
from .citations import read_citations
from .entries import Entry
from .evidence import SourceView, Support
from .render import check_known

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["Selection", "atomic_file", "select", "umask"]


@dataclass(frozen=True)
class Selection:
    """What an export writes: sources in ledger order and their recorded quotes."""

    sources: list[Source]
    quotes: list[Quote]

    def entries(self) -> list[Entry]:
        """One entry per source (numbered by its id) with the quotes handed out of it."""
        by_source: dict[int, list[Support]] = {}
        for quote in self.quotes:
            by_source.setdefault(quote.source_id, []).append(Support(quote, handed_out=True))
        return [Entry(s.id, s, tuple(by_source.get(s.id, ()))) for s in self.sources]


def select(ledger: Ledger, cited_by: str | None = None) -> Selection:
    """Every source of the ledger, or only those the draft text ``cited_by`` cites (its
    markers read as ``render`` reads them). UnknownSource (exit 2) when the draft cites
    an id the ledger does not have."""
    sources = ledger.sources()
    if cited_by is not None:
        citations = read_citations(cited_by.replace("\r\n", "\n"))
        ids = citations.cited_ids()
        check_known(SourceView(ledger), citations, ids)
        wanted = set(ids)
        sources = [source for source in sources if source.id in wanted]
    kept = {source.id for source in sources}
    return Selection(sources, [q for q in ledger.recorded_quotes() if q.source_id in kept])


@contextmanager
def atomic_file(target: Path) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``target``, then move it into place."""
    if target.is_dir():
        raise InvalidPath(f"{target} is a folder; give a file name")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.chmod(temporary, 0o666 & ~umask())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
