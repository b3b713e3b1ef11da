"""Command-line rules by program and by place (DESIGN §8), for
:mod:`fetchledger.identity.command_secrets`: the secret options of well-known programs
whose names say nothing (:data:`PROGRAM_OPTIONS`), the words that make the next one a
secret by where they stand (``NAME = V``, ``git config user.password V``, ``gh secret
set``), and where a shell's script stands in its argv (``sh -c SCRIPT``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .secrets import is_secret_name

__all__ = ["PROGRAM_OPTIONS"]

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})

# Programs whose secret options have names that say nothing: program → option →
# how its value is given ("attached": only as -pVALUE, since a lone -p asks for the
# password and the next word is something else; "both": -p VALUE or -pVALUE). For
# the registry clients the option is secret only after their `login` subcommand.
_MYSQL = {"-p": "both"}  # a word after a lone -p: a password typed there, or a database
_MONGO = {"-p": "both"}
_LOGIN = {"-p": "both"}
_LDAP = {"-w": "both"}
_HTTPIE = {"-a": "after-colon"}
_ZIP = {"-P": "separate"}  # also the Mosquitto clients'
_7ZIP = {"-p": "attached"}
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
                "-k": "separate"},
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
    "vault": {"login": "positional"},  # vault login TOKEN
    **dict.fromkeys(("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                     "crane", "regctl"), _LOGIN),
}
_PROGRAMS = frozenset(PROGRAM_OPTIONS)
_NEEDS_LOGIN = frozenset({"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                          "crane", "regctl"})


# Words that name the word after them a secret, by where they stand:
# `NAME = V`, `NAME : V` and `NAME: V`, `NAME= V` (split over words); `git config
# user.password V`, `aws configure set aws_secret_access_key V` (a secret-like setting
# after a setting verb); and in a secrets command (`gh secret set NAME --body V`,
# `doppler secrets set NAME V`, `flyctl secrets set NAME=V`) every value it sets.
_SPLIT = frozenset({"=", ":", "==", ":="})
_SETTING_VERBS = frozenset({"config", "configure", "set", "config:set", "setx"})
_SECRET_COMMANDS = frozenset({"secret", "secrets", "config:set"})  # heroku, dokku config:set
_VERBS = _SETTING_VERBS | _SECRET_COMMANDS
_VERB_SPELLINGS = frozenset(spelled for verb in _VERBS  # redis-cli CONFIG SET, Set
                            for spelled in (verb, verb.upper(), verb.title()))
_SECRET_COMMAND_OPTIONS = frozenset({"--value", "--body", "-b", "--data", "--secret"})
_BARE_NAME = re.compile(r"-{0,2}[^\W\d][\w.-]*")
def _bare_secret(name: str) -> bool:
    return bool(_BARE_NAME.fullmatch(name)) and is_secret_name(name)


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
        set_here = setting and not word.startswith("-") and (
            is_secret_name(word) or (secret_command and words[i - 1] in _VERB_SPELLINGS))
        if split or set_here or (secret_command and word in _SECRET_COMMAND_OPTIONS):
            values[i + 1] = ""
    if secret_command:
        for i, word in enumerate(words):
            name, equals, value = word.partition("=")
            if equals and value and _BARE_NAME.fullmatch(name) and not name.startswith("-"):
                values.setdefault(i, name + "=")
    return values


def _program_secrets(words: Sequence[str]) -> dict[int, str]:
    """Index → the option prefix kept, for each word that is (or ends in) the value of
    a well-known program's secret option (:data:`PROGRAM_OPTIONS`)."""
    values: dict[int, str] = {}
    options: dict[str, str] = {}
    attached: tuple[str, ...] = ()
    waiting_login = False
    last = len(words) - 1
    for i, word in enumerate(words):
        program = word if "/" not in word else word.rsplit("/", 1)[-1]
        if program in PROGRAM_OPTIONS:
            options, attached = PROGRAM_OPTIONS[program], _ATTACHED[program]
            waiting_login = program in _NEEDS_LOGIN
            continue
        if waiting_login:
            waiting_login = word != "login"
            continue
        if not options or i in values:
            continue
        form = options.get(word)
        if form == "rest":  # every word after it
            values.update(dict.fromkeys(range(i + 1, len(words)), ""))
        elif form is None or i == last:
            pass
        elif form == "after-colon":
            head, colon, tail = words[i + 1].partition(":")
            if colon and tail and not head.endswith(("\\", "/")) and len(head) != 1:
                values[i + 1] = head + ":"  # (not a Windows drive letter)
        elif form == "positional":
            if not words[i + 1].startswith("-"):
                values[i + 1] = ""
        elif form != "attached" and (form != "cookies" or "=" in words[i + 1]):
            values[i + 1] = ""
        for option in attached:  # -pVALUE
            if word.startswith(option) and len(word) > len(option) \
                    and word[len(option)] != "-":
                values[i] = option
    return values


# The options of each program given as -pVALUE ("both" and "attached")
_ATTACHED = {program: tuple(option for option, form in options.items()
                            if form in ("both", "attached"))
             for program, options in PROGRAM_OPTIONS.items()}


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
