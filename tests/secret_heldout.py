"""Issue 13, session 9 (branch ``redteam10``): a red-team pass with held-out variants of
the secrets class, the forms docs/reliability.md's Known limits listed as not guessed at
and their neighbours. The case tables, in :mod:`secret_classes`' shape (``(kind, input,
secret)`` cases, ``(kind, input)`` look-alikes); :func:`secret_classes.classes` counts
them for ``make hardening`` and ``test_fed_secrets`` holds every one caught and every
look-alike untouched; ``test_heldout_secrets.py`` runs each on its own and end to end.
"""

from __future__ import annotations

PW = "Hx7Qw2Zr9Lk"  # the secret of every case here
Case = tuple[str, object, str]
LookAlike = tuple[str, object]


def _scripts(*scripts: str) -> list[Case]:
    return [("script", script.replace("PW", PW), PW) for script in scripts]


def _argvs(*argvs: list[str]) -> list[Case]:
    return [("argv", [word.replace("PW", PW) for word in argv], PW) for argv in argvs]


# --- fed on stdin through programs in between, by `yes`, a process substitution ----------
PIPED: list[Case] = _scripts(
    "echo PW | tee log | docker login --password-stdin -u bob r.example.com",
    "printf '%s' PW | base64 -d | docker login --password-stdin -u bob r.example.com",
    "echo PW | tr -d '\\n' | docker login --password-stdin r.example.com",
    "echo PW | cat | sudo -S id", "echo bob:PW | tee /tmp/x | chpasswd",
    "echo PW | sed 's/x/y/' | passwd --stdin bob",
    "echo 'PW' | head -1 | gh auth login --with-token",
    "echo PW | tee /dev/stderr | sudo -S id",
    "printf '%s\\n' PW | xargs -I{} echo {} | kinit bob",
    "printf '%s' PW | xargs echo | kinit bob",
    "{ echo PW; } | tee x | passwd bob",
    "yes PW | passwd bob", "yes PW | head -2 | passwd bob",
    "cat <<< PW | docker login --password-stdin r.example.com",
    "sudo -S id < <(echo PW)", "passwd bob < <(printf '%s\\n%s\\n' PW PW)",
    "printf 'protocol=https\\nhost=h\\nusername=u\\npassword=PW\\n' | git credential approve",
    "read -rs PASSWORD <<< 'PW'; echo ok", "read -s TOKEN <<< PW",
)
PIPED_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "echo hello | tee log | wc -l", "yes | apt-get install x", "yes y | head -3",
    "read -r NAME <<< 'bob'", "cat <<< hello | wc -c", "sort < <(echo b a)",
    "printf 'host=h\\nprotocol=https\\n' | git credential fill",
    "echo hi | tee log | sudo tee /etc/motd",
]]

