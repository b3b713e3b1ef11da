"""Secret redaction of command lines (DESIGN §8): argv words and shell scripts.

The name rule is :func:`fetchledger.identity.secrets.is_secret_name`, the same as
for URLs and headers. What a command line can hide a secret in:

- options and assignments: ``--NAME=V``, ``--NAME V``, ``-NAME V`` (one-dash long
  options, as Go and Java tools spell them), ``--NAME:V``, ``/NAME:V``, ``NAME=V``
  (also ``export NAME=V``, ``env NAME=V``), and the same *inside* the value of
  another option (``--header=Authorization: ...``, ``--from-literal=password=V``,
  ``-c http.extraHeader=Authorization: ...``);
- headers: ``Authorization: ...``, ``-HX-Api-Key:V``; user and password:
  ``-u USER:PW``, ``-uUSER:PW``, ``--user=USER:PW``, ``-u KEY:`` (a key as the
  user), ``USER:PW@HOST`` without a scheme;
- unquoted keyed values: ``API_KEY = V``, ``password : V``, ``token:=V``,
  ``api_key==V`` in one word, ``password = V`` / ``password: V`` over words;
- pairs: form bodies (``-d 'user=a&password=V'``), queries without a scheme
  (``?token=V``), path parameters (``;jsessionid=V``), URL fragments
  (``#access_token=V``), URLs (user-info and secret parameters), and what a URL
  or query nested in a value holds (:func:`.secrets.redact_nested`);
- quoted keyed values: JSON (``{"api_key": "V"}``), Python and YAML-ish
  (``TOKEN = 'V'``, ``os.environ['TOKEN']='V'``), SQL (``PASSWORD 'V'``);
- by position: a secret-like setting after a setting verb (``git config
  user.password V``), every value a secrets command sets (``gh secret set``);
- the secret options of a few well-known programs whose names say nothing
  (:data:`PROGRAM_OPTIONS`: ``mysql -pV``, ``sshpass -p V``, ``redis-cli -a V``,
  ``docker login -p V``, ``curl -b COOKIES``...);
- the script of ``sh -c`` / ``bash -lc`` / ``run --shell`` (word by word, nested),
  and a word holding blanks that no other rule changed (``ssh host 'cmd ...'``).

Each rule collects the values it removed, so that every other occurrence of them
(in any word, in the command's output) is scrubbed too. Every rule is linear, and
they run once per command line for both its display and its keyed identity
(:class:`Recorder`).
"""

from __future__ import annotations

import re
import shlex
from collections import deque
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from itertools import accumulate, compress, count
from operator import itemgetter, lt, ne
from typing import cast

from .finder import finder as cached_finder
from .secrets import (
    REDACTED,
    Mark,
    is_secret_name,
    plain_mark,
    redact_nested,
    redact_path_params,
    redact_query,
    scrub,
    spelled_forms,
)
from .shellwords import ScriptWords, script_words, shell_commands

__all__ = ["PROGRAM_OPTIONS", "Recorder", "Unrendered", "redact_argument", "redact_argv",
           "redact_argv_each", "redact_command_text", "redact_command_text_each"]

_HEADER = re.compile(r"(-H\s*)?([A-Za-z0-9][A-Za-z0-9_-]*)\s*:\s*(\S.*)", re.DOTALL)
# Names: a letter or `_` (in any script: `--contraseña`), then letters, digits, `_.-`.
_ASSIGNMENT = re.compile(r"-{0,2}[^\W\d][\w.\[\]-]*")  # also auth[token], --key[]
_COLON_OPTION = re.compile(r"(?:-{1,2}|/)[^\W\d][\w.-]*")
# A URL inside an argument. The look-behind makes every match start where a run of
# scheme characters starts, so the search stays linear on long arguments.
_URL = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"]+")
_USER_OPTIONS = frozenset({"-u", "--user", "--proxy-user", "-U"})
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"})
_MAX_NESTING = 4  # sh -c "bash -c '...'" levels redacted word by word
_MAX_INNER = 3  # --opt=name=value levels

