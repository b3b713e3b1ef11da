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
  and a word holding blanks that no other rule changed (``ssh host 'cmd ...'``);
- by shape, in any word or part of one: well-known token formats and the secret
  segments of webhook URLs (:mod:`.shapes`: ``ghp_…``, ``AKIA…``,
  ``hooks.slack.com/services/T…/B…/SECRET``).

Each rule collects the values it removed, so that every other occurrence of them
(in any word, in the command's output) is scrubbed too. Every rule is linear, and
they run once per command line for both its display and its keyed identity
(:class:`Recorder`).
"""

from __future__ import annotations

import re
import shlex
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache, partial
from itertools import accumulate, compress, count
from operator import itemgetter, lt, ne
from typing import cast

from . import absent
from . import fed_secrets as fed
from .command_kinds import HOLE, BareTemplate, bare_template, masked, redactor, shapes_marked
from .command_programs import (
    _PROGRAMS,
    _SHELLS,
    _SPLIT,
    _VERB_SPELLINGS,
    COMMA_PAIRS,
    PASS_SOURCE,
    PROGRAM_OPTIONS,
    SAMBA_USER,
    SAMBA_USER_GATE,
    _positional_secrets,
    _program_secrets,
    _script_positions,
    comma_pair,
    jdbc_pairs_marked,
    jdbc_thin_marked,
    names_next_by_place,
    ntlm_hashes,
)
from .finder import finder as cached_finder
from .plain_words import memo_after_options, no_words, plain_run
from .quoted_values import quoted_values_found, sql_password
from .quoted_values import redact_quoted_values as _redact_quoted_values
from .recorder import MAX_NESTING as _MAX_NESTING
from .recorder import WORD_BREAK as _WORD_BREAK
from .recorder import Recorder, Unrendered, redacted_each
from .runs import LEAST, Runs, bare_run
from .secrets import (
    Mark,
    is_secret_name,
    marks_of,
    plain_mark,
    redact_nested,
    redact_path_params,
    redact_query,
    scrub,
    spelled_forms,
)
from .shapes import may_hold_shapes, redact_private_keys, redact_shapes
from .shellwords import ScriptWords, script_words

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
_MAX_INNER = 3  # --opt=name=value levels

def _redact_url(url: str, found: list[str], mark: Mark) -> str:
    head, sep, query = url.partition("?")
    head, hash_sign, fragment = head.partition("#") if not sep else (head, "", "")
    scheme, slashes, rest = head.partition("://")
    authority, slash, path = rest.partition("/")
    if ";" in authority:  # JDBC: jdbc:sqlserver://h:1433;user=u;password=V;
        authority = jdbc_pairs_marked(authority, found, mark)
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        found.extend((userinfo, userinfo.partition(":")[2]))
        authority = f"{mark(userinfo)}@{host}"  # (keyed: two passwords, two commands)
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
    hashes = ntlm_hashes(argument, previous)  # -hashes LM:NT
    if hashes is not None:
        found.extend((hashes[1], hashes[1].rpartition(":")[2]))
        return hashes[0] + mark(hashes[1])
    if previous is not None and _option_takes_secret(previous) \
            and not argument.startswith("-") and not PASS_SOURCE.fullmatch(argument):
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
    name = option.lstrip("-")  # two letters name something: --pw, plink's -pw
    if name.endswith("stdin") or name == "with-token":
        return False  # a flag: the secret comes on standard input (docker login
        # --password-stdin REGISTRY, gh auth login --with-token)
    return len(name) >= 2 and is_secret_name(name)


_OPTION_NAME = re.compile(r"--?[^\W\d_][\w.-]*")
_IS_OPTION = _OPTION_NAME.fullmatch


def _option_takes_secret(word: str) -> bool:
    """:func:`_takes_secret`, the cache asked only about options (thousands of distinct
    values before a word would push the options out of it)."""
    return _IS_OPTION(word) is not None and _takes_secret(word)


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
        if "(" in value and fed.may_feed_secrets(value):  # pw = get('X', 'PW'): PW alone
            fed.fed_secrets_found(f"{keyed.group(1)}={value}", found)
        return f"{keyed.group(1)}{keyed.group(2)}{mark(value)}"
    name, equals, value = argument.partition("=")
    if equals and value and name[:2] == "//" and is_secret_name(name.rpartition(":")[2]):
        _found(found, value)  # an .npmrc key scoped to a registry: //HOST/PATH/:_authToken=V
        return f"{name}={mark(value)}"
    if equals and value and _ASSIGNMENT.fullmatch(name):
        user = SAMBA_USER.match(argument) if "%" in value else None
        if user is not None:  # mount -o user=USER%PASSWORD[,OPTIONS]
            found.append(user.group(2))
            rest = argument[user.end():]
            return f"{user.group(1)}{mark(user.group(2))}" + (
                _redact_embedded(rest, found, mark) if rest else "")
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


# User-info without a scheme (`curl -x user:pw@proxy:8080`, `http_proxy=u:pw@host`,
# `curl u:pw@host/path?q`, impacket's `DOMAIN/user:pw@host`): a word of
# [DOMAIN/]USER:PASSWORD@HOST[:PORT][/PATH], not an image digest (`img:tag@sha256:...`).
_BARE_USERINFO = re.compile(r"([^\s@:=]+):([^\s/@]+)@(?!sha\d+:)([\w.-]+(?::\d+)?"
                            r"|(?:tcp6?|udp|unix)\([^()\s]*\))"  # Go's DSN: u:pw@tcp(h:3306)/db
                            r"((?:[/?#]\S*)?)")


def _redact_embedded(argument: str, found: list[str], mark: Mark) -> str:
    """Secrets standing somewhere inside a word: quoted keyed values, URLs, user-info
    without a scheme, and pairs after ``?``, ``&``, ``;`` or ``#`` (a query or form
    without a scheme)."""
    if "'" in argument or '"' in argument:
        argument = _redact_quoted_values(argument, found, mark)
    if "@" in argument and "jdbc:" in argument:  # jdbc:oracle:thin:USER/PASSWORD@HOST
        argument = jdbc_thin_marked(argument, found, mark)
    if "@" in argument and "://" not in argument:
        bare = _BARE_USERINFO.fullmatch(argument)
        if bare:
            found.append(bare.group(2))
            return f"{bare.group(1)}:{mark(bare.group(2))}@{bare.group(3)}" + (
                _redact_embedded(bare.group(4), found, mark) if bare.group(4) else "")
    if "://" in argument:
        argument = _URL.sub(lambda m: _redact_url(m.group(0), found, mark), argument)
    elif "=" in argument and any(c in argument for c in "?&;#"):
        argument = _PAIRS.sub(lambda m: redact_query(m.group(), found, mark), argument)
    elif "=" in argument and "," in argument:  # mount -o user=u,password=V
        argument = COMMA_PAIRS.sub(lambda m: comma_pair(m, found, mark), argument)
    elif "%" in argument:  # an encoded URL or query: https%3A%2F%2Fh%2Fp%3Ftoken%3DV
        argument = redact_nested(argument, found, mark)
    return argument


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

    try:
        return redacted_each(redact, marks, secrets,
                             recordable=not any("\0" in word for word in argv))
    finally:
        absent.forget()  # (the long texts the hints kept: none of this line stays)


def _redact_words(words: Sequence[str], found: list[str], mark: Mark, depth: int,
                  ends: list[int] | None = None, *, shapes: bool = True,
                  seen: _Seen | None = None) -> list[str]:
    """Each word of one simple command redacted (see :func:`redact_argument` and the
    rules by position, program and script; without ``shapes``, tokens known by their
    shape are left to the caller); the values removed are appended to ``found``, and
    ``len(found)`` after each word to ``ends`` when it is given. ``seen``: what the rules
    gave words before (:func:`_by_the_rules`), shared by the commands of one script."""
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
    done: set[int] = set()  # scripts: their shapes are marked by their own last pass
    # what the rules gave a word after the same word before (`-token V -token V ...`, a
    # script of one word repeated): its redaction, the values found, whether a script
    seen = {} if seen is None else seen
    previous: str | None = None
    for i, word in enumerate(words):
        if "-----BEGIN" in word:  # a private key first: its armour looks like `NAME: V`
            word = redact_private_keys(word, found, mark)
        simple = _plain_assignment(word, previous) if plain and "=" in word else None
        if simple is not None:  # most secrets of a long command: --NAME=V, NAME=V
            name, value = simple
            found.append(value)
            redacted.append(f"{name}={mark(value)}")
        elif i in scripts and nested:
            redacted.append(_redact_script(word, found, mark, depth + 1))
            done.add(i)
        elif i in options:
            kept = options[i]
            prefix, suffix = kept if isinstance(kept, tuple) else (kept, "")
            value = word[len(prefix):len(word) - len(suffix)]
            _found(found, value)
            if value.startswith("pass:"):  # openssl -pass pass:PASSWORD
                found.append(value[5:])
            if ";" in value:
                found.extend(cookie.partition("=")[2] for cookie in value.split(";"))
            else:
                found.append(value.partition("=")[2])
            redacted.append(prefix + mark(value) + suffix)
        elif _ACTIVE(word) is None and not word.startswith("-u") \
                and (previous is None or previous[:1] != "-"):
            redacted.append(word)  # no rule can change it (a test runs them all to check)
        elif previous in _USER_OPTIONS and ":" in word and _MEMO and not _takes_secret(
                previous) and not (nested and _blank(word)):  # -u USER:PW: its one rule
            # (what the rules give it: redact_argument's user-option branch; with the
            # memo off, tests take it through them)
            redacted.append(_user_password(word, "", found, mark))
        else:
            clean, script = _by_the_rules(word, previous, found, mark, depth, nested, seen)
            if script:
                done.add(i)
            redacted.append(clean)
        previous = word
        if ends is not None:
            ends.append(len(found))
    if not shapes:  # a script's words: its last pass marks the shapes in its whole text
        return redacted
    return shapes_marked(redacted, found, mark, done)


def _by_the_rules(word: str, previous: str | None, found: list[str], mark: Mark,
                  depth: int, nested: bool, seen: _Seen) -> tuple[str, bool]:
    """A word of :func:`_redact_words` that a rule may change (or a script inside it:
    ``ssh host 'cmd …'``, ``watch 'cmd …'``), redacted, and whether it was read as a
    script; what the rules gave the same word after the same word before is in ``seen``
    (the values found with it too). A word before that is no option (no leading ``-``)
    is no word before to the rules (they ask only whether it is an option that takes a
    secret, or ``-u``): such words share one entry, ``None`` (`-u u:V1 -u u:V2`: each
    ``-u`` after a value)."""
    key = (word, previous if previous is not None and previous[:1] == "-" else None)
    again = seen.get(key)
    if again is not None:
        found.extend(again[1])
        return again[0], again[2]
    at = len(found)
    if _may_hold_secret(word, previous):
        clean, script = _ruled_word(word, previous, found, mark, depth, nested)
    elif nested and _blank(word):
        clean, script = _redact_script(word, found, mark, depth + 1), True  # watch 'cmd …'
    else:
        return word, False
    if _MEMO:
        seen[key] = (clean, found[at:], script)
    return clean, script


# Whether _redact_words reuses what the rules gave the same word after the same word
# (tests turn it off to compare: every word through the rules)
_MEMO = True
# a word and the option before it (or None) -> its redaction, the values found, whether
# it was read as a script
_Seen = dict[tuple[str, str | None], tuple[str, list[str], bool]]
_NO_SCRIPTS: frozenset[int] = frozenset()
# never changed: a command with options gets its own
_NO_OPTIONS: dict[int, str | tuple[str, str]] = {}


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
    if previous is not None and (previous in _USER_OPTIONS or (
            _IS_OPTION(previous) is not None and _takes_secret(previous))):
        return None
    return match.group(1), match.group(2)


def _blank(word: str) -> bool:
    return " " in word or "\n" in word or "\t" in word


_PLACED_WORDS = _SPLIT | _VERB_SPELLINGS  # what _placed names, with...
_PLACED_ENDS = frozenset(":=")  # ...a word ending in `:` or `=`
_LAST_CHARACTER = itemgetter(slice(-1, None))
# What makes a word need the rules, whatever stands before it, when no option before it
# makes it a secret (see _may_hold_secret and _plain_assignment; blanks: a script
# inside): one of these characters, or a start of -u (-uUSER:PW, tested apart: an
# alternation with `\A` costs a try at every character of a long word)
_ACTIVE = re.compile(r"[=:%'\" \n\t]").search


def _may_hold_secret(word: str, previous: str | None) -> bool:
    """False for a word no rule of :func:`redact_argument` can touch (most of them): a
    quick test first, so that 30,000 plain words cost little."""
    if previous is not None and (previous in _USER_OPTIONS or (
            _IS_OPTION(previous) is not None and _takes_secret(previous))):
        return True
    if ":" in word or word.startswith("-u") or "%" in word or "'" in word or '"' in word:
        return True
    if "=" not in word:
        return False
    name, _, value = word.partition("=")
    return is_secret_name(name) or _VALUE_MORE(value) is not None or _NAME_MORE(name) is not None


_VALUE_MORE = re.compile("[=&?;#'\"]").search  # (what a value holding more pairs may hold)
_NAME_MORE = re.compile("[&?;#'\"\\[ ]").search


_FEW = 8  # values tested one by one before an automaton is built for them


def _scrub_marked(words: list[str], found: list[str], mark: Mark) -> list[str]:
    forms = spelled_forms(found)
    if not forms:
        return words
    # one pass over every word: argv holds no NUL, and no mark holds this separator
    joined = _WORD_BREAK.join(words)
    if len(forms) <= _FEW and not any(form in joined for form in forms):
        return words  # (mostly: each value stands in a word that is marked now)
    finder = cached_finder(tuple(forms))
    if joined.count(_WORD_BREAK) != len(words) - 1:
        return [finder.sub(w, lambda value: mark(forms[value])) for w in words]
    return finder.sub(joined, lambda value: mark(forms[value]), marks_of(mark, forms)
                      ).split(_WORD_BREAK)


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
    try:
        each = redacted_each(lambda mark, found: [_redact_script(text, found, mark, depth=0)],
                             marks, secrets, recordable="\0" not in text)
    finally:
        absent.forget()
    return [words[0] for words in each]


# What any rule needs to see before it can redact a word: a `:` (a header, a URL,
# user:password, JSON), an assignment to a secret-like name (also `NAME = '...'`,
# `['NAME']=`), an option that takes a secret (`--token VALUE`, `-token VALUE`, `-u`,
# `-uUSER:PW`), a program with secret options of its own, a shell that runs a
# script, or a token or webhook URL known by its shape (`ghp_…`: shapes.py). Each
# pattern starts only where a run of its characters starts: linear.
_ASSIGNED_NAME = re.compile(r"(?<![\w.-])(-{0,2}[^\W\d][\w.-]*)"
                            r"""["'\[\]]*\s*=""")
