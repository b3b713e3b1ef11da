"""Issue 13's last target: a long ``sh -c`` script is redacted in about 50 ms of CPU.

:func:`command_secrets._redact_script` splits a script in C
(:func:`shellwords.script_words`), skips the words no rule can change with C-level
passes and rebuilds it by replacing only the words that changed. These tests hold it
to the straightforward way (``_redact_script_reference`` here: every
simple command of :func:`shellwords.shell_commands` through ``_redact_words``, the
script rebuilt word by word) on generated scripts, for every mark, values found
included.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger.identity import command_secrets as cs
from fetchledger.identity.commands import command_locator
from fetchledger.identity.secrets import Mark, keyed_mark, plain_mark, scrub
from fetchledger.identity.shapes import redact_private_keys, redact_shapes
from fetchledger.identity.shellwords import script_words, shell_commands

# Words the rules treat each their own way (programs and their options, shells, split
# and setting words, assignments, headers, URLs, quoted values...), and plain ones.
_WORDS = [
    "echo", "x", "db", "u", "cmd", "export", "env", "sh", "bash", "/bin/sh", "-c", "-lc",
    "-ec", "-o", "pipefail", "--", "sshpass", "-p", "pw00001", "mysql", "/usr/bin/mysql",
    "-pS3cr3t", "-pp000123", "redis-cli", "-a", "AUTH", "docker", "login", "curl", "-b",
    "-H", "-u", "-E", "--cert", "openssl", "-passin", "pass:abc12345", "vault", "TOKEN=1",
    "TOKEN=abc", "A_TOKEN=a00001", "API_KEY=v9", "--token=v1", "--token", "-token",
    "--password", "p000001", "--user=bob:pw3", "-ubob:pw2", "u:p000001", "k_live:",
    "Authorization: Bearer t000001", "X-Api-Key: k1", "password", "password:", "=", ":",
    "config", "set", "user.password", "secrets", "--body", "CONFIG", "a/config",
    "https://u:p@h.example/?sig=s1&q=2", "https://h/p?token=v000001", "a=1&password=pw4",
    "x;jsessionid=j6", "next=%2Fp%3Ftoken%3Dq7", '{"api_key": "jj"}', "TOKEN='q1'",
    "PASSWORD 'sq1'", "sid=c7; lang=en", "$HOME", "$'\\x41'", "a b", "api_key==k4",
    "token:=j3", "--keyword", "-TOKEN=abc", "-", "c", "",
    # passwords glued to a user or standing by place (session 7)
    "smbclient", "-U", "al%pw00005", "-Ual%pw00006", "--user=al%pw7", "//srv/s", "net",
    "use", "user", "\\\\srv\\s", "/user:al", "sqlplus", "al/pw00008@db", "al/pw9",
    "userid=al/pw10", "htpasswd", "-nb", "-bc", "lftp", "al,pw00011", "xfreerdp", "/p:pw12",
    "u:pw00013@h/x", "D/u:pw14@h", "rabbitmqctl", "add_user", "wpa_passphrase",
    "user=al%pw15,uid=1",
]
_OPERATORS = [" ", " ", " ", "; ", " && ", " | ", "\n", " & ", "(", ")", " > ", "\t"]
_SPECIALS = " ;&|<>()\n\t'\"\\$#"


@st.composite
def _word(draw: st.DrawFn) -> str:
    word = draw(st.sampled_from(_WORDS) | st.text("ab=:-_%'\"\\ $#;@/&?\xa0", max_size=6))
    how = draw(st.sampled_from(["as is", "single", "double", "escaped"]))
    if how == "single":
        return "'" + word.replace("'", "'\\''") + "'"
    if how == "double":
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'
    if how == "escaped":
        return "".join("\\" + c if c in _SPECIALS else c for c in word)
    return word


@st.composite
def _script(draw: st.DrawFn, depth: int = 0) -> str:
    pieces = []
    for _ in range(draw(st.integers(0, 10))):
        if depth < 2 and draw(st.integers(0, 11)) == 0:  # a script inside a word
            inner = draw(_script(depth + 1))
            pieces.append(draw(st.sampled_from(["sh -c ", "bash -lc ", "ssh h "]))
                          + "'" + inner.replace("'", "'\\''") + "'")
        else:
            pieces.append(draw(_word()))
        pieces.append(draw(st.sampled_from(_OPERATORS)))
    return "".join(pieces)


_MARKS = (plain_mark, keyed_mark(b"k" * 32))


def _redact_script_reference(text: str, found: list[str], mark: Mark, depth: int) -> str:
    """:func:`command_secrets._redact_script` the straightforward way (as it was
    before it was cut for long scripts): every simple command of
    :func:`.shellwords.shell_commands` through ``_redact_words``, then the script
    rebuilt word by word."""
    if not cs._could_hold_secrets(text):  # most scripts: one scan, no word loop
        return text
    start = len(found)
    text = redact_private_keys(text, found, mark)  # (before its armour looks like `NAME: V`)
    if "'" in text or '"' in text:  # quoted keyed values in the raw text (a heredoc's JSON)
        cs._redact_quoted_values(text, found, mark)  # what they hold is scrubbed below
    commands = shell_commands(text)
    done: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}  # a command seen before
    redacted = []
    for command in commands:
        values = tuple(value for _, _, value in command)
        again = done.get(values)
        if again is None:
            seen: list[str] = []
            again = done[values] = (cs._redact_words(values, seen, mark, depth, shapes=False),
                                    seen)
        redacted.append(again[0])
        found.extend(again[1])
    if len(found) > start:  # a secret found anywhere, wherever it stands as (part of) a word
        flat = [word for words in redacted for word in words]
        scrubbed = iter(cs._scrub_marked(flat, found[start:], mark))
        redacted = [[next(scrubbed) for _ in words] for words in redacted]
    pieces: list[str] = []
    last = 0
    quote = cs._quote(mark)
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
    rebuilt = redact_shapes("".join(pieces), found, mark)  # a token in a comment, a heredoc
    return scrub(rebuilt, found[start:], mark) if len(found) > start else rebuilt


def _both_ways(text: str) -> tuple[object, object]:
    fast = []
    for mark in (*_MARKS, cs.Recorder()):
        found: list[str] = []
        fast.append((cs._redact_script(text, found, mark, 0), found))
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(cs, "_redact_script", _redact_script_reference)
        reference = []
        for mark in (*_MARKS, cs.Recorder()):
            found = []
            reference.append((cs._redact_script(text, found, mark, 0), found))
    return fast, reference


@settings(max_examples=400, deadline=None)
@given(text=_script())
@example(text="export TOKEN=abc; sshpass -p pw1 x; sshpass -p pw1 x; mysql -pS db")
@example(text="a\xa0b 'c' TOKEN=x")  # (a space that is not a blank: an AssertionError before)
@example(text="curl -H 'Authorization: Bearer t1' u # TOKEN=c1\nTOKEN=c2 x")
def test_the_fast_way_gives_what_the_straightforward_way_gives(text: str) -> None:
    fast, reference = _both_ways(text)
    assert fast == reference


# Bare values (letters, digits, `_.-`) that look like what rules look for: secret-like
# names, option tails, marks, program names with a digit, trivial values
_BARE_VALUES = ["password", "token", "x", "REDACTED", "assin", "wd", "c", "a.b-c",
                "ppassword1", "000123", "v1", "secret", "key", "db", "p", "pass", "AUTH0",
                "login2", "sh2", "o", "pw", "_", "true", "1", "sid", "otp", "Bearer"]


@st.composite
def _kinds_of_commands(draw: st.DrawFn) -> str:
    """A script of commands of a few kinds, each kind a list of words with places for
    bare values, each command its kind with its own values there."""
    kinds = draw(st.lists(st.lists(st.sampled_from(_WORDS) | st.none(), min_size=1,
                                   max_size=6), min_size=1, max_size=4))
    commands = []
    for _ in range(draw(st.integers(9, 40))):
        kind = draw(st.sampled_from(kinds))
        words = [draw(st.sampled_from(_BARE_VALUES)) + draw(st.sampled_from(["", "7"]))
                 if word is None else word for word in kind]
        commands.append(" ".join(draw(st.sampled_from(["{}", "'{}'", '"{}"'])).format(word)
                                 if word and "'" not in word and '"' not in word else word
                                 for word in words))
    return draw(st.sampled_from(["; ", "\n", " && "])).join(commands)


@settings(max_examples=300, deadline=None)
@given(text=_kinds_of_commands())
@example(text="; ".join(f"sshpass -p pw{i} x{i % 3}" for i in range(20)))
@example(text="; ".join(f"redis-cli -a r{i} AUTH u{i} p{i}" for i in range(20)))
@example(text="; ".join(f"sh -c v{i}; mysql -p v{i} db" for i in range(20)))
@example(text="; ".join(f"{'password' if i % 2 else 'color'} = v{i} y" for i in range(20)))
def test_commands_of_one_kind_are_redacted_as_each_alone(text: str) -> None:
    """Commands that differ only in their bare values are redacted from the first of
    their kind (_template): as each one through _redact_words (word by word, before
    the values found are scrubbed from every word), and the whole script alike."""
    script = script_words(text)
    for mark in (*_MARKS, cs.Recorder()):
        found: list[str] = []
        words = cs._redact_commands(script, found, mark, 0)
        one_by_one: list[str] = []
        each: list[str] = []
        for begin, end in zip(script.starts, script.starts[1:], strict=False):
            each.extend(cs._redact_words(script.values[begin:end], one_by_one, mark, 0))
        assert (words, found) == (each, one_by_one)
    fast, reference = _both_ways(text)
    assert fast == reference


@settings(max_examples=300, deadline=None)
@given(text=_script())
def test_the_c_level_skips_never_skip_a_word_a_rule_changes(text: str) -> None:
    """The words skipped without a look (no character a rule needs, no option before
    them) come out as when every word goes through the rules."""
    quick = [cs._redact_script(text, [], mark, 0) for mark in _MARKS]
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(cs, "_ACTIVE", lambda word: True)
        patched.setattr(cs, "_OPTION_START", lambda word: True)
        slow = [cs._redact_script(text, [], mark, 0) for mark in _MARKS]
    assert quick == slow


@settings(max_examples=500, deadline=None)
@given(text=st.text(" ab$'\"\\;&|<>()\n\t#=\xa0\x1c\u2028", max_size=16))
def test_script_words_are_shell_commands_flat(text: str) -> None:
    words = script_words(text)
    assert "".join(words.parts) == text
    commands = [[value for _, _, value in command] for command in shell_commands(text)]
    assert [list(words.values[a:b]) for a, b in zip(words.starts, words.starts[1:],
                                                    strict=False)] == commands
    spans = [(begin, min(end, len(text))) for command in shell_commands(text)
             for begin, end, _ in command]
    at, mine = 0, []
    for i, part in enumerate(words.parts):
        if i % 2:
            mine.append((at, at + len(part)))
        at += len(part)
    assert mine == spans


def test_a_script_with_a_space_that_is_not_a_blank_is_read() -> None:
    """Before: ``shell_commands`` stopped with an AssertionError on a non-blank space
    (U+00A0, U+2028, \\x1c...) outside quotes in a script with quoting, so
    ``command_line`` — which never raises — raised."""
    locator = command_locator(["sh", "-c", "TOKEN=s3cr3t a\xa0b 'c'"], key=b"k" * 32)
    assert "s3cr3t" not in locator.display
    assert shell_commands("a\xa0b 'c'") == (((0, 3, "a\xa0b"), (4, 7, "c")),)
