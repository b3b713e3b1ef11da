"""Issue 13's linear-time target, session 6: the shortcuts that cut the CPU of redacting
a 100,000-character command line change nothing that comes out.

Each shortcut can be turned off, and these tests compare the two ways on generated
command lines and scripts (display, keyed identity, values found, in order):

- ``_MEMO``: within one simple command, a word after the same word as before takes what
  the rules gave it then (``-token V -token V ...``; a word of one quoted script
  repeated, as in ``'"k": "' * 16000``, was 350 ms);
- ``_IS_OPTION``: the cache of options that take a secret is asked only about options
  (6,250 distinct ``--token=V`` words pushed the options out of it at every word);
- the name rule skips its allowlist when a name holds no secret word and no ``pass``
  (then no allowlisted word is in it);
- (session 7) a script's raw text gives its quoted keyed values in two C-level scans
  (``quoted_values_found`` beside ``redact_quoted_values``), and the commands of a
  script that differ only in their digits take what the rules gave the first of their
  kind (``command_kinds.ENABLED``: generated scripts of many commands of a few kinds,
  and the places where a digit matters: ``7z``, ``%3D``, ``r8_``).
"""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger.errors import InvalidArgument
from fetchledger.identity import command_kinds, command_programs, secrets
from fetchledger.identity import command_secrets as cs
from fetchledger.identity.commands import command_locator
from test_secret_script_paths import _MARKS, _WORDS, _script, _word


@st.composite
def _repeating_argv(draw: st.DrawFn) -> list[str]:
    """An argv of a few distinct words, each used many times (the same word after the
    same word: what the memo reuses), maybe behind a program or shell."""
    pool = draw(st.lists(st.sampled_from(_WORDS) | _word(), min_size=1, max_size=5))
    words = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=30))
    head = draw(st.sampled_from([[], ["tool"], ["curl"], ["mysql"], ["sshpass"],
                                 ["sh", "-c"], ["ssh", "h"], ["git", "config"],
                                 ["smbclient"], ["sqlplus"], ["htpasswd"], ["net", "use"]]))
    return [*head, *words]


def _every_way(argv: list[str], script: str) -> list[object]:
    out: list[object] = []
    for mark in (*_MARKS, cs.Recorder()):
        found: list[str] = []
        out.append((cs.redact_argv_each(argv, (mark,), found), found))
        found = []
        out.append((cs._redact_script(script, found, mark, 0), found))
    try:
        locator = command_locator(argv, key=b"k" * 32)
    except InvalidArgument as exc:  # (an empty command, a NUL)
        out.append(str(exc))
    else:
        out.append((locator.locator, locator.display, locator.secrets))
    return out


def _both(argv: list[str], script: str) -> tuple[list[object], list[object]]:
    fast = _every_way(argv, script)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(cs, "_MEMO", False)
        patched.setattr(cs, "_IS_OPTION", lambda word: True)  # every word asks the cache
        patched.setattr(command_programs, "PLACED_BY_NAME", False)  # every `NAME:` special
        patched.setattr(command_programs, "SKIP_INERT", False)  # every word looked at
        patched.setattr(cs, "HOLES_ONLY", False)  # a bare template's words all written
        patched.setattr(cs, "RUNS", False)  # each command of a run of one kind (session 9)
        slow = _every_way(argv, script)
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(argv=_repeating_argv(), script=_script())
@example(argv=["tool", *(["-token", "v4lue"] * 4)], script='"k": "' * 8)
@example(argv=["tool", '"k": "' * 8], script="x 'a b' 'a b'; y '--token V' '--token V'")
@example(argv=["tool", "--password", "p1", "--password", "p1", "-u", "u:p", "-u", "u:p"],
         script='cat <<EOF\n{"api_key": "k1"}\n{"api_key": "k1"}\nEOF')
def test_the_shortcuts_give_what_the_rules_give(argv: list[str], script: str) -> None:
    fast, slow = _both(argv, script)
    assert fast == slow