# --- a password as a default: in shell parameter expansions and in code -----------------
DEFAULTS: list[Case] = [
    *_scripts("curl -u bob:${PASSWORD:-PW} https://h/",
              ": ${DB_PASSWORD:=PW}", "psql -W ${PGPASSWORD:-PW}", "MY_TOKEN=${TOKEN:-PW} ./run",
              "curl -H \"Authorization: Bearer ${TOKEN:-PW}\" https://h/",
              ": \"${API_KEY:=PW}\"", "docker login -p ${REG_PASS-PW} r", "X=${SECRET+PW}"),
    *_argvs(["python3", "-c", "import os; p=os.environ.get('DB_PASSWORD', 'PW')"],
            ["python3", "-c", "import os; connect(password=os.getenv('DBP', 'PW'))"],
            ["python3", "-c", "import os; os.environ.setdefault('API_TOKEN', 'PW')"],
            ["node", "-e", "const t = process.env.TOKEN || 'PW';"],
            ["python3", "-c", "pw = os.environ.get('X', 'PW'); login('u', pw)"],
            ["python3", "-c", "import os; t = os.environ.get('SECRET_KEY') or 'PW'"],
            ["node", "-e", "const k = process.env['API_KEY'] || 'PW'"],
            ["ruby", "-e", "t = ENV['TOKEN'] || 'PW'"],
            ["ruby", "-e", "t = ENV.fetch('TOKEN') { 'PW' }"],
            ["php", "-r", "$p = env('DB_PASSWORD', 'PW');"],
            ["php", "-r", "$p = getenv('DB_PASSWORD') ?: 'PW';"],
            ["python3", "-c", "import os; p = os.getenv('DB_PASS', default='PW')"],
            ["python3", "-c", "c.get('db', 'password', fallback='PW')"],
            ["python3", "-c", "p.add_argument('--token', default='PW')"],
            ["python3", "-c", "p.add_argument('--password', type=str, default='PW')"],
            ["java", "-e", 'System.getenv().getOrDefault("API_TOKEN", "PW")'],
            ["node", "-e", "const t = process.env.GITHUB_TOKEN ?? 'PW'"]),
]
DEFAULTS_LOOK_ALIKES: list[LookAlike] = [
    *[("script", script) for script in [
        "echo ${HOME:-/root}", "X=${EDITOR:-vim} ./run", "echo ${USER:-nobody}",
        "python3 -c \"import os; os.environ.get('HOME', '/root')\"",
        "python3 -c \"p.add_argument('--name', default='bob')\"",
        "node -e \"const p = process.env.PORT || '8080'\""]],
    *[("argv", argv) for argv in [
        ["python3", "-c", "d.get('colour', 'blue')"], ["python3", "-c", "x = a or 'b'"],
        ["node", "-e", "const h = env['HOST'] || 'localhost'"]]],
]

# --- a known call under another name ------------------------------------------------------
RENAMED: list[Case] = _argvs(
    ["python3", "-c", "from requests.auth import HTTPBasicAuth as B; B('u','PW')"],
    ["python3", "-c", "import requests.auth; B = requests.auth.HTTPBasicAuth; B('u','PW')"],
    ["python3", "-c", "from requests.auth import HTTPDigestAuth as D\nr=D('bob', 'PW')"],
    ["python3", "-c", "c = pymysql.connect; c('h','u','PW')"],
    ["python3", "-c", "from ftplib import FTP as F; F('h', 'u', 'PW')"],
    ["python3", "-c", "import requests; auth = requests.auth.HTTPBasicAuth; auth('u', 'PW')"],
    ["python3", "-c", "from pymysql import connect as db; db('h', 'u', 'PW')"],
    ["python3", "-c", "B=HTTPBasicAuth;B('u','PW')"],
)
RENAMED_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["python3", "-c", "from os import path as p; p('a', 'b', 'c')"],
    ["python3", "-c", "c = connect; print(c)"], ["python3", "-c", "import json as j; j.dumps(1)"],
]]

# --- expect and pexpect answering a prompt that names no password -------------------------
PROMPTS: list[Case] = _scripts(
    "expect -c 'spawn ssh h; expect \"Retype\"; send \"PW\\r\"'",
    "expect -c 'spawn su; expect \":\"; send \"PW\\r\"'",
    "expect -c 'spawn sudo -k x; expect \"sudo\\]\"; send \"PW\\r\"'",
    "expect -c 'spawn ssh h; expect \"word:\"; send \"PW\\r\"'",
    "expect -c 'spawn ssh h; expect \"*ssword*\"; send \"PW\\r\"'",
    "expect -c 'spawn ftp h; expect \"Mot de passe\"; send \"PW\\r\"'",
    "expect -c 'spawn vpn; expect \"Enter code\"; send \"PW\\r\"'",
    "expect -c 'spawn x; expect \"Confirm\"; send \"PW\\r\"'",
    "python3 -c \"import pexpect; c=pexpect.spawn('ssh h'); c.expect('word:'); c.sendline('PW')\"",
)
PROMPTS_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "expect -c 'spawn ssh h; expect \"$ \"; send \"exit\\r\"'",
    "expect -c 'spawn ssh h; expect \"yes/no\"; send \"yes\\r\"'",
    "expect -c 'spawn ftp h; expect \"Name\"; send \"bob\\r\"'",
]]

