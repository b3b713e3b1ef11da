"""Command-line rules by program and by place (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: the secret options of well-known programs
whose names say nothing (:data:`PROGRAM_OPTIONS`), the words that make the next one a
secret by where they stand (``NAME = V``, ``git config user.password V``, ``gh secret
set``), and where a shell's script stands in its argv (``sh -c SCRIPT``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import compress, count

from .secrets import Mark, is_secret_name

__all__ = ["COMMA_PAIRS", "PASS_SOURCE", "PROGRAM_OPTIONS", "SAMBA_USER", "SAMBA_USER_GATE",
           "comma_pair", "jdbc_pairs_marked", "jdbc_thin_marked", "names_next_by_place",
           "ntlm_hashes"]

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})

# Programs whose secret options have names that say nothing: program → option →
# how its value is given ("attached": only as -pVALUE, since a lone -p asks for the
# password and the next word is something else; "both": -p VALUE or -pVALUE). For
# the registry clients the option is secret only after their `login` subcommand.
# A password glued to the user after a separator keeps the user shown: "after-colon"
# (USER:PW), "after-percent" (Samba's USER%PW), "after-comma" (lftp's USER,PW), each
# as the next word, glued to a short option (-UUSER%PW) or after a long one's `=`
# (--user=USER%PW). "prefix": the option and its value are one word (FreeRDP's /p:PW).
# By place: "cluster-last" (a flag cluster holding the letter, htpasswd -nb or -bc,
# makes the command's last word the password), "operandN" (the Nth operand after the
# word: rabbitmqctl add_user USER PW), "sub-operandN" (only as the program's first
# operand: Windows' net user NAME PW), "after-share" (the operand after a //srv/share
# or \\srv\share word, Windows switches between: net use \\srv\s PW, smbclient
# //srv/s PW). The key "" applies at the program's own word (wpa_passphrase SSID PW);
# "logon": every word USER/PW or USER/PW@CONNECT (Oracle, also after userid=);
# "logon-shaped": the same only where the command is one (Oracle's exp and imp, whose
# names are common words: a word USER/PW@CONNECT or userid=USER/PW, or USER/PW beside
# one of their PARAMETER=VALUE words); "odbc-operand3": unixODBC's isql DSN USER PW,
# unless Sybase's -U/-P/-S options are given.
_MYSQL = {"-p": "both"}  # a word after a lone -p: a password typed there, or a database
_MONGO = {"-p": "both"}
_LOGIN = {"-p": "both"}
_LDAP = {"-w": "both"}
_HTTPIE = {"-a": "after-colon"}
_ZIP = {"-P": "separate"}  # also the Mosquitto clients'
_7ZIP = {"-p": "attached"}
_SAMBA = {"-U": "after-percent", "--user": "after-percent"}  # -U USER%PASSWORD
_DASH_P = {"-p": "separate"}  # -u USER -p PASSWORD
_FREERDP = {"/p:": "prefix", "/gp:": "prefix", "/pth:": "prefix", "-p": "separate"}
_ORACLE = {"": "logon"}
_ORACLE_EXPORT = {"": "logon-shaped"}
_ODBC = {"-P": "separate", "": "odbc-operand3"}
_WINDOWS_TOOLS = {"-p": "separate", "-H": "separate"}  # -H NTHASH (pass the hash)
_SNMP = {"-A": "separate", "-X": "separate", "-c": "separate"}  # auth, privacy, community
PROGRAM_OPTIONS: dict[str, dict[str, str]] = {
    **dict.fromkeys(("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow",
                     "mysqlcheck", "mysqlpump", "mariadb", "mariadb-dump"), _MYSQL),
    **dict.fromkeys(("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
                     "mongoimport"), _MONGO),
    **dict.fromkeys(("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami",
                     "ldappasswd"), _LDAP),
    "sshpass": {"-p": "both"},
    "redis-cli": {"-a": "both", "AUTH": "rest", "auth": "rest"},  # AUTH [user] password
    "sqlcmd": {"-P": "both"},
    "bcp": {"-P": "both"},
    "openssl": {"-passin": "separate", "-passout": "separate", "-pass": "separate",
                "-k": "separate", "passwd": "last-operand"},  # openssl passwd -6 PW
    "mkpasswd": {"": "last-operand"},  # mkpasswd -m sha-512 PW
    # -b: a cookie string (a=1; b=2), without `=` a file name; -E/--cert FILE:PASSWORD
    "curl": {"-b": "cookies", "-E": "after-colon", "--cert": "after-colon",
             "--proxy-cert": "after-colon"},
    "az": {"-p": "separate"},  # az login -u NAME -p PASSWORD
    # httpie and xh: -a USER:PASSWORD (as curl's -u); zip's, 7-Zip's and ssh-keygen's
    # passwords and passphrases; the Mosquitto clients' -P PASSWORD
    **dict.fromkeys(("http", "https", "xh", "xhs"), _HTTPIE),
    **dict.fromkeys(("zip", "unzip", "zipcloak", "funzip"), _ZIP),
    **dict.fromkeys(("7z", "7za", "7zr", "7zz"), _7ZIP),
    "ssh-keygen": {"-N": "separate", "-P": "separate"},
    **dict.fromkeys(("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), _ZIP),
    # vault login TOKEN, vault operator unseal KEY; every NAME=V that vault write, kv
    # put and kv patch store
    "vault": {"login": "positional", "unseal": "positional", "write": "pairs", "put": "pairs",
              "patch": "pairs"},
    **dict.fromkeys(("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                     "crane", "regctl"), _LOGIN),
    # Samba's clients: -U USER%PASSWORD (smbclient also takes the service's password
    # after it); Windows' net: net use \\srv\share PASSWORD, net user NAME PASSWORD
    **dict.fromkeys(("rpcclient", "smbget", "smbcacls", "smbcquotas", "smbtree", "smbspool",
                     "pth-winexe", "pth-smbclient", "pth-rpcclient", "pth-net", "pth-wmic",
                     "winexe", "samba-tool", "wbinfo", "mount.cifs", "mount.smb3"), _SAMBA),
    "smbclient": {**_SAMBA, "": "after-share"},
    "net": {**_SAMBA, "use": "after-share", "user": "sub-operand2"},
    # Oracle: USER/PASSWORD[@CONNECT] (sqlplus alice/pw@db, sqlldr userid=alice/pw)
    **dict.fromkeys(("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl", "sqlcl"),
                    _ORACLE),
    **dict.fromkeys(("exp", "imp"), _ORACLE_EXPORT),
    "lftp": {"-u": "after-comma"},  # lftp -u USER,PASSWORD
    **dict.fromkeys(("xfreerdp", "xfreerdp3", "wfreerdp", "sdl-freerdp", "sdl-freerdp3",
                     "wlfreerdp", "wlfreerdp3"), _FREERDP),
    "htpasswd": {"-b": "cluster-last"},  # htpasswd -b FILE USER PASSWORD, -nb USER PASSWORD
    # -p PASSWORD of Windows and network-testing tools, remote desktops, FTP and Cassandra
    # clients; hydra's -P is a word list
    **dict.fromkeys(("crackmapexec", "cme", "nxc", "netexec", "evil-winrm"), _WINDOWS_TOOLS),
    **dict.fromkeys(("smbmap", "rdesktop", "hydra", "cqlsh", "ncftp", "ncftpget", "ncftpput",
                     "ncftpls", "smbtar", "useradd", "usermod", "unar", "lsar"), _DASH_P),
    "ipmitool": {"-P": "separate"},
    # Sysinternals PsExec: psexec \\\\host -u USER -p PASSWORD; schtasks /RU USER /RP PASSWORD
    **dict.fromkeys(("psexec", "psexec64", "psexec.exe", "psexec64.exe", "PsExec",
                     "PsExec64", "PsExec.exe", "PsExec64.exe"), _DASH_P),
    "schtasks": {"/RP": "separate", "/rp": "separate", "/P": "separate", "/p": "separate"},
    "sqsh": {"-P": "separate"},
    "tsql": _ZIP,  # FreeTDS, Sybase: -U USER -P PASSWORD
    # unixODBC: isql [OPTIONS] DSN USER PASSWORD (its options are one word each); Sybase
    **dict.fromkeys(("isql", "iusql"), _ODBC),
    "db2": {"using": "separate"},  # db2 connect to DB user USER using PASSWORD
    # NetworkManager: nmcli dev wifi connect SSID password PW, con modify X wifi-sec.psk PW
    "nmcli": {"password": "separate", "wifi-sec.psk": "separate",
              "802-11-wireless-security.psk": "separate"},
    **dict.fromkeys(("snmpwalk", "snmpget", "snmpgetnext", "snmpbulkwalk", "snmpbulkget",
                     "snmpset", "snmptable", "snmptrap", "snmpinform", "snmpdelta",
                     "snmpdf", "snmpnetstat", "snmpstatus", "snmptest", "snmpusm"), _SNMP),
    "swaks": {"-ap": "separate"}, "sendemail": {"-xp": "separate"},
    "sendEmail": {"-xp": "separate"},
    **dict.fromkeys(("rar", "unrar"), _7ZIP),
    "pdftk": {"user_pw": "separate", "owner_pw": "separate", "input_pw": "separate"},
    "rabbitmqctl": {"add_user": "operand2", "change_password": "operand2"},
    "wpa_passphrase": {"": "operand2"},
    "mc": {"set": "operand4", "add": "operand4"},  # mc alias set NAME URL ACCESS SECRET
    # OpenShift's oc login -u USER -p PASSWORD (after `login`, as the registries);
    # twine upload -p PASSWORD; doctl -t TOKEN; mysqladmin password NEW (its verb)
    "oc": _LOGIN, "twine": _DASH_P, "doctl": {"-t": "separate"},
    "ab": {"-A": "after-colon", "-P": "after-colon"},  # ApacheBench: -A USER:PW, proxy's -P
    "aws": {"--value": "secure-string"},  # aws ssm put-parameter --type SecureString --value V
    "osql": {"-P": "both"},
}
PROGRAM_OPTIONS["mysqladmin"] = {**_MYSQL, "password": "separate"}
PROGRAM_OPTIONS["ldappasswd"] = {**_LDAP, "-s": "both", "-a": "both"}  # new and old passwords
PROGRAM_OPTIONS["rar"] = PROGRAM_OPTIONS["unrar"] = {**_7ZIP, "-hp": "attached"}  # -hpPW
_PROGRAMS = frozenset(PROGRAM_OPTIONS)
# openssl's pass phrase arguments that say where it is (-pass file:PATH, env:VAR, fd:N,
# stdin); pass:V is the secret
PASS_SOURCE = re.compile(r"(?:file|env|fd):\S+|stdin")
_NEEDS_LOGIN = frozenset({"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                          "crane", "regctl", "oc"})


# Words that name the word after them a secret, by where they stand:
# `NAME = V`, `NAME : V` and `NAME: V`, `NAME= V` (split over words); `git config
# user.password V`, `aws configure set aws_secret_access_key V` (a secret-like setting
# after a setting verb); and in a secrets command (`gh secret set NAME --body V`,
# `doppler secrets set NAME V`, `flyctl secrets set NAME=V`) every value it sets.
_SPLIT = frozenset({"=", ":", "==", ":="})
_SETTING_VERBS = frozenset({"config", "configure", "set", "config:set", "setx",
                            "env:set"})  # netlify env:set NAME V
_SECRET_COMMANDS = frozenset({"secret", "secrets", "config:set"})  # heroku, dokku config:set
_VERBS = _SETTING_VERBS | _SECRET_COMMANDS
_VERB_SPELLINGS = frozenset(spelled for verb in _VERBS  # redis-cli CONFIG SET, Set
                            for spelled in (verb, verb.upper(), verb.title()))
_SECRET_COMMAND_OPTIONS = frozenset({"--value", "--body", "-b", "--data", "--secret"})
_BARE_NAME = re.compile(r"-{0,2}[^\W\d][\w.-]*")
def _bare_secret(name: str) -> bool:
    return bool(_BARE_NAME.fullmatch(name)) and is_secret_name(name)


def names_next_by_place(word: str) -> bool:
    """Whether ``word``, ending in ``:`` or ``=``, may make the next word a secret by
    where it stands in :func:`_positional_secrets` (a bare secret-like name before them:
    ``password:``); no other such word (``{"api_key":``, a heredoc's JSON, whose quoted
    value its own rule finds) makes a command of no other special word need the rules
    as a whole. With ``PLACED_BY_NAME`` off (tests): every such word."""
    return not PLACED_BY_NAME or (len(word) > 1 and _bare_secret(word.rstrip(":=")))


PLACED_BY_NAME = True


def _positional_secrets(words: Sequence[str]) -> dict[int, str]:
    """Index → the prefix kept (``""`` or ``NAME=``), for each word that is a secret by
    where it stands (see :data:`_SPLIT`)."""
    values: dict[int, str] = {}
    setting = secret_command = False
    for i, word in enumerate(words[:-1]):
        lowered = word.lower()
        if word in _VERB_SPELLINGS:
            setting = setting or lowered in _SETTING_VERBS
            secret_command = secret_command or lowered in _SECRET_COMMANDS
            continue
        after = words[i + 1]
        if after.startswith("-") and len(after) > 1:
            continue  # an option, not a value
        split = (word in _SPLIT and i > 0 and _bare_secret(words[i - 1])) or (
            len(word) > 1 and word.endswith((":", "=")) and _bare_secret(word.rstrip(":=")))
        if setting and lowered.startswith("http-basic.") and i + 2 < len(words):
            values[i + 2] = ""  # poetry config http-basic.REPO USER PASSWORD
        set_here = setting and not word.startswith("-") and (
            is_secret_name(word) or (secret_command and words[i - 1] in _VERB_SPELLINGS))
        if split or set_here or (secret_command and word in _SECRET_COMMAND_OPTIONS):
            values[i + 1] = ""
    if secret_command:
        for i, word in enumerate(words):
            name, equals, value = word.partition("=")
            if equals and value and _BARE_NAME.fullmatch(name) and not name.startswith("-"):
                values.setdefault(i, name + "=")
            elif name == "--from-literal" and "=" in value:  # every literal of a secret
                values.setdefault(i, f"{name}={value.partition('=')[0]}=")
    return values


def _program_secrets(words: Sequence[str]) -> dict[int, str | tuple[str, str]]:
    """Index → the part of the word kept before the value (``""``, ``-p``, ``alice%``),
    or the parts kept before and after it (``alice/`` and ``@db``), for each word that is
    (or holds) the value of a well-known program's secret option or place
    (:data:`PROGRAM_OPTIONS`)."""
    values: dict[int, str | tuple[str, str]] = {}
    options: dict[str, str] = {}
    glued: tuple[tuple[str, str], ...] = ()
    waiting_login = False
    program_at, program_name = -1, ""
    last, (looked, skip) = len(words) - 1, _looked_at(words)
    inert: dict[tuple[str, str], bool] = {}  # (program, word): whether it changes nothing
    for i, word in looked:
        if skip and not waiting_login and _skipped(word, program_name, inert):
            continue
        program = word if "/" not in word else word.rsplit("/", 1)[-1]
        if program in PROGRAM_OPTIONS:
            options, glued = PROGRAM_OPTIONS[program], _GLUED[program]
            program_name = program
            waiting_login = program in _NEEDS_LOGIN
            program_at = i
            own = options.get("")
            if own is not None and own != "logon":
                _by_place(words, i, own, values, program_at)
            continue
        if waiting_login:
            waiting_login = word != "login"
            continue
        if not options or i in values:
            continue
        if options.get("", "logon-shaped") != "logon-shaped" and "/" in word \
                and _logon(word, i, values):
            continue  # Oracle's USER/PASSWORD[@CONNECT]
        form = options.get(word) or _equals_form(word, options)
        flag = _CLUSTER.get(program_name)
        if form is None and flag is not None and word[:1] == "-" and flag in word[1:]:
            form = "cluster-last"  # htpasswd -nb, -bc, -bB: the batch flag in a cluster
        if form == "rest":  # every word after it
            values.update(dict.fromkeys(range(i + 1, len(words)), ""))
        elif form is None or form == "prefix":
            pass
        elif form.startswith(("operand", "sub-operand", "after-share", "cluster", "last-",
                              *_VALUED_FORMS)):
            _by_place(words, i, form, values, program_at)
        elif i == last:
            pass
        elif form in _KEPT_BEFORE:
            kept = _kept_before(form, words[i + 1])
            if kept is not None:
                values[i + 1] = kept
        elif form == "positional":
            if not words[i + 1].startswith("-"):
                values[i + 1] = ""
        elif form != "attached" and (form != "cookies" or "=" in words[i + 1]) and not (
                program_name == "openssl" and PASS_SOURCE.fullmatch(words[i + 1])):
            values[i + 1] = ""
        if glued and i not in values:
            _glued_value(word, i, glued, values)
    return values


def _equals_form(word: str, options: dict[str, str]) -> str | None:
    """"equals" for ``-p=V`` where ``-p V`` is a secret option (az login -p=V)."""
    if "=" in word and word[:1] == "-" and options.get(word.partition("=")[0]) in (
            "separate", "both"):
        return "equals"
    return None


_VALUED_FORMS = ("secure-string", "pairs", "equals")


def _valued_after(words: Sequence[str], i: int, form: str,
                  values: dict[int, str | tuple[str, str]]) -> None:
    """The values of the forms "pairs" (every NAME=V after ``words[i]``: vault write),
    "secure-string" (the next word, when the command stores a SecureString) and "equals"
    (``-p=V``: V)."""
    if form == "equals":
        values[i] = words[i].partition("=")[0] + "="
        return
    if form == "secure-string":
        if i + 1 < len(words) and "SecureString" in words:
            values[i + 1] = ""
        return
    values.update({j: f"{words[j].partition('=')[0]}=" for j in range(i + 1, len(words))
                   if "=" in words[j][1:] and words[j][:1] != "-"
                   and _BARE_NAME.fullmatch(words[j].partition("=")[0])})


_ORACLE_THIN = re.compile(r"(?i)jdbc:oracle:\w+:([^\s/@:]+)/([^\s@]+)@")


_JDBC_PAIRS = re.compile(r"(?<=;)[^;=\s]+=[^;\s]*")


def jdbc_pairs_marked(authority: str, found: list[str], mark: Mark) -> str:
    """A JDBC authority's ``;NAME=VALUE`` pairs (``h:1433;user=u;password=V``) with the
    values of secret-like names marked."""
    def pair(match: re.Match[str]) -> str:
        name, _, value = match.group().partition("=")
        if not value or not is_secret_name(name):
            return match.group()
        found.append(value)
        return f"{name}={mark(value)}"

    return _JDBC_PAIRS.sub(pair, authority)


def jdbc_thin_marked(argument: str, found: list[str], mark: Mark) -> str:
    """``jdbc:oracle:thin:USER/PASSWORD@HOST…`` with the password marked."""
    thin = _ORACLE_THIN.search(argument)
    if thin is None:
        return argument
    found.append(thin.group(2))
    return f"{argument[:thin.start(2)]}{mark(thin.group(2))}{argument[thin.end(2):]}"


SKIP_INERT = True  # (tests turn it off to compare: every word through the loop)
# Every word an option of a program is, but those of a dash (or slash: /p:)
_OPTION_WORDS = frozenset(option for options in PROGRAM_OPTIONS.values()
                          for option in options if option[:1] not in ("-", "/"))


def _skipped(word: str, program: str, inert: dict[tuple[str, str], bool]) -> bool:
    """Whether ``word`` (not waited for as a verb), after ``program`` (or none yet), makes
    :func:`_program_secrets` note nothing and change nothing: no program, no option of
    it, no logon, no cluster, no glued option's start (the 7,692 ``-u`` of ``curl -u
    u:V1 -u u:V2 ...``: each after the first skipped); asked once per program and word."""
    known = inert.get((program, word))
    if known is None:
        options = PROGRAM_OPTIONS.get(program, {})
        flag = _CLUSTER.get(program)
        known = inert[program, word] = SKIP_INERT and (
            (word if "/" not in word else word.rsplit("/", 1)[-1]) not in PROGRAM_OPTIONS
            and word not in options and not ("" in options and "/" in word)
            and _equals_form(word, options) is None
            and not (flag is not None and word[:1] == "-" and flag in word[1:])
            and not any(word.startswith(option) for option, _ in _GLUED.get(program, ())))
    return known


def _looked_at(words: Sequence[str]) -> tuple[Iterable[tuple[int, str]], bool]:
    """The places and words of ``words`` that :func:`_program_secrets` may act on: a
    program, an option (every glued option and cluster starts with ``-`` or ``/``), a
    path or logon (``/``); all of them after a program waiting for its ``login`` verb
    (docker). The others change nothing there (7,692 ``u:V`` after ``-u``: skipped in
    C). And whether to skip each word known to change nothing (:func:`_skipped`): where
    those looked at repeat (the 7,692 ``-u``), not where they are distinct (URLs)."""
    if not SKIP_INERT or len(words) <= 16:
        return enumerate(words), False
    distinct = set(words)
    joined = "\0".join(distinct)  # (a program waiting for login: its name is in a word)
    if any(name in joined for name in _NEEDS_LOGIN) and not _NEEDS_LOGIN.isdisjoint(
            {word.rsplit("/", 1)[-1] for word in distinct if "/" in word} | distinct):
        return enumerate(words), False
    active = {word for word in distinct if word[:1] in ("-", "/") or "/" in word
              or word in PROGRAM_OPTIONS or word in _OPTION_WORDS}
    places = list(compress(count(), map(active.__contains__, words)))
    return zip(places, map(words.__getitem__, places), strict=True), 2 * len(active) < len(places)


def _logon(word: str, i: int, values: dict[int, str | tuple[str, str]]) -> bool:
    """Whether ``word`` is an Oracle logon (``USER/PASSWORD[@CONNECT]``); its password
    added to ``values`` at ``i``."""
    logon = _LOGON.fullmatch(word)
    if logon is None:
        return False
    start, end = logon.span(1) if logon.group(1) is not None else logon.span(2)
    values[i] = (word[:start], word[end:])
    return True


# The options of openssl passwd and mkpasswd that take a value (the last word after one
# is that value), and their flags (after one, the last word is the password)
_VALUED = frozenset({"-salt", "-in", "-table", "-m", "--method", "-S", "--salt", "-R",
                     "--rounds", "-P", "--password-fd"})
_FLAGS = frozenset({"-1", "-5", "-6", "-apr1", "-aixmd5", "-crypt", "-noverify", "-quiet",
                    "-reverse", "-s", "--stdin"})


# Parameters of Oracle's exp and imp (PARAMETER=VALUE): beside one, USER/PW is a logon
_EXPORT_PARAMETERS = frozenset({
    "file", "log", "full", "owner", "tables", "rows", "buffer", "compress", "grants",
    "indexes", "consistent", "direct", "statistics", "fromuser", "touser", "ignore",
    "parfile", "query", "triggers", "constraints", "tablespaces", "transport_tablespace",
    "feedback", "filesize", "recordlength", "inctype", "record", "commit", "show",
    "destroy", "indexfile", "resumable", "object_consistent", "flashback_scn",
    "flashback_time", "volsize", "tts_owners", "datafiles"})


def _shaped_logons(words: Sequence[str], i: int,
                   values: dict[int, str | tuple[str, str]]) -> None:
    """The logons of an ``exp``/``imp`` command at ``i`` (see ``logon-shaped``): the
    words after it up to the command's next program, at most :data:`_NEAR` * 8."""
    window = range(i + 1, min(len(words), i + 1 + _NEAR * 8))
    beside = any(words[j].partition("=")[0].lower() in _EXPORT_PARAMETERS
                 and "=" in words[j] for j in window)
    for j in window:
        word = words[j]
        if "/" not in word:
            continue
        shaped = "@" in word or word[:7].lower() == "userid=" or beside
        if shaped and not word.startswith("-"):
            _logon(word, j, values)


