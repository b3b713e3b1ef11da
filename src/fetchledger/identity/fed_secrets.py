"""Secrets a script gives a program other than as a word of its command line (DESIGN
§8), for :func:`.command_secrets._redact_script`:

- **fed on standard input** to a program that reads a password there: ``echo PW |
  docker login --password-stdin`` (any ``--…-stdin`` option named like a secret:
  podman, helm registry, nerdctl, crane, cosign...), ``gh auth login --with-token``,
  ``printf '%s' PW | …``, ``CMD <<< PW``, a heredoc (``CMD <<EOF`` … ``EOF``, also
  ``cat <<EOF | CMD``), ``(echo PW; echo PW) | passwd USER``, ``echo PW | passwd
  --stdin USER``, ``echo USER:PW | chpasswd`` (the password after the user),
  ``echo PW | sudo -S CMD``, ``kinit``, ``smbpasswd -s``, ``htpasswd -i``,
  ``sshpass`` without ``-p``, ``cryptsetup``, ``vault login -``, ``docker secret
  create NAME -``, ``gh secret set NAME``, ``wrangler secret put NAME``, and an
  option named like a secret given standard input as its file (``--password-file
  /dev/stdin``, ``--passphrase-fd 0``, openssl's ``-passin stdin``);
- **typed to a prompt** by an expect script: ``send "PW\\r"`` (``exp_send``,
  pexpect's ``sendline('PW')``) after a prompt naming a password, passphrase,
  token or PIN;
- **SQL lines**: ``CONNECT USER/PW@DB`` (Oracle, at a line's or statement's start),
  ``IDENTIFIED BY PW`` unquoted, ``IDENTIFIED WITH PLUGIN BY 'PW'``, DB2's
  ``CONNECT TO DB USER U USING PW``;
- **interpreter code** passing a password by position to a common call:
  ``connect('h', 'u', 'PW')`` (MySQL drivers, ``DBI->connect``, ``new PDO``,
  ``mysqli_connect``, ``FTP``; after a port number, paramiko's ``connect('h', 22,
  'u', 'PW')``), ``login('u', 'PW')``, ``auth=('u', 'PW')``, ``HTTPBasicAuth('u',
  'PW')``. (Keyword arguments named like secrets, ``password='PW'``, are quoted keyed
  values: :mod:`.quoted_values`.)

A value holding an expansion (``$PW``, a backquote) is no literal and stays. Each
finder appends the values, spelled as they stand in the text, to ``found``; the
caller scrubs them from the script (its identity holds their keyed mark, so two
scripts that differ only in one stay two sources). Every scan is linear: one regular
expression over the text, and the few words around each hit.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from functools import lru_cache

from . import written_secrets as written
from .absent import AbsentHint
from .code_secrets import call_aliases, call_secrets, default_secrets, may_alias, may_default
from .secrets import Mark, is_secret_name, scrub
from .shellwords import shell_commands

__all__ = ["called_secrets_marked", "expanded_literals", "fed_secrets_found", "feeds_secrets",
           "may_call_secrets", "may_feed_secrets"]

_read_commands = shell_commands.__wrapped__  # (small pieces: kept out of its cache)

# --- the gate: one scan for what any finder below needs ---------------------------------

_STDIN_HINT = re.compile(
    r"stdin|with-token|passwd|kinit|sshpass|cryptsetup|htpasswd|sudo|doas|secrets?\b|pdbedit"
    r"|/dev/fd/0|-fd\b|vault|aws|credential|read\b|tee\b")  # (no \b first: a slow scan)
_SEND_HINT = re.compile(r"(?<![\w$-])(?:exp_send|send|sendline)\b")
# (.absent: `conn\b` looks one character past its match; none is longer than 10)
_SQL_HINT = AbsentHint(re.compile(r"(?i)conn(?:ect|\b)|identified"), 10)


def _may_sql(text: str) -> bool:
    """Whether :func:`_sql_secrets` may find something: a logon or an ``IDENTIFIED``, or
    MySQL's ``PASSWORD('PW')`` (a substring test first: a case-blind scan is slow)."""
    return _SQL_HINT(text) or (
        ("assword" in text or "ASSWORD" in text) and _PASSWORD_CALL.search(text) is not None)


_PASSWORD_CALL = re.compile(r"(?i)password[ \t]*\(")
_CALL_HINT = re.compile(r"(?<![\w$])(?:connect|mysqli?_connect|mysqli|PDO|getConnection"
                        r"|FTP(?:_TLS)?(?:\.open|\.new)?|login|oci_p?connect|simple_bind(?:_s)?"
                        r"|bind_s|ftp_login|ldap_bind|ssh2_auth_password|imap_open"
                        r"|HTTP(?:Basic|Digest|Proxy)Auth|(?:Basic|Digest)Auth|basic_auth"
                        r"|digest_auth|auth)[ \t]*(?:=>?[ \t]*)?\(")