# Programs whose secret options have names that say nothing: program → option →
# how its value is given ("attached": only as -pVALUE, since a lone -p asks for the
# password and the next word is something else; "both": -p VALUE or -pVALUE). For
# the registry clients the option is secret only after their `login` subcommand.
_MYSQL = {"-p": "both"}  # a word after a lone -p: a password typed there, or a database
_MONGO = {"-p": "both"}
_LOGIN = {"-p": "both"}
_LDAP = {"-w": "both"}
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
    "vault": {"login": "positional"},  # vault login TOKEN
    **dict.fromkeys(("docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                     "crane", "regctl"), _LOGIN),
}
_PROGRAMS = frozenset(PROGRAM_OPTIONS)
_NEEDS_LOGIN = frozenset({"docker", "podman", "nerdctl", "buildah", "skopeo", "helm", "oras",
                          "crane", "regctl"})


def _redact_url(url: str, found: list[str], mark: Mark) -> str:
    head, sep, query = url.partition("?")
    head, hash_sign, fragment = head.partition("#") if not sep else (head, "", "")
    scheme, slashes, rest = head.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        found.extend((userinfo, userinfo.partition(":")[2]))
        authority = f"{REDACTED}@{host}"
    head = f"{scheme}{slashes}{authority}{slash}{redact_path_params(path, found, mark)}"
    if sep:
        query, hash_sign, fragment = query.partition("#")
        head = f"{head}?{redact_query(query, found, mark)}"
    return f"{head}{hash_sign}{redact_query(fragment, found, mark)}" if hash_sign else head


def redact_argument(argument: str, previous: str | None = None,
                    secrets: list[str] | None = None, mark: Mark | None = None) -> str:
    """One argument of a command line with any secret in it replaced by ``mark`` of
    it (``REDACTED`` by default); the secret values removed are appended to
    ``secrets`` when it is given. The rules are listed in this module's docstring."""
    mark = mark or plain_mark
    found = secrets if secrets is not None else []
    if previous is not None and _takes_secret(previous) and not argument.startswith("-"):
        found.append(argument)
        return mark(argument)
    if previous in _USER_OPTIONS and ":" in argument:
        return _user_password(argument, "", found, mark)
    return _redact_inner(argument, found, mark, 0)


@lru_cache(maxsize=4096)  # the same options again and again in a long command
def _takes_secret(option: str) -> bool:
    """``--token``, ``-token``, ``--client-secret`` (not ``-k``: one-letter options
    name nothing)."""
    if not _OPTION_NAME.fullmatch(option):
        return False
    name = option.lstrip("-")
    return len(name) >= 3 and is_secret_name(name)


_OPTION_NAME = re.compile(r"--?[^\W\d_][\w.-]*")


_AUTH_SCHEMES = frozenset({"basic", "bearer", "token", "digest", "negotiate", "ntlm", "hoba",
                           "mutual", "apikey", "key", "oauth", "jwt"})


def _found(found: list[str], value: str) -> None:
    """Note a secret value, and its first and last words when it has several: the
    credentials of ``Bearer TOKEN`` / ``Basic B64``, the value of ``api_key=V rest``."""
    found.append(value)
    words = value.split()
    if len(words) > 1:
        found.extend(word for word in (words[0], words[-1]) if word.lower() not in _AUTH_SCHEMES)


def _user_password(value: str, prefix: str, found: list[str], mark: Mark) -> str:
    """``USER:PASSWORD`` with the password marked; ``TOKEN:`` (an API key given as the
    user, as Stripe's curl examples do) with the user marked; a URL as a URL."""
    if "://" in value:
        return prefix + _URL.sub(lambda m: _redact_url(m.group(0), found, mark), value)
    user, colon, password = value.partition(":")
    if colon and user and not password:
        found.append(user)
        return f"{prefix}{mark(user)}:"
    if not colon or not password:
        return prefix + value
    found.append(password)
    return f"{prefix}{user}:{mark(password)}"


def _redact_inner(argument: str, found: list[str], mark: Mark, depth: int) -> str:
    """The rules that look inside one word (its own options and assignments, headers,
    pairs, quoted values, URLs), also applied to the value of an option or assignment."""
    for option in ("--user=", "--proxy-user="):
        if argument.startswith(option):
            return _user_password(argument[len(option):], option, found, mark)
    if argument.startswith("-u") and len(argument) > 2 and argument[2] != "-":
        return _user_password(argument[2:], "-u", found, mark)
    header = _HEADER.fullmatch(argument)
    if header and is_secret_name(header.group(2)) and "://" not in argument \
            and not header.group(3).startswith("="):  # httpie's `token:=V` is a JSON field
        value = header.group(3).strip()
        _found(found, value)
        return f"{header.group(1) or ''}{header.group(2)}: {mark(value)}"
    keyed = _KEYED_WORD.fullmatch(argument)
    if keyed and is_secret_name(keyed.group(1)) and not _PAIR_AFTER.search(keyed.group(3)):
        value = keyed.group(3)  # API_KEY = V, password : V, token:=V, api_key==V
        _found(found, value)
        return f"{keyed.group(1)}{keyed.group(2)}{mark(value)}"
    name, equals, value = argument.partition("=")
    if equals and value and _ASSIGNMENT.fullmatch(name):
        if not is_secret_name(name):
            if depth < _MAX_INNER:
                return f"{name}={_redact_inner(value, found, mark, depth + 1)}"
        elif name.startswith("-") or not _PAIR_AFTER.search(value):
            _found(found, value)
            return f"{name}={mark(value)}"
        else:  # a form body: user=a&password=V&x=1
            return redact_query(argument, found, mark)
    name, colon, value = argument.partition(":")
    if colon and value and _COLON_OPTION.fullmatch(name) and is_secret_name(name):
        found.append(value)
        return f"{name}:{mark(value)}"
    return _redact_embedded(argument, found, mark)


_PAIR_AFTER = re.compile(r"&[^&=\s]+=")  # a value holding more pairs: a form body
# NAME, then `=`, `:`, `==` or `:=` (httpie's query and raw JSON fields), blanks around
# them allowed, then the value: the whole word (`API_KEY = V`, `password : V`).
_KEYED_WORD = re.compile(r"(-{0,2}[^\W\d][\w.\[\]-]*)(\s*(?:==|:=|=|:)\s*)(\S(?:.*\S)?)\s*",
                         re.DOTALL)
_PAIRS = re.compile(r"(?<=[?&;#])[^?&;#=\s]+=[^?&;#\s]*")  # name=value after ? & ; #


# User-info without a scheme (`curl -x user:pw@proxy:8080`, `http_proxy=u:pw@host`): a
# word of USER:PASSWORD@HOST, not an image digest (`img:tag@sha256:...`).
_BARE_USERINFO = re.compile(r"([^\s/@:=]+):([^\s/@]+)@(?!sha\d+:)([\w.-]+(?::\d+)?)(?=$|/)")


def _redact_embedded(argument: str, found: list[str], mark: Mark) -> str:
    """Secrets standing somewhere inside a word: quoted keyed values, URLs, user-info
    without a scheme, and pairs after ``?``, ``&``, ``;`` or ``#`` (a query or form
    without a scheme)."""
    if "'" in argument or '"' in argument:
        argument = _redact_quoted_values(argument, found, mark)
    if "@" in argument and "://" not in argument:
        bare = _BARE_USERINFO.fullmatch(argument)
        if bare:
            found.append(bare.group(2))
            return f"{bare.group(1)}:{mark(bare.group(2))}@{bare.group(3)}"
    if "://" in argument:
        argument = _URL.sub(lambda m: _redact_url(m.group(0), found, mark), argument)
    elif "=" in argument and any(c in argument for c in "?&;#"):
        argument = _PAIRS.sub(lambda m: redact_query(m.group(), found, mark), argument)
    elif "%" in argument:  # an encoded URL or query: https%3A%2F%2Fh%2Fp%3Ftoken%3DV
        argument = redact_nested(argument, found, mark)
    return argument


# A secret-like name, then (optionally its closing quote and bracket) `:` or `=`,
# then an opening quote: `"api_key": "`, `TOKEN = '`, `environ['TOKEN']='`.
_KEYED_QUOTE = re.compile(r"(?<![\w.-])([^\W\d][\w.-]*)"
                          r"""(["']?\]?\s*[:=]\s*)(["'])"""
                          # SQL: ALTER USER x WITH PASSWORD 'V', CREATE USER x IDENTIFIED BY 'V'
                          r"|(?<![\w.-])((?i:password|passwd|identified\s+by))(\s+)([\"'])")
_SQL_PASSWORD = re.compile(r"(?i:password|passwd|identified\s+by)\s+[\"']")


def _redact_quoted_values(text: str, found: list[str], mark: Mark) -> str:
    """``text`` with each quoted value under a secret-like name replaced (JSON,
    Python, YAML): one pass; once a quote is found unclosed from some place it is
    not searched for again, so unclosed quotes cost nothing more."""
    pieces: list[str] = []
    last = 0
    unclosed: dict[str, int] = {}
    for match in _KEYED_QUOTE.finditer(text):
        if match.start() < last or (match.group(1) and not is_secret_name(match.group(1))):
            continue
        quote = match.group(3) or match.group(6)
        if match.end() >= unclosed.get(quote, len(text) + 1):
            continue
        close = _closing(text, match.end(), quote)
        if close < 0:
            unclosed[quote] = match.end()
            continue
        value = text[match.end():close]
        if value:
            found.append(value.replace("\\" + quote, quote))
            pieces.extend((text[last:match.end()], mark(value)))
            last = close
    pieces.append(text[last:])
    return "".join(pieces)


def _closing(text: str, start: int, quote: str) -> int:
    """The index of the quote closing a string whose inside starts at ``start`` (a
    backslash escapes it), or -1; at most one look past each escaped quote."""
    at = text.find(quote, start)
    while at > 0 and text[at - 1] == "\\":
        at = text.find(quote, at + 1)
    return at


def redact_argv(argv: Sequence[str], secrets: list[str] | None = None,
                mark: Mark | None = None) -> list[str]:
    """``argv`` with secrets replaced by ``mark`` of them (see :func:`redact_argument`);
    the script of ``sh -c``/``bash -c`` (and other shells) is redacted word by word
    (:func:`redact_command_text`); a secret found in one argument is also scrubbed
    from all the others."""
    return redact_argv_each(argv, (mark or plain_mark,), secrets)[0]


def redact_argv_each(argv: Sequence[str], marks: Sequence[Mark],
                     secrets: list[str] | None = None) -> list[list[str]]:
    """:func:`redact_argv` with each of ``marks`` (a display and an identity): the rules
    run once. The secret values found are appended to ``secrets``."""
    named = _PROGRAM_NAMES.isdisjoint([word.rsplit("/", 1)[-1] for word in argv[:64]])
    if named and not _could_hold_secrets("\n".join(argv)):  # (a program named: no scan)
        return [list(argv) for _ in marks]

    def redact(mark: Mark, found: list[str]) -> list[str]:
        return _scrub_marked(_redact_words(list(argv), found, mark, depth=0), found, mark)

    return _each(redact, marks, secrets, recordable=not any("\0" in word for word in argv))


def _each(redact: Callable[[Mark, list[str]], list[str]], marks: Sequence[Mark],
          secrets: list[str] | None, *, recordable: bool = True) -> list[list[str]]:
    """``redact`` rendered with each mark: run once with a :class:`Recorder`; run per
    mark when the input holds a NUL (a slot's first character) or that fails (more
    distinct values than slots, a value that does not render)."""
    found = secrets if secrets is not None else []
    recorder = Recorder()
    recorded: list[str] = []
    try:
        if not recordable:
            raise Unrendered
        words = redact(recorder, recorded)
        each = [recorder.render_words(words, mark) for mark in marks]
        values: list[str | None] = list(recorded) if "\0" not in "".join(recorded) else [
            recorder.render(value, plain_mark) for value in recorded]
    except Unrendered:
        each, values = [None], [None]
    rendered = [words for words in each if words is not None]
    shown = [value for value in values if value is not None]
    if len(rendered) < len(marks) or len(shown) < len(values):
        shown = []
        redact(plain_mark, shown)
        rendered = [redact(mark, []) for mark in marks]
    found.extend(shown)
    return rendered


def _redact_words(words: Sequence[str], found: list[str], mark: Mark, depth: int
                  ) -> list[str]:
    # each distinct word once (a short command: as it is), for the three tests below
    programs: Collection[str] = set(words) if len(words) > 8 else words
    if "/" in "".join(programs):
        programs = {*programs, *(word.rsplit("/", 1)[-1] for word in programs if "/" in word)}
    scripts = _script_positions(words) if not _SHELLS.isdisjoint(programs) else _NO_SCRIPTS
    options = _program_secrets(words) if not _PROGRAMS.isdisjoint(programs) else _NO_OPTIONS
    if not _PLACED_WORDS.isdisjoint(programs) \
            or not _PLACED_ENDS.isdisjoint(map(_LAST_CHARACTER, programs)):
        options = {**_positional_secrets(words), **options}  # (a word _placed names)
    plain = not scripts and not options  # then NAME=V may take the short way
    nested = depth < _MAX_NESTING
    redacted = []
    previous: str | None = None
    for i, word in enumerate(words):
        simple = _plain_assignment(word, previous) if plain and "=" in word else None
        if simple is not None:  # most secrets of a long command: --NAME=V, NAME=V
            name, value = simple
            found.append(value)
            redacted.append(f"{name}={mark(value)}")
        elif i in scripts and nested:
            redacted.append(_redact_script(word, found, mark, depth + 1))
        elif i in options:
            prefix, value = options[i], word[len(options[i]):]
            _found(found, value)
            if value.startswith("pass:"):  # openssl -pass pass:PASSWORD
                found.append(value[5:])
            if ";" in value:
                found.extend(cookie.partition("=")[2] for cookie in value.split(";"))
            else:
                found.append(value.partition("=")[2])
            redacted.append(prefix + mark(value))
        elif _ACTIVE(word) is None and not word.startswith("-u") \
                and (previous is None or previous[:1] != "-"):
            redacted.append(word)  # no rule can change it (a test runs them all to check)
        elif _may_hold_secret(word, previous):
            clean = redact_argument(word, previous, found, mark)
            if clean == word and nested and _blank(word):
                clean = _redact_script(word, found, mark, depth + 1)  # ssh host 'cmd …'
            redacted.append(clean)
        elif nested and (" " in word or "\n" in word or "\t" in word):
            redacted.append(_redact_script(word, found, mark, depth + 1))  # watch 'cmd …'
        else:
            redacted.append(word)
        previous = word
    return redacted


_NO_SCRIPTS: frozenset[int] = frozenset()
_NO_OPTIONS: dict[int, str] = {}  # never changed: a command with options gets its own


# `--NAME=V` or `NAME=V` with a value no other rule looks into: what the rules give it
# without running them (a test runs them all to check).
_PLAIN_ASSIGNMENT = re.compile(r"(-{0,2}[^\W\d][\w.-]*)=([^\s=&?;#'\"`:%@\\$(){}<>|]+)")


def _plain_assignment(word: str, previous: str | None) -> tuple[str, str] | None:
    """``(NAME, V)`` for a word ``NAME=V`` whose only rule is the assignment rule, NAME
    secret-like; else None (the rules decide)."""
    if word.startswith("-u") and not word.startswith("--"):
        return None
    match = _PLAIN_ASSIGNMENT.fullmatch(word)
    if match is None or not is_secret_name(match.group(1)):
        return None
    if previous is not None and (previous in _USER_OPTIONS or _takes_secret(previous)):
        return None
    return match.group(1), match.group(2)


@lru_cache(maxsize=4096)
def _placed(word: str) -> bool:
    """Whether ``word`` can make the next one a secret by where it stands."""
    return word in _SPLIT or word[-1:] in (":", "=") or word in _VERB_SPELLINGS


def _blank(word: str) -> bool:
    return " " in word or "\n" in word or "\t" in word


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
_PLACED_WORDS = _SPLIT | _VERB_SPELLINGS  # what _placed names, with...
_PLACED_ENDS = frozenset(":=")  # ...a word ending in `:` or `=`
_LAST_CHARACTER = itemgetter(slice(-1, None))
# What makes a word need the rules, whatever stands before it, when no option before it
# makes it a secret (see _may_hold_secret and _plain_assignment; blanks: a script
# inside): one of these characters, or a start of -u (-uUSER:PW, tested apart: an
# alternation with `\A` costs a try at every character of a long word)
_ACTIVE = re.compile(r"[=:%'\" \n\t]").search


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


def _may_hold_secret(word: str, previous: str | None) -> bool:
    """False for a word no rule of :func:`redact_argument` can touch (most of them): a
    quick test first, so that 30,000 plain words cost little."""
    if previous is not None and (previous in _USER_OPTIONS or _takes_secret(previous)):
        return True
    if ":" in word or word.startswith("-u") or "%" in word or "'" in word or '"' in word:
        return True
    if "=" not in word:
        return False
    name, _, value = word.partition("=")
    return (is_secret_name(name) or any(c in value for c in "=&?;#'\"")
            or any(c in name for c in "&?;#'\"[ "))


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


def _scrub_marked(words: list[str], found: list[str], mark: Mark) -> list[str]:
    forms = spelled_forms(found)
    if not forms:
        return words
    finder = cached_finder(tuple(forms))
    # one pass over every word: argv holds no NUL, and no mark holds this separator
    joined = _WORD_BREAK.join(words)
    if joined.count(_WORD_BREAK) != len(words) - 1:
        return [finder.sub(w, lambda value: mark(forms[value])) for w in words]
    return finder.sub(joined, lambda value: mark(forms[value])).split(_WORD_BREAK)


# --- one pass of the rules for every mark ----------------------------------------------
#
# A command's display (REDACTED), identity (keyed marks) and secrets are one redaction
# rendered with two marks. The rules run once with a Recorder as the mark: each value
# becomes a slot that no rule can take for a secret (NUL, a control character and a
# private-use character, NUL: a secret holds no NUL, and none is so short and bare),
# and each word a script has to quote is wrapped, since its quoting depends on the mark.

_WORD_BREAK = "\0\x06\0"
_OPEN, _CLOSE = "\0\x01\0", "\0\x02\0"  # a word to shell-quote once its marks are in
_SLOT = re.compile("\0\x03([\U000f0000-\U0010ffff])\0")
_SLOTS = 0x10FFFF - 0xF0000
# What shlex.quote quotes, outside slots: a private-use character or \x03 not in a slot
# counts too (the input may hold them; a slot is NUL, \x03, one of them, NUL).
_UNSAFE_OUTSIDE_SLOTS = re.compile("[^\\w@%+=:,./\\-\0\x03\U000f0000-\U0010ffff]"
                                   "|(?<!\0)\x03|(?<!\x03)[\U000f0000-\U0010ffff]"
                                   "|(?<![\U000f0000-\U0010ffff])\0(?!\x03)",
                                   re.ASCII).search
_QUOTE_WRAPPED = re.compile("\0\x01\0([^\0]*)\0\x02\0")
# A word whose quoting only its marks decide (the rest is safe, no script inside)
_OPEN_PLAIN, _CLOSE_PLAIN = "\0\x07\0", "\0\x08\0"
_PLAIN_WRAPPED = re.compile("\0\x07\0([^\0]*)\0\x08\0")
_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search  # what shlex.quote quotes


class Unrendered(Exception):
    """A recorded value that did not render: the caller runs the rules again."""


class Recorder:
    """A mark that records the values it is given (see above); :meth:`render` then puts
    any mark in their places."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._slots: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        slot = self._slots.get(value)
        if slot is None:  # NUL, a private-use character that numbers the value, NUL
            if len(self.values) >= _SLOTS:
                raise Unrendered  # more distinct values than slots: the rules run per mark
            slot = self._slots[value] = f"\0\x03{chr(0xF0000 + len(self.values))}\0"
            self.values.append(value)
        return slot

    @staticmethod
    def quote(word: str) -> str:
        """``word`` shell-quoted as :func:`shlex.quote` will quote it once its marks are
        in: now, when the rest of it needs quotes anyway (a mark holds no quote);
        else wrapped, to be quoted (or not) by :meth:`render`."""
        if _OPEN in word or _OPEN_PLAIN in word:  # a script inside: quoted last
            return _OPEN + word + _CLOSE
        if not word:
            return "''"
        if _UNSAFE_OUTSIDE_SLOTS(word):
            return "'" + word.replace("'", "'\"'\"'") + "'"
        if "\0\x03" not in word:  # no mark in it: as shlex.quote leaves a safe word
            return word
        return _OPEN_PLAIN + word + _CLOSE_PLAIN  # quoted iff a mark in it needs quotes

    def render(self, text: str, mark: Mark) -> str | None:
        """``text`` with each slot as ``mark`` of its value (a value holding slots is
        rendered first) and each wrapped word shell-quoted; None if anything is left
        that is not what a rule wrote (the caller then runs the rules with ``mark``)."""
        if "\0" not in text:
            return text
        if mark is plain_mark:  # REDACTED: no word with it needs quotes for it
            # (a split with the wrapped word as its group: outside, word, outside, ...)
            text = "".join(_PLAIN_WRAPPED.split(_SLOT.sub(REDACTED, text)))
        else:  # split at the slots: text, slot, text, ...; one mark per distinct value
            parts = _SLOT.split(text)
            slots = parts[1::2]
            distinct = set(slots)
            values = [self.values[ord(slot) - 0xF0000] for slot in distinct]
            if any("\0" in value for value in values):
                inner = [self.render(value, mark) if "\0" in value else value
                         for value in values]
                if None in inner:
                    return None
                values = cast(list[str], inner)
            marks = dict(zip(distinct, map(mark, values), strict=True))
            parts[1::2] = map(marks.__getitem__, slots)
            text = "".join(parts)
            # (a `~` is one of what _UNSAFE finds: each keyed mark needs quotes)
            if _OPEN_PLAIN in text and all(map(_UNSAFE, marks.values())):
                text = "'".join(_PLAIN_WRAPPED.split(text))  # each has a mark: each quoted
            elif _OPEN_PLAIN in text:
                text = _PLAIN_WRAPPED.sub(lambda m: shlex.quote(m.group(1)), text)
        quoted: dict[str, str] = {}

        def quote(match: re.Match[str]) -> str:
            word = match.group(1)
            done = quoted.get(word)
            if done is None:
                done = quoted[word] = shlex.quote(word)
            return done

        for _ in range(_MAX_NESTING + 2):  # innermost first: a script inside a script
            if _OPEN not in text:
                break
            text = _QUOTE_WRAPPED.sub(quote, text)
        return None if "\0" in text.replace(_WORD_BREAK, "") else text

    def render_words(self, words: Sequence[str], mark: Mark) -> list[str] | None:
        joined = self.render(_WORD_BREAK.join(words), mark)
        return None if joined is None else joined.split(_WORD_BREAK)


def _quote(mark: Mark) -> Callable[[str], str]:
    return mark.quote if isinstance(mark, Recorder) else shlex.quote


def redact_command_text(text: str, secrets: list[str] | None = None,
                        mark: Mark | None = None) -> str:
    """A shell command line (or a label) with its secrets redacted word by word, its
    form kept: words that hold no secret stay exactly as written, operators
    (``;``, ``|``, ``&&``) and comments too."""
    return redact_command_text_each(text, (mark or plain_mark,), secrets)[0]


def redact_command_text_each(text: str, marks: Sequence[Mark],
                             secrets: list[str] | None = None) -> list[str]:
    """:func:`redact_command_text` with each of ``marks``: the rules run once."""
    if not _could_hold_secrets(text):
        return [text for _ in marks]
    each = _each(lambda mark, found: [_redact_script(text, found, mark, depth=0)], marks,
                 secrets, recordable="\0" not in text)
    return [words[0] for words in each]


# What any rule needs to see before it can redact a word: a `:` (a header, a URL,
# user:password, JSON), an assignment to a secret-like name (also `NAME = '...'`,
# `['NAME']=`), an option that takes a secret (`--token VALUE`, `-token VALUE`, `-u`,
# `-uUSER:PW`), a program with secret options of its own, or a shell that runs a
# script. Each pattern starts only where a run of its characters starts: linear.
_ASSIGNED_NAME = re.compile(r"(?<![\w.-])(-{0,2}[^\W\d][\w.-]*)"
                            r"""["'\[\]]*\s*=""")
_OPTION_WORD = re.compile(r"(?<![^\s;&|<>()'\"])(?:--?[^\s;&|<>()'\"=]+)"
                          r"(?![^\s;&|<>()'\"])")
# The words of a text as the gate sees them (between blanks, operators, quotes and `/`,
# so a program's path counts as its name): one C-level scan, then a set test.
_GATE_WORD = re.compile(r"[^\s;&|<>()'\"/]+")
_PROGRAM_NAMES = frozenset({*_SHELLS, *PROGRAM_OPTIONS, *_VERB_SPELLINGS})


_ENCODED_EQUALS = re.compile(r"%(?:25)*3[dD]")  # a query inside a value, encoded


@lru_cache(maxsize=16)
def _could_hold_secrets(text: str) -> bool:
    """False when no rule can redact anything in ``text`` (a script, or argv joined by
    newlines): one scan instead of a rule per word, for almost every command. (Each test
    below is skipped when the text lacks a character its pattern needs; the cheapest
    that holds for most secret-bearing scripts first.)"""
    if ":" in text or ("%" in text and _ENCODED_EQUALS.search(text)):
        return True
    if ("'" in text or '"' in text) and _SQL_PASSWORD.search(text):  # (a quote first: fast)
        return True
    if "=" in text and _secret_assignment(text):
        return True
    if not _PROGRAM_NAMES.isdisjoint(_GATE_WORD.findall(text)):
        return True
    return "-" in text and any(
        option in _USER_OPTIONS or option.startswith("-u") or _takes_secret(option)
        for option in set(_OPTION_WORD.findall(text)))


def _secret_assignment(text: str) -> bool:
    """Whether a name assigned in ``text`` is secret-like: the first few assignments one
    by one (a script that sets a secret mostly does so early), then the rest at once."""
    at = 0
    for _ in range(4):
        match = _ASSIGNED_NAME.search(text, at)
        if match is None:
            return False
        if is_secret_name(match.group(1)):
            return True
        at = match.end()
    return any(map(is_secret_name, _ASSIGNED_NAME.findall(text, at)))


def _redact_script(text: str, found: list[str], mark: Mark, depth: int) -> str:
    """``text`` (a shell script) with its secrets redacted word by word, its form kept;
    the values removed are appended to ``found``. What :func:`_redact_script_reference`
    gives, with the Python work per word of a long script cut: the script is split in C
    (:func:`.shellwords.script_words`), the words that no rule can change are skipped
    by C-level passes, and it is rebuilt by replacing only the words that changed."""
    if not _could_hold_secrets(text):  # most scripts: one scan, no word loop
        return text
    start = len(found)
    if "'" in text or '"' in text:  # quoted keyed values in the raw text (a heredoc's JSON)
        _redact_quoted_values(text, found, mark)  # what they hold is scrubbed below
    script = script_words(text)
    values = script.values
    cleans = _redact_commands(script, found, mark, depth)
    if len(found) > start:  # a secret found anywhere, wherever it stands as (part of) a word
        cleans = _scrub_marked(cleans, found[start:], mark)
    changed = list(compress(count(), map(ne, values, cleans)))
    if changed:  # each word that changed in its place, quoted (each distinct word once)
        parts = list(script.parts)
        clean = list(map(cleans.__getitem__, changed))
        distinct = set(clean)
        quoted = dict(zip(distinct, map(_quote(mark), distinct), strict=True))
        deque(map(parts.__setitem__, [2 * i + 1 for i in changed],
                  map(quoted.__getitem__, clean)), maxlen=0)
        text = "".join(parts)
    return scrub(text, found[start:], mark) if len(found) > start else text


# Words that make a simple command more than a list of words: a shell (its script), a
# program with secret options, or a word that names the next one a secret by where it
# stands (also as the last part of a path: /usr/bin/mysql).
_SPECIAL = _SHELLS | _PROGRAMS | _PLACED_WORDS
_HAS_SLASH = re.compile("/").search
# ...and what makes the word after it need them: an option (--token, -u).
_OPTION_START = re.compile("-").match


def _redact_commands(script: ScriptWords, found: list[str], mark: Mark, depth: int
                     ) -> list[str]:
    """Each word of ``script`` redacted as :func:`_redact_words` redacts it in its simple
    command: a command holding a special word (:data:`_SPECIAL`) through it (each
    distinct one once), the others word by word, only the words that a rule can change."""
    values, starts = script.values, script.starts
    cleans = list(values)
    commands = len(starts) - 1
    # (each pass below is C-level: over the distinct words, then a set test per word)
    distinct = set(values)
    special = distinct & _SPECIAL
    if not _PLACED_ENDS.isdisjoint(map(_LAST_CHARACTER, distinct)):
        special.update(word for word in distinct if word[-1:] in _PLACED_ENDS)
    special.update(word for word in filter(_HAS_SLASH, distinct)
                   if word.rsplit("/", 1)[-1] in _SPECIAL)
    rich: list[int] = []  # the commands that hold a special word, in order
    if special:  # how many special words stand before each command: more before the next
        before = [0, *accumulate(map(special.__contains__, values))]
        at_starts = list(map(before.__getitem__, starts))
        rich = list(compress(count(), map(lt, at_starts, at_starts[1:])))
    rich.append(commands)
    need: list[int] = []  # the words of the other commands that a rule can change
    if len(rich) <= commands:
        active = set(filter(_ACTIVE, distinct))
        options = set(filter(_OPTION_START, distinct))
        active.update(word for word in options if word.startswith("-u"))
        need = sorted({*compress(count(), map(active.__contains__, values)),
                       *compress(count(1), map(options.__contains__, values))})
    need.append(len(values))
    first = set(starts)
    nested = depth < _MAX_NESTING
    done: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}  # a command seen before
    at = 0
    for command in rich:
        begin = starts[command]
        i = need[at]
        while i < begin:
            cleans[i] = _redact_plain_word(values[i], None if i in first else values[i - 1],
                                           found, mark, depth, nested)
            at += 1
            i = need[at]
        if command == commands:
            break
        end = starts[command + 1]
        words = values[begin:end]
        again = done.get(words)
        if again is None:
            mark_at = len(found)
            again = done[words] = (_redact_words(words, found, mark, depth), found[mark_at:])
        else:
            found.extend(again[1])
        cleans[begin:end] = again[0]
        while need[at] < end:
            at += 1
    return cleans


