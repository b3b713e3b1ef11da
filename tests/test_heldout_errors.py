"""Issue 13, clean errors, a held-out pass: odd inputs through real processes.

Each row of ``ROWS`` runs ``python -m fetchledger ARGS...`` (text, then ``--json``) in a
folder of odd files — a FIFO, a socket, a symlink loop, a dangling link, a directory,
over-long and non-UTF-8 names — against a ledger holding one source, and asserts the
contract of DESIGN §6 and §2 promise 6:

- the documented exit code, no traceback, and well within a bound (a FIFO or a
  device named where a file is expected must not be read for ever);
- one error line on stderr, ``fetchledger: error: …`` (plus at most a hint), saying
  what ``says`` names when the row gives it;
- under ``--json``: one JSON error object ``{"error": {"status", "message", "hint"}}``
  on stdout (per-input verbs: their §5 array, an error object in the input's place),
  with the row's status;
- the ledger unchanged: every row of every table the same (exit 2 records nothing,
  not even an attempt), and no ledger created where a verb only reads.

The MCP rows call a real server over stdio with odd arguments: each answer is a tool
error whose text starts ``STATUS: message``, and the server serves on afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

LONG = "a" * 300  # one name over NAME_MAX (255): ENAMETOOLONG
BAD_UTF8 = b"l\xff.db".decode("utf-8", "surrogateescape")  # a byte that is not UTF-8
BOUND = 15.0  # seconds: nothing on this table may take longer (a hang is a failure)


@dataclass(frozen=True)
class Row:
    args: tuple[str, ...]
    code: int
    status: str
    says: str = ""  # a word the error line must hold (what is wrong, not only that)
    per_input: bool = False  # the verb prints the §5 array under --json
    absent: str = ""  # a path that must not exist afterwards (nothing created)
    closed: bool = False  # run with standard input closed (`<&-`)


def row(*args: str, code: int = 2, status: str = "invalid_path", says: str = "",
        per_input: bool = False, absent: str = "", closed: bool = False) -> Row:
    return Row(tuple(args), code, status, says, per_input, absent, closed)


ROWS: dict[str, Row] = {
    # a FIFO, a device or a socket named where a file is read: refused at once, never
    # opened (a FIFO with no writer blocks the open for ever; a device never ends)
    "check FIFO": row("check", "fifo", says="not a regular file"),
    "render FIFO": row("render", "fifo", says="not a regular file"),
    "batch FIFO": row("batch", "fifo", says="not a regular file"),
    "ingest FIFO": row("ingest", "fifo", says="not a regular file"),
    "export --cited-by FIFO": row("export", "--format", "csl-json", "--cited-by", "fifo",
                                  "-o", "out.json", says="not a regular file",
                                  absent="out.json"),
    "curl -d @FIFO": row("curl", "-d", "@fifo", "http://h.invalid/", says="not a regular file"),
    "curl -d @/dev/zero": row("curl", "-d", "@/dev/zero", "http://h.invalid/",
                              says="not a regular file"),
    "curl --data-binary @/dev/urandom": row("curl", "--data-binary", "@/dev/urandom",
                                            "http://h.invalid/", says="not a regular file"),
    "check /dev/urandom": row("check", "/dev/urandom", says="not a regular file"),
    "check socket": row("check", "sock", says="not a regular file"),
    "batch /dev/zero": row("batch", "/dev/zero", says="not a regular file"),
    "read FIFO": row("read", "fifo", says="not a regular file", per_input=True),
    # a name too long for the file system (ENAMETOOLONG): one line, never a traceback
    "check LONG": row("check", LONG, says="too long"),
    "render LONG": row("render", LONG, says="too long"),
    "render -o LONG": row("render", "draft.md", "-o", LONG, says="too long"),
    "export -o LONG": row("export", "--format", "csl-json", "-o", LONG, says="too long"),
    "export pack -o LONG": row("export", "--format", "pack", "-o", LONG, says="too long"),
    "--ledger LONG list": row("--ledger", LONG, "list", code=4, status="ledger_error",
                              says="too long"),
    "--ledger LONG show": row("--ledger", LONG, "show", "1", code=4, status="ledger_error",
                              says="too long"),
    "batch LONG": row("batch", LONG, says="too long"),
    "read LONG": row("read", LONG, says="too long", per_input=True),
    # empty names: said to be empty, never taken for the working directory or a default
    "--ledger ''": row("--ledger", "", "list", status="invalid_argument", says="empty"),
    "--ledger '' read": row("--ledger", "", "read", "note.txt", status="invalid_argument",
                            says="empty", absent=".fetchledger"),
    "render -o ''": row("render", "draft.md", "-o", "", says="empty"),
    "export -o ''": row("export", "--format", "csl-json", "-o", "", says="empty"),
    "read ''": row("read", "", says="empty", per_input=True),
    "check ''": row("check", "", says="empty"),
    "render ''": row("render", "", says="empty"),
    "batch ''": row("batch", "", says="empty"),
    "export --cited-by ''": row("export", "--format", "csl-json", "--cited-by", "",
                                "-o", "o.json", says="empty", absent="o.json"),
    "mcp --root ''": row("mcp", "--root", "", status="invalid_argument", says="empty"),
    "curl -d @": row("curl", "-d", "@", "http://h.invalid/", says="empty"),
    # a blank command is no command: bad input, nothing recorded (not an attempt)
    "run -- ' '": row("run", "--", " ", status="invalid_argument", says="empty",
                      per_input=True),
    "run -- '\\t'": row("run", "--", "\t", status="invalid_argument", says="empty",
                        per_input=True),
    # a ledger path that is a folder, a file's child, or not UTF-8
    "--ledger DIR read": row("--ledger", "adir", "read", "note.txt", code=4,
                             status="ledger_error", says="folder"),
    "--ledger DIR list": row("--ledger", "adir", "list", code=4, status="ledger_error",
                             says="folder"),
    "copy SRC DIR": row("copy", "ledger.db", "adir", code=4, status="ledger_error",
                        says="folder"),
    # a device or a FIFO as the ledger: SQLite opened it, failed with "disk I/O error",
    # and left a rollback journal beside it (`--ledger /dev/null` made /dev/null-journal)
    "--ledger FIFO read": row("--ledger", "fifo", "read", "note.txt", code=4,
                              status="ledger_error", says="not a regular file",
                              absent="fifo-journal"),
    "--ledger device read": row("--ledger", "devnull", "read", "note.txt", code=4,
                                status="ledger_error", says="not a regular file",
                                absent="devnull-journal"),
    "copy SRC FIFO": row("copy", "ledger.db", "fifo", code=4, status="ledger_error",
                         says="not a regular file", absent="fifo-journal"),
    "--ledger socket read": row("--ledger", "sock", "read", "note.txt", code=4,
                                status="ledger_error", says="not a regular file"),
    "--ledger symlink loop read": row("--ledger", "loop1", "read", "note.txt", code=4,
                                      status="ledger_error", says="loop of symbolic links"),
    "--ledger FILE/l.db read": row("--ledger", "note.txt/l.db", "read", "note.txt", code=4,
                                   status="ledger_error", says="is a file, not a folder"),
    "--ledger FIFO/l.db read": row("--ledger", "fifo/l.db", "read", "note.txt", code=4,
                                   status="ledger_error", says="is a file, not a folder"),
    "copy LONG DST": row("copy", LONG, "new.db", says="no ledger", absent="new.db"),
    "copy SRC symlink loop": row("copy", "ledger.db", "loop1", code=4, status="ledger_error",
                                 says="loop of symbolic links"),
    "--ledger non-UTF-8 list": row("--ledger", BAD_UTF8, "list", code=4, status="no_ledger",
                                   says="no ledger", absent=BAD_UTF8),
    "--ledger non-UTF-8 show": row("--ledger", BAD_UTF8, "show", "1", code=4,
                                   status="no_ledger", says="no ledger", absent=BAD_UTF8),
    # URL oddities whose error line said something else than what is wrong
    "fetch http://[::1": row("fetch", "http://[::1", status="invalid_url", says="]",
                             per_input=True),
    "fetch http://[::1/x": row("fetch", "http://[::1/x", status="invalid_url", says="]",
                               per_input=True),
    # standard input closed (`<&-`): Python has no sys.stdin, and every reader of `-`
    # failed with a traceback (AttributeError: 'NoneType' object has no attribute 'buffer')
    **{f"{' '.join(args)} stdin closed": row(*args, status="invalid_argument",
                                             says="standard input is closed", closed=True)
       for args in (("check", "-"), ("render", "-"), ("batch", "-"), ("ingest", "-"),
                    ("export", "--format", "csl-json", "-o", "o.json", "--cited-by", "-"),
                    ("curl", "-d", "@-", "http://h.invalid/"), ("mcp",))},
    "read - stdin closed": row("read", "-", "--label", "x", status="invalid_argument",
                      says="standard input is closed", closed=True),
    # held on main (guards of the same classes)
    "read DIR": row("read", "adir", says="directory", per_input=True),
    "read symlink loop": row("read", "loop1", per_input=True),
    "read dangling link": row("read", "dangling", says="no such file", per_input=True),
    "read /dev/zero": row("read", "/dev/zero", says="not a regular file", per_input=True),
    "check DIR": row("check", "adir", says="directory"),
    "check symlink loop": row("check", "loop1"),
    "render binary draft": row("render", "bin.md", status="invalid_argument", says="UTF-8"),
    "check latin-1 draft": row("check", "latin.md", status="invalid_argument", says="UTF-8"),
    "render --style bogus": row("render", "draft.md", "--style", "bogus",
                                status="invalid_argument", says="bogus"),
    "quote 1 ''": row("quote", "1", "", status="invalid_argument", says="empty"),
    "quotes '\\t'": row("quotes", "\t", status="invalid_argument"),
    "show 99999999999999999999": row("show", "99999999999999999999", status="unknown_source"),
    "quotes -k 1e3": row("quotes", "water", "-k", "1e3", status="invalid_argument"),
    "run --timeout 1e309": row("run", "--timeout", "1e309", "--", "true",
                               status="invalid_argument", per_input=True),
    "read --pages 5-2": row("read", "--pages", "5-2", "note.txt", status="invalid_argument",
                            per_input=True),
    "ingest malformed JSON": row("ingest", "bad.json", status="invalid_argument"),
    "ingest JSON of wrong types": row("ingest", "wrong.json", status="invalid_argument"),
    "--ledger not SQLite read": row("--ledger", "notsqlite.db", "read", "note.txt", code=4,
                                    status="ledger_error"),
    "--ledger corrupt list": row("--ledger", "corrupt.db", "list", code=4,
                                 status="ledger_error"),
    "--ledger corrupt read": row("--ledger", "corrupt.db", "read", "note.txt", code=4,
                                 status="ledger_error"),
    "--ledger truncated quotes": row("--ledger", "truncated.db", "quotes", "water", code=4,
                                     status="ledger_error"),
    "--ledger postgres bad port": row("--ledger", "postgresql://postgres@127.0.0.1:99999/x",
                                      "list", code=4, status="ledger_error"),
    "--ledger postgres no database": row(
        "--ledger", "postgresql://postgres@127.0.0.1:5432/fetchledger_no_such_db", "list",
        code=4, status="ledger_error"),
    # bytes that are not UTF-8 in a PostgreSQL URL: a traceback from libpq's parser
    "--ledger postgres non-UTF-8 user": row(
        "--ledger", "postgresql://" + b"\xff".decode("utf-8", "surrogateescape")
        + "@127.0.0.1:5432/x", "list", code=4, status="ledger_error", says="not valid UTF-8"),
    "--ledger postgres non-UTF-8 database read": row(
        "--ledger", "postgresql://postgres@127.0.0.1:5432/"
        + b"\xff".decode("utf-8", "surrogateescape"), "read", "note.txt", code=4,
        status="ledger_error", says="not valid UTF-8"),
    "fetch http://h:-1/": row("fetch", "http://h:-1/", status="invalid_url", per_input=True),
    "fetch javascript:": row("fetch", "javascript:alert(1)", status="invalid_url",
                             per_input=True),
    "fetch 64-character label": row("fetch", f"http://{'a' * 64}.example/",
                                    status="invalid_url", per_input=True),
}


def _write_ledger(path: Path, note: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "fetchledger", "--ledger", str(path),
                           "read", str(note)], capture_output=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of odd files beside a ledger (``ledger.db``) holding one source."""
    folder = tmp_path_factory.mktemp("odd")
    note = folder / "note.txt"
    note.write_text("At sea level, water boils at 100 degrees. Ice melts at zero degrees.\n")
    (folder / "draft.md").write_text("Water boils at 100 degrees.[1]\n")
    (folder / "adir").mkdir()
    os.mkfifo(folder / "fifo")
    os.symlink("loop2", folder / "loop1")
    os.symlink("loop1", folder / "loop2")
    os.symlink("nowhere", folder / "dangling")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(folder / "sock"))
    os.mknod(folder / "devnull", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # as /dev/null
    (folder / "bin.md").write_bytes(bytes(range(256)) * 8)
    (folder / "latin.md").write_bytes("caf\xe9 [1]\n".encode("latin-1"))
    (folder / "notsqlite.db").write_text("not a database, only some words\n" * 50)
    (folder / "bad.json").write_text("{not json")
    (folder / "wrong.json").write_text('{"results": [{"url": 5}, {"link": null}, 7]}')
    ledger = folder / "ledger.db"
    _write_ledger(ledger, note)
    with sqlite3.connect(ledger) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = ledger.read_bytes()
    (folder / "truncated.db").write_bytes(data[: len(data) // 3])
    garbled = bytearray(data)
    for start in range(4096, len(garbled), 4096):  # every page after the first
        garbled[start:start + 64] = b"\xde\xad\xbe\xef" * 16
    (folder / "corrupt.db").write_bytes(bytes(garbled))
    return folder


def snapshot(path: Path) -> list[tuple[str, list[tuple[Any, ...]]]] | None:
    """Every row of every table of the ledger (None when there is no ledger)."""
    if not path.exists():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
            "ORDER BY name")]
        return [(t, sorted(db.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr))
                for t in tables]
    finally:
        db.close()


@dataclass
class Ran:
    code: int | None  # None: still running at the bound
    stdout: str
    stderr: str
    seconds: float


def fetchledger(args: tuple[str, ...] | list[str], *, cwd: Path, ledger: Path,
                stdin: bytes = b"", closed: bool = False) -> Ran:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FETCHLEDGER_")}
    env["FETCHLEDGER_LEDGER"] = str(ledger)
    argv = [os.fsencode(sys.executable), b"-m", b"fetchledger", *map(os.fsencode, args)]
    if closed:  # the shell closes descriptor 0, then becomes fetchledger
        argv = [b"sh", b"-c", b'exec "$@" <&-', b"sh", *argv]
    started = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True,
                              timeout=BOUND, check=False)
    except subprocess.TimeoutExpired as hung:
        return Ran(None, (hung.stdout or b"").decode(errors="replace"),
                   (hung.stderr or b"").decode(errors="replace"), BOUND)
    return Ran(done.returncode, done.stdout.decode(errors="replace"),
               done.stderr.decode(errors="replace"), time.monotonic() - started)