def _glued_value(word: str, i: int, glued: tuple[tuple[str, str], ...],
                 values: dict[int, str | tuple[str, str]]) -> None:
    """The value glued to one of ``glued``'s options in ``word`` (-pVALUE,
    -UUSER%PW, --user=USER%PW, /p:PW), added to ``values`` at ``i``."""
    for option, how in glued:
        if not word.startswith(option) or len(word) <= len(option):
            continue
        if how in _KEPT_BEFORE:
            kept = _kept_before(how, word[len(option):])
            if kept is not None:
                values[i] = option + kept
        elif how == "prefix" or word[len(option)] != "-":
            values[i] = option
        return


# Oracle's logon: USER/PASSWORD or USER/PASSWORD@CONNECT (the password may be quoted),
# also after userid= (sqlldr, expdp); not /nolog, / as sysdba or @script.sql
_LOGON = re.compile(r"(?:(?i:userid)=)?[^\s/@'\"=-][^\s/@'\"=]*/"
                    r"(?:\"([^\"]+)\"|([^\s/@\"]+))(?:@\S+)?")
# The flag whose presence in a cluster of one-letter flags makes the last word the
# password ("cluster-last")
_CLUSTER = {program: option[1:] for program, options in PROGRAM_OPTIONS.items()
            for option, form in options.items() if form == "cluster-last"}
