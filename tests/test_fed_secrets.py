"""Issue 13, session 8: secrets a command line gives a program other than as an
option's value, stored in clear on main (docs/reliability.md, Known limits):

- fed on standard input by a pipeline, a here-string or a heredoc inside ``run
  --shell`` / ``sh -c`` scripts (``echo PW | docker login --password-stdin``, ``echo
  u:PW | chpasswd``, ``CMD <<< PW``, ``sudo -S``, ``kinit``, ``gh secret set``...);
- typed to a prompt by expect (``send "PW\\r"``) or pexpect (``sendline('PW')``);
- SQL lines in a script (``CONNECT u/PW@db``, ``IDENTIFIED BY PW``, DB2 ``USING PW``);
- by place: unixODBC ``isql DSN USER PW``, Oracle ``exp``/``imp`` ``USER/PW@DB``
  (only where shaped as a logon), impacket's ``-hashes LM:NT``, ``nxc``/``evil-winrm
  -H``, ``xfreerdp /pth:``;
- by place in an interpreter's code (``connect('h', 'u', 'PW')``, ``login('u', 'PW')``,
  ``auth=('u', 'PW')``).

The case tables are :mod:`secret_classes` (``make hardening`` prints their counts).
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import secret_classes
from fetchledger import Ledger
from fetchledger.identity.commands import command_locator
from secret_classes import (
    CALLS,
    CALLS_LOOK_ALIKES,
    FED,
    FED_LOOK_ALIKES,
    PLACED,
    PLACED_LOOK_ALIKES,
    PW,
    caught,
    untouched,
)

from measured import best_ms

KEY = secret_classes.KEY
OTHER = "0therFedPassw0rd"


def _short(value: object) -> str:
    return (value if isinstance(value, str) else " ".join(map(str, value)))[:60]  # type: ignore[arg-type]


def _located(kind: str, value: object, folder: Path, secret: str, replaced: str) -> Any:
    if kind == "script":
        return command_locator([str(value).replace(secret, replaced)], folder, shell=True,
                               key=KEY)
    return command_locator([w.replace(secret, replaced) for w in value], folder,  # type: ignore[attr-defined]
                           key=KEY)


ALL = [*FED, *PLACED, *CALLS]


@pytest.mark.parametrize(("kind", "value", "secret"), ALL, ids=[_short(c[1]) for c in ALL])
def test_the_secret_leaves_display_and_identity_and_keys_it(kind: str, value: object,
                                                             secret: str,
                                                             tmp_path: Path) -> None:
    located = _located(kind, value, tmp_path, secret, secret)
    assert secret not in located.display and secret not in located.locator
    assert "REDACTED" in located.display and secret in located.secrets  # scrubbed from output
    again = _located(kind, value, tmp_path, secret, secret)
    assert again.locator == located.locator  # the same secret: one source
    other = _located(kind, value, tmp_path, secret, secret[::-1])  # (a hash stays hex)
    assert secret[::-1] not in other.display and other.locator != located.locator
    if kind == "script":  # run --shell and `sh -c SCRIPT` are one source
        argv = command_locator(["sh", "-c", str(value)], tmp_path, key=KEY)
        assert argv.locator == located.locator and secret not in argv.display


LOOK_ALIKES = [*FED_LOOK_ALIKES, *PLACED_LOOK_ALIKES, *CALLS_LOOK_ALIKES]


@pytest.mark.parametrize(("kind", "value"), LOOK_ALIKES, ids=[_short(c[1]) for c in LOOK_ALIKES])
def test_look_alikes_stay_as_written(kind: str, value: object) -> None:
    assert untouched(kind, value)


@pytest.mark.parametrize(("argv", "shown"), [
    (["sh", "-c", f"echo {PW} | docker login --password-stdin -u bob registry.example.com"],
     "echo REDACTED | docker login --password-stdin -u bob registry.example.com"),
    (["sh", "-c", f"echo bob:{PW} | chpasswd"], "echo bob:REDACTED | chpasswd"),
    (["sh", "-c", f"sudo -S id <<< {PW}"], "sudo -S id <<< REDACTED"),
    (["isql", "-v", "MyDSN", "bob", PW], "isql -v MyDSN bob REDACTED"),
    (["exp", f"scott/{PW}@orcl", "file=x.dmp"], "exp scott/REDACTED@orcl file=x.dmp"),
    (["secretsdump.py", "-hashes", f"{secret_classes.LM}:{secret_classes.NT}", "a@h"],
     "secretsdump.py -hashes REDACTED a@h"),
    (["python3", "-c", f"c=connect('h','u','{PW}')"], "c=connect('h','u','REDACTED')"),
], ids=lambda v: v if isinstance(v, str) else _short(v))
def test_what_is_not_secret_stays_shown(argv: list[str], shown: str, tmp_path: Path) -> None:
    display = command_locator(argv, tmp_path, key=KEY).display
    if argv[0] in ("sh", "python3"):
        shown = shlex.join([*argv[:2], shown])
    assert display == f"{shown} (in {tmp_path})"


@pytest.mark.parametrize("text", ['{"password":"V4lueQ9x"}', "{'password': 'V4lueQ9x'}",
                                  "curl -d \"password='V4lueQ9x'\" h", "TOKEN = 'V4lueQ9x'",
                                  "os.environ['TOKEN']='V4lueQ9x'"])
def test_keyed_quotes_are_still_read_beside_the_prompt_rule(text: str) -> None:
    located = command_locator([f"echo {shlex.quote(text)}; {text}"], "/", shell=True, key=KEY)
    assert "V4lueQ9x" not in located.display and "REDACTED" in located.display


def test_every_class_of_issue_13_is_caught_and_its_look_alikes_untouched() -> None:
    """The figures ``make hardening`` prints: every case of every class caught (sessions
    4-8), every look-alike untouched."""
    assert secret_classes.failures() == []


def test_a_case_of_each_class_is_caught_by_the_measure() -> None:
    assert caught(*FED[0]) and caught(*PLACED[0]) and caught(*CALLS[0])
    assert not caught("script", "echo hello | wc -c", "hello")  # the measure can fail


# --- end to end: nothing of the secret in the ledger file ---------------------------------

STUBS = ("docker() { cat >/dev/null; echo 'Login Succeeded'; }; "
         "chpasswd() { cat; }; kinit() { cat >/dev/null; echo ok; }; ")
E2E_SCRIPTS = [
    f"{STUBS}echo {PW} | docker login --password-stdin -u bob registry.example.com",
    f"{STUBS}echo bob:{PW} | chpasswd",  # prints what it was fed: scrubbed from the output
    f"bash -c \"kinit() {{ cat >/dev/null; echo ok; }}; kinit bob@EXAMPLE.COM <<< '{PW}'\"",
    f"{STUBS}cat <<'EOF' | chpasswd\nbob:{PW}\nEOF",
]


def _ledger_holds(path: Path, value: str) -> list[str]:
    """Where ``value`` is in the SQLite ledger at ``path``: every column of every table,
    and the raw bytes of the file and its write-ahead log."""
    places = []
    db = sqlite3.connect(path)
    try:
        tables = [name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                for cell in row:
                    data = cell if isinstance(cell, bytes) else str(cell).encode()
                    if value.encode() in data:
                        places.append(table)
    finally:
        db.close()
    for file in path.parent.iterdir():
        if file.name.startswith(path.name) and value.encode() in file.read_bytes():
            places.append(file.name)
    return places


@pytest.mark.parametrize("script", E2E_SCRIPTS, ids=["docker", "chpasswd", "herestring",
                                                     "heredoc"])
def test_run_shell_keeps_the_secret_out_of_the_ledger(script: str, tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        first = ledger.run([script], shell=True, cwd=tmp_path)
        again = ledger.run(["sh", "-c", script], cwd=tmp_path)
        other = ledger.run([script.replace(PW, OTHER)], shell=True, cwd=tmp_path)
        assert again.source.id == first.source.id  # the same script: one source
        assert other.source.id != first.source.id  # another secret: another source
        assert PW not in first.source.locator and "REDACTED" in first.source.locator
        assert PW not in ledger.text(first.source.id)
    assert _ledger_holds(path, PW) == [] and _ledger_holds(path, OTHER) == []


BY_PLACE_E2E = [  # bash functions stand in for the programs (their names are no POSIX names)
    ["bash", "-c", f"isql() {{ echo connected; }}; isql -v MyDSN bob {PW}"],
    ["bash", "-c", f"exp() {{ echo exported; }}; exp scott/{PW}@orcl file=x.dmp"],
    ["bash", "-c", f"impacket-secretsdump() {{ echo dumped; }}; impacket-secretsdump "
     f"-hashes {secret_classes.LM}:{secret_classes.NT} admin@10.0.0.5"],
    ["python3", "-c", f"def connect(*a): print('connected to', a[0])\nconnect('h', 'u', '{PW}')"],
    ["python3", "-c", f"import sys; auth=('bob', '{PW}'); print('user', auth[0])"],
]


@pytest.mark.parametrize("argv", BY_PLACE_E2E, ids=["isql", "exp", "hashes", "connect", "auth"])
def test_run_keeps_a_password_by_place_out_of_the_ledger(argv: list[str], tmp_path: Path) -> None:
    secret = secret_classes.NT if "-hashes" in argv[2] else PW
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        first = ledger.run(argv, cwd=tmp_path)
        other = ledger.run([w.replace(secret, secret[::-1]) for w in argv], cwd=tmp_path)
        assert other.source.id != first.source.id and "REDACTED" in first.source.locator
        with pytest.raises(Exception, match="command not found"):  # an attempt's locator too
            ledger.run([argv[2].split("; ", 1)[1].split()[0], *argv[2].split()[2:]]
                       if argv[0] == "bash" else ["no-such-python3", *argv[1:]], cwd=tmp_path)
    assert _ledger_holds(path, secret) == [] and _ledger_holds(path, secret[::-1]) == []


def test_the_cli_run_keeps_a_piped_password_out_of_the_ledger(tmp_path: Path,
                                                              run_cli: Any,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    path = tmp_path / "cli.db"
    monkeypatch.chdir(tmp_path)
    script = f"{STUBS}echo {PW} | docker login --password-stdin -u bob r.example.com"
    result = run_cli("--ledger", str(path), "run", "--shell", "--", script)
    assert result.exit_code == 0, result.stderr
    assert PW not in result.stdout + result.stderr
    listed = run_cli("--ledger", str(path), "--json", "list")
    assert PW not in listed.stdout and "r.example.com" in listed.stdout
    assert _ledger_holds(path, PW) == []


# --- linear time ----------------------------------------------------------------------------

FED_SHAPES = {  # n → a script of about n * 20 characters
    "echo vN | sudo -S y": lambda n: "".join(f"echo v{i} | sudo -S y; " for i in range(n)),
    "heredocs to passwd": lambda n: "".join(f"passwd <<E\nv{i}\nE\n" for i in range(n)),
    "expect send vN": lambda n: "expect -c '" + "".join(
        f'expect "password:"; send "v{i}\\r"; ' for i in range(n // 2)) + "'",
    "connect('h','u','vN')": lambda n: "python3 -c \"" + "".join(
        f"connect('h','u','v{i}'); " for i in range(n)) + "\"",
    ") | passwd, nothing fed": lambda n: ") | passwd " * (2 * n),
    "unterminated heredocs": lambda n: "passwd <<E\n" * (2 * n),
    "a hint and 14,000 pipes": lambda n: "passwd; " + "a | b; " * (3 * n),
    "V_N=vN; echo $V_N | passwd": lambda n: "".join(
        f"V_{i}=v{i}; echo $V_{i} | passwd; " for i in range(2 * n // 3)),
}


@pytest.mark.parametrize("shape", list(FED_SHAPES))
def test_fed_secrets_are_found_in_linear_time(shape: str) -> None:
    import time

    def cpu(n: int) -> float:
        text = FED_SHAPES[shape](n)
        return best_ms(lambda _: command_locator([text], "/", shell=True, key=KEY), 3,
                       clock=time.process_time) / 1000

    small, large = cpu(500), cpu(5000)  # about 10,000 and 100,000 characters
    assert large < 0.5, f"{large * 1000:.0f} ms of CPU"  # (about 60 ms on this machine)
    assert large < max(small, 0.002) * 25, (small, large)  # linear, not quadratic