def may_feed_secrets(text: str) -> bool:
    """Whether any finder of :func:`fed_secrets_found` can find something in ``text``
    (C-level scans only)."""
    if ("|" in text or "<<" in text or "<(" in text) and _STDIN_HINT.search(text):
        return True
    if "send" in text and _SEND_HINT.search(text):
        return True
    if "(" in text and (_CALL_HINT.search(text) or (may_alias(text) and call_aliases(text))):
        return True
    if may_default(text):
        return True
    if (">" in text and _WRITTEN_HINT.search(text)) or written.may_write_lines(text) or (
            "printf" in text and "%" in text):
        return True
    return _may_sql(text)


def may_call_secrets(word: str) -> bool:
    """Whether ``word`` (code without blanks: ``c=connect('h','u','PW')``) holds a call
    that :func:`fed_secrets_found` reads."""
    return "(" in word and (_CALL_HINT.search(word) is not None
                            or (may_alias(word) and bool(call_aliases(word))))


def called_secrets_marked(word: str, found: list[str], mark: Mark) -> str:
    """Code in one word (no blank: no script) with the passwords of its calls marked."""
    at = len(found)
    call_secrets(word, found)
    return scrub(word, found[at:], mark) if len(found) > at else word


def feeds_secrets(text: str) -> bool:
    """Whether :func:`fed_secrets_found` finds any secret in ``text``."""
    return bool(_fed_values(text))


def fed_secrets_found(text: str, found: list[str]) -> None:
    """Append to ``found`` the secrets ``text`` (a shell script, or an interpreter's
    code) gives a program on its standard input, to a prompt, in SQL or in a call."""
    found.extend(_fed_values(text))


@lru_cache(maxsize=16)  # the gate asks first, then the redaction (the same text)
def _fed_values(text: str) -> tuple[str, ...]:
    found: list[str] = []
    if ("|" in text or "<<" in text or "<(" in text) and _STDIN_HINT.search(text):
        _stdin_secrets(text, found)
    if "send" in text and _SEND_HINT.search(text):
        _sent_secrets(text, found)
    if "(" in text and (_CALL_HINT.search(text) or may_alias(text)):
        call_secrets(text, found)
    if may_default(text):
        default_secrets(text, found)
    if _may_sql(text):
        _sql_secrets(text, found)
    if ">" in text and _WRITTEN_HINT.search(text):
        _written_secrets(text, found)
    if "printf" in text and "%" in text:
        _rendered_secrets(text, found)
    if written.may_write_lines(text):
        written.written_lines_found(text, found)
    return tuple(found)


# --- standard input ----------------------------------------------------------------------

# What ends a simple command's text (approximately: quotes are not followed here; a
# script inside a quoted word is read again at its own level)
_SEPARATOR = re.compile(r"[;&|\n(){}]")
_PIPE = re.compile(r"(?<![|>])\|(?![|&])")
_HERESTRING = re.compile(r"<<<[ \t]*")
_SUBSTITUTED = re.compile(r"(?<![<\w])<[ \t]*<\(([^()\n]*)\)")
_HEREDOC = re.compile(r"(?<!<)<<(-?)[ \t]*(?!<)(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([\w.-]+))")
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time",
                       "nice", "ionice", "stdbuf", "timeout", "chronic", "unbuffer"})
_WRAPPER_VALUES = frozenset({"-u", "-g", "-p", "-U", "-C", "-D", "-r", "-t", "-T", "-h",
                             "-n", "-c", "-s", "-k", "-o", "-i", "-e", "--user", "--group"})
_STDIN_VALUES = frozenset({"-", "/dev/stdin", "stdin", "STDIN", "/dev/fd/0",
                           "/proc/self/fd/0", "fd:0", "file:/dev/stdin"})
_OPENSSL_PASS = frozenset({"-passin", "-passout", "-pass", "-password"})
_SECRET_VERBS = frozenset({"set", "put", "create", "add", "import", "update"})
_VALUE_OPTIONS = frozenset({"--body", "-b", "--value", "--data", "--secret", "--from-literal"})
_PLACE_WORD = re.compile(r"[-_.]?(?:file|fd|path)\Z")  # --passphrase-fd: a passphrase's place
_FEW = 8  # how far a group of feeders before a pipe is looked at (linear)
# How a reader takes the lines it is fed: every line a password ("line"), the first
# two (aws configure: key id, secret), "USER:PW" lines (chpasswd) or NAME=VALUE lines
_LINE, _TWO, _PAIR, _NEWUSERS, _ASSIGNMENT = "line", "two", "pair", "newusers", "assignment"
_KEYED = "keyed"  # NAME=VALUE lines, the values of secret-like names