def test_a_word_of_one_quoted_script_repeated_is_linear() -> None:
    """``'"k": "' * n`` as one argument: a word of blanks inside quotes, read as a script,
    whose words are each a small script again (16,000 of them at 100,000 characters,
    each through the rules before: 350 ms of CPU). The same result as without the memo."""
    argv = ["tool", '"k": "' * 600]
    fast, slow = _both(argv, argv[1])
    assert fast == slow


def _is_secret_name_before(name: str) -> bool:
    """:func:`secrets.is_secret_name` before session 6: every name through both
    substitutions (the allowlist's too)."""
    plain = name if name.isascii() else unicodedata.normalize("NFKC", name)
    squeezed = secrets._NOT_SECRET.sub("", secrets._NOT_NAME.sub("", plain.lower()))
    return bool(secrets._SECRET_WORDS.search(squeezed)) or squeezed.endswith(
        secrets._SECRET_ENDINGS)


_NAME_PIECES = ["pass", "by", "com", "word", "key", "mon", "auth", "or", "type", "to", "ken",
                "iz", "sig", "n", "al", "s", "w", "pw", "sid", "_", "-", ".", "P", "ＡＰＩ", "Ｋ",
                "é", "1", "otp", "secret", "ar", "sess", "cred"]


@settings(max_examples=2000, deadline=None)
@given(name=st.lists(st.sampled_from(_NAME_PIECES), max_size=6).map("".join)
       | st.text(max_size=12))
@example(name="pasbypasssword")  # `bypass` taken out makes `password`
@example(name="pp000123")
def test_the_name_rule_takes_the_short_way_only_when_it_changes_nothing(name: str) -> None:
    """A name holding no secret word and no ``pass`` has no allowlisted word in it to
    take out: the rule answers from its ending alone, as before."""
    assert secrets.is_secret_name.__wrapped__(name) == _is_secret_name_before(name)


# --- session 7: the values of a script's raw text found in two C-level scans ------------

_QUOTED_PIECES = ['"', "'", "\\", "token", "TOKEN", "api_key", "=", ":", " = ", "]", "[",
                  "a", "v1", "password", "PASSWD ", "identified by", "x", "-", ".", "\n",
                  "{", "}", ",", "export ", "os.environ[", "\0", "é",
                  # (session 8: what the case-insensitive SQL words match, spelled oddly)
                  "paſſword ", "PAſSWD\t", "İdentified\nby ", "ıDENTIFIED BY ", "pass", "ident"]


