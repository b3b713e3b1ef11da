"""The same registrations, byte for byte: this tree beside a baseline commit.

Reads every file of the shared corpus (HTML, PDF, text, Markdown, JSON; or ``--limit``
of them) into a new ledger, with and without a query, once with the code of
``--against`` (``src/`` from a ``git archive``) and once with this tree's, on SQLite
and on PostgreSQL. Then compares what each handed out (sources, snippets, lines,
offsets, warnings) and every row each ledger holds (``copy``'s rows of every table,
and on PostgreSQL each passage's index terms), the retrieval times and the random
identity key aside. Prints one line per backend; exit 1 on any difference, naming
the first.

    python benchmarks/register_same.py [--against REV] [--limit N] [--pg URL]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from register_cpu import BASELINE

from _common import CORPUS, ROOT, add_pg_option, corpus_or_skip, git_source, pg_ledger

READER = textwrap.dedent(
    """
    import json, sys
    from fetchledger import Ledger
    from fetchledger.errors import BadInput, RetrievalFailed
    location, listing, out = sys.argv[1], sys.argv[2], sys.argv[3]
    TIMES = {"retrieved_at", "first_retrieved", "last_retrieved", "at", "first_at"}
    def clean(data):
        if isinstance(data, dict):
            return {k: clean(v) for k, v in data.items() if k not in TIMES}
        if isinstance(data, list | tuple):
            return [clean(v) for v in data]
        if isinstance(data, bytes | memoryview):
            return bytes(data).hex()
        return data
    lines = []
    with Ledger(location, allow_private=True) as ledger:
        for path in open(listing).read().split("\\n"):
            for query in (None, "the results of the study"):
                try:
                    got = ledger.read(path, query=query, k=5)
                except (BadInput, RetrievalFailed) as error:
                    lines.append([path, query, type(error).__name__, str(error)])
                    continue
                lines.append([path, query, clean(got.to_json()), got.text_lines(),
                              list(got.warnings), got.new_source, got.new_version])
        store = ledger._store
        for table, rows in store.export_rows():
            if table == "identity_key":  # random per ledger (file locators hold no HMAC)
                continue
            columns = __import__("fetchledger.store.protocol", fromlist=["x"]).COPY_COLUMNS[table]
            for row in rows:
                lines.append([table, clean({c: v for c, v in zip(columns, row)})])
        if hasattr(store, "_connection"):
            conn = store._connection()
            for row in conn.execute("SELECT id, terms::text FROM passage ORDER BY id"):
                lines.append(["terms", list(row)])
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\\n")
    """
)


def run(source: Path, location: str, listing: Path, out: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    subprocess.run([sys.executable, "-c", READER, location, str(listing), str(out)],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    return out.read_text().splitlines()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default=BASELINE, metavar="REV")
    parser.add_argument("--limit", type=int, default=0, help="files (0: all)")
    add_pg_option(parser)
    args = parser.parse_args()
    corpus_or_skip()
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file()
                   and p.suffix in {".html", ".pdf", ".txt", ".md", ".json"})
    if args.limit:
        files = files[:: max(1, len(files) // args.limit)][: args.limit]
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        baseline = git_source(args.against, folder / "baseline")
        if baseline is None:
            sys.exit(f"no git archive of {args.against} here")
        listing = folder / "files"
        listing.write_text("\n".join(str(f) for f in files))
        for backend in ["SQLite"] + (["PostgreSQL"] if args.pg else []):
            outputs = []
            for n, source in enumerate((baseline, ROOT / "src")):
                if backend == "PostgreSQL":
                    with pg_ledger(args.pg) as url:
                        outputs.append(run(source, url, listing, folder / f"out{n}"))
                else:
                    outputs.append(run(source, str(folder / f"l{n}.db"), listing,
                                       folder / f"out{n}"))
            old, new = outputs
            digest = hashlib.sha256("\n".join(new).encode()).hexdigest()[:16]
            differ = next((i for i, (a, b) in enumerate(zip(old, new, strict=False))
                           if a != b), None)
            if differ is None and len(old) == len(new):
                print(f"{backend}: {len(files)} files, {len(new)} outputs and rows, the same "
                      f"under {args.against} and this tree (sha256 {digest}…)")
                continue
            failed = True
            at = differ if differ is not None else min(len(old), len(new))
            print(f"{backend}: DIFFERENT at output {at} of {len(old)}/{len(new)}:\n"
                  f"  {args.against}: {old[at][:600] if at < len(old) else '(none)'}\n"
                  f"  this tree: {new[at][:600] if at < len(new) else '(none)'}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