# The options of each program that may be glued to their value, and how: -pVALUE
# ("both", "attached"), -UUSER%PW (a short option's password after a separator),
# --user=USER%PW (a long one's after `=`), /p:PW ("prefix")
_GLUED = {program: tuple(
    (option + "=" if option.startswith("--") else option, form)
    for option, form in options.items()
    if form in ("both", "attached", "prefix")
    or (form in ("after-percent", "after-comma", "after-colon")
        and (option.startswith("--") or len(option) == 2)))
    for program, options in PROGRAM_OPTIONS.items()}
_KEPT_BEFORE = frozenset({"after-colon", "after-percent", "after-comma"})
_SEPARATOR = {"after-colon": ":", "after-percent": "%", "after-comma": ","}
_NEAR = 8  # how far an operand is looked for (a bound: a long argv stays linear)


def _kept_before(form: str, value: str) -> str | None:
    """What stays shown of ``value`` before its password (``USER:``, ``USER%``,
    ``USER,``), or None when it holds none (no separator, nothing after it, a Windows
    drive letter: ``C:\\cert.pem``)."""
    head, separator, tail = value.partition(_SEPARATOR[form])
    if not separator or not tail or head.endswith(("\\", "/")):
        return None
    if separator == ":" and len(head) == 1 and head.isalpha() and tail[:1] in ("\\", "/"):
        return None
    return head + separator


