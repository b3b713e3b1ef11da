"""Issue 13, session 11 (branch redteam11): held-out variants of "no field a source
controls can forge output".

Each case names a field a source controls and an output path; the assertion is the
promise itself (DESIGN §5: a snippet line is ours — what matches ``[n] "…"`` is a
verbatim quote of source n; no raw control, bidi or line break; in a Sources block no
markup or link of the source opens). Against main's code, 29 of the 51 cases failed.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from fetchledger import Document, Ledger, Page

SNIPPET = re.compile(r'^\[(\d+)\] "(.*)"( \(p\. [^)]+\))?$')


def _raw(text: str) -> list[str]:
    return [c for line in text.split("\n") for c in line
            if unicodedata.category(c) in ("Cc", "Zl", "Zp")
            or "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069"]


def _forged_snippets(output: str, texts: dict[int, str]) -> list[str]:
    """Lines that read as a snippet line ``[n] "…"`` whose words are not in source n."""
    forged = []
    for line in output.splitlines():
        match = SNIPPET.match(line)
        if match:
            words = match.group(2).replace("…", "")
            if words not in texts.get(int(match.group(1)), ""):
                forged.append(line)
    return forged


# --- a header line that reads as a snippet line --------------------------------------------

# A title (or a file name standing for one) that is a quoted string: the header
# `[1] "forged quote"` matches DESIGN §5's snippet pattern, a quote the source never said.
QUOTED_TITLES = ['"forged quote"', '"forged quote" (p. 3)', '"x"', '""', '"a" "b"',
                 '"The tide is low at noon." (p. 12, printed xii)']


@pytest.mark.parametrize("title", QUOTED_TITLES)
@pytest.mark.parametrize("kind", ["file", "web", "command"])
def test_a_header_never_reads_as_a_snippet_line(ledger_path: Path, run_cli: Any,
                                                kind: str, title: str) -> None:
    text = "The harbour sees two tides a day."
    locator = {"file": f"/srv/{title}", "web": "https://example.org/a",
               "command": "cmd"}[kind]
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(kind=kind, locator=locator,  # type: ignore[arg-type]
                                 display=title if kind == "command" else locator,
                                 title=title, text=text, raw=b"x"))
    for verb in (["list"], ["show", "1"], ["quotes", "harbour"], ["show", "1", "--passages", "1"]):
        result = run_cli(*verb)
        assert result.exit_code == 0, result.stderr
        assert _forged_snippets(result.stdout, {1: text}) == [], (verb, result.stdout)


def test_a_read_file_named_as_a_quote_prints_no_forged_snippet(tmp_path: Path,
                                                               ledger_path: Path,
                                                               run_cli: Any) -> None:
    names = ['"forged quote"', '"forged quote" (p. 3)']
    for name in names:
        (tmp_path / name).write_text("The tide is low at noon.\n", encoding="utf-8")
    result = run_cli("read", *(str(tmp_path / n) for n in names))
    assert result.exit_code == 0, result.stderr
    texts = {1: "The tide is low at noon.", 2: "The tide is low at noon."}
    assert _forged_snippets(result.stdout, texts) == [], result.stdout
    assert len(result.stdout.splitlines()) == 4  # two headers, two snippets


# --- page labels and link syntax in every Sources style ------------------------------------

HOSTILE_LABELS = {
    "bidi override": "ii\u202e",
    "isolate": "ii\u2067x\u2069",
    "line separator": "ii\u2028[9] \"forged\"",
    "script tag": "ii <script>alert(1)</script>",
    "comment": "ii <!-- /fetchledger:sources -->",
    "unterminated comment": "ii <!--",
}


@pytest.mark.parametrize("style", ["markdown", "plain", "footnotes", "evidence"])
@pytest.mark.parametrize("label", list(HOSTILE_LABELS.values()), ids=list(HOSTILE_LABELS))
def test_a_page_label_is_shown_escaped_in_every_style(ledger_path: Path, run_cli: Any,
                                                      tmp_path: Path, style: str,
                                                      label: str) -> None:
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(
            kind="file", locator="/srv/tides.pdf", display="/srv/tides.pdf", title="Tides",
            text="The tide is low at noon.", raw=b"%PDF", pages=(Page(0, 24, 1, label),)))
    draft = tmp_path / "draft.md"
    draft.write_text("The tide is low at noon.[1]\n", encoding="utf-8")
    block = run_cli("render", str(draft), "--style", style).stdout
    assert "printed" in block, block
    assert _raw(block) == [], block
    assert not re.search(r"(?<!\\)<", block.replace("<!-- fetchledger:sources -->", "")
                         .replace("<!-- /fetchledger:sources -->", "")), block


def test_the_packs_sources_list_shows_a_page_label_escaped(ledger_path: Path, run_cli: Any,
                                                           tmp_path: Path) -> None:
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(
            kind="file", locator="/srv/tides.pdf", display="/srv/tides.pdf", title="Tides",
            text="The tide is low at noon.", raw=b"%PDF",
            pages=(Page(0, 24, 1, "ii\u202e <script>x</script>"),)))
    assert run_cli("quotes", "tide").exit_code == 0
    assert run_cli("export", "--format", "pack", "-o", str(tmp_path / "pack")).exit_code == 0
    listed = (tmp_path / "pack" / "sources.md").read_text(encoding="utf-8")
    assert _raw(listed) == [] and "<script>" not in listed, listed


LINKS = ["[x](javascript:alert(1))", "![img](https://evil.example/t.png)",
         "[click](data:text/html,<b>x</b>)"]


@pytest.mark.parametrize("title", LINKS)
def test_the_plain_style_makes_no_link_of_a_title(ledger_path: Path, run_cli: Any,
                                                  tmp_path: Path, title: str) -> None:
    """The plain style escapes what would open markup in a draft read as Markdown or HTML:
    a title's ``[x](javascript:…)`` would be a link there."""
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(kind="web", locator="https://example.org/a",
                                 display="https://example.org/a", title=f"Tides {title}",
                                 text="The harbour sees two tides a day.", raw=b"x"))
    draft = tmp_path / "draft.md"
    draft.write_text("The harbour sees two tides a day.[1]\n", encoding="utf-8")
    block = run_cli("render", str(draft), "--style", "plain").stdout
    assert "Tides" in block
    assert not re.search(r"\]\(", block), block


# --- BibTeX: a backslash of a title is text -------------------------------------------------

@pytest.mark.parametrize(("title", "written"), [
    ("\\input{/etc/passwd}", "\\textbackslash{}input\\{/etc/passwd\\}"),
    ("a\\b", "a\\textbackslash{}b"),
    ("~^", "\\textasciitilde{}\\textasciicircum{}"),
    ("<b>", "\\textless{}b\\textgreater{}"),
])
def test_bibtex_writes_a_backslash_as_text(ledger_path: Path, run_cli: Any, tmp_path: Path,
                                           title: str, written: str) -> None:
    """``\\textbackslash{}`` had its own braces escaped (``\\textbackslash\\{\\}``), which
    prints ``\\{}``: the title as written is lost."""
    with Ledger(ledger_path) as ledger:
        ledger.register(Document(kind="web", locator="https://example.org/a",
                                 display="https://example.org/a", title=title,
                                 text="The harbour sees two tides a day.", raw=b"x"))
    draft = tmp_path / "draft.md"
    draft.write_text("The harbour sees two tides a day.[1]\n", encoding="utf-8")
    block = run_cli("render", str(draft), "--style", "bibtex").stdout
    assert "title = {{" + written + "}}" in block, block