@settings(max_examples=3000, deadline=None)
@given(text=st.lists(st.sampled_from(_QUOTED_PIECES), max_size=30).map("".join))
@example(text='x="token="a"')  # a place opening inside the value of a name not secret
@example(text="x=\"a token='b'\"")
@example(text='TOKEN="v1"; TOKEN=\'a\\\'b\'; PASSWORD "p"')
@example(text='"k": "' * 5)  # the last one unclosed
@example(text='"k": "password"="k": "')  # a name inside a value, its quote closing it
@example(text='TOKEN="a" b="c d TOKEN=\'e\'')
def test_the_raw_text_scan_finds_what_the_redaction_finds(text: str) -> None:
    """:func:`quoted_values.quoted_values_found` (a script's raw text: two C-level scans
    when every value is simple) finds the values :func:`redact_quoted_values` finds, in
    order, and gives them to the mark in the same order."""
    from fetchledger.identity import quoted_values

    text = text * (1 + quoted_values._LONG // (len(text) + 1))  # (long: the fast way)
    slow, fast = cs.Recorder(), cs.Recorder()
    slow_found: list[str] = []
    fast_found: list[str] = []
    quoted_values.redact_quoted_values(text, slow_found, slow)
    quoted_values.quoted_values_found(text, fast_found, fast)
    assert fast_found == slow_found
    assert fast.values == slow.values


# --- session 7: the commands of a script that differ only in their digits ----------------

_HEADS = [["mysql"], ["curl"], ["curl", "-d"], ["sshpass", "-p"], ["git", "config"],
          ["redis-cli", "-a"], ["docker", "login"], ["openssl"], ["sh", "-c"], ["7z"],
          ["/usr/bin/mysql"], ["tool"], ["export"], []]
_DIGIT_WORDS = ["-pp000123", "pw00001", "db1", "u:p000001", "TOKEN=v12", "--token=v1",
                "--password", "p000001", "user.password", '{"token": "v000001"}',
                '{"api_key": "k1", "n": 2}', "Authorization: Bearer t000001", "X-Api-Key: k1",
                "https://u:p1@h1.example/p?token=t1", "-u", "-ubob:pw2", "a=1&password=pw4",
                "sid=c7; lang=en", "7z", "8z", "-p7z", "r8_" + "a" * 32, "ya29." + "b" * 20,
                "%31", "a\\1", "x 1", "TOKEN='q1'", "PASSWORD 'sq1'", "v4lue9", "-token",
                "1", "12", "123", "0x1f", "--token9=v9", "k_live:", "hooks/1"]


@st.composite
def _kinds_script(draw: st.DrawFn) -> str:
    """A script of many simple commands of a few kinds, each command of a kind with
    other digits (what the kinds by digits take from the first of a kind)."""
    pool = st.sampled_from(_DIGIT_WORDS) | st.sampled_from(_WORDS) | _word()
    kinds = draw(st.lists(st.tuples(st.sampled_from(_HEADS),
                                    st.lists(pool, min_size=1, max_size=4)),
                          min_size=1, max_size=3))
    digits = draw(st.randoms(use_true_random=False))
    commands = []
    for _ in range(draw(st.integers(10, 24))):
        head, words = draw(st.sampled_from(kinds))
        command = " ".join([*head, *words])
        if draw(st.booleans()):  # other digits, in the same places
            command = "".join(str(digits.randrange(10)) if c.isdigit() else c
                              for c in command)
        commands.append(command)
    return draw(st.sampled_from(["; ", "\n", " && ", " | "])).join(commands)


def _by_kinds_both_ways(script: str) -> tuple[list[object], list[object]]:
    def every_way() -> list[object]:
        argv = ["sh", "-c", script]
        out: list[object] = []
        for mark in (*_MARKS, cs.Recorder()):
            found: list[str] = []
            out.append((cs.redact_argv_each(argv, (mark,), found), found))
        locator = command_locator(argv, key=b"k" * 32)
        out.append((locator.locator, locator.display, locator.secrets))
        return out

    fast = every_way()
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(command_kinds, "ENABLED", False)
        patched.setattr(command_kinds, "SINGLE", False)
        patched.setattr(cs, "_MEMO", False)
        patched.setattr(command_programs, "PLACED_BY_NAME", False)
        patched.setattr(command_programs, "SKIP_INERT", False)
        patched.setattr(cs, "HOLES_ONLY", False)
        patched.setattr(cs, "RUNS", False)
        slow = every_way()
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(script=_kinds_script())
@example(script="; ".join(f"mysql -pp{i:06d} db" for i in range(12)))
@example(script="; ".join(f"""curl -d '{{"token": "v{i:06d}"}}' u{i}""" for i in range(12)))
@example(script="; ".join(f"curl -H 'Authorization: Bearer t{i}' -u u:p{i} h" for i in range(12)))
@example(script="; ".join(f"sshpass -p {7 + i % 2}z {7 + i % 2}z x" for i in range(12)))
@example(script="; ".join(f"git config user.password p{i} && tool --token9=v{i}"
                          for i in range(12)))
# (where a digit matters: the first of its kind through the rules names a program, 7z,
# decodes an escape, %3D, or holds a token's format, r8_; the others do not)
@example(script="; ".join(f"curl {'7z' if i == 9 else '8z'} -pQ{i:02d}x u" for i in range(14)))
@example(script="; ".join(f"curl -d x%{3 if i == 9 else 4}Dtoken%3Dv{i:02d} u" for i in range(14)))
@example(script="; ".join(f"curl https://h/p?r{8 if i == 9 else 9}_{'a' * 32} a{i:02d}=1"
                          for i in range(14)))
# (a 0 stays a 0: 0x… is a hex word, 1x… may be a token; digits outside marked values)
@example(script="; ".join(f"curl 'https://h/cb?code={1 if i == 9 else 0}x4f0AX4XfWh7Kq9ZtR2mB"
                          f"&token=t{i:02d}' -d '{{\"token\": \"v{i:02d}\"}}' u{i % 3}"
                          for i in range(14)))
def test_commands_of_one_kind_give_what_the_rules_give(script: str) -> None:
    """In a script of many commands, those that differ from an earlier one only in their
    digits take what the rules gave it, their own digits in their places
    (:mod:`fetchledger.identity.command_kinds`): display, keyed identity, values found
    (in order) and recorded marks as the rules give them, command by command."""
    fast, slow = _by_kinds_both_ways(script)
    assert fast == slow


_PIECES = ["a", "'", " ", "\0\x03\U000f0001\0", "\0", "\x03", "\U000f0002", "=", "-", "é", "~",
           "\0\x03\U000f0003", "\x03\U000f0004\0", "@%+:,./_", "1", "\\", "\n",
           "REDACTED", "REDACTED~" + "0f" * 16, "\ud800", "\0\x01\0", "\0\x02\0", "\0\x07\0", ""]


@settings(max_examples=1000, deadline=None)
@given(values=st.lists(st.lists(st.sampled_from(_PIECES), max_size=5).map("".join),
                       max_size=8))
def test_the_batched_marks_and_quotes_are_those_of_one_value(values: list[str]) -> None:
    """A keyed mark's ``many`` (values encoded at once, looked at as marks only when one
    holds ``REDACTED``) gives each value's mark; ``Recorder.quote_many`` (one pattern
    pass over a script's changed words; session 8: a word of safe characters and whole
    slots known at once) quotes each as ``Recorder.quote``."""
    mark = secrets.keyed_mark(b"k" * 32)
    assert mark.many(values) == [mark.__wrapped__(value) for value in values]  # type: ignore[attr-defined]
    assert cs.Recorder.quote_many(values) == [cs.Recorder.quote(value) for value in values]


# --- session 8: what the rules gave a word, for a whole script; words no rule looks at ---

_PROGRAM_WORDS = ["curl", "-u", "u:p000001", "u:p2", "-b", "a=1; sid=2", "-E", "c.pem:pw3",
                  "mysql", "-pp000004", "-p", "db", "docker", "login", "-p", "pw5", "net",
                  "use", "\\\\srv\\s", "pw6", "/user:al", "sqlplus", "al/pw7@db", "/nolog",
                  "xfreerdp", "/p:pw8", "/gp:pw9", "/u:al", "htpasswd", "-nb", "-bc", "f",
                  "redis-cli", "AUTH", "auth", "-a", "nmcli", "password", "wifi-sec.psk",
                  "pdftk", "user_pw", "rabbitmqctl", "add_user", "al", "vault", "smbclient",
                  "//srv/s", "-U", "al%pw10", "/usr/bin/mysql", "a/b", "x", "-", "--", ""]


@settings(max_examples=1500, deadline=None)
@given(words=st.lists(st.sampled_from(_PROGRAM_WORDS) | st.sampled_from(_WORDS),
                      min_size=0, max_size=40))
@example(words=["curl", *(["-u", "u:p1", "-u", "u:p2"] * 5)])
@example(words=["curl", *(["-u", "u:p1"] * 9), "docker", "x", "login", "-p", "pw"])
@example(words=["tool", *(["-u", "u:p1"] * 9), "xfreerdp", "/p:pw", "/u:al"])
@example(words=["htpasswd", *(["-x", "f"] * 9), "-nb", "u", "pw"])
def test_the_words_no_program_rule_looks_at_are_skipped_exactly(words: list[str]) -> None:
    """:func:`command_programs._program_secrets` looking only at programs, options and
    paths, and each word that changes nothing after a program once, notes the words
    that looking at every word notes."""
    fast = command_programs._program_secrets(words)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(command_programs, "SKIP_INERT", False)
        slow = command_programs._program_secrets(words)
    assert fast == slow


_LINES = ['{"api_key": "k000001"}', '{"api_key": "k2", "n": 3}', "password: pw4", "token: t5",
          '"password": "p6"', "{api_key: k7}", "user: al", "-u u:p8", "curl -u u:p9 h",
          "ssh h 'a b'", "x -u 'a b:c'", "pass: q1", "{x: y}", "a= b", "PASSWORD= p",
          "git config user.password p10", "export TOKEN=v11", "tool --token v12"]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(_LINES), min_size=1, max_size=24),
       head=st.sampled_from(["cat <<EOF\n", "", "sh -c 'x'\n"]),
       digits=st.randoms(use_true_random=False))
