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

from ..config import ledger_files
from ..errors import InvalidPath
from ..inputs import path_error
from ..models import Quote, Source
from .citations import read_citations
from .entries import Entry
from .evidence import SourceView, Support
from .render import check_known

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["Selection", "atomic_file", "name_usable", "output_path", "select", "umask",
           "unwritable", "write_output"]


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


def output_path(target: Path, ledger: Ledger | None = None) -> Path:
    """The file an output replaces (a link followed to the file it names). InvalidPath
    (exit 2, nothing written) for a folder that does not exist, a folder, anything but a
    regular file (a device or a pipe is never replaced), or one of the ledger's own
    files (writing it would destroy the ledger); an empty name, or one the file system
    refuses (too long, a NUL byte, a link loop), too."""
    name_usable(target)
    path = Path(os.path.abspath(target))
    if path.is_symlink():
        path = path.resolve()
    if not path.parent.is_dir():
        raise InvalidPath(f"no such folder: {target.parent}")
    if path.is_dir():
        raise InvalidPath(f"{target} is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise InvalidPath(f"{target} is not a regular file (a device, pipe or socket): an "
                          "output replaces the file it names", hint="name a new file")
    if ledger is not None and path.resolve() in ledger_files(ledger.path):
        raise InvalidPath(f"{target} is a file of the ledger {ledger.location}: writing it "
                          "would destroy the ledger", hint="name another file")
    return path


@contextmanager
def atomic_file(target: Path, ledger: Ledger | None = None) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``target``, then move it into place (an existing
    file keeps its permissions). See :func:`output_path` for what is refused; a file
    that cannot be written is InvalidPath too, and leaves nothing behind."""
    path = output_path(target, ledger)
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~umask()
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise unwritable(target, exc) from exc
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise unwritable(target, exc) from exc
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_output(target: str | os.PathLike[str], data: bytes,
                 ledger: Ledger | None = None) -> None:
    """Replace the file ``target`` with ``data`` in one step (:func:`atomic_file`)."""
    name_usable(target)  # before Path(""), which is the working directory
    with atomic_file(Path(target), ledger) as out:
        out.write(data)


def name_usable(target: str | os.PathLike[str]) -> None:
    """InvalidPath (exit 2) for an output name that is empty or that the file system
    refuses (too long, a NUL byte, a loop of links); a name of nothing yet is usable."""
    name = os.fspath(target)
    if not name:
        raise InvalidPath("the output file name is empty", hint="name the file to write")
    try:
        os.stat(name)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as exc:
        raise path_error(str(name), exc, what="output", verb="write") from exc


def unwritable(target: Path, exc: OSError) -> InvalidPath:
    return InvalidPath(f"cannot write {target}: {exc.strerror or exc}",
                       hint="name a file in a folder you can write")


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