def _stdin_secrets(text: str, found: list[str]) -> None:
    seps = [m.start() for m in _SEPARATOR.finditer(text)]
    readers: dict[str, str | None] = {}  # how each reader's text reads (asked once each)

    def read(reader_text: str) -> str | None:
        if reader_text not in readers:
            readers[reader_text] = _reader(_words(reader_text)) \
                if _STDIN_HINT.search(reader_text) else None
        return readers[reader_text]

    pipes = [pipe.start() for pipe in _PIPE.finditer(text)]
    echoed = _echoed(text, pipes, seps) if ECHOED and len(pipes) > _FEW else None
    if echoed is not None:  # every pipe after `echo WORD`: its WORD fed, as below
        for value, reader_text in echoed:
            how = read(reader_text)
            if how in (_LINE, _TWO) and value[0] != "$":
                found.append(value)  # (one line, no expansion: all _add_lines would do)
            elif how in (_LINE, _TWO):  # (`$NAME` alone: the literal the script assigns it)
                literal = _assigned(text, value)
                if literal:
                    found.append(literal)
            elif how is not None:
                _add_lines(value, how, found, text)
        pipes = []
    for at in pipes:
        how = read(_segment_after(text, at + 1, seps))
        if how is None:
            continue
        for line in _fed_by_pipe(text, at, seps):
            _add_lines(line, how, found, text)
    if "<<<" in text:
        for here in _HERESTRING.finditer(text):
            after = _read_commands(_segment_after(text, here.end(), seps))
            if not after:
                continue
            value = after[0][0][2]
            rest = [word for _, _, word in after[0][1:]]
            before = _words(_segment_before(text, here.start(), seps))
            how = _reader([*before, *rest])
            if how is None and before == ["cat"]:  # cat <<< PW | CMD
                j = bisect_left(seps, here.end())
                if j < len(seps) and _PIPE.match(text, seps[j]):
                    how = _reader(_words(_segment_after(text, seps[j] + 1, seps)))
            if how is not None:
                _add_lines(value, how, found, text)
    if "<(" in text:  # CMD < <(echo PW): a process substitution as standard input
        for fed in _SUBSTITUTED.finditer(text):
            how = _reader(_words(_segment_before(text, fed.start(), seps)))
            if how is not None:
                for line in _printed(_words(fed.group(1))):
                    _add_lines(line, how, found, text)
    if "<<" in text:
        _heredoc_secrets(text, seps, found)


# `echo WORD | READER` as the only command before its pipe: what _fed_by_pipe finds there
# is WORD (one printer, the echo: a word of no quoting, option or separator, no printer in
# it, maybe `$NAME`: then what the script assigns NAME), what follows the pipe up to the
# next separator the reader's text
_ECHOED = re.compile(r"(?:(?<![^;&|\n(){}])[ \t]+|(?<![^\n(]))echo[ \t]+"
                     r"""((?:\$(?=[A-Za-z_]))?[^\s;&|<>()'"\\$`#{}-][^\s;&|<>()'"\\$`#{}]*)"""
                     r"""[ \t]*(\|)(?![|&])"""
                     r"([^;&|\n(){}]*)")
ECHOED = True  # (tests turn it off: each pipe's printers looked for)


def _echoed(text: str, pipes: Sequence[int], seps: Sequence[int]
            ) -> list[tuple[str, str]] | None:
    """Each pipe's WORD and reader's text when every pipe of ``text`` stands after an
    ``echo WORD`` alone (:data:`_ECHOED`), else None: one C-level pass."""
    i = bisect_left(seps, pipes[0]) - 1  # (the first pipe's command first: most scripts
    if _ECHOED.match(text, seps[i] + 1 if i >= 0 else 0) is None:  # of other pipes end here)
        return None
    matches = list(_ECHOED.finditer(text))
    if len(matches) != len(pipes) or [match.start(2) for match in matches] != pipes:
        return None
    words = [match.group(1) for match in matches]
    if any("echo" in word or "printf" in word for word in set(words)):
        return None  # (a printer in it: the last one prints)
    return list(zip(words, [match.group(3) for match in matches], strict=True))


def _segment_after(text: str, at: int, seps: Sequence[int]) -> str:
    """The text from ``at`` to the next separator."""
    i = bisect_left(seps, at)
    end = seps[i] if i < len(seps) else len(text)
    return text[at:end]


def _segment_before(text: str, at: int, seps: Sequence[int]) -> str:
    i = bisect_left(seps, at) - 1
    return text[seps[i] + 1 if i >= 0 else 0:at]


_QUOTING_OR_REDIRECTION = re.compile(r"""['"\\$#<>`]""").search