@example(lines=['{"api_key": "k000001"}'] * 20, head="cat <<EOF\n", digits=None)
@example(lines=["password: pw4", "password: pw5", "{x: y}"] * 6, head="", digits=None)
@example(lines=["x -u 'a b:c'", "-u u:p8", "ssh h 'a b'"] * 6, head="", digits=None)
def test_a_script_of_lines_like_a_heredoc_gives_what_the_rules_give(
        lines: list[str], head: str, digits: object) -> None:
    """A script of many lines of the shapes a heredoc holds (a JSON line, ``NAME: V``),
    each line a command: the words of no special word by the plain way (``{"api_key":``
    names no next word by place), what the rules gave a word again for the whole script
    (after the same option, or after no option), ``-u USER:PW`` by its one rule; as the
    rules give it word by word (display, keyed identity, values found, in order)."""
    if digits is not None:  # other digits in some lines
        lines = ["".join(str(digits.randrange(10)) if c.isdigit() else c  # type: ignore[attr-defined]
                         for c in line) if digits.random() < 0.5 else line  # type: ignore[attr-defined]
                 for line in lines]
    script = head + "\n".join(lines) + ("\nEOF" if head.startswith("cat") else "")
    fast, slow = _both(["sh", "-c", script], script)
    assert fast == slow
    argv = ["curl", *(word for line in lines for word in line.split())]
    fast, slow = _both(argv, script)
    assert fast == slow