_OPTION_WORD = re.compile(r"(?<![^\s;&|<>()'\"])(?:--?[^\s;&|<>()'\"=]+)"
                          r"(?![^\s;&|<>()'\"])")
# The words of a text as the gate sees them (between blanks, operators, quotes and `/`,
# so a program's path counts as its name): one C-level scan, then a set test.
_GATE_WORD = re.compile(r"[^\s;&|<>()'\"/]+")
_PROGRAM_NAMES = frozenset({*_SHELLS, *PROGRAM_OPTIONS, *_VERB_SPELLINGS})
_HEAD = 256


_ENCODED_EQUALS = re.compile(r"%(?:25)*3[dD]")  # a query inside a value, encoded


# What the shell removes from a word before a program sees it: quotes and the
# backslash of an escape (`--tok\en=V`, `TO''KEN=V`, `--pass""word V` name a secret).
_SHELL_QUOTING = re.compile(r"[\\'\"]")


@lru_cache(maxsize=16)
def _could_hold_secrets(text: str) -> bool:
    """False when no rule can redact anything in ``text`` (a script, or argv joined by
    newlines): one scan instead of a rule per word, for almost every command. The
    scans read the text as written and, when it has quoting, as the shell reads its
    words (quotes and escaping backslashes gone): a secret's name may be spelled
    with either."""
    return _could_hold_secrets_as_written(text) or (
        _SHELL_QUOTING.search(text) is not None
        and _could_hold_secrets_as_written(_SHELL_QUOTING.sub("", text)))