def _words(segment: str) -> list[str]:
    if _QUOTING_OR_REDIRECTION(segment) is None:  # (most: words between blanks)
        return segment.split()
    commands = _read_commands(segment)
    return [word for _, _, word in commands[0]] if commands else []


_PRINTER = re.compile(r"""(?:^|(?<=[\s'"(]))((?:[\w./-]*/)?(?:echo|printf|yes))(?=[ \t])""")


def _fed_by_pipe(text: str, at: int, seps: Sequence[int], depth: int = 0) -> list[str]:
    """What the echo/printf commands before the pipe at ``at`` print: the command just
    before it, or each of a group's (``(echo A; echo B) | …``, ``{ …; } | …``)."""
    i = bisect_left(seps, at) - 1  # the separator just before: `)` or `}` of a group
    while i >= 0 and text[seps[i]] in "{}" and "{}" in text[seps[i] - 1:seps[i] + 2]:
        i -= 1  # (xargs -I{} CMD {}: a word, no group)
    before = text[seps[i] + 1 if i >= 0 else 0:at]
    if before.strip():
        # the last printer (`ssh host 'echo PW | sudo -S …'` seen from outside), maybe
        # a few separators back inside its quotes (printf 'KEY\nSECRET\n' | aws configure)
        low = seps[i - _FEW] + 1 if i >= _FEW else 0
        region = text[low:at]
        shown, whole = None, True
        if REGION_LAST and i >= 0:  # those of the command before the pipe first: the
            # region's last three when three are there (no printer crosses a separator;
            # the one before it is seen behind), else the region's whole
            starts = [printer.start(1) - low
                      for printer in _PRINTER.finditer(text, seps[i] + 1, at)]
            shown = _last_printed(region, starts)
            whole = shown is None and len(starts) < 3
        if whole:
            shown = _last_printed(region, [printer.start(1)
                                           for printer in _PRINTER.finditer(region)])
        if shown is not None:
            return shown
        if depth < _FEW and i >= 0 and _PIPE.match(text, seps[i]):  # a filter in between:
            return _fed_by_pipe(text, seps[i], seps, depth + 1)  # what it was fed, further back
        return []
    if i < 0 or text[seps[i]] not in ")}" or text[seps[i] + 1:at].strip():
        return []
    closing = "(" if text[seps[i]] == ")" else "{"
    printed: list[str] = []
    for j in range(i - 1, max(i - 1 - _FEW, -1), -1):
        piece = text[seps[j] + 1:seps[j + 1]]
        if "echo" in piece or "printf" in piece:
            printed.extend(_printed(_words(piece)))
        if text[seps[j]] == closing:
            break
    return printed


def _through_pipes(piece: str) -> str:
    """The printer's command at the start of ``piece`` when ``piece`` is it alone, or it
    and then only more commands of one pipeline (``echo PW | tee log | base64 -d |``
    before a reader: what it prints flows on to the reader, whatever stands between);
    else ``""``."""
    if _one_command(piece):
        return piece
    head, bar, tail = piece.partition("|")
    if not bar or tail[:1] == "|" or _NOT_PIPED.search(tail) or not _one_command(head):
        return ""
    return head


_NOT_PIPED = re.compile(r"[;&\n(){}]|\|\|")  # (a command after one of these gets no input)
REGION_LAST = True  # (tests turn it off: every pipe's region scanned whole)


def _last_printed(region: str, starts: Sequence[int]) -> list[str] | None:
    """What the last of the printers at ``starts`` (the last three) prints, alone or
    through the commands of its pipeline, or None when none prints a word."""
    for start in reversed(starts[-3:]):
        piece = _through_pipes(region[start:])
        shown = _printed(_words(piece)) if piece else []
        if shown and shown != ["{}"]:  # (xargs -I{} echo {}: the input, further back)
            return shown
    return None


def _one_command(piece: str) -> bool:
    """Whether ``piece`` is one simple command as the shell reads it (its operators and
    newlines inside quotes)."""
    return not _SEPARATOR.search(piece) or (len(_read_commands(piece)) == 1 and not any(
        char in piece for char in "|;&"))  # (an operator outside quotes: not one)


def _printed(words: Sequence[str]) -> list[str]:
    """The text an ``echo``/``printf`` command prints (its arguments, or for printf with
    a ``%`` format its arguments), or nothing for another command."""
    words = [word for word in words if word not in ("{", "}")]
    while words and words[0] in ("command", "builtin"):
        words = words[1:]
    if not words or words[0].rsplit("/", 1)[-1] not in ("echo", "printf", "yes"):
        return []
    args = list(words[1:])
    if words[0].endswith("yes"):  # yes PW | passwd: PW, again and again
        return [" ".join(args)] if args else []
    if words[0].endswith("echo"):
        while args and re.fullmatch(r"-[neE]+", args[0]):
            args = args[1:]
        return [" ".join(args)] if args else []
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        return []
    return args[1:] if "%" in args[0] and len(args) > 1 else [args[0]]