def _operands(words: Sequence[str], after: int, windows: bool) -> list[int]:
    """The indexes of the next few operands after ``after`` (words that are not options;
    with ``windows``, not /switches either)."""
    found = []
    for j in range(after + 1, min(len(words), after + 1 + _NEAR)):
        word = words[j]
        if (word.startswith("-") and len(word) > 1) or (
                windows and word.startswith("/") and not word.startswith("//")):
            continue
        found.append(j)
    return found


def _by_place(words: Sequence[str], i: int, form: str,
              values: dict[int, str | tuple[str, str]], program_at: int) -> None:
    """The secret that ``form`` names by its place after the word at ``i`` (see
    :data:`PROGRAM_OPTIONS`), added to ``values``."""
    if form in _VALUED_FORMS:
        _valued_after(words, i, form, values)
    elif form == "logon-shaped":
        _shaped_logons(words, i, values)
    elif form == "last-operand":  # the last word, not an option nor an option's value
        last = len(words) - 1
        if last > i and words[last][:1] != "-" and words[last - 1] not in _VALUED \
                and (last - 1 == i or words[last - 1][:1] != "-" or words[last - 1] in
                     _FLAGS):
            values.setdefault(last, "")
    elif form == "odbc-operand3":  # isql DSN USER PASSWORD, not isql -U USER -P PW -S SRV
        if not {"-U", "-P", "-S"}.isdisjoint(words[i + 1:i + 1 + _NEAR]):
            return
        operands = _operands(words, i, windows=False)
        if len(operands) >= 3:
            values.setdefault(operands[2], "")
    elif form.startswith(("operand", "sub-operand")):
        if form.startswith("sub-") and i != program_at + 1:
            return
        n = int(form[-1])
        operands = _operands(words, i, windows=form.startswith("sub-"))
        if len(operands) >= n:
            values.setdefault(operands[n - 1], "")
    elif form == "after-share":
        for j in range(i + 1, min(len(words), i + 1 + _NEAR)):
            if words[j].startswith(("//", "\\\\")):
                break
        else:
            return
        for k in range(j + 1, min(len(words), j + 1 + _NEAR)):
            word = words[k]
            if word.startswith("/") and not word.startswith("//"):
                continue  # a Windows switch: /user:NAME, /persistent:no
            if not word.startswith("-") and word != "*":
                values.setdefault(k, "")
            return
    elif form == "cluster-last":  # htpasswd -b FILE USER PW, -nb USER PW
        flags = words[i][1:]
        if words[i].startswith("-") and flags.isalpha() and "b" in flags:
            last = len(words) - 1
            if last >= i + 2 and not words[last].startswith("-"):
                values.setdefault(last, "")