# --- SQL: a CONNECT after an escaped line break, MySQL's PASSWORD('PW') ------------------
SQL: list[Case] = _scripts(
    "echo -e \"whenever sqlerror exit 1\\nconnect scott/PW@db\" | sqlplus -s /nolog",
    "printf 'set pages 0\\nconn scott/PW\\n' | sqlplus -s /nolog",
    "mysql -e \"SET PASSWORD FOR 'u'@'h' = PASSWORD('PW')\"",
    "python3 -c \"u.set_password('PW'); u.save()\"",
    "sqlplus /nolog <<EOF\nset echo on; CONNECT scott/PW@orcl\nEOF",
)
SQL_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "mysql -e \"SELECT PASSWORD_EXPIRED FROM mysql.user\"", "echo -e 'a\\nconnected'",
]]

# --- connection strings: JDBC, Oracle thin, Go's DSN; user-info keyed in an argv ---------
CONNECTIONS: list[Case] = _argvs(
    ["java", "-jar", "a.jar", "jdbc:sqlserver://h:1433;databaseName=d;user=u;password=PW;"],
    ["tool", "jdbc:sqlserver://h;password=PW"], ["tool", "jdbc:oracle:thin:u/PW@h:1521:orcl"],
    ["tool", "u:PW@tcp(127.0.0.1:3306)/db"],
    # URL user-info in a command line: shown REDACTED, keyed in the identity
    ["mongosh", "mongodb+srv://u:PW@cluster0.x.mongodb.net/db"],
    ["redis-cli", "-u", "redis://:PW@h:6379"], ["tool", "rediss://default:PW@h:6380/0"],
    ["psql", "postgresql://u:PW@h/db"], ["tool", "amqp://u:PW@rabbit:5672/vh"],
    ["tool", "postgres://u:PW@h:5432/d?sslmode=require"],
    ["git", "clone", "https://u:PW@github.com/o/r"],
    ["pip", "install", "--index-url", "https://u:PW@pypi.example/simple", "x"],
    ["mongodump", "--uri", "mongodb://u:PW@h/db"], ["rsync", "rsync://u:PW@h/m", "."],
    ["pg_dump", "--dbname=postgresql://u:PW@h/d"], ["curl", "ftp://u:PW@h/f"],
    ["tool", "https://PW@github.com/o/r"],
)
CONNECTIONS_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["tool", "jdbc:sqlserver://h:1433;databaseName=d;encrypt=true"],
    ["tool", "jdbc:oracle:thin:@h:1521:orcl"], ["docker", "pull", "img:tag@sha256:abc"],
    ["git", "clone", "git@github.com:o/r.git"], ["tool", "tcp(127.0.0.1:3306)/db"],
]]