_LINE_BREAK = re.compile(r"\\[nr]|[\r\n]")
_NOT_PLAIN_LINES = re.compile(r"[\\\r$`]").search
LINES_AT_ONCE = True  # (tests turn it off: every value's lines split by _LINE_BREAK)


def _add_lines(value: str, how: str, found: list[str], text: str) -> None:
    if how == _LINE and LINES_AT_ONCE and _NOT_PLAIN_LINES(value) is None:
        found.extend([line.strip() for line in value.split("\n") if line.strip()])
        return  # (lines of no escape, CR or expansion: each line itself, as below)
    lines = [line for line in _LINE_BREAK.split(value) if line.strip()]
    if how == _TWO:
        lines = lines[:2]
    for line in lines:
        if how in (_PAIR, _NEWUSERS):
            _, colon, password = line.partition(":")
            if how == _NEWUSERS:
                password = password.partition(":")[0]
            line = password if colon else line
        elif how == _ASSIGNMENT:
            line = line.partition("=")[2]
        elif how == _KEYED:
            name, _, line = line.partition("=")
            line = line if is_secret_name(name.strip()) else ""
        line = line.strip()
        if "$" in line or "`" in line:  # an expansion: the literal a script assigned it
            line = _assigned(text, line) or ""
        if line:
            found.append(line)


# A variable expanded whole (`$PW`, `${PW}`), and where a script assigns it a literal:
# `PW=V`, `export PW='V'`, `local PW="V"`; Tcl's `set pw "V"` (each found in one pass)
_EXPANDED = re.compile(r"\$\{?([A-Za-z_]\w*|[1-9])\}?")
_SHELL_ASSIGNMENT = re.compile(
    r"(?:^|(?<=[\s;&|(]))(?:(?:export|local|readonly|declare|typeset)[ \t]+(?:-\w+[ \t]+)*)?"
    r"""([A-Za-z_]\w*)=(?:'([^'\n]*)'|"([^"$`\\\n]*)"|([^\s;&|<>()'"$`\\]+))""")
_TCL_SET = re.compile(r"""(?<![\w$-])set[ \t]+([A-Za-z_]\w*)[ \t]+"""
                      r"""(?:"([^"$\[\\\n]*)"|\{([^{}\n]*)\}|([^\s;"{}\[\]$]+))""")


@lru_cache(maxsize=16)
def _assignments(text: str, tcl: bool) -> dict[str, str]:
    """Each variable ``text`` assigns a literal, with the last literal assigned; also
    the positional parameters of ``set -- A B`` and a ``for NAME in WORD`` loop's one
    word."""
    pattern = _TCL_SET if tcl else _SHELL_ASSIGNMENT
    assigned = {match.group(1): next(g for g in match.groups()[1:] if g is not None)
                for match in pattern.finditer(text)}
    if not tcl and ("set" in text or "for" in text):
        for positional in _SET_ARGUMENTS.finditer(text):
            assigned.update((str(n), word) for n, word in enumerate(
                _words(positional.group(1))[:9], start=1) if "$" not in word)
        for loop in _FOR_ONE.finditer(text):
            assigned[loop.group(1)] = loop.group(2).strip("'\"")
    return assigned


_SET_ARGUMENTS = re.compile(r"(?<![\w-])set[ \t]+--[ \t]+([^;&|\n()]*)")
_FOR_ONE = re.compile(r"""(?<![\w-])for[ \t]+([A-Za-z_]\w*)[ \t]+in[ \t]+"""
                      r"""('[^'\n$`]+'|"[^"\n$`]+"|[^\s;&|'"$`()]+)[ \t]*(?:;|\n)""")


def expanded_literals(text: str, values: Sequence[str]) -> list[str]:
    """The literals ``text`` (a script) assigns the variables that ``values`` expand
    whole (``sshpass -p "$P"`` after ``P=V``, ``set -- V``, ``for P in V``): secrets too."""
    literals = (_assigned(text, value) for value in values if value[:1] == "$")
    return [literal for literal in literals if literal]


def _assigned(text: str, value: str, tcl: bool = False) -> str | None:
    """The literal ``text`` last assigns the variable that ``value`` expands whole
    (``$PW``, ``${PW}``), or None."""
    expanded = _EXPANDED.fullmatch(value)
    if expanded is None:
        return None
    return _assignments(text, tcl).get(expanded.group(1)) or None