# impacket's -hashes LMHASH:NTHASH (pass the hash; the LM half may be empty), also glued
_HASH_OPTIONS = frozenset({"-hashes", "--hashes"})
_NTLM_HASHES = re.compile(r"(--?hashes=)?((?:[0-9A-Fa-f]{32})?:[0-9A-Fa-f]{32})")


def ntlm_hashes(argument: str, previous: str | None) -> tuple[str, str] | None:
    """``("", LM:NT)`` for the value of ``-hashes`` (``("-hashes=", LM:NT)`` glued), any
    program's (impacket's scripts have many names); None for another word."""
    if previous not in _HASH_OPTIONS and "hashes=" not in argument:
        return None
    hashes = _NTLM_HASHES.fullmatch(argument)
    if hashes is None or not (hashes.group(1) or previous in _HASH_OPTIONS):
        return None
    return hashes.group(1) or "", hashes.group(2)


# A cifs mount's user=USER%PASSWORD (not a percent escape: user=a%20b)
SAMBA_USER = re.compile(r"((?i:user|username)=[^%,\s=]+%)(?![0-9A-Fa-f]{2}(?:$|,))([^,\s]+)")
SAMBA_USER_GATE = re.compile(r"(?<!\w)(?i:user|username)=[^%,\s=]+%").search
# NAME=VALUE items of a comma-separated list (mount, sshfs and qemu options).
COMMA_PAIRS = re.compile(r"(?:^|(?<=,))([^\W\d][\w.-]*)=([^,\s]+)")