# --- programs: secret options and places not in the table before ------------------------
PROGRAMS: list[Case] = _argvs(
    ["oc", "login", "-u", "u", "-p", "PW", "https://h"], ["twine", "upload", "-p", "PW", "dist/x"],
    ["twine", "upload", "-u", "__token__", "-p", "PW"], ["doctl", "auth", "init", "-t", "PW"],
    ["mysqladmin", "-u", "root", "password", "PW"],
    ["az", "login", "--service-principal", "-u", "id", "-p=PW", "--tenant", "t"],
    ["vault", "kv", "put", "secret/app", "value=PW"], ["vault", "write", "secret/app", "value=PW"],
    ["vault", "operator", "unseal", "PW"],
    ["npm", "config", "set", "//r.npmjs.org/:_authToken=PW"],
    ["npm", "config", "set", "//r.example/:_password", "PW"],
    ["kubectl", "create", "secret", "generic", "x", "--from-literal=foo=PW"],
    ["netlify", "env:set", "API_KEY", "PW"], ["ab", "-A", "u:PW", "http://h/"],
    ["rar", "a", "-hpPW", "x.rar", "f"],
    ["ldappasswd", "-x", "-D", "cn=a", "-w", "w", "-s", "PW", "uid=u"],
    ["ldappasswd", "-a", "PW", "-s", "new", "uid=u"], ["osql", "-S", "h", "-U", "sa", "-P", "PW"],
    ["poetry", "config", "http-basic.repo", "u", "PW"],
    ["aws", "ssm", "put-parameter", "--name", "x", "--type", "SecureString", "--value", "PW"],
)
PROGRAMS_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["oc", "get", "pods", "-p", "x"], ["vault", "read", "secret/app"],
    ["vault", "kv", "get", "-field=x", "secret/app"], ["ab", "-n", "100", "http://h/"],
    ["poetry", "config", "virtualenvs.in-project", "true"], ["npm", "config", "set", "registry",
                                                            "https://r.example/"],
    ["aws", "ssm", "put-parameter", "--name", "x", "--type", "String", "--value", "v1"],
    ["kubectl", "create", "secret", "generic", "x", "--from-file=./a"],
    ["mysqladmin", "-u", "root", "status"], ["rar", "a", "x.rar", "f"],
]]

# --- names of where a secret is kept, not of the secret (shown as written) ---------------
PLACES_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["tool", "--password-file", "/etc/pw"], ["tool", "--token-file", "t.txt"],
    ["gpg", "--passphrase-file", "p.txt", "-d", "f"], ["tool", "--passphrase-fd", "3"],
    ["gcloud", "auth", "activate-service-account", "--key-file=k.json"],
    ["tool", "--password-file=/etc/pw"], ["tool", "PGPASSFILE=/x/.pgpass"],
    ["keytool", "-list", "-keystore", "k.jks"], ["tool", "--keyring", "x"],
    ["openssl", "enc", "-pass", "file:p.txt"], ["openssl", "enc", "-pass", "env:PW"],
    ["openssl", "rsa", "-passin", "fd:3", "-in", "k"], ["docker", "run", "-e",
                                                        "POSTGRES_PASSWORD_FILE=/run/s/pg", "pg"],
]]

# --- more calls taking a password by place ----------------------------------------------
CALLS_BY_PLACE: list[Case] = _argvs(
    ["java", "-e", 'DriverManager.getConnection("jdbc:mysql://h/d", "u", "PW")'],
    ["php", "-r", "ftp_login($c, 'u', 'PW');"], ["php", "-r", "ldap_bind($l, 'cn=admin', 'PW');"],
    ["php", "-r", "ssh2_auth_password($s, 'u', 'PW');"],
    ["php", "-r", "imap_open('{h}', 'u', 'PW');"], ["php", "-r", "oci_connect('u', 'PW', 'db');"],
    ["python3", "-c", "l.simple_bind_s('cn=a', 'PW')"],
    ["python3", "-c", "from pexpect import pxssh; s = pxssh.pxssh(); s.login('h', 'u', 'PW')"],
    ["python3", "-c", "c = DriverManager.getConnection; c('jdbc:x', 'u', 'PW')"],
)
CALLS_BY_PLACE_LOOK_ALIKES: list[LookAlike] = [("argv", argv) for argv in [
    ["php", "-r", "ftp_login($c, $u, $p);"], ["python3", "-c", "l.simple_bind_s(dn, pw)"],
    ["java", "-e", "DriverManager.getConnection(url)"],
]]

