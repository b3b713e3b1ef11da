"""Issue 13, session 9: held-out variants of the secrets class (the tables are
:mod:`secret_heldout`): secrets fed through programs in between, given as defaults,
passed to renamed calls, typed to prompts naming no password, in SQL after an escaped
line break, in connection strings (and URL user-info in a command line, which merged
two passwords into one source), and programs' options not in the table; and names of
where a secret is kept (``--password-file PATH``), which were redacted.
"""

from __future__ import annotations

import base64
import shlex
import time
from pathlib import Path
from typing import Any

import pytest

import secret_classes
from fetchledger import Ledger
from fetchledger.identity.commands import command_locator
from secret_heldout import ALL, LOOK_ALIKES, PW
from test_fed_secrets import _ledger_holds

from measured import best_ms

KEY = secret_classes.KEY
OTHER = "0therHeldOutPw"


def _short(value: object) -> str:
    return (value if isinstance(value, str) else " ".join(map(str, value)))[:60]  # type: ignore[arg-type]


def _located(kind: str, value: object, folder: Path, replaced: str) -> Any:
    if kind == "script":
        return command_locator([str(value).replace(PW, replaced)], folder, shell=True, key=KEY)
    return command_locator([w.replace(PW, replaced) for w in value], folder,  # type: ignore[attr-defined]
                           key=KEY)


@pytest.mark.parametrize(("kind", "value", "secret"), ALL, ids=[_short(c[1]) for c in ALL])
def test_the_secret_leaves_display_and_identity_and_keys_it(kind: str, value: object,
                                                             secret: str,
                                                             tmp_path: Path) -> None:
    located = _located(kind, value, tmp_path, PW)
    assert PW not in located.display and PW not in located.locator
    assert "REDACTED" in located.display and PW in located.secrets  # scrubbed from output
    assert _located(kind, value, tmp_path, PW).locator == located.locator  # one source
    other = _located(kind, value, tmp_path, OTHER)
    assert OTHER not in other.display and other.locator != located.locator  # two sources
    if kind == "script":  # run --shell and `sh -c SCRIPT` are one source
        argv = command_locator(["sh", "-c", str(value)], tmp_path, key=KEY)
        assert argv.locator == located.locator and PW not in argv.display


@pytest.mark.parametrize(("kind", "value"), LOOK_ALIKES, ids=[_short(c[1]) for c in LOOK_ALIKES])
def test_look_alikes_stay_as_written(kind: str, value: object) -> None:
    assert secret_classes.untouched(kind, value)


@pytest.mark.parametrize(("argv", "shown"), [
    (["git", "clone", f"https://u:{PW}@github.com/o/r"], "git clone https://REDACTED@github.com/o/r"),
    (["tool", f"jdbc:sqlserver://h;user=u;password={PW};"],
     "tool 'jdbc:sqlserver://h;user=u;password=REDACTED;'"),
    (["tool", f"u:{PW}@tcp(h:3306)/db"], "tool 'u:REDACTED@tcp(h:3306)/db'"),
    (["az", "login", "-u", "id", f"-p={PW}"], "az login -u id -p=REDACTED"),
    (["vault", "kv", "put", "secret/app", f"value={PW}", "ttl=1h"],
     "vault kv put secret/app value=REDACTED ttl=REDACTED"),
    (["openssl", "enc", "-pass", "file:p.txt", "-passout", f"pass:{PW}"],
     "openssl enc -pass file:p.txt -passout REDACTED"),
    (["sh", "-c", f"echo {PW} | tee log | docker login --password-stdin r.io"],
     "echo REDACTED | tee log | docker login --password-stdin r.io"),
    (["sh", "-c", f"psql -W ${{PGPASSWORD:-{PW}}} db"], "psql -W '${PGPASSWORD:-REDACTED}' db"),
], ids=lambda v: v if isinstance(v, str) else _short(v))
def test_what_is_not_secret_stays_shown(argv: list[str], shown: str, tmp_path: Path) -> None:
    display = command_locator(argv, tmp_path, key=KEY).display
    if argv[0] == "sh":
        shown = shlex.join([*argv[:2], shown])
    assert display == f"{shown} (in {tmp_path})"


def test_user_info_in_a_command_line_keys_the_identity_not_only_the_display() -> None:
    """Two passwords, or two users, of one URL in a command line were one source."""
    def locator(userinfo: str) -> str:
        return command_locator(["git", "clone", f"https://{userinfo}@h.example/r"], "/",
                               key=KEY).locator
    assert len({locator(f"u:{PW}"), locator(f"u:{OTHER}"), locator(f"v:{PW}")}) == 3
    assert locator(f"u:{PW}") == locator(f"u:{PW}")