def _reader(words: Sequence[str]) -> str | None:
    """How the command of ``words`` reads a secret on its standard input (see
    :data:`_LINE`), or None when it does not."""
    words = list(words)
    if not words:
        return None
    reads: str | None = None
    j = 0
    while j < len(words) and (words[j].rsplit("/", 1)[-1] in _WRAPPERS or (
            "=" in words[j] and not words[j].startswith("-"))):
        sudo = words[j].rsplit("/", 1)[-1] in ("sudo", "doas")
        j += 1
        while j < len(words) and words[j].startswith("-") and len(words[j]) > 1:
            option = words[j]
            if sudo and (option == "--stdin" or (option[1] != "-" and "S" in option[1:])):
                reads = _LINE  # sudo -S: its password first
            j += 2 if option in _WRAPPER_VALUES else 1
        if j < len(words) and words[j - 1] == "timeout" and words[j][:1].isdigit():
            j += 1
    if j >= len(words):
        return reads
    program, rest = words[j].rsplit("/", 1)[-1], words[j + 1:]
    return _program_reads(program, rest) or reads


def _program_reads(program: str, rest: Sequence[str]) -> str | None:
    for k, word in enumerate(rest):
        if not word.startswith("-"):
            continue
        name, equals, value = word.partition("=")
        lowered = name.lower()
        if "stdin" in lowered and is_secret_name(lowered.replace("stdin", "")):
            return _LINE  # --password-stdin, --token-stdin, --password-from-stdin
        if lowered == "--with-token":
            return _LINE  # gh auth login --with-token
        if not equals:
            value = rest[k + 1] if k + 1 < len(rest) else ""
        named = lowered in _OPENSSL_PASS or is_secret_name(
            _PLACE_WORD.sub("", lowered.lstrip("-")))
        if named and (
                value in _STDIN_VALUES or (value == "0" and lowered.endswith("fd"))):
            return _LINE  # --password-file /dev/stdin, --passphrase-fd 0, -passin stdin
    if program in ("chpasswd", "chgpasswd"):
        return _PAIR
    if program == "tee" and any(_secret_file(word) for word in rest if word[:1] != "-"):
        return _LINE  # echo PW | tee /run/secrets/db
    if (program == "git" and rest[:1] == ["credential"]) or program.startswith("git-credential-"):
        return _KEYED  # git credential approve: NAME=VALUE lines, password=PW
    if program == "read" and any(is_secret_name(word) for word in rest if word[:1] != "-"):
        return _LINE  # read -rs PASSWORD <<< PW: the variable named like a secret
    if program == "newusers":
        return _NEWUSERS
    if program in ("passwd", "smbpasswd", "kinit", "cryptsetup", "saslpasswd2"):
        return _LINE
    if program == "mkpasswd" and ("--stdin" in rest or "-s" in rest):
        return _LINE  # a hash of the password read
    if program == "openssl" and "passwd" in rest and "-stdin" in rest:
        return _LINE
    if program == "pdbedit" and "-t" in rest:
        return _LINE
    if program == "sshpass" and (not any(w[:2] in ("-p", "-f", "-e", "-d") for w in rest)
                                 or "-d0" in rest or " ".join(rest).startswith("-d 0")):
        return _LINE  # sshpass reads its password on stdin without -p/-f/-e, or -d 0
    if program == "htpasswd" and any(w[:1] == "-" and "i" in w[1:] and w[1:].isalpha()
                                     for w in rest):
        return _LINE
    if program == "vault" and rest[:1] == ["login"] and "-" in rest:
        return _LINE
    if program == "aws" and rest[:1] == ["configure"] and len(rest) == 1:
        return _TWO
    if "secret" in rest or "secrets" in rest:
        at = rest.index("secret") if "secret" in rest else rest.index("secrets")
        verb = rest[at + 1] if at + 1 < len(rest) else ""
        if verb == "import":
            return _ASSIGNMENT  # flyctl secrets import: NAME=VALUE lines
        if verb in _SECRET_VERBS and _VALUE_OPTIONS.isdisjoint(
                word.partition("=")[0] for word in rest):
            return _LINE  # gh secret set NAME, wrangler secret put NAME, docker … NAME -
    return None


HEADS_ONCE = True  # (tests turn it off: each heredoc's reader read again)


