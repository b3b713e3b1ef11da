"""The evidence pack: a folder a script can check without fetchledger.

``sources.json`` (every chosen source, its versions and aliases),
``quotes.jsonl`` (their quotes, one JSON object a line), ``sources.md`` (a
Sources list in the markdown style of ``render``) and ``texts/ID-vN.txt`` (the
stored text of each version, byte for byte); with ``with_raw``,
``raw/ID-vN.bin`` (the raw bytes the ledger kept). Both JSON files follow the
JSON Schemas shipped in ``fetchledger/cite/schemas/`` (:func:`schema`).
Offsets (``start``, ``end``, page bounds) count code points of the stored
text. :func:`read_pack` reads a pack back and checks it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import InvalidArgument, InvalidPath
from ..models import json_text
from ..store.protocol import utc_now
from .entries import entry_parts
from .outputs import Selection, umask, unwritable

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["PACK_FORMAT", "PACK_VERSION", "Pack", "read_pack", "schema", "write_pack"]

PACK_FORMAT = "fetchledger-pack"
PACK_VERSION = 1


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``sources.json`` (``"sources"``) or of one line of
    ``quotes.jsonl`` (``"quote"``)."""
    if name not in ("sources", "quote"):
        raise InvalidArgument(f"no pack schema named {name!r}", hint="sources or quote")
    text = resources.files(__package__).joinpath(f"schemas/pack-{name}.schema.json").read_text(
        encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _text_name(source_id: int, version: int) -> str:
    return f"texts/{source_id}-v{version}.txt"


def _raw_name(source_id: int, version: int) -> str:
    return f"raw/{source_id}-v{version}.bin"


def write_pack(ledger: Ledger, chosen: Selection, target: Path, *, with_raw: bool) -> None:
    """Write the pack into ``target``, a new or empty folder (built beside it first)."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidArgument(f"{target} exists and is not an empty folder",
                              hint="a pack is written to a new (or empty) folder")
    try:
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as exc:
        raise unwritable(target, exc) from exc
    try:
        work.chmod(0o777 & ~umask())
        (work / "texts").mkdir()
        if with_raw:
            (work / "raw").mkdir()
        records = [_source_record(ledger, source.id, work, with_raw=with_raw)
                   for source in chosen.sources]
        manifest = {"format": PACK_FORMAT, "pack_version": PACK_VERSION,
                    "exported_at": utc_now(), "fetchledger": __version__,
                    "with_raw": with_raw, "sources": records}
        (work / "sources.json").write_text(
            json_text(manifest) + "\n", encoding="utf-8")  # (the display rule's escapes)
        with (work / "quotes.jsonl").open("w", encoding="utf-8", newline="\n") as out:
            for quote in chosen.quotes:
                out.write(json_text({
                    "id": quote.source_id, "version": quote.version, "start": quote.start,
                    "end": quote.end, "page": quote.page, "page_label": quote.page_label,
                    "quote": quote.text, "first_at": quote.first_at}, indent=None)
                    + "\n")
        lines = ["# Sources", ""]
        for entry in chosen.entries():
            lines.extend([f"[{entry.number}] " + " — ".join(entry_parts(entry, markdown=True)),
                          ""])
        (work / "sources.md").write_text("\n".join(lines), encoding="utf-8")
        if target.exists():
            target.rmdir()
        work.rename(target)
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise unwritable(target, exc) from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _source_record(ledger: Ledger, source_id: int, work: Path, *,
                   with_raw: bool) -> dict[str, Any]:
    details = ledger.details(source_id)
    texts = ledger.texts(source_id)
    versions = []
    for version in details.versions:
        number = version["version"]
        name = _text_name(source_id, number)
        (work / name).write_bytes(texts[number].encode("utf-8"))
        pages = [[p.start, p.end, p.number, p.label] for p in ledger.pages(source_id, number)]
        written = {**version, "text_file": name, "pages": pages}
        if with_raw:
            written["raw_file"] = _raw_name(source_id, number)
            (work / written["raw_file"]).write_bytes(ledger.raw(source_id, number))
        versions.append(written)
    record = details.to_json()
    record["versions"] = versions
    return record


@dataclass(frozen=True)
class Pack:
    """An evidence pack read back: the manifest's sources, the quotes, the texts keyed
    by ``(source id, version)``, and the raw bytes when the pack holds them."""

    sources: list[dict[str, Any]]
    quotes: list[dict[str, Any]]
    texts: dict[tuple[int, int], str]
    sources_md: str
    raw: dict[tuple[int, int], bytes]


def read_pack(path: str | os.PathLike[str]) -> Pack:
    """Read a pack written by ``export --format pack``, checking each text's sha256,
    each quote against its text, and each complete raw file against ``raw_sha256``.
    Raises InvalidArgument when they disagree."""
    root = Path(path)
    try:
        manifest = json.loads((root / "sources.json").read_text(encoding="utf-8"))
        quotes = [json.loads(line) for line in
                  (root / "quotes.jsonl").read_text(encoding="utf-8").splitlines() if line]
        sources_md = (root / "sources.md").read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise InvalidPath(f"{root} is not a readable fetchledger pack: {exc}") from exc
    if manifest.get("format") != PACK_FORMAT:
        raise InvalidArgument(f"{root} is not a fetchledger pack")
    texts: dict[tuple[int, int], str] = {}
    raws: dict[tuple[int, int], bytes] = {}
    for source in manifest["sources"]:
        for version in source["versions"]:
            key = (source["id"], version["version"])
            text = (root / version["text_file"]).read_bytes().decode("utf-8")
            if hashlib.sha256(text.encode("utf-8")).hexdigest() != version["sha256"]:
                raise InvalidArgument(f"{version['text_file']} does not match its sha256")
            texts[key] = text
            if "raw_file" in version:
                raws[key] = _checked_raw(root, version)
    for quote in quotes:
        text = texts.get((quote["id"], quote["version"]))
        if text is None or text[quote["start"] : quote["end"]] != quote["quote"]:
            raise InvalidArgument(f"a quote of [{quote['id']}] is not in its text")
    return Pack(manifest["sources"], quotes, texts, sources_md, raws)


def _checked_raw(root: Path, version: dict[str, Any]) -> bytes:
    raw = (root / str(version["raw_file"])).read_bytes()
    if len(raw) != version["raw_stored"]:
        raise InvalidArgument(f"{version['raw_file']} holds {len(raw)} bytes, not "
                              f"{version['raw_stored']}")
    complete = version["raw_stored"] == version["raw_size"]
    if complete and hashlib.sha256(raw).hexdigest() != version["raw_sha256"]:
        raise InvalidArgument(f"{version['raw_file']} does not match its raw_sha256")
    return raw