def _could_hold_secrets_as_written(text: str) -> bool:
    """:func:`_could_hold_secrets` on ``text`` as it stands. (Each test below is skipped
    when the text lacks a character its pattern needs; the cheapest that holds for most
    secret-bearing scripts first; a program named among the first words, the words of
    a text cut after 256 characters but the last, as good as any.)"""
    if len(text) > _HEAD and not _PROGRAM_NAMES.isdisjoint(
            _GATE_WORD.findall(text, 0, _HEAD)[:-1]):
        return True  # (sshpass -p V; sshpass -p V; ...: no scan of the whole text)
    if ":" in text or ("%" in text and _ENCODED_EQUALS.search(text)) or may_hold_shapes(text):
        return True  # (a token or webhook URL: one pass in C, before the scans below)
    if ("'" in text or '"' in text) and sql_password(text):  # (a quote first: fast)
        return True
    if "%" in text and SAMBA_USER_GATE(text):  # mount -o user=USER%PASSWORD
        return True
    if "=" in text and _secret_assignment(text):
        return True
    if not _PROGRAM_NAMES.isdisjoint(_GATE_WORD.findall(text)):
        return True
    if fed.may_feed_secrets(text) and fed.feeds_secrets(text):  # echo PW | docker login
        return True  # --password-stdin, send "PW\r" (a hint alone opens no rule: a search)
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
    the values removed are appended to ``found``. What the straightforward way gives
    (tests/test_secret_script_paths.py holds it to that), with the Python work per word
    of a long script cut: the script is split in C (:func:`.shellwords.script_words`),
    the words that no rule can change are skipped by C-level passes, and it is rebuilt
    by replacing only the words that changed."""
    if not _could_hold_secrets(text):  # most scripts: one scan, no word loop
        return text
    start = len(found)
    text = redact_private_keys(text, found, mark)  # (before its armour looks like `NAME: V`)
    if "'" in text or '"' in text:  # quoted keyed values in the raw text (a heredoc's JSON)
        quoted_values_found(text, found, mark)  # what they hold is scrubbed below
    if fed.may_feed_secrets(text):  # fed on stdin, typed to a prompt, in SQL or code
        fed.fed_secrets_found(text, found)  # scrubbed below too
    script = script_words(text)
    values = script.values
    cleans = _redact_commands(script, found, mark, depth)
    if len(found) > start and "$" in text:  # P=V; sshpass -p "$P": V too
        found.extend(fed.expanded_literals(text, found[start:]))
    if len(found) > start:  # a secret found anywhere, wherever it stands as (part of) a word
        cleans = _scrub_marked(cleans, found[start:], mark)
    changed = list(compress(count(), map(ne, values, cleans)))
    if changed:  # each word that changed in its place, quoted (each distinct word once)
        parts = list(script.parts)
        clean = list(map(cleans.__getitem__, changed))
        distinct = list(set(clean))
        quoted = dict(zip(distinct, mark.quote_many(distinct) if isinstance(mark, Recorder)
                          else map(shlex.quote, distinct), strict=True))
        deque(map(parts.__setitem__, [2 * i + 1 for i in changed],
                  map(quoted.__getitem__, clean)), maxlen=0)
        text = "".join(parts)
    if may_hold_shapes(text):  # (one pass in C where three would find nothing)
        text = redact_shapes(text, found, mark)  # a token in a comment, a heredoc
    return scrub(text, found[start:], mark) if len(found) > start else text


# Words that make a simple command more than a list of words: a shell (its script), a
# program with secret options, or a word that names the next one a secret by where it
# stands (also as the last part of a path: /usr/bin/mysql).
_SPECIAL = _SHELLS | _PROGRAMS | _PLACED_WORDS
_FEW_WORDS = 16  # a script of no more words: each command through _redact_words
_HAS_SLASH = re.compile("/").search
_KEY_ARMOUR = re.compile("-----BEGIN").search  # a private key's (see _redact_words)
# ...and what makes the word after it need them: an option (--token, -u).
_OPTION_START = re.compile("-").match


def _redact_commands(script: ScriptWords, found: list[str], mark: Mark, depth: int
                     ) -> list[str]:
    """Each word of ``script`` redacted as :func:`_redact_words` redacts it in its simple
    command: a command holding a special word (:data:`_SPECIAL`) through it (each
    distinct one once, each kind of them once: :func:`_template`), the others word by
    word, only the words that a rule can change."""
    values, starts = script.values, script.starts
    cleans = list(values)
    commands = len(starts) - 1
    rich, need, holes = _plan(values, starts)
    plain_words = plain_run(values, need, set(starts), cleans, found, mark, _PLAIN_ASSIGNMENT,
                            lambda word: word in _USER_OPTIONS or _option_takes_secret(word),
                            memo_after_options(_redact_plain_word, lambda: _MEMO), depth
                            ) if len(need) > 1 else no_words
    done: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}  # a command seen before
    templates: dict[tuple[object, ...], object] = {}  # a BareTemplate, or None
    reused = 0
    seen: _Seen = {}  # what the rules gave a word, for every command here (_by_the_rules)
    rules = partial(_redact_words, seen=seen)
    by_kind = redactor(values, mark, found, rules, depth, special=_DIGIT_WORDS,
                       few=_FEW_COMMANDS) if len(rich) > _FEW_COMMANDS else None
    runs = Runs(values, starts, rich) if len(rich) > _FEW_COMMANDS and RUNS else None
    kinds = list(map(holes.get, values, values)) if runs and holes else []  # (bare runs)
    at = i = 0
    while True:  # each command of `rich`, or a run of one kind at once (.runs)
        command = rich[i]
        begin = starts[command]
        at = plain_words(at, begin) if need[at] < begin else at
        if command == commands:
            break
        end = starts[command + 1]
        words = values[begin:end]
        key = tuple(map(holes.get, words, words)) if holes else words
        template = templates.get(key, _UNSEEN) if key != words else None
        ran = 0
        if template is _UNSEEN:  # the first of its kind: run, and keep what it shows
            mark_at = len(found)
            word_ends: list[int] = []
            cleans[begin:end] = redacted = rules(words, found, mark, depth, word_ends,
                                                 shapes=False)
            templates[key] = bare_template(words, key, redacted, found, mark_at, word_ends,
                                           mark, _PLACED_WORDS)
            if len(templates) > _FEW_COMMANDS and len(templates) > reused:
                holes = {}  # kinds seldom come again here (mysql -pV1 db, mysql -pV2 db)
        elif template is not None:  # each command of a run of its kind at once, or this
            ran = runs.length(i, kinds, key) if runs and kinds else 1
            ran = ran if ran >= LEAST else 1
            bare_run(cast(BareTemplate, template), values, cleans, found, mark, begin,
                     end - begin, ran, holes_only=HOLES_ONLY)
            reused += ran
        elif by_kind is not None and runs is not None and (
                ran := by_kind.run(runs, i, begin, end - begin, cleans)):
            pass  # (a run of commands of one kind by their digits)
        else:  # as before when seen before, else by its kind (digits aside) or the rules
            again = done.get(words)
            if again is None:
                mark_at = len(found)
                again = done[words] = (by_kind.redact(words, begin, end) if by_kind else rules(
                    words, found, mark, depth, shapes=False), found[mark_at:])
            else:
                found.extend(again[1])
            cleans[begin:end] = again[0]
        i += max(ran, 1)
        at = bisect_left(need, starts[rich[i - 1] + 1], at)  # (past the words of those)
    return cleans


# A bare value: letters, digits, `_`, `.`, `-` (not first), none of the words a rule
# names (programs, shells, options, verbs, login...), no token known by its shape. No
# rule looks inside one: where it stands alone decides whether it stays or is marked
# whole (`-p V`); it makes no word after it a secret; it is no program, option or name:
# commands that differ only in bare values are redacted alike, unless a word naming the
# next one a secret by place is in them (then a bare word's being secret-like counts).
_BARE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*").fullmatch
_NOT_BARE = frozenset({*_SHELLS, *_PROGRAMS, *_PLACED_WORDS, *_PROGRAM_NAMES, "login",
                       *(option for options in PROGRAM_OPTIONS.values() for option in options)})
_DIGIT_WORDS = frozenset(masked(word) for word in _NOT_BARE if any(c.isdigit() for c in word))
_UNSEEN = object()
_FEW_COMMANDS = 8
HOLES_ONLY = True  # a bare template that changed only its values writes only them (tests)
RUNS = True  # runs of commands of one kind at once (.runs; tests compare)


def _plan(values: Sequence[str], starts: Sequence[int]
          ) -> tuple[list[int], list[int], dict[str, object]]:
    """The commands that hold a special word, in order; the words of the others that a
    rule can change, in order (each list ends with a sentinel: the number of commands,
    of words); and the bare values (``HOLE`` for each) when the rules of commands that
    differ only in them are worth running once (:func:`_template`)."""
    commands = len(starts) - 1
    if len(values) <= _FEW_WORDS:  # a short script (one inside a word): each command whole
        return [*range(commands), commands], [len(values)], {}
    # each pass below is C-level: over the distinct words, then a test per word
    rich: list[int] = []
    need: list[int] = []
    distinct = set(values)
    special = distinct & _SPECIAL
    seen = "\0".join(distinct) + "\0"  # (a filter only where one of its words may be)
    if "=\0" in seen or ":\0" in seen:  # `password: V` (not `{"api_key": V}`: see below)
        special.update(word for word in distinct if word[-1:] in _PLACED_ENDS
                       and names_next_by_place(word))
    special.update(word for word in (filter(_HAS_SLASH, distinct) if "/" in seen else ())
                   if word.rsplit("/", 1)[-1] in _SPECIAL)
    special.update(filter(_KEY_ARMOUR, distinct) if "-----BEGIN" in seen else ())  # (1st)
    if special:  # how many special words stand before each command: more before the next
        before = [0, *accumulate(map(special.__contains__, values))]
        at_starts = list(map(before.__getitem__, starts))
        rich = list(compress(count(), map(lt, at_starts, at_starts[1:])))
    if len(rich) < commands:
        active = set(filter(_ACTIVE, distinct))
        options = set(filter(_OPTION_START, distinct)) if "\0-" in "\0" + seen else set()
        active.update(word for word in options if word.startswith("-u"))
        need = sorted({*compress(count(), map(active.__contains__, values)),
                       *compress(count(1), map(options.__contains__, values))}) if options \
            else list(compress(count(), map(active.__contains__, values)))  # (in order)
    # commands that differ only in their bare values (sshpass -p V1 x, sshpass -p V2 y)
    holes: dict[str, object] = {}
    if len(rich) > _FEW_COMMANDS:
        bare = set(filter(_BARE, distinct)) - _NOT_BARE - special
        if may_hold_shapes("\n".join(bare)):  # a token's shape is looked at (sh -c TOKEN)
            bare = {word for word in bare if not may_hold_shapes(word)}
        holes = dict.fromkeys(bare, HOLE)
    rich.append(commands)
    need.append(len(values))
    return rich, need, holes


def _ruled_word(word: str, previous: str | None, found: list[str], mark: Mark, depth: int,
                nested: bool) -> tuple[str, bool]:
    """A word a rule may change (:func:`_may_hold_secret`) as the rules redact it, else
    as a script inside it (``ssh host 'cmd …'``) or as code calling with a password
    (``c=connect('h','u','PW')``); and whether it was read as a script."""
    clean = redact_argument(word, previous, found, mark)
    if clean != word:
        return clean, False
    if nested and _blank(word):
        return _redact_script(word, found, mark, depth + 1), True
    if fed.may_call_secrets(word):
        return fed.called_secrets_marked(word, found, mark), False
    return clean, False


def _redact_plain_word(word: str, previous: str | None, found: list[str], mark: Mark,
                       depth: int, nested: bool) -> str:
    """One word of a command of no special word, as :func:`_redact_words` redacts it."""
    simple = _plain_assignment(word, previous) if "=" in word else None
    if simple is not None:
        name, value = simple
        found.append(value)
        return f"{name}={mark(value)}"
    if _may_hold_secret(word, previous):
        return _ruled_word(word, previous, found, mark, depth, nested)[0]
    if nested and (" " in word or "\n" in word or "\t" in word):
        return _redact_script(word, found, mark, depth + 1)  # watch 'cmd …'
    return word
