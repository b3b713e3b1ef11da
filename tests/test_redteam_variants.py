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


OPTION_LOOK_ALIKES = [
    ["ls", "-pw"], ["http", "-a", "bob", "h"], ["mount", "-o", "ro,noatime,uid=1", "/dev/x", "/m"],
    ["zip", "-r", "a.zip", "dir"], ["7z", "a", "-mx9", "a.7z"], ["x", "--opt", "a=1,b=2"],
    ["grep", "-pw"],
]


@pytest.mark.parametrize("argv", OPTION_LOOK_ALIKES, ids=" ".join)
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


# --- issue 13, session 7 (branch leaks): passwords glued to a user or standing by place --
#
# Programs whose password is glued to the user with a separator (Samba's USER%PW,
# Oracle's USER/PW@DB, lftp's USER,PW, httpie's u:PW with a one-letter user, user-info
# without a scheme before a path), or that stands by place after a flag or an operand
# (htpasswd -b FILE USER PW, net use \\srv\share PW, freerdp's /p:PW, -p of the Windows
# and pentest tools) were shown and stored in clear.
GLUED = "Gl0edPassw0rd"
GLUED_SECRETS = [
    # Samba: USER%PASSWORD after -U / --user, glued or not, with a domain
    ["smbclient", "//srv/share", "-U", f"alice%{GLUED}"],
    ["smbclient", "//srv/share", f"--user=alice%{GLUED}"],
    ["smbclient", "//srv/share", "--user", f"alice%{GLUED}"],
    ["smbclient", f"-Ualice%{GLUED}", "//srv/share"],
    ["smbclient", "-U", f"CORP/alice%{GLUED}", "//srv/share"],
    ["smbclient", "-U", f"CORP\\alice%{GLUED}", "-c", "ls", "//srv/share"],
    ["/usr/bin/smbclient", "//srv/share", GLUED, "-U", "alice"],  # service password
    ["rpcclient", "-U", f"alice%{GLUED}", "10.0.0.1"],
    ["smbget", "-U", f"alice%{GLUED}", "smb://srv/x"],
    ["smbcacls", "//srv/s", "f", "-U", f"alice%{GLUED}"],
    ["net", "rpc", "group", "list", "-U", f"alice%{GLUED}", "-S", "srv"],
    ["winexe", "-U", f"alice%{GLUED}", "//host", "cmd"],
    ["samba-tool", "user", "list", "-U", f"admin%{GLUED}"],
    ["wbinfo", "-U", f"alice%{GLUED}", "-a", "x"],
    ["mount", "-t", "cifs", "//srv/s", "/mnt", "-o", f"user=alice%{GLUED},uid=1"],
    ["sh", "-c", f"smbclient //srv/share -U alice%{GLUED} -c ls"],
    # Windows net: the share's password, before or after /user:
    ["net", "use", "Z:", "\\\\srv\\share", GLUED, "/user:alice"],
    ["net", "use", "\\\\srv\\share", "/user:CORP\\alice", GLUED],
    ["net", "use", "\\\\srv\\share", GLUED, "/persistent:no"],
    ["net", "user", "alice", GLUED, "/add"],
    # Oracle: USER/PASSWORD[@CONNECT]
    ["sqlplus", f"alice/{GLUED}@db"], ["sqlplus", f"alice/{GLUED}"],
    ["sqlplus", "-S", f"alice/{GLUED}@//host:1521/svc"],
    ["sqlplus", "-L", f"alice/{GLUED}@db", "@run.sql"],
    ["sqlplus", f'alice/"{GLUED}"@db'], ["sqlplus", f"sys/{GLUED}@db", "as", "sysdba"],
    ["expdp", f"alice/{GLUED}@db", "directory=d"], ["impdp", f"alice/{GLUED}", "full=y"],
    ["sqlldr", f"userid=alice/{GLUED}@db", "control=x.ctl"],
    ["rman", "target", f"sys/{GLUED}@db"], ["dgmgrl", f"sys/{GLUED}@prim"],
    ["sh", "-c", f"sqlplus -s alice/{GLUED}@db @x.sql"],
    # lftp: -u USER,PASSWORD
    ["lftp", "-u", f"alice,{GLUED}", "ftp.example.com"],
    ["lftp", "-u", f"alice,{GLUED}", "sftp://host"],
    # FreeRDP: /p:PASSWORD (and the gateway's), the old -p
    ["xfreerdp", "/u:alice", f"/p:{GLUED}", "/v:host"],
    ["wfreerdp", "/u:alice", f"/p:{GLUED}", "/v:host"],
    ["xfreerdp3", f"/p:{GLUED}", "/v:host"], ["sdl-freerdp", f"/p:{GLUED}", "/v:h"],
    ["xfreerdp", "/v:host", f"/gp:{GLUED}"], ["xfreerdp", "-u", "alice", "-p", GLUED, "h"],
    ["rdesktop", "-u", "alice", "-p", GLUED, "host"],
    # htpasswd in batch mode: the last word
    ["htpasswd", "-b", ".htpasswd", "alice", GLUED],
    ["htpasswd", "-bc", ".htpasswd", "alice", GLUED],
    ["htpasswd", "-nb", "alice", GLUED], ["htpasswd", "-nbB", "alice", GLUED],
    ["htpasswd", "-B", "-C", "12", "-b", "f", "alice", GLUED],
    ["sh", "-c", f"htpasswd -bB /etc/nginx/.htpasswd alice {GLUED}"],
    # user-info without a scheme, before a path, a port or a query; with a domain
    ["curl", f"alice:{GLUED}@example.com/x"],
    ["curl", "-s", f"alice:{GLUED}@example.com:8080/x"],
    ["wget", f"alice:{GLUED}@example.com/f?x=1"],
    ["impacket-psexec", f"CORP/alice:{GLUED}@10.0.0.5"],
    ["secretsdump.py", f"CORP/alice:{GLUED}@dc1", "-just-dc"],
    # httpie/xh: -a with a one-letter user, glued
    ["http", "-a", f"u:{GLUED}", "example.com"], ["https", "-a", f"u:{GLUED}", "h/p"],
    ["xh", "-a", f"u:{GLUED}", "h"], ["http", f"-au:{GLUED}", "h"],
    # -p and -P of other tools whose names say nothing
    ["smbmap", "-u", "alice", "-p", GLUED, "-H", "10.0.0.1"],
    ["crackmapexec", "smb", "h", "-u", "a", "-p", GLUED],
    ["nxc", "smb", "h", "-u", "a", "-p", GLUED], ["netexec", "winrm", "h", "-p", GLUED],
    ["evil-winrm", "-i", "h", "-u", "a", "-p", GLUED],
    ["hydra", "-l", "u", "-p", GLUED, "ssh://h"],
    ["ipmitool", "-I", "lanplus", "-H", "h", "-U", "u", "-P", GLUED, "power", "status"],
    ["snmpwalk", "-v3", "-u", "u", "-A", GLUED, "-X", "Pr1vPassw0rd", "h"],
    ["snmpget", "-v2c", "-c", GLUED, "h", "sysName.0"],
    ["cqlsh", "-u", "u", "-p", GLUED, "h"], ["ncftpget", "-u", "u", "-p", GLUED, "h", ".", "/f"],
    ["swaks", "--to", "a@b", "-au", "u", "-ap", GLUED],
    ["sendemail", "-xu", "u", "-xp", GLUED], ["useradd", "-p", GLUED, "alice"],
    ["unrar", "x", f"-p{GLUED}", "a.rar"], ["rar", "a", f"-p{GLUED}", "a.rar", "f"],
    ["pdftk", "in.pdf", "output", "o.pdf", "user_pw", GLUED],
    ["pdftk", "in.pdf", "input_pw", GLUED, "cat", "output", "o.pdf"],
    ["rabbitmqctl", "add_user", "alice", GLUED], ["rabbitmqctl", "change_password", "a", GLUED],
    ["wpa_passphrase", "HomeNet", GLUED],
    ["mc", "alias", "set", "minio", "http://h:9000", "AKEXAMPLE", GLUED],
    ["tsql", "-S", "srv", "-U", "sa", "-P", GLUED], ["isql", "-U", "sa", "-P", GLUED],
    ["nmcli", "dev", "wifi", "connect", "HomeNet", "password", GLUED],
    ["nmcli", "con", "modify", "HomeNet", "wifi-sec.psk", GLUED],
    ["psexec", "\\\\host", "-u", "CORP\\alice", "-p", GLUED, "cmd"],
    ["PsExec64.exe", "\\\\host", "-u", "alice", "-p", GLUED, "cmd"],
    ["schtasks", "/create", "/tn", "t", "/ru", "alice", "/rp", GLUED, "/tr", "x.exe"],
    ["schtasks", "/query", "/s", "srv", "/u", "alice", "/p", GLUED],
    ["sqsh", "-S", "srv", "-U", "sa", "-P", GLUED],
]