def _redact_plain_word(word: str, previous: str | None, found: list[str], mark: Mark,
                       depth: int, nested: bool) -> str:
    """One word of a command of no special word, as :func:`_redact_words` redacts it."""
    simple = _plain_assignment(word, previous) if "=" in word else None
    if simple is not None:
        name, value = simple
        found.append(value)
        return f"{name}={mark(value)}"
    if _may_hold_secret(word, previous):
        clean = redact_argument(word, previous, found, mark)
        if clean == word and nested and _blank(word):
            clean = _redact_script(word, found, mark, depth + 1)  # ssh host 'cmd …'
        return clean
    if nested and (" " in word or "\n" in word or "\t" in word):
        return _redact_script(word, found, mark, depth + 1)  # watch 'cmd …'
    return word


def _redact_script_reference(text: str, found: list[str], mark: Mark, depth: int) -> str:
    """:func:`_redact_script` the straightforward way: every simple command of
    :func:`.shellwords.shell_commands` through :func:`_redact_words`, then the script
    rebuilt word by word. The tests compare the two on generated scripts."""
    if not _could_hold_secrets(text):  # most scripts: one scan, no word loop
        return text
    start = len(found)
    if "'" in text or '"' in text:  # quoted keyed values in the raw text (a heredoc's JSON)
        _redact_quoted_values(text, found, mark)  # what they hold is scrubbed below
    commands = shell_commands(text)
    done: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}  # a command seen before
    redacted = []
    for command in commands:
        values = tuple(value for _, _, value in command)
        again = done.get(values)
        if again is None:
            seen: list[str] = []
            again = done[values] = (_redact_words(values, seen, mark, depth), seen)
        redacted.append(again[0])
        found.extend(again[1])
    if len(found) > start:  # a secret found anywhere, wherever it stands as (part of) a word
        flat = [word for words in redacted for word in words]
        scrubbed = iter(_scrub_marked(flat, found[start:], mark))
        redacted = [[next(scrubbed) for _ in words] for words in redacted]
    pieces: list[str] = []
    last = 0
    quote = _quote(mark)
    quoted: dict[str, str] = {}  # each distinct word quoted once
    for command, words in zip(commands, redacted, strict=True):
        for (begin, end, value), clean in zip(command, words, strict=True):
            if clean != value:
                shown = quoted.get(clean)
                if shown is None:
                    shown = quoted[clean] = quote(clean)
                pieces.extend((text[last:begin], shown))
                last = end
    pieces.append(text[last:])
    rebuilt = "".join(pieces)
    return scrub(rebuilt, found[start:], mark) if len(found) > start else rebuilt