def test_a_secrets_place_is_no_secret_in_urls_and_names_either() -> None:
    from fetchledger.identity.secrets import is_secret_name, shown_url

    for name in ("password_file", "--token-path", "passphrase-fd", "keystore", "PGPASSFILE"):
        assert not is_secret_name(name), name
    for name in ("password", "keyfile_password", "token", "secret_key", "passfile_key"):
        assert is_secret_name(name), name
    assert "REDACTED" not in shown_url("https://h.example/?password_file=/x")


# --- end to end: nothing of the secret in the ledger file -----------------------------

STUBS = ("docker() { cat >/dev/null; echo 'Login Succeeded'; }; passwd() { cat; }; "
         "kinit() { cat >/dev/null; echo ok; }; ")
E2E_SCRIPTS = [
    f"{STUBS}echo {PW} | tee /dev/null | docker login --password-stdin -u bob r.example.com",
    f"{STUBS}yes {PW} | head -2 | passwd bob",  # prints what it was fed: scrubbed
    f"{STUBS}passwd bob < <(echo {PW})",
    f"echo ${{DB_PASSWORD:-{PW}}}",  # prints the default
    f"bash -c \"read -rs TOKEN <<< '{PW}'; echo got \\$TOKEN\"",
    f"{STUBS}printf '%s' {PW} | xargs echo | kinit bob",
    f"mkdir -p s && echo {PW} > s/token.txt && cat s/token.txt",  # prints the file written
    f"printf 'machine h login u password %s\\n' {PW} > n && cat n",
    f"P={PW}; sshpass() {{ echo \"using $2\"; }}; sshpass -p \"$P\" ssh h",
]


@pytest.mark.parametrize("script", E2E_SCRIPTS, ids=["tee", "yes", "substitution", "default",
                                                     "read", "xargs", "file", "netrc",
                                                     "variable"])