@pytest.mark.parametrize("argv", GLUED_SECRETS, ids=[" ".join(a)[:48] for a in GLUED_SECRETS])
def test_passwords_glued_to_a_user_or_standing_by_place_are_redacted(argv: list[str],
                                                                     tmp_path: Path) -> None:
    located = command_locator(argv, tmp_path, key=b"k" * 32)
    for secret in (GLUED, "Pr1vPassw0rd"):
        assert secret not in located.display and secret not in located.locator
    assert "REDACTED" in located.display and GLUED in located.secrets
    other = command_locator([a.replace(GLUED, "0therPassw0rd") for a in argv], tmp_path,
                            key=b"k" * 32)
    assert other.locator != located.locator  # two values, two sources


@pytest.mark.parametrize(("argv", "shown"), [
    (["smbclient", "//srv/share", "-U", f"alice%{GLUED}"],
     "smbclient //srv/share -U alice%REDACTED"),
    (["sqlplus", f"alice/{GLUED}@db"], "sqlplus alice/REDACTED@db"),
    (["sqlplus", f'alice/"{GLUED}"@db'], "sqlplus 'alice/\"REDACTED\"@db'"),
    (["lftp", "-u", f"alice,{GLUED}", "h"], "lftp -u alice,REDACTED h"),
    (["xfreerdp", "/u:alice", f"/p:{GLUED}"], "xfreerdp /u:alice /p:REDACTED"),
    (["curl", f"alice:{GLUED}@example.com:8080/x?y=1"],
     "curl 'alice:REDACTED@example.com:8080/x?y=1'"),
    (["net", "use", "Z:", "\\\\srv\\s", GLUED, "/user:alice"],
     "net use Z: '\\\\srv\\s' REDACTED /user:alice"),
    (["htpasswd", "-bc", "f", "alice", GLUED], "htpasswd -bc f alice REDACTED"),
], ids=lambda v: v if isinstance(v, str) else " ".join(v)[:30])
def test_the_user_host_and_database_stay_shown(argv: list[str], shown: str,
                                               tmp_path: Path) -> None:
    assert command_locator(argv, tmp_path, key=b"k" * 32).display == f"{shown} (in {tmp_path})"