# --- written into a credentials file, printed by printf, given as a variable ------------
WRITTEN: list[Case] = _scripts(
    "echo PW > /run/secrets/db_password", "printf '%s' PW > ~/.vault-token",
    "echo PW | tee token.txt", "echo PW | sudo tee -a /etc/app/api.key >/dev/null",
    "cat > ~/.pgpass <<'EOF'\nh:5432:*:u:PW\nEOF", "echo 'h:5432:*:u:PW' >> ~/.pgpass",
    "echo 'machine api.h login u password PW' > ~/.netrc",
    "cat > ~/.netrc <<EOF\nmachine h\n  login u\n  password PW\nEOF",
    "printf 'machine h login u password %s\\n' PW > ~/.netrc",
    "printf 'password=%s\\n' PW > ~/.my.cnf",
    "mysql --defaults-extra-file=<(printf '[client]\\npassword=%s\\n' PW) db",
    "printf 'connect u/%s\\n' PW | sqlplus -s /nolog",
    "P=PW; sshpass -p \"$P\" ssh h", "R=PW; docker login -u bob -p $R r",
    "T=PW; curl -H \"Authorization: Bearer $T\" h", "U=bob; P=PW; curl -u \"$U:$P\" h",
    "for t in PW; do curl -H \"X-Api-Key: $t\" h; done",
    "set -- PW; docker login -u bob -p \"$1\" r",
)
WRITTEN_LOOK_ALIKES: list[LookAlike] = [("script", script) for script in [
    "echo done > /var/log/app.log", "echo 1 > /proc/sys/x", "printf '%s\\n' a b > list.txt",
    "echo 'machine learning' > notes.txt", "printf 'user=%s\\n' bob", "echo hi > keymaster.log",
    "echo 'ssh-ed25519 AAAAC3Nz user' >> ~/.ssh/authorized_keys",
    "echo 'bob:x:1000:1000::/home/bob:/bin/sh' >> /etc/passwd", "X=1; echo $X > count.txt",
    "for f in *.txt; do wc -l $f; done", "set -- a b; echo $1", "printf '%s:%s\\n' host 5432",
    "echo default > mode.txt", "N=bob; ssh -l $N h", "echo ok > pass_through.json",
]]

CLASSES: list[tuple[str, list[Case], list[LookAlike]]] = [
    ("held out: fed through programs in between, by yes, a process substitution, "
     "git credential, read (session 9)", PIPED, PIPED_LOOK_ALIKES),
    ("held out: a password as a default (${V:-PW}, getenv('X', 'PW'), || 'PW'; session 9)",
     DEFAULTS, DEFAULTS_LOOK_ALIKES),
    ("held out: a known call under another name (session 9)", RENAMED, RENAMED_LOOK_ALIKES),
    ("held out: a prompt that names no password (session 9)", PROMPTS, PROMPTS_LOOK_ALIKES),
    ("held out: SQL after an escaped line break, PASSWORD('PW') (session 9)", SQL,
     SQL_LOOK_ALIKES),
    ("held out: connection strings, user-info keyed in a command line (session 9)",
     CONNECTIONS, CONNECTIONS_LOOK_ALIKES),
    ("held out: programs' secret options and places (session 9)", PROGRAMS,
     PROGRAMS_LOOK_ALIKES),
    ("held out: a secret's place (--password-file, -pass file:; session 9)", [],
     PLACES_LOOK_ALIKES),
    ("held out: more calls by place (getConnection, ftp_login, ldap_bind, pxssh; session 9)",
     CALLS_BY_PLACE, CALLS_BY_PLACE_LOOK_ALIKES),
    ("held out: written to a credentials file (.netrc, .pgpass, secrets/), printed by "
     "printf, given as a variable (P=PW; -p \"$P\"; session 9)", WRITTEN, WRITTEN_LOOK_ALIKES),
]
ALL: list[Case] = [case for _, cases, _ in CLASSES for case in cases]
LOOK_ALIKES: list[LookAlike] = [look for _, _, looks in CLASSES for look in looks]
