"""Issue 13, red-team pass of session 6: held-out variants that failed on main.

- forged output: invisible format characters (zero-width space and joiners, word
  joiner, BOM, soft hyphen, invisible operators, U+180E, the deprecated format controls
  U+206A-U+206F that reshape digits and swap brackets, the invisible musical marks)
  kept by a file name, URL or command line reached every output raw: two names that
  look the same were two sources;
- the MCP server answered a request holding a lone surrogate escape (``"\\ud800"``)
  with a parse error without its id: the client waited for ever;
- secrets: `--pw V`, plink's `-pw V`, httpie's and xh's `-a USER:PW`, zip's `-P`,
  7-Zip's `-pPW`, ssh-keygen's `-N`/`-P`, the Mosquitto clients' `-P`, and a comma-
  separated option list (`mount -o user=u,password=PW`) were shown in clear.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from fetchledger.identity.commands import command_locator
from fetchledger.models import json_text
from fetchledger.text.normalize import printable

INVISIBLE = {
    "zero-width space": "\u200b", "zero-width non-joiner": "\u200c", "zero-width joiner": "\u200d",
    "word joiner": "\u2060", "BOM": "\ufeff", "soft hyphen": "\u00ad",
    "invisible times": "\u2062", "Mongolian vowel separator": "\u180e",
    "national digit shapes": "\u206e", "inhibit symmetric swapping": "\u206a",
    "musical begin beam": "\U0001d173", "shorthand format letter overlap": "\U0001bca0",
}


@pytest.mark.parametrize("char", list(INVISIBLE.values()), ids=list(INVISIBLE))
def test_the_display_function_shows_invisible_format_characters(char: str) -> None:
    shown = printable(f"report{char}.txt")
    assert char not in shown and shown.startswith("report\\") and shown.endswith(".txt")
    text = json_text({"name": f"a{char}b"})  # the same JSON, the character escaped
    assert char not in text and json.loads(text) == {"name": f"a{char}b"}


def test_visible_text_is_left_as_it_is() -> None:
    plain = "Straße 水 — “quoted” é ١٢٣ \u00a0 ️☺︎ 👍🏽"
    assert printable(plain) == plain


def _raw_invisible(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text.replace("\n", "")
            if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def test_file_names_with_invisible_characters_are_shown_escaped(tmp_path: Path,
                                                                run_cli: Any) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    files = []
    for n, char in enumerate(INVISIBLE.values()):
        path = folder / f"tides{char}.txt"
        path.write_text(f"Harbour {n} sees two tides a day.\n", encoding="utf-8")
        files.append(str(path))
    (folder / "tides.txt").write_text("Harbour sees two tides a day.\n", encoding="utf-8")
    read = run_cli("read", *files, str(folder / "tides.txt"))
    assert read.exit_code == 0, read.stderr
    assert _raw_invisible(read.stdout + read.stderr) == []
    headers = [line for line in read.stdout.splitlines() if not line.split("] ", 1)[1]
               .startswith('"')]
    assert len(set(h.split("] ", 1)[1] for h in headers)) == len(INVISIBLE) + 1  # told apart
    draft = tmp_path / "draft.md"
    draft.write_text("Harbours see two tides a day.[1][2][3]\n", encoding="utf-8")
    for verb in (["list"], ["--json", "list"], ["show", "1"], ["--json", "show", "2"],
                 ["show", "3", "--outline"], ["quotes", "tides"],
                 *(["render", str(draft), "--style", style]
                   for style in ("markdown", "plain", "footnotes", "evidence", "bibtex",
                                 "csl-json"))):
        result = run_cli(*verb)
        assert result.exit_code == 0, (verb, result.stderr)
        assert _raw_invisible(result.stdout + result.stderr) == [], verb


def test_command_lines_with_invisible_characters_are_shown_escaped(run_cli: Any) -> None:
    result = run_cli("run", "--", "echo", "tides\u200b\u206e 123")
    assert result.exit_code == 0, result.stderr
    assert _raw_invisible(result.stdout) == [] and "\\u200b" in result.stdout


SECRET = "S3cr3tVal9"
ARGV_SECRETS = [
    ["foo", "--pw", SECRET], ["plink", "-pw", SECRET, "host"], ["pscp", "-pw", SECRET, "a", "h:b"],
    ["http", "-a", f"bob:{SECRET}", "https://h/"], ["xh", "-a", f"bob:{SECRET}", "h/p"],
    ["/usr/bin/http", "-a", f"bob:{SECRET}", "POST", "h"], ["zip", "-P", SECRET, "a.zip", "f"],
    ["unzip", "-P", SECRET, "a.zip"], ["7z", "x", f"-p{SECRET}", "a.7z"],
    ["ssh-keygen", "-N", SECRET, "-f", "key"], ["ssh-keygen", "-p", "-P", SECRET, "-N", "x1y2z3"],
    ["mosquitto_pub", "-P", SECRET, "-t", "x"],
    ["mount", "-o", f"username=u,password={SECRET}", "//h/s", "/mnt"],
    ["sshfs", "-o", f"reconnect,pass={SECRET},uid=1", "h:/", "m"],
    ["qemu-system-x86_64", "-drive", f"file=x,password-secret={SECRET}"],
    ["sh", "-c", f"mount -o user=u,password={SECRET} //h/s /mnt"],
]


@pytest.mark.parametrize("argv", ARGV_SECRETS, ids=[" ".join(a)[:40] for a in ARGV_SECRETS])
def test_more_secret_options_are_redacted(argv: list[str], tmp_path: Path) -> None:
    located = command_locator(argv, tmp_path, key=b"k" * 32)
    assert SECRET not in located.display and SECRET not in located.locator
    assert "REDACTED" in located.display and SECRET in located.secrets
    other = command_locator([a.replace(SECRET, "0therVal7") for a in argv], tmp_path,
                            key=b"k" * 32)
    assert other.locator != located.locator  # two values, two sources


@pytest.mark.parametrize("argv", [
    ["ls", "-pw"], ["http", "-a", "bob", "h"], ["mount", "-o", "ro,noatime,uid=1", "/dev/x", "/m"],
    ["zip", "-r", "a.zip", "dir"], ["7z", "a", "-mx9", "a.7z"], ["x", "--opt", "a=1,b=2"],
    ["grep", "-pw"],
], ids=" ".join)
def test_look_alikes_stay_as_written(argv: list[str], tmp_path: Path) -> None:
    assert "REDACTED" not in command_locator(argv, tmp_path, key=b"k" * 32).display


def test_mcp_answers_a_lone_surrogate_escape_with_the_request_id(tmp_path: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "fetchledger", "--ledger", str(tmp_path / "l.db"), "mcp",
         "--root", str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, cwd=tmp_path)
    assert server.stdin is not None and server.stdout is not None
    try:
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}
        server.stdin.write(json.dumps(hello).encode() + b"\n"
                           + b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 0
        for request_id, arguments in ((7, b'{"text": "Tides \\ud800 twice.[1]"}'),
                                      ("s", b'{"query": "\\udfff tides"}')):
            tool = b"check" if request_id == 7 else b"search_quotes"
            server.stdin.write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode()
                               + b', "method": "tools/call", "params": {"name": "' + tool
                               + b'", "arguments": ' + arguments + b"}}\n")
            server.stdin.flush()
            answer = json.loads(server.stdout.readline())
            assert answer["id"] == request_id and answer["error"]["code"] == -32600
            assert "surrogate" in answer["error"]["message"]
        server.stdin.write(b'{"jsonrpc": "2.0", "id": 9, bad\n')  # no JSON: still -32700
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        assert answer["id"] is None and answer["error"]["code"] == -32700
    finally:
        server.stdin.close()
        server.wait(10)