def _heredoc_secrets(text: str, seps: Sequence[int], found: list[str]) -> None:
    """Heredocs given to a reader (``CMD <<EOF``, ``cat <<EOF | CMD``): their lines.
    A heredoc's body is skipped when looking for the next one, and an unterminated one
    holds the rest of the text (as in a shell): one pass."""
    done = 0
    ends: dict[tuple[str, str], re.Pattern[str]] = {}  # (each kind of heredoc's end once)
    readers: dict[tuple[str, ...], str | None] = {}  # (and each reader's words)

    def read(words: list[str]) -> str | None:
        key = tuple(words)
        if key not in readers:
            readers[key] = _reader(words)
        return readers[key]

    def fed(segment: str, rest_of_line: str) -> str | None:
        """How the reader of a heredoc after ``segment`` (the command's text before the
        ``<<``), ``rest_of_line`` after its delimiter, takes its lines."""
        before = _words(segment)
        how = read([*before, *_words(_segment_after(rest_of_line, 0, []))])
        if how is None and _written_to_secret_file(segment + rest_of_line):
            how = _LINE  # cat > ~/.pgpass <<EOF: every line written
        if how is None and before[:1] == ["cat"] and len(before) == 1 and "|" in rest_of_line:
            how = read(_words(rest_of_line.split("|", 1)[1]))  # cat <<EOF | CMD
        return how

    heads: dict[tuple[str, str], str | None] = {}  # (each distinct heredoc head once)
    for here in _HEREDOC.finditer(text):
        if here.start() < done:
            continue
        delimiter = here.group(2) or here.group(3) or here.group(4)
        line_end = text.find("\n", here.end())
        if line_end < 0:
            return
        head = (_segment_before(text, here.start(), seps), text[here.end():line_end])
        if HEADS_ONCE:
            how = heads[head] = heads[head] if head in heads else fed(*head)
        else:
            how = fed(*head)
        tabs = "\t*" if here.group(1) else ""
        pattern = ends.get((tabs, delimiter))
        if pattern is None:
            pattern = ends[tabs, delimiter] = re.compile(
                rf"^{tabs}{re.escape(delimiter)}[ \t]*$", re.M)
        end = pattern.search(text, line_end + 1)
        stop = end.start() if end else len(text)
        if how is not None:
            _add_lines(text[line_end + 1:stop], how, found, text)
        if end is None:
            return
        done = end.end()


# --- written into a secret-named file, printed by printf ---------------------------------

# `echo PW > /run/secrets/db`, `printf '%s' PW >> token.txt`, `cat > ~/.pgpass <<EOF`, `|
# tee ~/.vault-token`: what a printer writes into a file whose name (or a folder's) is
# secret-like
_WRITTEN_TO = re.compile(r"(?<![<>&\d])>>?\|?[ \t]*([^\s;&|<>()'\"]+)")
_WRITTEN_HINT = re.compile(r"(?i)>[ \t]*[^\s;&|<>]*(?:key|token|secret|pass|pwd|auth|cred"
                           r"|sess|cookie)")
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/etc/passwd",
                        "/etc/group"})  # (no password in /etc/passwd)


def _secret_file(path: str) -> bool:
    """A file or folder named like a secret's keeper, its name ending in the secret word
    (`token.txt`, `.pgpass`, `/run/secrets/`, `.git-credentials`), not a public key's."""
    if path in _NOT_FILES or "$" in path or path.endswith((".pub", "authorized_keys")):
        return False
    if path.lower().endswith((".key", ".token", ".secret", ".password", ".pass")):
        return True
    return any(_KEEPER.search(name) is not None and is_secret_name(name)
               for name in (part.lstrip(".").partition(".")[0].lower()
                            for part in path.split("/")) if name)


_KEEPER = re.compile(r"(?:key|token|secret|passw(?:or)?d|pass|pwd|credential|cred|auth"
                     r"|cookie|session)s?\Z")


def _written_to_secret_file(segment: str) -> bool:
    return ">" in segment and any(_secret_file(m.group(1)) for m in _WRITTEN_TO.finditer(segment))


def _written_secrets(text: str, found: list[str]) -> None:
    seps = [m.start() for m in _SEPARATOR.finditer(text)]
    for target in _WRITTEN_TO.finditer(text):
        if _secret_file(target.group(1)):
            command = _segment_before(text, target.start(), seps)
            for line in _printed(_words(command)):
                _add_lines(line, _LINE, found, text)


_PRINTF = re.compile(r"(?:^|(?<=[\s'\"(]))(?:[\w./-]*/)?printf[ \t]+")
_FORMAT = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[sbdq]")


def _filler(arguments: Sequence[str]) -> Callable[[re.Match[str]], str]:
    """printf's arguments, one for each conversion of its format in turn."""
    left = iter(arguments)
    return lambda _: next(left, "")


def _rendered_secrets(text: str, found: list[str]) -> None:
    """What each ``printf FORMAT ARGS`` prints, with its arguments in place, read by the
    line rules (``printf 'connect u/%s\\n' PW | sqlplus``, ``printf 'password=%s' PW``):
    the arguments found there are secrets."""
    seps = [m.start() for m in _SEPARATOR.finditer(text)]
    for printf in _PRINTF.finditer(text):
        words = _words(_segment_after(text, printf.start(), seps))
        if len(words) < 3 or "%" not in words[1]:
            continue
        rendered = _FORMAT.sub(_filler(words[2:2 + _FEW]), words[1])
        values: list[str] = []
        _sql_secrets(rendered, values)
        written.written_lines_found(rendered, values, printed=True,
                                    pgpass="pgpass" in text.lower())
        found.extend(value for value in values if value in words[2:])


