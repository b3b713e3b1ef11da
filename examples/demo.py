"""An offline end-to-end run of fetchledger: `make demo`.

A fresh ledger in a temporary folder; local files (Markdown, HTML, text, a
PDF with printed page labels), a web page and a JSON API served by a loopback
HTTP server started here, and a command's output are registered; quotes are
searched and confirmed; a draft citing them gets its Sources block rendered
and is checked, then a careless draft is checked too. Along the way every
snippet handed out is checked verbatim against the stored text.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent

DRAFT = """# Cooking water in the mountains

Water boils at 100 °C at sea level.[1] At the highest kitchen of the survey,
4,150 metres up, it boiled at 86.2 degrees Celsius.[4] A pressure cooker traps
steam so that water "boils at roughly 120 °C instead of 100 °C".[2]

Swiss glaciers lost 4 percent of their remaining volume in 2023.[5]
"""

CARELESS = """# Notes

Water boils at 80 °C on Everest [1]. See https://example.com/boiling for more.
Swiss glaciers lost 9 percent of their volume in 2023.[5][9]
"""


def start_site() -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve examples/site on 127.0.0.1 (an ephemeral port) in a thread."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(HERE / "site"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Session:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.snippets_checked = 0

    def run(self, *args: str, expect: int = 0, stdin: str | None = None) -> str:
        """Run one fetchledger command, print it like a terminal session, return stdout."""
        print(f"$ fetchledger {shlex.join(args)}")
        done = subprocess.run([sys.executable, "-m", "fetchledger", *args], env=self.env,
                              input=stdin, capture_output=True, text=True, check=False)
        for stream in (done.stdout, done.stderr):
            if stream.strip():
                print(stream.rstrip())
        print(f"(exit {done.returncode})\n")
        if done.returncode != expect:
            sys.exit(f"demo failed: expected exit {expect}, got {done.returncode}")
        return done.stdout

    def check_verbatim(self, output: str) -> None:
        """Every snippet in §5 JSON output must be text[start:end] of its source."""
        for item in json.loads(output):
            if "error" in item:
                continue
            text = subprocess.run(
                [sys.executable, "-m", "fetchledger", "show", str(item["source"]["id"]),
                 "--text"], env=self.env, capture_output=True, text=True, check=True).stdout
            for snippet in item["snippets"]:
                assert text[snippet["start"]:snippet["end"]] == snippet["quote"], snippet
                assert "\n" not in snippet["quote"]
                self.snippets_checked += 1


def main() -> None:
    server, site = start_site()
    with tempfile.TemporaryDirectory(prefix="fetchledger-demo-") as tmp:
        env = {**os.environ, "FETCHLEDGER_LEDGER": str(Path(tmp) / "ledger.db")}
        env.pop("FETCHLEDGER_ALLOW_PRIVATE", None)
        os.chdir(HERE)
        demo = Session(env)
        print(f"# a fresh ledger at {env['FETCHLEDGER_LEDGER']}\n")

        print("# local files: Markdown, HTML, text and a PDF, each registered in one call\n")
        demo.run("read", "sources/boiling-point.md", "sources/pressure-cooker.html",
                 "sources/field-notes.txt", "sources/altitude-report.pdf", "-q",
                 "water boils temperature")
        demo.check_verbatim(demo.run("--json", "read", "sources/boiling-point.md",
                                     "sources/altitude-report.pdf", "-q", "Everest 86.2"))

        print(f"# a web page and a JSON API on a loopback server ({site});")
        print("# loopback is refused by default, so --allow-private opens it\n")
        demo.run("fetch", f"{site}/glaciers.html", expect=3)
        demo.check_verbatim(demo.run("--json", "--allow-private", "fetch",
                                     f"{site}/glaciers.html?utm_source=demo", "-q",
                                     "glaciers lost volume 2023"))
        demo.run("--allow-private", "curl", "-H", "Authorization: Bearer demo-secret-token",
                 f"{site}/stations.json")
        demo.run("--allow-private", "fetch", f"{site}/missing.html", expect=3)

        print("# a command's output is a source too\n")
        demo.run("run", "--", "wc", "-l", "sources/field-notes.txt")

        print("# searching the whole ledger, confirming a quote, listing\n")
        demo.check_verbatim(demo.run("--json", "quotes", "pressure", "cooker", "-k", "2"))
        demo.run("quote", "2", "water boils at roughly 120 °C")
        demo.run("quote", "1", "water boils at about 60 °C", expect=1)
        demo.run("list")
        demo.run("list", "--failed")

        print("# writing: render the Sources block from the ledger, then check\n")
        draft = Path(tmp) / "draft.md"
        draft.write_text(DRAFT)
        demo.run("render", str(draft), "--in-place")
        print(draft.read_text())
        demo.run("check", str(draft))
        careless = Path(tmp) / "careless.md"
        careless.write_text(CARELESS)
        demo.run("check", str(careless), expect=1)
        demo.run("read", "sources/no-such-file.pdf", expect=2)

        ledger_bytes = b"".join(p.read_bytes() for p in Path(tmp).glob("ledger.db*"))
        assert b"demo-secret-token" not in ledger_bytes, "a secret reached the ledger"
        print(f"# demo ok: {demo.snippets_checked} snippets checked verbatim against the "
              "stored text; the curl secret is nowhere in the ledger files")
    server.shutdown()


if __name__ == "__main__":
    main()
