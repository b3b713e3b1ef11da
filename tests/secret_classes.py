"""Issue 13's secret forms by class: the cases and look-alikes of each, and how many the
code catches and leaves untouched (``make hardening`` prints :func:`measure`, and
``test_fed_secrets.py`` holds every class to all caught, all look-alikes untouched).

Session 8's classes (:data:`FED`, :data:`PLACED`, :data:`CALLS`) are defined here, session
9's held-out variants in :mod:`secret_heldout`; the
earlier sessions' are the tables of their own test files (session 6's secret options,
session 7's glued passwords and URL values by name and shape, session 4's token
shapes), plus shell exports. A case is ``(kind, input, secret)``: kind ``argv`` (a
command's argv), ``script`` (``run --shell``'s script, also run as ``sh -c SCRIPT``) or
``url``; caught means the secret is in neither the display nor the identity of it, and
(for commands) two inputs differing only in the secret are two identities. A look-alike
``(kind, input)`` is untouched when nothing of it is redacted.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from fetchledger.identity.commands import command_locator
from fetchledger.identity.secrets import shown_url
from fetchledger.identity.urls import url_identity

KEY = b"k" * 32
PW = "Fe9dP4ssw0rdQ"  # the password of every session-8 case
NT = "8846f7eaee8fb117ad06bdd830b7586c"
LM = "aad3b435b51404eeaad3b435b51404ee"
Case = tuple[str, object, str]
LookAlike = tuple[str, object]

# --- session 8: a secret fed on standard input, typed to a prompt, or in SQL -----------
FED: list[Case] = [("script", script.format(pw=PW), PW) for script in [
    "echo {pw} | docker login --password-stdin -u bob registry.example.com",
    'echo -n "{pw}" | podman login --username bob --password-stdin quay.io',
    "printf '%s' '{pw}' | helm registry login registry.example.com -u bob --password-stdin",
    "printf '{pw}\\n' | nerdctl login --password-stdin -u bob r.example.com",
    "echo '{pw}' | cosign login ghcr.io -u bob --password-stdin",
    "echo {pw} | gh auth login --with-token",
    "docker login -u bob --password-stdin r.example.com <<< {pw}",
    'docker login -u bob --password-stdin r.example.com <<<"{pw}" && docker pull x',
    "docker login -u bob --password-stdin r.example.com <<EOF\n{pw}\nEOF",
    "echo bob:{pw} | chpasswd",
    "echo 'alice:{pw}' | sudo chpasswd",
    "printf 'bob:{pw}\\n' | /usr/sbin/chpasswd -c SHA512",
    "cat <<'EOF' | chpasswd\nbob:{pw}\nEOF",
    "echo {pw} | passwd --stdin bob",
    'echo -e "{pw}\\n{pw}" | passwd bob',
    "(echo {pw}; echo {pw}) | smbpasswd -s -a bob",
    "echo {pw} | sudo -S apt-get update",
    "sudo -S systemctl restart nginx <<< '{pw}'",
    "echo {pw} | kinit bob@EXAMPLE.COM",
    "echo {pw} | gpg --batch --pinentry-mode loopback --passphrase-fd 0 -d s.gpg",
    "echo {pw} | openssl rsa -in key.pem -passin stdin -out plain.pem",
    "echo {pw} | ansible-vault view --vault-password-file /dev/stdin vault.yml",
    "printf '%s' {pw} | docker secret create db_password -",
    "echo {pw} | gh secret set DB_PASSWORD",
    "echo {pw} | wrangler secret put API_SECRET",
    "echo {pw} | vault login -",
    "echo {pw} | htpasswd -i -c /etc/nginx/.htpasswd bob",
    "echo {pw} | sshpass ssh bob@host uptime",
    "echo {pw} | cryptsetup luksOpen /dev/sdb1 vault",
    "expect -c 'spawn ssh bob@h; expect \"password:\"; send \"{pw}\\r\"; interact'",
    "expect -c 'spawn sudo -k true; expect -re \"(?i)password\"; send -- \"{pw}\\n\"; expect eof'",
    "expect <<'EOF'\nspawn ssh bob@h\nexpect {{\n  \"yes/no\" {{ send \"yes\\r\"; exp_continue }}\n"
    "  \"*assword*\" {{ send \"{pw}\\r\" }}\n}}\nEOF",
    "sqlplus -s /nolog <<EOF\nCONNECT scott/{pw}@orcl\nselect 1 from dual;\nEOF",
    "sqlplus /nolog <<EOF\nconn system/{pw} as sysdba\nEOF",
    'echo "connect scott/{pw}@//db:1521/svc" | sqlplus -s /nolog',
    "sqlplus -s / as sysdba <<EOF\nALTER USER app IDENTIFIED BY {pw};\nEOF",
    "mysql -e \"CREATE USER 'a'@'%' IDENTIFIED WITH mysql_native_password BY '{pw}'\"",
    'db2 "connect to SAMPLE user db2inst1 using {pw}"',
    "echo {pw} | mkpasswd -m sha-512 --stdin", "echo {pw} | openssl passwd -6 -stdin",
    'expect -c "spawn ssh h; expect \\"password:\\"; send \\"{pw}\\r\\"; interact"',
    "ssh host 'echo {pw} | sudo -S systemctl restart app'",
    "echo {pw} | regctl registry login r.example.com -u bob --pass-stdin",
    "printf 'AKIDEXAMPLE1\\n{pw}\\nus-east-1\\njson\\n' | aws configure",
    "printf 'AKIDEXAMPLE1\n{pw}\nus-east-1\n' | aws configure",  # real newlines
    "echo grp:{pw} | chgpasswd", "echo {pw} | pdbedit -a -u bob -t",
    "printf 'DB_PASSWORD={pw}\n' | flyctl secrets import",
    # a variable assigned a literal, then expanded whole into a reader or a send
    "REG={pw}; echo $REG | docker login --password-stdin -u bob r.example.com",
    'NEW={pw}\necho "bob:${{NEW}}" | chpasswd', "P={pw}; sudo -S id <<< \"$P\"",
    "expect -c 'set pw \"{pw}\"; spawn ssh h; expect \"assword:\"; send \"$pw\\r\"'",
]]
FED_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "echo hello | wc -c", "echo hello | grep -c stdin", "printf '%s\\n' a b | sort",
    "cat pw.txt | docker login --password-stdin -u bob registry.example.com",
    "aws ecr get-login-password --region us-east-1 | docker login --username AWS "
    "--password-stdin 1234.dkr.ecr.us-east-1.amazonaws.com",
    'echo "$REGISTRY_PASSWORD" | docker login --password-stdin -u bob r.example.com',
    "echo \"$USER:$NEW_PASSWORD\" | chpasswd", "gh auth login --with-token < token.txt",
    "passwd -l bob", "sudo -S true < /dev/null", "wc -l <<< 'one two'",
    "cat <<EOF | wc -l\nline one\nEOF", "git hash-object --stdin < f",
    "expect -c 'spawn ssh h; expect \"$ \"; send \"uptime\\r\"; expect eof'",
    "sqlplus -s /nolog @script.sql", 'echo "Please connect your device" | tee log',
    "psql -c 'GRANT CONNECT ON DATABASE d TO u'",
    "echo test | sudo tee /etc/x", "cat /etc/passwd | grep root", "echo x | gpg --clearsign",
    "kubectl get secrets | grep x", "git send-email --to a@b x.patch",
    "echo 1 | sudo tee /proc/sys/net/ipv4/ip_forward", "echo ok | logger -t secrets",
    # a prompt ending in a secret's name, its closing quote no value's opening one
    'echo "password:"; echo "hello world"', "printf 'token:'; printf 'none'",
    "X=1; echo $X | wc -l", "N=$(cat pw); echo $N | passwd --stdin bob",
]]

# --- session 8: passwords by place (isql, exp/imp), pass-the-hash ------------------------
PLACED: list[Case] = [("argv", argv, secret) for argv, secret in [
    (["isql", "-v", "MyDSN", "bob", PW], PW), (["isql", "MyDSN", "bob", PW, "-b"], PW),
    (["iusql", "DSN", "u", PW], PW),
    (["exp", f"scott/{PW}@orcl", "file=x.dmp"], PW),
    (["imp", f"userid=scott/{PW}", "file=x.dmp", "full=y"], PW),
    (["exp", f"scott/{PW}", "owner=scott", "file=s.dmp"], PW),
    (["/u01/app/oracle/product/19c/bin/imp", f"system/{PW}@db", "fromuser=a", "touser=b"], PW),
    (["db2", "connect", "to", "SAMPLE", "user", "db2inst1", "using", PW], PW),
    (["secretsdump.py", "-hashes", f"{LM}:{NT}", "CORP/admin@10.0.0.5"], NT),
    (["impacket-psexec", "-hashes", f":{NT}", "admin@10.0.0.5"], NT),
    (["wmiexec.py", f"-hashes={LM}:{NT}", "a@h"], NT),
    (["nxc", "smb", "10.0.0.5", "-u", "admin", "-H", NT], NT),
    (["evil-winrm", "-i", "h", "-u", "a", "-H", NT], NT),
    (["xfreerdp", "/v:h", "/u:a", f"/pth:{NT}"], NT),
    (["openssl", "passwd", "-6", "-salt", "abc", PW], PW), (["openssl", "passwd", "-1", PW], PW),
    (["mkpasswd", "-m", "sha-512", PW], PW),
]]
PLACED_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["exp", "2", "3"], ["exp", "-l", "10"], ["exp", "a/b"], ["imp", "list.txt"],
    ["exp", "x/y", "--scale", "2"], ["isql", "-U", "sa", "-S", "srv", "-D", "db"],
    ["isql", "MyDSN"], ["isql", "-v", "MyDSN", "bob"], ["tool", "-hashes", "hashes.txt"],
    ["hashcat", "-m", "1000", "hashes.txt"], ["nxc", "smb", "10.0.0.0/24"],
    ["db2", "list", "db", "directory"], ["openssl", "passwd", "-6", "-salt", "abc"],
    ["openssl", "passwd", "-in", "words.txt"], ["mkpasswd", "-m", "help"],
    ["openssl", "rand", "-hex", "16"],
]]

# --- session 8: a password by place in an interpreter's code -----------------------------
CALLS: list[Case] = [("argv", argv, PW) for argv in [
    ["python3", "-c", f"import pymysql; pymysql.connect('db', 'root', '{PW}', 'app')"],
    ["python3", "-c", f"import requests; requests.get('https://h/api', auth=('bob', '{PW}'))"],
    ["python3", "-c", f"from requests.auth import HTTPBasicAuth; HTTPBasicAuth('bob', '{PW}')"],
    ["python3", "-c", f"import ftplib; f=ftplib.FTP('h'); f.login('bob', '{PW}')"],
    ["python3", "-c", f"import smtplib; s=smtplib.SMTP_SSL('h'); s.login('me@x.org', \"{PW}\")"],
    ["php", "-r", f"$db = new PDO('mysql:host=h;dbname=d', 'u', '{PW}');"],
    ["perl", "-MDBI", "-e", f"DBI->connect('dbi:Pg:dbname=d', 'u', '{PW}')"],
    ["python3", "-c", f"import paramiko; c=paramiko.SSHClient(); "
     f"c.connect('h', 22, 'bob', '{PW}')"],
    ["php", "-r", f"mysqli_connect('h','u','{PW}','db');"],
    ["python3", "-c", f"import pexpect; c=pexpect.spawn('ssh bob@h'); c.expect('assword'); "
     f"c.sendline('{PW}')"],
    ["python3", "-c", f"import psycopg2; psycopg2.connect(host='h', user='u', password='{PW}')"],
    ["node", "-e", f"require('mysql').createConnection({{host: 'h', password: '{PW}'}})"],
    ["ruby", "-rnet/ftp", "-e", f"Net::FTP.open('h', 'u', '{PW}')"],
]]
CALLS_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["python3", "-c", "print(connect('a'))"], ["python3", "-c", "s.connect(('h', 80))"],
    ["python3", "-c", "import sqlite3; sqlite3.connect('db.sqlite')"],
    ["python3", "-c", "login('alice')"], ["python3", "-c", "connect(host, user, password)"],
    ["python3", "-c", "import os; print(os.getlogin())"],
]]

# --- shell exports (sessions 3-5) ------------------------------------------------------------
EXPORT_VALUE = "ExP0rtedT0ken9"
EXPORTS: list[Case] = [("script", script.format(v=EXPORT_VALUE), EXPORT_VALUE) for script in [
    "export API_TOKEN={v}; ./deploy", "export DB_PASSWORD='{v}' && psql",
    "declare -x SECRET_KEY={v}",
    "env GITHUB_TOKEN={v} gh repo list", "AWS_SECRET_ACCESS_KEY={v} aws s3 ls",
    "typeset -x PASSWD={v}", 'export "MYSQL_PWD={v}"', "export TOKEN=\"{v}\" OTHER=1",
]]
EXPORTS_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "export PATH=/usr/local/bin:$PATH", "export EDITOR=vim", "env LANG=C sort f",
    "export KEYBOARD=us", "declare -x HOME=/root",
]]


def _earlier_classes() -> list[tuple[str, list[Case], list[LookAlike]]]:
    """Sessions 4, 6 and 7's classes, from their own test files' tables."""
    import test_leak_variants as leaks
    import test_redteam_variants as redteam
    import test_secret_shapes as shapes

    return [
        ("secret options of programs (--pw, plink -pw, zip -P, 7z -p, comma lists; session 6)",
         [("argv", argv, redteam.SECRET) for argv in redteam.ARGV_SECRETS],
         [("argv", argv) for argv in redteam.OPTION_LOOK_ALIKES]),
        ("command passwords glued to a user or by place (USER%PW, USER/PW@DB, /p:PW; "
         "session 7)",
         [("argv", argv, redteam.GLUED) for argv in redteam.GLUED_SECRETS],
         [("argv", argv) for argv in redteam.GLUED_LOOK_ALIKES]),
        ("URL values secret by name and shape (?code=, tickets, /reset-password/V; "
         "session 7)",
         [("url", url, leaks._secret_in(url)) for url in leaks.URL_SECRETS if "#" not in url],
         [("url", url) for url in leaks.URL_LOOK_ALIKES]),
        ("tokens known by their shape, as a bare argv word (session 4)",
         [("argv", ["tool", token], token) for token in shapes.TOKENS.values()],
         [("argv", ["tool", word]) for word in shapes.NEAR_MISSES]),
    ]


def classes() -> list[tuple[str, list[Case], list[LookAlike]]]:
    return [*_earlier_classes(),
            ("shell exports and assignments (export NAME=V, env NAME=V cmd)", EXPORTS,
             EXPORTS_LOOK_ALIKES),
            ("secrets fed on stdin, typed to a prompt or in SQL (session 8)", FED,
             FED_LOOK_ALIKES),
            ("passwords by place: isql, exp/imp, db2, openssl passwd, -hashes LM:NT (session 8)",
             PLACED,
             PLACED_LOOK_ALIKES),
            ("passwords by place in interpreter code (session 8)", CALLS, CALLS_LOOK_ALIKES),
            *_held_out_classes()]


def _held_out_classes() -> list[tuple[str, list[Case], list[LookAlike]]]:
    """Session 9's held-out variants (:mod:`secret_heldout`)."""
    import secret_heldout

    return secret_heldout.CLASSES