def comma_pair(match: re.Match[str], found: list[str], mark: Mark) -> str:
    name, value = match.groups()
    if not is_secret_name(name):
        user = SAMBA_USER.fullmatch(match.group()) if "%" in value else None
        if user is None:
            return match.group()
        found.append(user.group(2))  # mount.cifs -o user=USER%PASSWORD
        return f"{user.group(1)}{mark(user.group(2))}"
    found.append(value)
    return f"{name}={mark(value)}"



def _script_positions(words: Sequence[str]) -> set[int]:
    """Indexes of the words that are shell scripts: the first operand after a ``-c``
    option (``-c``, ``-ec``, ``-lc``...) of a shell (``sh``, ``bash``, ...)."""
    positions: set[int] = set()
    shell_at: int | None = None
    command_flag = False
    skip_value = False
    for i, word in enumerate(words):
        if skip_value:
            skip_value = False
            continue
        if shell_at is None:
            if word.rsplit("/", 1)[-1] in _SHELLS:
                shell_at, command_flag = i, False
            continue
        if word == "--":  # the end of the shell's options
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            command_flag = command_flag or (word[0] == "-" and not word.startswith("--")
                                            and "c" in word[1:])
            skip_value = word in ("-o", "+o", "-O", "+O")
            continue
        if command_flag:
            positions.add(i)
        shell_at = None  # the shell's operands start here; look for another shell after
    return positions