def _error_object(stdout: str, per_input: bool) -> dict[str, Any]:
    data = json.loads(stdout)
    if per_input:
        assert isinstance(data, list) and len(data) == 1, data
        data = data[0]
        assert set(data) == {"input", "error"}, data
    else:
        assert isinstance(data, dict) and set(data) <= {"input", "error"}, data
        assert set(data["error"]) >= {"status", "message", "hint"}, data
    assert isinstance(data["error"]["message"], str) and data["error"]["message"], data
    return data["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("name", list(ROWS))
def test_odd_input(odd: Path, name: str, as_json: bool) -> None:
    spec = ROWS[name]
    ledger = odd / "ledger.db"
    before = snapshot(ledger)
    args = ("--json", *spec.args) if as_json else spec.args
    ran = fetchledger(args, cwd=odd, ledger=ledger, closed=spec.closed)
    made = [p for p in (odd / ".fetchledger", *([odd / spec.absent] if spec.absent else []))
            if p.exists() or p.is_symlink()]
    for path in made:  # (removed, so that the next row starts from the same folder)
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert ran.code is not None, f"{name}: still running after {BOUND} s"
    assert "Traceback" not in ran.stderr, ran.stderr
    assert ran.code == spec.code, (ran.code, ran.stdout, ran.stderr)
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    assert lines and lines[0].startswith("fetchledger: error: "), ran.stderr
    assert len(lines) <= 2 and all(not line.startswith("fetchledger: error")
                                   for line in lines[1:]), ran.stderr
    assert spec.says.lower() in lines[0].lower(), lines[0]
    if as_json:
        error = _error_object(ran.stdout, spec.per_input)
        assert error["status"] == spec.status, error
    else:
        assert ran.stdout == "", ran.stdout
    assert snapshot(ledger) == before, "the ledger changed"
    assert not made, f"created: {[p.name for p in made]}"


def test_a_url_hint_is_offered_only_for_what_looks_like_a_host() -> None:
    """`did you mean https://…` was offered for anything: `https://[1,2]`, and for a
    quoted URL `https://"http://…"`."""
    from fetchledger import InvalidURL
    from fetchledger.identity.urls import parse_http_url

    for text, hint in (('"http://example.org/"', "a URL starts with http:// or https://"),
                       ("[1,2]", "a URL starts with http:// or https://"),
                       ("not a url", "a URL starts with http:// or https://"),
                       ("example.org/a?b=1", "did you mean https://example.org/a?b=1 ?"),
                       ("//example.org:8080/x", "did you mean https://example.org:8080/x ?")):
        with pytest.raises(InvalidURL) as caught:
            parse_http_url(text)
        assert caught.value.hint == hint, (text, caught.value.hint)


def test_a_ledger_named_in_bytes_that_are_not_utf8_is_read_as_it_was_written(
        tmp_path: Path) -> None:
    """A ledger file's name need not be UTF-8 (Linux names are bytes): a retrieval creates
    it, and the verbs that only read open it again (they failed with a traceback)."""
    (tmp_path / "note.txt").write_text("Water boils at 100 degrees at sea level.\n")
    name = tmp_path / BAD_UTF8
    made = fetchledger(["--ledger", str(name), "read", "note.txt"], cwd=tmp_path,
                       ledger=tmp_path / "unused.db")
    assert made.code == 0, made.stderr
    for args in (["list"], ["show", "1"], ["quotes", "water"], ["--json", "list"]):
        shown = fetchledger(["--ledger", str(name), *args], cwd=tmp_path,
                            ledger=tmp_path / "unused.db")
        assert shown.code == 0 and "Traceback" not in shown.stderr, (args, shown.stderr)
        assert "note.txt" in shown.stdout, shown.stdout


@pytest.mark.parametrize("becomes", ["fifo", "device"])
def test_refresh_of_a_file_that_became_a_fifo_or_device_does_not_hang(
        tmp_path: Path, becomes: str) -> None:
    """`refresh` re-reads a file source's stored path without identifying it again: a
    FIFO there hung it for ever (the open waits for a writer), a device was read to its
    cap. Now it is the failed refresh of a vanished file (exit 3, an attempt, the
    source's versions kept), at once."""
    note = tmp_path / "note.txt"
    note.write_text("Water boils at 100 degrees at sea level.\n")
    ledger = tmp_path / "ledger.db"
    _write_ledger(ledger, note)
    note.unlink()
    if becomes == "fifo":
        os.mkfifo(note)
    else:
        os.mknod(note, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # as /dev/zero
    for as_json in (False, True):
        ran = fetchledger([*(["--json"] if as_json else []), "refresh", "1"], cwd=tmp_path,
                          ledger=ledger)
        assert ran.code == 3 and "Traceback" not in ran.stderr, (ran.code, ran.stderr)
        lines = ran.stderr.splitlines()
        assert len(lines) == 1 and "not a regular file" in lines[0], lines
        if as_json:
            assert "not a regular file" in json.loads(ran.stdout)["error"]["message"]
    with sqlite3.connect(ledger) as db:
        assert db.execute("SELECT count(*) FROM version").fetchone()[0] == 1


# --- batch goes on past odd lines ---------------------------------------------------------------


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = (b"<html><head><title>Good</title></head><body><p>Water boils at 100 "
                b"degrees at sea level, as every cook knows well.</p></body></html>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    server.request_queue_size = 64
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


ODD_LINES = ["http://xn--a/", "http://[::1", "http://h:99999/", "http://h: 80/",
             "javascript:alert(1)", "file:///etc/passwd", "data:text/plain,hi", "http://a b/",
             "http://h/\x00x", "\x00", '{"url": 5}', '{"url": "http://h.invalid/", "k": 0}',
             '{"url": "http://h.invalid/", "k": "3"}', "{not json", f"http://{'a' * 64}.x/"]


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_batch_goes_on_past_odd_lines(site: str, tmp_path: Path, as_json: bool) -> None:
    good = [f"{site}/page?n={n}" for n in range(3)]
    lines = [good[0], *ODD_LINES[:8], good[1], *ODD_LINES[8:], good[2]]
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")
    ledger = tmp_path / "ledger.db"
    ran = fetchledger([*(["--json"] if as_json else []), "--allow-private", "batch",
                       "list.txt"], cwd=tmp_path, ledger=ledger)
    assert ran.code == 2 and "Traceback" not in ran.stderr, ran.stderr
    with sqlite3.connect(ledger) as db:
        assert db.execute("SELECT count(*) FROM source").fetchone()[0] == 3
        assert db.execute("SELECT count(*) FROM attempt WHERE status != 'ok'").fetchone()[0] == 0
    errors = [line for line in ran.stderr.splitlines() if line.startswith("fetchledger: error")]
    assert len(errors) == len(ODD_LINES), ran.stderr
    if as_json:
        printed = [json.loads(line) for line in ran.stdout.splitlines()]
        assert len(printed) == len(lines)
        assert sum("error" in p for p in printed) == len(ODD_LINES)
        assert all(set(p["error"]) >= {"status", "message"} for p in printed if "error" in p)


DEEP = "[" * 100_000 + "]" * 100_000  # nested deeper than Python's JSON parser goes


class _DeepJSON(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = DEEP.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_json_nested_too_deeply_is_a_clean_error(tmp_path: Path) -> None:
    """`[[[[…` 100,000 deep: `ingest` of such a file, a batch line holding it, and a JSON
    page served so were each a traceback (RecursionError). Now: bad input (exit 2, nothing
    recorded) for what the user gave, a `corrupt` attempt (exit 3) for a page."""
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "deep2.json").write_text('{"results": ' + DEEP + "}")
    (tmp_path / "lines.txt").write_text('{"url": ' + DEEP + "}\n")
    ledger = tmp_path / "ledger.db"
    for args in (["ingest", "deep.json"], ["ingest", "deep2.json"], ["batch", "lines.txt"]):
        for as_json in (False, True):
            ran = fetchledger([*(["--json"] if as_json else []), *args], cwd=tmp_path,
                              ledger=ledger)
            assert ran.code == 2 and "Traceback" not in ran.stderr, (args, ran.stderr[-300:])
            assert "nested too deeply" in ran.stderr.splitlines()[0], ran.stderr
            if as_json:
                assert "nested too deeply" in json.loads(ran.stdout)["error"]["message"]
    if ledger.exists():  # (batch opens the ledger; nothing may be recorded)
        with sqlite3.connect(ledger) as db:
            assert db.execute("SELECT count(*) FROM attempt").fetchone()[0] == 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DeepJSON)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/deep.json"
        ran = fetchledger(["--allow-private", "fetch", url], cwd=tmp_path, ledger=ledger)
    finally:
        server.shutdown()
        server.server_close()
    assert ran.code == 3 and "Traceback" not in ran.stderr, ran.stderr[-300:]
    assert "nested too deeply" in ran.stderr, ran.stderr
    with sqlite3.connect(ledger) as db:
        assert db.execute("SELECT count(*) FROM source").fetchone()[0] == 0
        assert db.execute("SELECT status FROM attempt").fetchall() == [("corrupt",)]


# --- MCP: odd arguments are tool errors, and the server serves on -------------------------------

MCP_CALLS: dict[str, tuple[str, dict[str, Any], str]] = {
    "read_file ''": ("read_file", {"path": ""}, "invalid_path: the file name is empty"),
    "read_file ' '": ("read_file", {"path": " "}, "invalid_path: "),
    "read_file FIFO": ("read_file", {"path": "fifo"}, "invalid_path: "),
    "read_file symlink loop": ("read_file", {"path": "loop1"}, "invalid_path: "),
    "read_file LONG": ("read_file", {"path": LONG}, "invalid_path: "),
    "read_file NUL": ("read_file", {"path": "note.txt\x00x"}, "invalid_path: "),
    "read_file pages 'abc'": ("read_file", {"path": "note.txt", "pages": "abc"},
                              "invalid_argument: "),
    "read_file path 7": ("read_file", {"path": 7}, "invalid_argument: "),
    "run_command []": ("run_command", {"argv": []}, "invalid_argument: "),
    "run_command [1, 2]": ("run_command", {"argv": [1, 2]}, "invalid_argument: "),
    "run_command [' ']": ("run_command", {"argv": [" "]}, "invalid_argument: the command is empty"),
    "run_command timeout -1": ("run_command", {"argv": ["echo"], "timeout": -1},
                               "invalid_argument: "),
    "search_quotes k 'x'": ("search_quotes", {"query": "water", "k": "x"}, "invalid_argument: "),
    "search_quotes k -5": ("search_quotes", {"query": "water", "k": -5}, "invalid_argument: "),
    "search_quotes k 10**20": ("search_quotes", {"query": "water", "k": 10**20},
                               "invalid_argument: "),
    "search_quotes k 2.5": ("search_quotes", {"query": "water", "k": 2.5}, "invalid_argument: "),
    "search_quotes ''": ("search_quotes", {"query": " "}, "invalid_argument: "),
    "get_source 10**20": ("get_source", {"id": 10**20}, "unknown_source: "),
    "fetch http://[::1": ("fetch", {"url": "http://[::1"}, "invalid_url: "),
    "fetch url None": ("fetch", {"url": None}, "invalid_argument: "),
    "render style bogus": ("render", {"text": "x [1]", "style": "bogus"}, "invalid_argument: "),
    "http_request method ''": ("http_request", {"method": "", "url": "http://h/"},
                               "invalid_argument: "),
    "ingest JSON nested too deeply": ("ingest", {"results": '{"results": ' + "[" * 100_000
                                                + "]" * 100_000 + "}"},
                                      "invalid_argument: results is not valid JSON: nested"),
}


@pytest.fixture(scope="module")
def mcp(odd: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from mcp_session import McpSession

    ledger = tmp_path_factory.mktemp("mcp") / "mcp.db"
    _write_ledger(ledger, odd / "note.txt")
    from mcp_session import GUARD

    paths = [str(GUARD), *filter(None, [os.environ.get("PYTHONPATH")])]  # (a checkout's)
    session = McpSession(["mcp", "--ledger", str(ledger), "--root", str(odd),
                          "--allow-command", "echo"], cwd=odd,
                         workdir=tmp_path_factory.mktemp("mcp-logs"),
                         env={"PYTHONPATH": os.pathsep.join(paths)})
    try:
        yield session
    finally:
        session.close()


@pytest.mark.parametrize("name", list(MCP_CALLS))
def test_mcp_odd_arguments_are_tool_errors(mcp: Any, name: str) -> None:
    from mcp_session import text_of

    tool, arguments, starts = MCP_CALLS[name]
    result = mcp.call(tool, **arguments)
    assert result.is_error, text_of(result)
    assert text_of(result).startswith(starts), text_of(result)
    assert not mcp.call("get_source", id=1).is_error  # it serves on