GLUED_LOOK_ALIKES = [
    ["smbclient", "-L", "srv", "-N"], ["smbclient", "//srv/share", "-U", "alice"],
    ["smbclient", "//srv/share", "-c", "get x"],
    ["smbclient", "//srv/share", "-U", "a", "-c", "ls"],
    ["sqlplus", "/nolog"], ["sqlplus", "/", "as", "sysdba"], ["sqlplus", "-S", "/nolog", "@x.sql"],
    ["sqlplus", "alice@db"], ["htpasswd", "-c", "f", "alice"], ["htpasswd", "-D", "f", "alice"],
    ["htpasswd", "-v", "f", "alice"], ["lftp", "-u", "alice", "h"],
    ["xfreerdp", "/u:alice", "/v:host"], ["curl", "example.com/x"],
    ["git", "clone", "git@github.com:org/repo.git"], ["docker", "pull", "img:tag@sha256:abc"],
    ["net", "use", "Z:", "\\\\srv\\share", "*", "/user:alice"], ["net", "use", "Z:", "/delete"],
    ["net", "view", "\\\\srv"], ["net", "user", "alice"], ["curl", "-E", "C:\\certs\\c.pem", "h"],
    ["rsync", "-a", "src/", "u@h:dst/"], ["cp", "a/b", "c/d"], ["ls", "-p", "dir"],
    ["rabbitmqctl", "list_users"], ["wpa_passphrase", "HomeNet"],
    ["scp", "file", "u@h:/tmp/x"], ["mc", "ls", "minio/bucket"],
]


@pytest.mark.parametrize("argv", GLUED_LOOK_ALIKES, ids=" ".join)
def test_look_alikes_of_glued_passwords_stay_as_written(argv: list[str], tmp_path: Path) -> None:
    assert "REDACTED" not in command_locator(argv, tmp_path, key=b"k" * 32).display
