"""Shell words: a script split into its simple commands and their words, quoting
removed, each word with its span in the script (for redacting a script in place).

POSIX quoting (single and double quotes, backslashes), bash's ``$'...'`` (ANSI-C
quoting: ``$'\x41'`` is ``A``), comments, and the operators that end a command
(``;``, ``&``, ``|``, ``<``, ``>``, parentheses, newlines). Expansions are not
performed: ``$TOKEN`` stays as written. One pass, linear in the script's length.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain, compress, count
from typing import NamedTuple

__all__ = ["ScriptWords", "Words", "script_words", "shell_commands"]

# Shell words: runs of ordinary characters, quoted strings and escapes; operators
# and newlines end a command, `#` at a word's start begins a comment.
# (whitespace other than blanks is an ordinary character, as in a shell: `\s` here made
# such a character outside quotes stop the reading with an AssertionError)
_PLAIN_RUN = re.compile(r"(?:[^ \t\r\f\v\n'\"\\;&|<>()$]|\$(?!'))+")
_PLAIN_TOKEN = re.compile(r"[^\s;&|<>()]+|[;&|<>()\n]")  # a script without quoting
_BLANK_RUN = re.compile(r"[ \t\r\f\v]+")
_OPERATORS = frozenset(";&|<>()\n")
_BLANKS = frozenset(" \t\r\f\v")
Words = tuple[tuple[int, int, str], ...]


@lru_cache(maxsize=16)  # one script is redacted several times in one run
def shell_commands(text: str) -> tuple[Words, ...]:
    """The simple commands of a shell script, each a tuple of its words as
    ``(start, end, value)``: spans in ``text`` and the word with its quoting removed.
    One pass, linear in the length of the text; an unclosed quote runs to the end."""
    if not any(quoting in text for quoting in "'\"\\#"):
        return _plain_commands(text)
    commands: list[list[tuple[int, int, str]]] = [[]]
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _BLANKS:
            i = _BLANK_RUN.match(text, i).end()  # type: ignore[union-attr]
        elif char in _OPERATORS:
            if commands[-1]:
                commands.append([])
            i += 1
        elif char == "#":
            newline = text.find("\n", i)
            i = n if newline < 0 else newline
        else:
            start = i
            value, i = _shell_word(text, i)
            commands[-1].append((start, i, value))
    return tuple(tuple(command) for command in commands if command)


def _plain_commands(text: str) -> tuple[Words, ...]:
    """:func:`shell_commands` of a script with no quotes, escapes or comments: words
    are their own values."""
    commands: list[list[tuple[int, int, str]]] = [[]]
    command = commands[-1]
    for match in _PLAIN_TOKEN.finditer(text):
        token = match.group()
        if token in _OPERATORS:
            if command:
                command = []
                commands.append(command)
        else:
            command.append((*match.span(), token))
    return tuple(tuple(command) for command in commands if command)


def _shell_word(text: str, i: int) -> tuple[str, int]:
    parts: list[str] = []
    n = len(text)
    while i < n:
        char = text[i]
        if char in _BLANKS or char in _OPERATORS:
            break
        if char == "$" and text.startswith("$'", i):
            i = _ansi_c_quoted(text, i + 2, parts)
        elif char == "'":
            close = text.find("'", i + 1)
            close = n if close < 0 else close
            parts.append(text[i + 1 : close])
            i = close + 1
        elif char == '"':
            i = _double_quoted(text, i + 1, parts)
        elif char == "\\":
            parts.append(text[i + 1 : i + 2].replace("\n", ""))
            i += 2
        else:
            run = _PLAIN_RUN.match(text, i)
            assert run is not None
            parts.append(run.group())
            i = run.end()
    return "".join(parts), i


# The inside of a double-quoted string (backslash escapes included) and its closing
# quote, matched in one linear pass; then its escapes undone in two more.
_DOUBLE_QUOTED = re.compile(r'((?:[^"\\]|\\.)*)("?)', re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r'\\([$`"\\\n])')


def _double_quoted(text: str, i: int, parts: list[str]) -> int:
    """Append the inside of a double-quoted string starting at ``i``; the index after it
    (``\\$``, ``\\```, ``\\"``, ``\\\\`` unescaped, a backslash-newline removed,
    other backslashes kept)."""
    match = _DOUBLE_QUOTED.match(text, i)
    assert match is not None  # the pattern matches the empty string
    inside = match.group(1)
    if "\\" in inside:
        inside = _DOUBLE_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), inside)
    parts.append(inside)
    return match.end()


_ANSI_C = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
           "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


_ANSI_C_QUOTED = re.compile(r"((?:[^'\\]|\\.)*)('?)", re.DOTALL)
_ANSI_C_ESCAPE = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}"
                            r"|U[0-9A-Fa-f]{1,8}|.)", re.DOTALL)


def _ansi_c_quoted(text: str, i: int, parts: list[str]) -> int:
    """Append the value of a ``$'...'`` string whose inside starts at ``i``; the index
    after its closing quote (bash's escapes: ``\\n``, ``\\'``, ``\\xHH``, ``\\uHHHH``...)."""
    match = _ANSI_C_QUOTED.match(text, i)
    assert match is not None  # the pattern matches the empty string
    inside = match.group(1)
    parts.append(_ANSI_C_ESCAPE.sub(_ansi_c_escape, inside) if "\\" in inside else inside)
    return match.end()


def _ansi_c_escape(match: re.Match[str]) -> str:
    escape = match.group(1)
    if len(escape) == 1 and not escape.isdigit():
        return _ANSI_C.get(escape, "\\" + escape)
    code = int(escape, 8) if escape[0].isdigit() else int(escape[1:], 16)
    return chr(code) if code < 0x110000 else ""


# --- the same split, flat: what redacting a long script in place needs -----------------


class ScriptWords(NamedTuple):
    """A script as :func:`shell_commands` splits it, flat: ``parts`` alternates the text
    between words (blanks, operators, comments) and each word as written, so that
    ``"".join(parts) == text`` (``parts[2 * i + 1]`` is word ``i``); ``values`` holds each
    word with its quoting removed; command ``c`` is the words
    ``values[starts[c]:starts[c + 1]]`` (``starts`` ends with ``len(values)``)."""

    parts: tuple[str, ...]
    values: tuple[str, ...]
    starts: tuple[int, ...]


# A word as _shell_word reads it (one regular expression: a C-level split of the whole
# script instead of a step per character): ordinary characters, a `$` that does not
# open `$'...'`, the three quotings (an unclosed one runs to the end), an escape. Other
# whitespace than blanks is an ordinary character, as in a shell. Without quoting (no
# quote, backslash or `#` in the script) words are runs of what is not whitespace or an
# operator, as _plain_commands reads them.
_QUOTED_WORD = re.compile(r"""((?:[^ \t\r\f\v\n;&|<>()'"\\$]++|\$(?!')|\$'(?:[^'\\]++|\\.)*+'?"""
                          r"""|'[^']*+'?|"(?:[^"\\]++|\\.)*+"?|\\.?)++)""", re.DOTALL)
_PLAIN_WORD = re.compile(r"([^\s;&|<>()]+)")
_ENDS_COMMAND = re.compile(r"[;&|<>()\n]").search
_QUOTING = re.compile(r"['\"\\]").search


@lru_cache(maxsize=16)  # one script is redacted several times in one run
def script_words(text: str) -> ScriptWords:
    """:func:`shell_commands` of ``text`` as :class:`ScriptWords`: the same words, values
    and commands. Linear; a C-level split and a few C-level passes over the words (a
    script with comments is read by :func:`shell_commands`)."""
    if "#" in text:  # a comment starts only where a word could: read step by step
        return _from_commands(text, shell_commands(text))
    quoted = any(quoting in text for quoting in "'\"\\")
    parts = (_QUOTED_WORD if quoted else _PLAIN_WORD).split(text)
    words = parts[1::2]
    # a word ends its command when the text after it holds an operator (or a newline)
    between = parts[2:-1:2]
    ends = set(filter(_ENDS_COMMAND, set(between)))  # (few distinct: one test each)
    starts = (0, *compress(count(1), map(ends.__contains__, between)), len(words))
    if not quoted:
        return ScriptWords(tuple(parts), tuple(words), starts if words else (0,))
    return ScriptWords(tuple(parts), _values(words), starts if words else (0,))


def _values(words: list[str]) -> tuple[str, ...]:
    """Each of ``words`` with its quoting removed (:func:`_unquoted`); the words of
    simple quoting only (no backslash, no ``$'``) all at once, one C-level pass over
    them joined by NULs (a quote left open stops at its word's end: at the NUL); with
    one kind of quote only, every quote character is one that opens or closes."""
    quoted = list(compress(count(), map(_QUOTING, words)))
    chosen = list(map(words.__getitem__, quoted))
    joined = "\0".join(chosen)
    if not ALL_AT_ONCE or "\\" in joined or "$'" in joined \
            or joined.count("\0") != len(chosen) - 1:
        return tuple(_unquoted(word) if _QUOTING(word) else word for word in words)
    if "'" not in joined or '"' not in joined:  # one kind of quote: each opens or closes
        inside = joined.replace("'" if "'" in joined else '"', "")
    else:
        inside = _QUOTED_PIECE.sub(_inside, joined)
    values = list(words)
    for i, value in zip(quoted, inside.split("\0"), strict=True):
        values[i] = value
    return tuple(values)


ALL_AT_ONCE = True  # (tests turn it off to compare)


# The pieces of a word without escapes: '...', "..." (unclosed: to the end) and the rest
_SIMPLE_PIECE = re.compile(r"""'([^']*)'?|"([^"]*)"?|([^'"]+)""")
# (the same of words joined by NULs: each quoted piece as its inside, the rest kept)
_QUOTED_PIECE = re.compile(r"""'([^'\0]*)'?|"([^"\0]*)"?""")


def _inside(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2) or ""


def _unquoted(word: str) -> str:
    """A word's value, as _shell_word reads it; without a backslash or $'...' inside,
    each piece's inside as it is."""
    if "\\" in word or "$'" in word:
        return _shell_word(word, 0)[0]
    return "".join(chain.from_iterable(_SIMPLE_PIECE.findall(word)))


def _from_commands(text: str, commands: tuple[Words, ...]) -> ScriptWords:
    parts: list[str] = []
    values: list[str] = []
    starts = [0]
    last = 0
    for command in commands:
        for begin, end, value in command:
            parts.extend((text[last:begin], text[begin:end]))
            values.append(value)
            last = end
        starts.append(len(values))
    parts.append(text[last:])
    return ScriptWords(tuple(parts), tuple(values), tuple(starts))
