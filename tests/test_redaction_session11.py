"""Issue 13's redaction CPU, session 11 (branch secretcpu4): the shortcuts of this session
held to the ways they replace, on generated input (each was checked to fail with a fault
put in it once).

- the finder's short values of letters and digits found as whole words of an ASCII text
  (``finder.WHOLE_WORDS``) against the automaton's hit-by-hit test;
- what a script feeds ``expect``'s ``send`` (``fed_secrets``) and its heredocs, each
  window or heredoc head asked once per distinct text, against asking each again.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fetchledger.identity import finder as finder_module
from fetchledger.identity.finder import Finder
from fetchledger.identity.recorder import Recorder

_FORMS = ["v1", "v12", "v123", "ab", "AB", "a1b2", "Z9", "x", "7", "abcdefg", "abcdefgh",
          "abcdefghij", "a-b", "b_c", "é1", "v1é", "gh", "1x", "\x01", "a\x01", ""]
_PIECES = ["v1", "v12", "v123", "v1234", "ab", "AB", "a1b2", "abcdefgh", "abcdefghij", " ",
           "-", "_", "é", "\0", "\x01", "\x03", "\0\x03", "\0\x03\U000f0002\0", "\0\x06\0",
           "x", "1", "a-b", "b_c", ";", "|", "'", '"', "\n", "Z9", "\x7f", "gh"]


@st.composite
def _texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(_PIECES), max_size=40))
    if draw(st.booleans()):  # mostly ASCII: the path under test
        pieces = [piece for piece in pieces if piece.isascii()]
    return "".join(pieces)


def _both_ways(forms: list[str], text: str, ascii_words: bool) -> None:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(finder_module, "_LONG_TEXT", 0)
        patched.setattr(finder_module, "_MANY_WORDS", 1)
        fast = Finder(forms, ascii_words=ascii_words)
        found_fast = sorted(fast._found(text))
        spans_fast = fast.spans(text)
        marks_fast = Recorder()
        sub_fast = fast.sub(text, marks_fast, marks_fast.record_many)
        patched.setattr(finder_module, "WHOLE_WORDS", False)
        slow = Finder(forms, ascii_words=ascii_words)
        assert sorted(slow._found(text)) == found_fast
        assert slow.spans(text) == spans_fast
        marks_slow = Recorder()
        assert slow.sub(text, marks_slow, marks_slow.record_many) == sub_fast
        assert marks_slow.values == marks_fast.values


@settings(max_examples=1500, deadline=None)
@given(forms=st.lists(st.sampled_from(_FORMS), min_size=1, max_size=8), text=_texts(),
       ascii_words=st.booleans())
@example(forms=["v1", "v12", "v123"], text="echo v1 | v12; v123x v1234 v12", ascii_words=False)
@example(forms=["v1", "ab"], text="v1\0\x03 ab", ascii_words=False)  # (a slot's start after)
@example(forms=["v1", "b_c"], text="_v1_ b_c v1", ascii_words=True)
@example(forms=["v1", "abcdefgh"], text="xabcdefghx v1\x01v1", ascii_words=False)
def test_short_values_as_whole_words_are_found_as_hit_by_hit(
        forms: list[str], text: str, ascii_words: bool) -> None:
    """An ASCII text's short values of letters and digits found between two \\x01 of the
    text translated (each character that is no letter or digit made \\x01) give the
    occurrences, spans, replacements and marks that the one automaton's hits tested one
    by one give: for a text as for bytes read as Latin-1, with slots, NULs and \\x01s
    in it, other short values and long ones beside them."""
    _both_ways(forms, text, ascii_words)


def test_whole_words_are_taken_only_for_ascii_texts_of_many_values() -> None:
    """The threshold: a text under ``_LONG_TEXT`` characters, or with fewer than
    ``_MANY_WORDS`` short values of letters and digits, goes hit by hit (no automaton
    made for it); a long ASCII one of many the whole-word way, finding the same."""
    forms = [f"v{i}" for i in range(200)]
    text = " ".join(f"echo v{i} | sudo -S y; v{i}x" for i in range(400))
    assert len(text) >= finder_module._LONG_TEXT
    fast = Finder(forms)
    assert fast._words() is not None
    found = sorted(fast._found(text))
    assert len(found) == 200  # v0..v199 once each as a word (not in v0x), v200.. none
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(finder_module, "WHOLE_WORDS", False)
        assert sorted(Finder(forms)._found(text)) == found
    assert Finder(forms[:3])._words() is None


# --- what a script feeds: each expect window and each heredoc head asked once -------------

_EXPECT_PIECES = ['expect "password:"; ', 'send "v1\\r"; ', "send v2; ", 'expect "Name"; ',
                  "spawn ssh h; ", 'send -- "v3\\n"; ', "expect -re {pass}; ", "sendline('v4')\n",
                  'expect ":"; ', "set pw \"v5\"; ", 'send "$pw\\r"; ', "send {v6}; ",
                  'expect \\"Password\\"; send \\"v7\\r\\"; ', "x; ", "\n", "password ",
                  "exp_send v8; ", "send [x]; "]
_HEREDOC_PIECES = ["passwd <<E\nv1\nE\n", "passwd <<E\nv2\nE\n", "cat <<E | passwd\nv3\nE\n",
                   "cat > ~/.pgpass <<EOF\nh:5432:*:u:v4\nEOF\n", "cat <<E\nv5\nE\n",
                   "sudo -S x <<-E\n\tv6\n\tE\n", "chpasswd <<'END'\nu:v7\nEND\n",
                   "aws configure <<E\nk1\nv8\nE\n", "passwd <<E\n", "x; ", "E\n", "echo a\n",
                   "passwd <<\"E\" ; x\nv9\nE\n", "read -s P <<E\nv10\nE\n",
                   "passwd <<E\n  v11 \n\n\tv12\nE\n", "passwd <<E\nv\\n13\r\nE\n",
                   "P=v14; passwd <<E\n$P\nE\n", "passwd <<E\n`x`\nE\n", "passwd <<E\n \nE\n",
                   "passwd <<E\nv\\n15\nE\n"]


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_EXPECT_PIECES), max_size=30)
       | st.lists(st.sampled_from(_HEREDOC_PIECES), max_size=24)
       | st.lists(st.sampled_from(_EXPECT_PIECES + _HEREDOC_PIECES), max_size=30))
@example(pieces=['expect "password:"; ', 'send "v1\\r"; '] * 6 + ['expect "Name"; ', "send v2; "])
@example(pieces=["passwd <<E\nv1\nE\n"] * 5 + ["cat <<E\nv5\nE\n", "passwd <<E\nv2\nE\n"])
def test_expect_windows_and_heredoc_heads_are_read_once_as_each_again(pieces: list[str]
                                                                      ) -> None:
    """What ``expect`` sends after a prompt and what heredocs feed their readers, each
    distinct window since the last ``send`` and each distinct heredoc head (the command
    before ``<<``, the rest of its line) looked at once per script
    (``fed_secrets.PROMPTS_ONCE``, ``HEADS_ONCE``), and the lines of a value of no escape,
    CR or expansion taken at once (``LINES_AT_ONCE``), as when each is looked at again."""
    from fetchledger.identity import fed_secrets

    text = "".join(pieces)
    fast = fed_secrets._fed_values.__wrapped__(text)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(fed_secrets, "PROMPTS_ONCE", False)
        patched.setattr(fed_secrets, "HEADS_ONCE", False)
        patched.setattr(fed_secrets, "LINES_AT_ONCE", False)
        slow = fed_secrets._fed_values.__wrapped__(text)
    assert fast == slow