@settings(max_examples=3000, deadline=None)
@given(text=st.lists(st.sampled_from(_QUOTED_PIECES), max_size=30).map("".join))
@example(text="x paſſword 'v'")
@example(text="İdentified by 'v'")
@example(text="ıdentified\tby \"v\"")
def test_the_sql_hint_finds_every_sql_password(text: str) -> None:
    """The SQL rule's hint (its words spelled with every character a case-insensitive
    letter of them matches, no case folding) is in every text the rule matches; the raw
    text's scan skipped where no keyed quote can open finds what it finds otherwise."""
    from fetchledger.identity import quoted_values

    long = text * (1 + quoted_values._LONG // (len(text) + 1))  # (long: the fast way)
    fast = quoted_values.sql_password(text), quoted_values.sql_password(long)
    fast_found: list[str] = []
    quoted_values.quoted_values_found(long, fast_found, cs.Recorder())
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(quoted_values, "HINTS", False)
        slow = quoted_values.sql_password(text), quoted_values.sql_password(long)
        slow_found: list[str] = []
        quoted_values.quoted_values_found(long, slow_found, cs.Recorder())
    assert fast == slow
    assert fast_found == slow_found


@settings(max_examples=500, deadline=None)
@given(script=_script(), cut=st.integers(0, 300))
@example(script=" mysqlx y", cut=250)  # `mysql` where the head is cut, `mysqlx` in the text
@example(script="echo sshpass", cut=250)
def test_a_program_named_at_the_start_decides_the_gate_as_the_whole_text_does(
        script: str, cut: int) -> None:
    """The gate's early answer (a program named among the first words of a long text,
    the last word of the first 256 characters left out: it may be cut) is the answer
    of the scans over the whole text."""
    text = "x " * (cut // 2) + script + " " + "y " * 150
    fast = cs._could_hold_secrets_as_written(text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(cs, "_HEAD", 10**9)
        slow = cs._could_hold_secrets_as_written(text)
    assert fast == slow


@settings(max_examples=1500, deadline=None)
@given(words=st.lists(_word() | st.text("'\"ab$\\\0 ", min_size=1, max_size=6), max_size=12))
@example(words=["'a", '"b', "c'd'e", "''", '"$\'x"', "a\\'b"])
@example(words=["'a", "b'c'd", "''", "x"])  # one kind of quote: every one opens or closes
@example(words=['"a', 'b"c"d', '""', '{"api_key":', '"k1"}'])
@example(words=['"it\'s"', "'say \"x\"'", "a'b\"c'"])  # a quote inside the other kind
def test_a_script_s_words_are_unquoted_all_at_once_as_one_by_one(words: list[str]) -> None:
    """The words of simple quoting unquoted in one pass over them all (joined by NULs:
    an open quote stops at its word's end) are each word unquoted on its own."""
    from fetchledger.identity import shellwords

    fast = shellwords._values(words)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(shellwords, "ALL_AT_ONCE", False)
        slow = shellwords._values(words)
    assert fast == slow


@settings(max_examples=1000, deadline=None)
@given(words=st.lists(st.text(max_size=6) | st.sampled_from(_WORDS), max_size=12))
@example(words=["", "a", "a b", "é", "~", "'", "REDACTED~" + "0f" * 16, "x=1", "-u"])
def test_the_command_line_is_joined_as_shlex_joins_it(words: list[str]) -> None:
    """The locator's join (each word's test in one C-level map) is :func:`shlex.join`."""
    import shlex

    from fetchledger.identity.commands import shell_join

    assert shell_join(words) == shlex.join(words)



def test_thousands_of_distinct_values_take_the_rules_once_per_kind_of_word() -> None:
    """Session 8 (the two 100k shapes still over 50 ms after session 7): 7,692 ``-u
    u:V`` as argv and a heredoc of 4,545 JSON ``api_key`` lines ran the rules for every
    word (15,384 ``redact_argument`` calls) and every line (4,545 ``_redact_words``):
    now a word after the same option is taken apart once, ``-u USER:PW`` by its one
    rule, and the heredoc's lines, whose ``{"api_key":`` names nothing by place, by the
    plain way. Counted, not timed (a loaded machine cannot fail it)."""
    argv = ["curl", *(w for i in range(2000) for w in ("-u", f"u:p{i:06d}"))]
    script = "cat <<EOF\n" + "\n".join(f'{{"api_key": "k{i:06d}"}}' for i in range(2000)) \
        + "\nEOF"
    calls = {"redact_argument": 0, "_redact_words": 0}
    with pytest.MonkeyPatch.context() as patched:
        for name in calls:
            def counted(*args: object, _rule: object = getattr(cs, name), _name: str = name,
                        **kwargs: object) -> object:
                calls[_name] += 1
                return _rule(*args, **kwargs)  # type: ignore[operator]

            patched.setattr(cs, name, counted)
        argv_locator = command_locator(argv, key=b"k" * 32)
        argument_calls, calls["redact_argument"] = calls["redact_argument"], 0
        calls["_redact_words"] = 0
        script_locator = command_locator(["sh", "-c", script], key=b"k" * 32)
    assert argument_calls <= 8, argument_calls
    assert calls["_redact_words"] <= 8, calls["_redact_words"]
    assert "p001999" not in argv_locator.locator and "k001999" not in script_locator.locator
    assert argv_locator.display.count("u:REDACTED") == 2000
    assert script_locator.display.count("REDACTED") == 2000
