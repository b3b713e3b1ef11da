"""A source's own apparatus is not its evidence, in every markup that carries one.

Pages authored here for the forms of footnote and reference marks that wikis, CMSs,
scholarly sites and newsletters use (MediaWiki variants, arXiv/ar5iv, PubMed
Central, publishers, Substack, Medium, pandoc), formulas with twins (KaTeX, MathJax
2 and 3, MediaWiki display math), table cells with breaks, Markdown footnotes, and
sentence ends after marks. Each test reproduces a defect class seen before its fix.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fetchledger.adapters.markdown import markdown_text
from fetchledger.text.passages import split_sentences
from test_html_prose import FILLER, stored


def body_lines(text: str) -> list[str]:
    return [line for line in text.split("\n")
            if "committee met again" not in line and line != "A test page"]


def test_mediawiki_mark_variants_leave_no_mark() -> None:
    text = stored(
        '<p>The city was founded in 1850.<sup class="reference" id="cite_ref-a">'
        '<a href="#cite_note-a"><span class="cite-bracket">&#91;</span>note 1'
        '<span class="cite-bracket">&#93;</span></a></sup> It grew quickly.'
        '<sup><a href="#cite_note-b">[a]</a></sup> Trade expanded.<sup class="reference">'
        '<a href="#cite_note-nb2">[nb 2]</a></sup> Then came rail.<sup>[12]</sup> Roads came'
        ' later.<sup class="reference"><a href="#cite_note-12">[12]</a></sup>'
        '<sup class="reference nowrap"><span title="Page: 3">:&#8202;3</span></sup> Ships'
        ' followed.<sup class="reference"><a href="#c1">[12]</a></sup><sup class="reference">'
        '<a href="#c2">[13]</a></sup></p>')
    assert body_lines(text) == ["The city was founded in 1850. It grew quickly. Trade expanded. "
                                "Then came rail. Roads came later. Ships followed."]


def test_maintenance_templates_of_every_wording_go() -> None:
    text = stored(
        '<p>The bridge opened in 1901.<sup class="noprint Inline-Template"><span>&#91;<i>'
        '<a href="/wiki/WP:BETTER"><span title="better source">better source needed</span>'
        '</a></i>&#93;</span></sup> It closed later.<sup class="noprint Inline-Template">'
        '<span>[<i><a href="/wiki/WP:WHEN">when?</a></i>]</span></sup> It was rebuilt.'
        '<sup class="noprint Inline-Template"><span>[<i><a href="/wiki/WP:DUBIOUS">dubious'
        '</a> &#8211; <a href="/wiki/Talk:X">discuss</a></i>]</span></sup> Done.</p>')
    assert body_lines(text) == ["The bridge opened in 1901. It closed later. It was rebuilt. "
                                "Done."]


def test_edit_links_desktop_and_mobile_go() -> None:
    text = stored(
        '<h2 id="Hist">History</h2><span class="mw-editsection"><span class="mw-editsection-'
        'bracket">[</span><a href="?action=edit">edit</a><span class="mw-editsection-divider">'
        ' | </span><a href="?veaction=edit">edit source</a><span class="mw-editsection-bracket">'
        ']</span></span><p>The history section holds enough words to be the page content.</p>'
        '<div class="mw-heading mw-heading2"><h2 id="Later">Later years</h2><span class="mw-'
        'editsection"><a role="button" href="?action=edit&amp;section=2"><span>edit</span></a>'
        '</span></div><p>The later section also holds enough words to be content here.</p>')
    assert "edit" not in text and "[" not in text
    assert {"History", "Later years"} <= set(text.split("\n"))


def test_back_links_without_their_class_go_and_entries_stay() -> None:
    text = stored(
        '<h2>References</h2><ol class="references"><li id="cite_note-1"><b>'
        '<a href="#cite_ref-1">^</a></b> <span class="reference-text">Smith, J. (2001). The '
        'book. Publisher.</span></li><li id="fn2"><p>Highest count since 1990. '
        '<a href="#fnref2">↩︎</a></p></li><li id="en3"><a href="#ref3">↑</a> Doe, J. (2002).'
        ' Another book.</li><li id="cite_note-4">^ <a href="#cite_ref-4a"><sup><i><b>a</b></i>'
        '</sup></a> <a href="#cite_ref-4b"><sup><i><b>b</b></i></sup></a> <a href="#cite_ref-'
        '4c">c</a> <span class="reference-text">Roe, R. (2003). A third book.</span></li></ol>')
    lines = [line.removeprefix("- ") for line in body_lines(text)]
    assert "Smith, J. (2001). The book. Publisher." in lines
    assert "Highest count since 1990." in lines
    assert "Doe, J. (2002). Another book." in lines
    assert "Roe, R. (2003). A third book." in lines
    assert not re.search(r"[\^↑↩]", text)


def test_scholarly_and_newsletter_note_links_go() -> None:
    text = stored(
        '<p class="ltx_p">Transformers were introduced in 2017 <cite class="ltx_cite">[<a '
        'href="#bib.bib12" class="ltx_ref">12</a>, <a href="#bib.bib13" class="ltx_ref">13'
        '</a>]</cite> and scaled later <cite class="ltx_cite">(<a href="#bib.bib3" class="ltx_'
        'ref">Brown et al., 2020</a>)</cite>.</p>'
        '<p>Vitamin D deficiency is common in winter (<a href="#B1" rid="B1" class="bibr">1'
        '</a>, <a href="#B2" rid="B2" class="bibr">2</a>). Supplements help.<sup><a href="#B3"'
        ' class="xref bibr">3</a>,<a href="#B4" class="xref bibr">4</a></sup> Dose matters'
        '<sup>[<a href="#B5">5</a>–<a href="#B7">7</a>]</sup>.</p>'
        '<p>Rainfall declined over the decade <a href="#ref-CR12" aria-label="Reference 12">'
        '12</a>,<a href="#ref-CR13" aria-label="Reference 13">13</a>. Crops failed <sup>'
        '<a class="ref-link" href="#ref-14">14</a></sup>.</p>'
        '<p>The market fell in March.<a class="footnote-anchor" id="footnote-anchor-1" '
        'href="#footnote-1">1</a> Investors were nervous.</p><div class="footnote"><a '
        'id="footnote-1" href="#footnote-anchor-1" class="footnote-number">1</a><div '
        'class="footnote-content"><p>Data from the exchange.</p></div></div>'
        '<p>We shipped the feature on time.<sup><a href="#4f2a">1</a></sup> Users liked it.</p>')
    lines = body_lines(text)
    assert ("Transformers were introduced in 2017 and scaled later (Brown et al., 2020)."
            in lines)
    assert "Vitamin D deficiency is common in winter. Supplements help. Dose matters." in lines
    assert "Rainfall declined over the decade. Crops failed." in lines
    assert "The market fell in March. Investors were nervous." in lines
    assert "Data from the exchange." in lines
    assert "We shipped the feature on time. Users liked it." in lines
    assert "1" not in lines


def test_links_and_superscripts_that_are_words_stay() -> None:
    text = stored(
        '<p>The method is described in Section <a href="#s3">3</a> of the report.</p>'
        '<p>The room is 12 m<sup>2</sup> and took 1<sup>st</sup> place in 2019.</p>'
        '<p>The square (a + b)<sup>2</sup> is expanded first.</p>'
        '<p>Water boils at 100 °C.<sup>3</sup> The pot is <code>a[12]</code> in the code.</p>')
    lines = body_lines(text)
    assert "The method is described in Section 3 of the report." in lines
    assert "The room is 12 m2 and took 1st place in 2019." in lines
    assert "The square (a + b)2 is expanded first." in lines
    assert "Water boils at 100 °C. The pot is a[12] in the code." in lines


def test_formulas_with_twins_are_said_once() -> None:
    text = stored(
        '<p>The energy is <span class="katex"><span class="katex-mathml"><math><semantics>'
        '<mrow><mi>E</mi></mrow><annotation encoding="application/x-tex">E=mc^2</annotation>'
        '</semantics></math></span><span class="katex-html"><span class="mord">E</span><span '
        'class="mrel">=</span><span class="mord">mc</span><span class="msupsub">2</span>'
        '</span></span> in this model.</p>'
        '<p>The area is <span class="MathJax_Preview">A=\\pi r^2</span><span class="MathJax" '
        'id="MathJax-Element-1-Frame"><span class="math"><span class="mi">A</span></span>'
        '</span><script type="math/tex" id="MathJax-Element-1">A=\\pi r^2</script> for a '
        'circle.</p>'
        '<p>The volume is <mjx-container class="MathJax" jax="CHTML"><mjx-math><mjx-mi>V'
        '</mjx-mi></mjx-math><mjx-assistive-mml display="inline"><math><mi>V</mi><mo>=</mo>'
        '<msup><mi>a</mi><mn>3</mn></msup></math></mjx-assistive-mml></mjx-container> for a '
        'cube.</p>'
        '<p>It satisfies</p><dl><dd><div class="mwe-math-element"><div class="mwe-math-mathml-'
        'display" style="display: none;"><math alttext="{\\displaystyle x+y=z}"><mi>x</mi>'
        '</math></div><img class="mwe-math-fallback-image-display" aria-hidden="true" '
        'alt="{\\displaystyle x+y=z}" src="x.svg"></div></dd></dl><p>for all pairs.</p>')
    lines = [line.removeprefix("- ") for line in body_lines(text)]
    assert "The energy is E=mc^2 in this model." in lines
    assert "The area is A=\\pi r^2 for a circle." in lines
    assert "The volume is V = a^3 for a cube." in lines
    assert text.count("x+y=z") == 1


def test_table_cells_holding_breaks_or_paragraphs_stay_rows() -> None:
    text = stored(
        '<table><tr><th>Name</th><th>Notes</th></tr><tr><td>Alpha</td><td>First line of the '
        'note that goes<br/>on in the next line of the cell</td></tr></table>'
        '<table><thead><tr><th><strong>Symptom</strong></th><th><strong>Cause</strong></th>'
        '</tr></thead><tbody><tr><td><p><strong>Serving 500s</strong></p></td><td><p>Database'
        ' refusing connections</p></td></tr><tr><td>&nbsp;&nbsp;Slow&nbsp;</td><td>\t CPUs '
        'overloaded \t</td></tr></tbody></table>')
    lines = body_lines(text)
    assert "Name | Notes" in lines
    assert "Alpha | First line of the note that goes on in the next line of the cell" in lines
    assert "Symptom | Cause" in lines
    assert "Serving 500s | Database refusing connections" in lines
    assert "Slow | CPUs overloaded" in lines


def test_markdown_footnotes_are_apparatus_and_hard_breaks_never_crash() -> None:
    got = markdown_text("# Notes\n\nThe heron was counted twice.[^1] The count rose [^n]. "
                        "Code `a[^1]` stays.\n\n[^1]: Counted by *boat* on the lake.\n"
                        "[^n]: See the annual report.\n\nRoses are red  \nViolets are blue  \n"
                        "Sugar is sweet  \nAnd so are you\n")
    assert got.text.split("\n") == [
        "Notes", "The heron was counted twice. The count rose. Code a[^1] stays.",
        "Counted by boat on the lake.", "See the annual report.",
        "Roses are red", "Violets are blue", "Sugar is sweet", "And so are you"]


def test_sentences_end_after_marks_of_every_shape() -> None:
    line = ("It rose.[a] Then fell.[note 2] Then rose.[nb 3] See the map.[12]:3 It took 5 "
            "seconds.23 If users wait, they leave. Born in 1950 (d. 2010). About 3.5 Million "
            "came. See p.23 The end.")
    assert [line[a:b] for a, b in split_sentences(line)] == [
        "It rose.[a]", "Then fell.[note 2]", "Then rose.[nb 3]", "See the map.[12]:3",
        "It took 5 seconds.23", "If users wait, they leave.", "Born in 1950 (d. 2010).",
        "About 3.5 Million came.", "See p.23 The end."]


NOTE_FORMS = (
    '<sup class="reference"><a href="#cite_note-{n}">[{n}]</a></sup>',
    '<sup><a href="#cite_note-{n}">[{n}]</a></sup>',
    "<sup>[{n}]</sup>",
    '<sup id="fnref{n}"><a href="#fn{n}">{n}</a></sup>',
    '<cite class="ltx_cite">[<a href="#bib.bib{n}" class="ltx_ref">{n}</a>]</cite>',
    '<a class="footnote-anchor" href="#footnote-{n}">{n}</a>',
    '<sup><a class="xref bibr" href="#B{n}">{n}</a></sup>',
    '<a href="#ref-CR{n}" aria-label="Reference {n}">{n}</a>',
    '<a role="doc-noteref" href="#n{n}">[{n}]</a>',
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(NOTE_FORMS), st.integers(100, 9999),
                          st.integers(1, 8)), min_size=1, max_size=5))
def test_no_note_mark_of_any_form_reaches_stored_text(
        marks: list[tuple[str, int, int]]) -> None:
    words = FILLER.split()
    body = []
    for form, number, at in marks:
        body.append("<p>" + " ".join(words[:at]) + form.format(n=number) + " "
                    + " ".join(words[at:]) + "</p>")
    text = stored("".join(body))
    for _, number, _ in marks:
        assert str(number) not in text  # the numbers are no words of the page
    assert "[" not in text


def test_a_figure_caption_that_says_something_is_kept_without_its_credit() -> None:
    text = stored(
        '<figure><img src="a.png" alt="A heron"><figcaption><span class="txt">A grey '
        'heron standing in the lake at dawn, before the count began.</span> <span '
        'class="image-credit">Credit: J. Smith/Agency</span></figcaption></figure>'
        '<figure><img src="b.png"><figcaption>Foto: dpa</figcaption></figure>'
        '<figure><img src="c.png"><figcaption>The lake</figcaption></figure>')
    lines = body_lines(text)
    assert "A grey heron standing in the lake at dawn, before the count began." in lines
    assert "Credit" not in text and "dpa" not in text and "The lake" not in lines
