"""Issue 13's redaction CPU (branch secretcpu5): a hint proven absent from a long script
answered for a script inside it (``identity.absent``: the nested ``sh -c "sh -c '…'"``)
held to a scan of each text, on generated input (checked to fail with a fault put in
the shortcut once: the tail scan dropped)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger.identity import absent, fed_secrets, quoted_values
from fetchledger.identity.command_secrets import _redact_script
from fetchledger.identity.commands import command_locator
from fetchledger.identity.recorder import Recorder

_HINTS = [fed_secrets._SQL_HINT, quoted_values._SQL_HINT, quoted_values._QUOTE_AFTER]
_PIECES = ["conn", "CONN", "connect", "ConnecT", "identified", "IDENTIFIED", "İdent", "ıdent",
           "ident", "passw", "paſſw", "PASSW", "password(", "x", "_", "1", " ", "\t", "\n",
           ":", "=", "'", '"', ";", "é", "K", "co", "nn", "ide", "ntified", "(", ")"]


@settings(max_examples=1500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=30), cuts=st.lists(
    st.tuples(st.integers(0, 300), st.integers(0, 300)), min_size=1, max_size=3),
    which=st.sampled_from(range(len(_HINTS))))
@example(pieces=["x", "conn", "x"], cuts=[(0, 1)], which=0)  # `conn` at the inner end
@example(pieces=["conn", "ect", "x"], cuts=[(0, 4)], which=0)
@example(pieces=["x:", " ", "'"], cuts=[(1, 0)], which=2)
def test_a_hint_absent_from_a_text_is_answered_for_a_text_inside_it_as_by_a_scan(
        pieces: list[str], cuts: list[tuple[int, int]], which: int) -> None:
    """Each text a piece of the one before (a level inside a level), every answer the
    scan's: ``pattern.search(text) is not None``."""
    kept = _HINTS[which]
    hint = absent.AbsentHint(kept._pattern, kept._tail)
    absent._HINTS.remove(hint)
    text = "".join(pieces)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(absent, "_LONG", 1)
        assert hint(text) == (kept._pattern.search(text) is not None)
        for head, tail in cuts:
            text = text[head:len(text) - tail]
            assert hint(text) == (kept._pattern.search(text) is not None), text


_SCRIPT = ["export TOKEN=v1", "export TOKEN=v2", "mysql -pv3 db", "echo conn", "echo x", "x=1",
           "echo identified", "echo 'a'", 'echo "token": "v4"', "PASSWORD 'v5'", "echo ok",
           "psql 'conn", "ect'", "echo password:", "curl -u u:v6 h", 'echo "a=\'v7\'"',
           "IDENTIFIED BY 'v8'", "c=connect('h','u','v9')", "echo $x"]


def _nested(commands: list[str], levels: int) -> str:
    text = "; ".join(commands)
    for level in range(levels):
        text = "sh -c " + (f"'{text}'" if level % 2 == 0 and "'" not in text else
                           '"' + text.replace("\\", "\\\\").replace('"', '\\"')
                           .replace("$", "\\$").replace("`", "\\`") + '"')
    return text


@settings(max_examples=300, deadline=None)
@given(commands=st.lists(st.sampled_from(_SCRIPT), min_size=1, max_size=12),
       levels=st.integers(0, 3))
@example(commands=["echo x", "echo conn"], levels=2)
@example(commands=["echo x:", "echo 'v'"], levels=2)
@example(commands=['echo "token": "v4"'], levels=2)  # (escaped in the outer level)
def test_nested_scripts_are_redacted_as_with_every_hint_scanned(commands: list[str],
                                                               levels: int) -> None:
    """The redacted command line, its identity, the secrets and each recorded mark,
    with the shortcut (every text long enough) as with each text scanned."""
    text = _nested(commands, levels)

    def both() -> tuple[object, ...]:
        recorder, found = Recorder(), []
        clean = _redact_script(text, found, recorder, 0)
        absent.forget()
        locator = command_locator(["sh", "-c", text], "/", key=b"k" * 32)
        return clean, found, recorder.values, locator, locator.secrets

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(absent, "_LONG", 1)
        patched.setattr(quoted_values, "_LONG", 1)  # (its scans for short texts too)
        fast = both()
        patched.setattr(absent, "SHORTCUT", False)
        assert both() == fast


def test_the_kept_texts_are_forgotten_with_the_command_line() -> None:
    """No text of a command line stays in the hints once it is redacted."""
    script = "sh -c 'sh -c \"" + "; ".join(f"export TOKEN={i:06d}" for i in range(800)) + "\"'"
    command_locator(["sh", "-c", script], "/", key=b"k" * 32)
    assert len(script) > absent._LONG
    assert all(not hint._free for hint in absent._HINTS)
    assert len(absent._HINTS) == len(_HINTS)