def test_run_shell_keeps_the_secret_out_of_the_ledger(script: str, tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        first = ledger.run(["bash", "-c", script], cwd=tmp_path)
        again = ledger.run(["bash", "-c", script], cwd=tmp_path)
        other = ledger.run(["bash", "-c", script.replace(PW, OTHER)], cwd=tmp_path)
        assert again.source.id == first.source.id and other.source.id != first.source.id
        assert PW not in first.source.locator and "REDACTED" in first.source.locator
        assert PW not in ledger.text(first.source.id)
    assert _ledger_holds(path, PW) == [] and _ledger_holds(path, OTHER) == []


BY_ARGV_E2E = [
    ["python3", "-c", f"import os; print('token', os.environ.get('API_TOKEN', '{PW}'))"],
    ["python3", "-c", f"B = print; HTTPBasicAuth = B; A = HTTPBasicAuth; A('u', '{PW}')"],
    ["bash", "-c", f"git() {{ echo \"cloning $2\"; }}; git clone https://u:{PW}@h.example/r"],
    ["bash", "-c", f"vault() {{ echo \"stored $4\"; }}; vault kv put secret/app value={PW}"],
]


@pytest.mark.parametrize("argv", BY_ARGV_E2E, ids=["default", "renamed", "userinfo", "vault"])
def test_run_keeps_a_held_out_secret_out_of_the_ledger(argv: list[str], tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        first = ledger.run(argv, cwd=tmp_path)
        other = ledger.run([w.replace(PW, OTHER) for w in argv], cwd=tmp_path)
        assert other.source.id != first.source.id and "REDACTED" in first.source.locator
        assert PW not in ledger.text(first.source.id)
        with pytest.raises(Exception, match="command not found"):  # an attempt's locator too
            ledger.run(["no-such-program-9", *argv[1:]], cwd=tmp_path)
    assert _ledger_holds(path, PW) == [] and _ledger_holds(path, OTHER) == []


def test_the_cli_and_the_mcp_server_keep_a_held_out_secret_out(tmp_path: Path, run_cli: Any,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """`run --shell` of the CLI and `run_command` of the MCP server (bash allowed)."""
    from mcp_session import McpSession, text_of

    path = tmp_path / "cli.db"
    monkeypatch.chdir(tmp_path)
    script = f"{STUBS}echo {PW} | tee /dev/null | docker login --password-stdin -u bob r.io"
    result = run_cli("--ledger", str(path), "run", "--shell", "--", script)
    assert result.exit_code == 0, result.stderr
    assert PW not in result.stdout + result.stderr
    session = McpSession(["mcp", "--ledger", str(path), "--allow-command", "bash"],
                         cwd=tmp_path, workdir=tmp_path / "logs")
    try:
        called = session.call("run_command", argv=["bash", "-c", f"echo ${{API_TOKEN:-{PW}}}"])
        assert not called.is_error, text_of(called)
        assert PW not in text_of(called) and "REDACTED" in text_of(called)
    finally:
        session.close()
    assert _ledger_holds(path, PW) == []


def test_an_echoed_secret_header_in_base64_is_scrubbed(tmp_path: Path) -> None:
    """A page echoing a secret header's value base64-encoded (as it echoes user-info's
    Basic pair): that form is scrubbed too (values of 8 characters or more)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Echo(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            lines = [f"<p>Header {k} is {base64.b64encode(v.encode()).decode()}.</p>"
                     for k, v in self.headers.items()]
            data = ("<html><body>" + "".join(lines) + "<p>bees</p></body></html>").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        path = tmp_path / "ledger.db"
        with Ledger(path, allow_private=True) as ledger:
            for header in (f"X-Api-Key: {PW}", f"X-AUTH-TOKEN: {PW}", f"Cookie: a=1; sid={PW}",
                           f"X-Client-Secret: {OTHER}"):
                ledger.curl(["-H", header, f"http://127.0.0.1:{server.server_address[1]}/e"])
    finally:
        server.shutdown()
    for value in (PW, OTHER):
        encoded = base64.b64encode(value.encode()).decode()
        assert _ledger_holds(path, encoded.rstrip("=")) == [], value
        assert _ledger_holds(path, value) == []


# --- linear time ----------------------------------------------------------------------

HELD_OUT_SHAPES = {  # n → a script of about n * 20 characters
    "echo vN | tee l | passwd": lambda n: "".join(
        f"echo v{i} | tee l | passwd; " for i in range(n * 2 // 3)),
    "${TOKEN:-vN}": lambda n: "".join(f"echo ${{TOKEN:-v{i}}}; " for i in range(n)),
    "get('TOKEN','vN')": lambda n: "python3 -c \"" + "".join(
        f"os.environ.get('TOKEN','v{i}'); " for i in range(n * 2 // 3)) + "\"",
    "B(...) after an alias": lambda n: "python3 -c \"B = HTTPBasicAuth; " + "".join(
        f"B('u','v{i}'); " for i in range(n * 4 // 3)) + "\"",
    "a name run before get(": lambda n: "a" * (n * 20) + " get(",
    "x=x=x= get(": lambda n: "x=" * (n * 10) + "get(",
    "[ 'a' ] || repeated": lambda n: "['a'] || " * (n * 2),
    "('--x', … default": lambda n: "('--x', " * (n * 2) + "default='v'",
    "sudo -S x < <(echo vN)": lambda n: "".join(
        f"sudo -S x < <(echo v{i}); " for i in range(n * 3 // 4)),
    "expect word: send vN": lambda n: "expect -c '" + "".join(
        f'expect "word:"; send "v{i}\\r"; ' for i in range(n * 2 // 3)) + "'",
    "jdbc ;a=b pairs": lambda n: "jdbc:sqlserver://h" + ";a=b" * (n * 5),
    "echo vN > token.txt": lambda n: "".join(f"echo v{i} > token.txt; " for i in range(n)),
    "printf 'password=%s' vN": lambda n: "".join(
        f"printf 'password=%s\\n' v{i}; " for i in range(n * 2 // 3)),
    "P=vN; sshpass -p $P": lambda n: "".join(
        f"P{i}=v{i}; sshpass -p \"$P{i}\" h; " for i in range(n * 2 // 3)),
    "netrc lines": lambda n: "cat > ~/.netrc <<EOF\n" + "".join(
        f"machine h{i} login u password v{i}\n" for i in range(n // 2)) + "EOF",
    "'>' runs and printf %s runs": lambda n: ">" * (n * 10) + " printf '" + "%s" * (n * 5) + "'",
}


@pytest.mark.parametrize("shape", list(HELD_OUT_SHAPES))
def test_held_out_rules_are_linear(shape: str) -> None:
    def cpu(n: int) -> float:
        text = HELD_OUT_SHAPES[shape](n)
        return best_ms(lambda _: command_locator([text], "/", shell=True, key=KEY), 3,
                       clock=time.process_time) / 1000

    small, large = cpu(500), cpu(5000)  # about 10,000 and 100,000 characters
    assert large < 0.5, f"{large * 1000:.0f} ms of CPU"  # (at most about 70 ms here)
    assert large < max(small, 0.002) * 25, (small, large)  # linear, not quadratic