def _replaced(value: object, secret: str, other: str) -> object:
    if isinstance(value, str):
        return value.replace(secret, other)
    return [word.replace(secret, other) for word in value]  # type: ignore[attr-defined]


def _identity_and_display(kind: str, value: object, folder: str) -> tuple[str, str]:
    if kind == "url":
        return url_identity(str(value), KEY), shown_url(str(value))
    if kind == "script":
        located = command_locator([str(value)], folder, shell=True, key=KEY)
        return located.locator, located.display
    located = command_locator(list(value), folder, key=KEY)  # type: ignore[call-overload]
    return located.locator, located.display


def caught(kind: str, value: object, secret: str, folder: str = "/") -> bool:
    """Whether ``secret`` is out of ``value``'s identity and display (also as ``sh -c``
    for a script), and two values are two identities."""
    identity, display = _identity_and_display(kind, value, folder)
    if secret in identity or secret in display:
        return False
    if kind == "script":
        located = command_locator(["sh", "-c", str(value)], folder, key=KEY)
        if secret in located.locator or secret in located.display:
            return False
    other = secret[::-1] if secret[::-1] != secret else secret + "x"
    return _identity_and_display(kind, _replaced(value, secret, other), folder)[0] != identity


def untouched(kind: str, value: object, folder: str = "/") -> bool:
    _, display = _identity_and_display(kind, value, folder)
    if kind == "url":
        return "REDACTED" not in display
    if kind == "script":
        return "REDACTED" not in display
    return display == f"{shlex.join(value)} (in {folder})"  # type: ignore[arg-type]


def measure(folder: str = "/") -> list[list[object]]:
    """Per class: cases caught / total, look-alikes untouched / total (the real code)."""
    rows: list[list[object]] = []
    for name, cases, look_alikes in classes():
        hit = sum(caught(kind, value, secret, folder) for kind, value, secret in cases)
        kept = sum(untouched(kind, value, folder) for kind, value in look_alikes)
        rows.append([name, f"{hit} / {len(cases)}", f"{kept} / {len(look_alikes)}"])
    return rows


def failures(folder: str = "/") -> list[str]:
    """The cases not caught and the look-alikes touched, for a test's message."""
    out: list[str] = []
    for name, cases, look_alikes in classes():
        out += [f"{name}: {value!r}" for kind, value, secret in cases
                if not caught(kind, value, secret, folder)]
        out += [f"{name} (look-alike): {value!r}" for kind, value in look_alikes
                if not untouched(kind, value, folder)]
    return out


def ids(values: Sequence[object], shorten: Callable[[object], str] = str) -> list[str]:
    return [shorten(value)[:60] for value in values]


__all__ = ["CALLS", "FED", "PLACED", "PW", "caught", "classes", "failures",
           "measure", "untouched"]