# --- prompts answered by expect scripts --------------------------------------------------

_SEND = re.compile(r"(?<![\w$-])(?:exp_send|send|sendline)(?:[ \t]+(?:--|-[a-z]+))*"
                   r"(?:[ \t]*\([ \t]*[bru]?|[ \t]+)"
                   r"(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|\{[^{}\n]*\}|[^\s;\"'{}\[\]()]+)")
_PROMPT = re.compile(r"(?i)assw|passphrase|passcode|\bpass\b|secret|token|\bpin\b"
                     r"|credential|\botp\b|verification"
                     # a prompt asking again, sudo's, or one of only a colon (su's, a
                     # login's): `expect "Retype"`, `"sudo\]"`, `expect ":"`, `"*: "`
                     r"|retype|re-?enter|again|confirm|verify|sudo\\?\]|ssw|\bword\b"
                     r"|\bpasse\b|contrase|senha|\bcode\b|\bmfa\b|\b2fa\b"
                     r"|(?<![\w$-])expect(?:[ \t]+-\w+)*[ \t]+[\"'{][*\s]*:[*\s]*[\"'}]")
_SPAWNED = re.compile(r"(?<![\w-])(?:expect|spawn|pexpect)\b")
_SENT_ESCAPES = re.compile(r"(?:\\+[rn])+$")
PROMPTS_ONCE = True  # (tests turn it off: each window's prompt looked for again)


def _sent_secrets(text: str, found: list[str]) -> None:
    """``send "PW\\r"`` after a prompt naming a password (what stands since the last
    ``send`` names it), in a script that spawns or expects."""
    if not _SPAWNED.search(text):
        return
    if '\\"' in text:  # expect -c "… send \"PW\r\" …": the quotes escaped at this level
        _sent_secrets(text.replace('\\"', '"'), found)
    last = 0
    prompted: dict[str, bool] = {}  # (each distinct window asked once: prompts repeat)
    for sent in _SEND.finditer(text):
        window = text[last:sent.start()]
        last = sent.end()
        named = prompted.get(window) if PROMPTS_ONCE else None
        if named is None:
            named = prompted[window] = _PROMPT.search(window) is not None
        if not named:
            continue
        value = sent.group(1)
        if value[:1] in "\"'{":
            value = value[1:-1]
        value = _SENT_ESCAPES.sub("", value)
        if "$" in value:  # a variable: the literal the script set it to (set pw "V")
            value = _assigned(text, value, tcl=True) or _assigned(text, value) or ""
        if value.strip() and "[" not in value and "`" not in value:
            found.append(value)


# --- SQL lines -------------------------------------------------------------------------------

_SQL = re.compile(
    # Oracle: CONNECT USER/PW[@DB] at a line's or a statement's start, or after SQL>
    r"""(?im)(?:^|(?<=[;'"])|(?<=\\n))[ \t]*(?:SQL>[ \t]*)?conn(?:ect)?[ \t]+(?!/)[^\s/@'";]+/"""
    r"""(?:"([^"\n]+)"|([^\s/@"';\\]+))"""  # (not an escaped line break after it)
    # DB2: CONNECT TO DB USER U USING PW
    r"""|\bconnect[ \t]+to[ \t]+\S+[ \t]+user[ \t]+\S+[ \t]+using[ \t]+"""
    r"""(?:"([^"\n]+)"|'([^'\n]+)'|([^\s;'"]+))"""
    # IDENTIFIED BY PW unquoted (quoted: quoted_values), IDENTIFIED WITH PLUGIN BY 'PW'
    r"""|\bidentified[ \t]+(?:with[ \t]+\S+[ \t]+)?by[ \t]+(?!values\b|password\b)"""
    r"""(?:"([^"\n]+)"|'([^'\n]+)'|([^\s;'"()]+))"""
    # MySQL's PASSWORD('PW') (SET PASSWORD … = PASSWORD('PW')), also set_password('PW')
    r"""|(?<![\w$])(?:set_?)?password[ \t]*\([ \t]*[bru]?(?:'([^'\n]+)'|"([^"\n]+)")[ \t]*\)""")


# What every match of _SQL holds (one of its words and a blank after it, or PASSWORD and its
# parenthesis): looked for first, a scan several times cheaper than _SQL's where no SQL is
_SQL_NEEDS = re.compile(r"(?i)(?:conn(?:ect)?|identified)[ \t]|password[ \t]*\(")


def _sql_secrets(text: str, found: list[str]) -> None:
    if _SQL_NEEDS.search(text) is None:
        return
    for match in _SQL.finditer(text):
        value = next(group for group in match.groups() if group is not None)
        if "$" not in value:
            found.append(value)
