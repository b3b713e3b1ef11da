"""Quotes are the page's statements: body sentences before its furniture (issue 11).

Titles, headings, navigation lines, bare URLs and reference-list entries may
match a query too; they never push a body sentence out of the k quotes, and the
page title never takes a slot while body passages match. Page titles come
from ``<title>``/``og:title``/JSON-LD over a banner or promotion heading.
"""

from __future__ import annotations

import json

import pytest

from fetchledger.adapters.extract import extract_html
from fetchledger.text.passages import (
    BODY,
    FURNITURE,
    TITLE,
    passage_roles,
    select_quotes,
    split_passages,
)

PAGE = "\n".join([
    "Mozilla Foundation",
    "Home | About Mozilla | Foundation | Donate",
    "History of the Mozilla Foundation",
    "The Mozilla Foundation was set up in July 2003 to steward the Mozilla project.",
    "https://foundation.mozilla.example/history",
    "The foundation funds open web projects and owns the Mozilla Corporation.",
    'Baker, Mitchell (2003). "Mozilla Foundation launched". Mozilla Foundation. '
    "Retrieved 2012-05-10.",
    '"New Zealand Population Review". Mozilla Foundation statistics. Archived from the '
    "original on 2016-01-01.",
    "Smith, J. A. (2005). Mozilla Foundation and the open web. Tech Press.",
    "In 2005 the Mozilla Foundation created a taxable subsidiary.",
])


def test_roles_of_furniture_lines() -> None:
    passages = split_passages(PAGE)
    roles = dict(zip((PAGE[p.start : p.end] for p in passages),
                     passage_roles(PAGE, passages, "Mozilla Foundation - Wikipedia"),
                     strict=True))
    assert roles["Mozilla Foundation"] == TITLE
    assert roles["Home | About Mozilla | Foundation | Donate"] == FURNITURE
    assert roles["History of the Mozilla Foundation"] == BODY  # a heading: half weight
    assert roles["https://foundation.mozilla.example/history"] == FURNITURE
    assert roles["In 2005 the Mozilla Foundation created a taxable subsidiary."] == BODY
    bibliography = [text for text, role in roles.items() if "Retrieved" in text
                    or "Archived" in text or "Tech Press" in text]
    assert bibliography and all(roles[text] == FURNITURE for text in bibliography)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_body_sentences_take_every_slot_they_can(k: int) -> None:
    quotes = select_quotes(PAGE, split_passages(PAGE), "Mozilla Foundation", k,
                           title="Mozilla Foundation")
    got = [PAGE[q.start : q.end] for q in quotes]
    assert len(got) == k
    assert all(text.startswith(("The Mozilla", "The foundation", "In 2005")) for text in got)


def test_the_title_never_takes_a_slot_while_body_passages_match() -> None:
    quotes = select_quotes(PAGE, split_passages(PAGE), "Mozilla Foundation", 10,
                           title="Mozilla Foundation")
    assert "Mozilla Foundation" not in [PAGE[q.start : q.end] for q in quotes]
    texts = [PAGE[q.start : q.end] for q in quotes]
    assert texts.index("In 2005 the Mozilla Foundation created a taxable subsidiary.") < \
        texts.index("History of the Mozilla Foundation")


def test_furniture_still_answers_when_nothing_else_matches() -> None:
    quotes = select_quotes(PAGE, split_passages(PAGE), "Donate", 3, title="Mozilla Foundation")
    assert [PAGE[q.start : q.end] for q in quotes] == [
        "Home | About Mozilla | Foundation | Donate"]


def test_without_a_query_the_lead_is_body_sentences() -> None:
    quotes = select_quotes(PAGE, split_passages(PAGE), None, 2, title="Mozilla Foundation")
    assert [PAGE[q.start : q.end] for q in quotes] == [
        "The Mozilla Foundation was set up in July 2003 to steward the Mozilla project.",
        "The foundation funds open web projects and owns the Mozilla Corporation."]


BODY_HTML = ("<article><h2>Code coverage for the frontend</h2>" + "<p>Measuring how much of "
             "your JavaScript runs under test is easier than it looks, and it pays off "
             "quickly once the first reports come in.</p>" * 4 + "</article>")


def titled(head: str, banner: str = "<header><h1>Hi, I'm Nicolas.</h1></header>") -> str:
    return f"<html><head>{head}</head><body>{banner}{BODY_HTML}</body></html>"


@pytest.mark.parametrize(("head", "expected"), [
    ("<title>Get your Frontend JavaScript Code Covered | Code</title>",
     "Get your Frontend JavaScript Code Covered | Code"),
    ('<title>x</title><meta property="og:title" content="Frontend code coverage">',
     "Frontend code coverage"),
    ("<title>Blog</title><script type='application/ld+json'>" + json.dumps(
        {"@context": "https://schema.org", "@type": "Article",
         "headline": "Covering frontend code"}) + "</script>", "Covering frontend code"),
])
def test_the_page_title_beats_a_banner_heading(head: str, expected: str) -> None:
    assert extract_html(titled(head), "https://blog.example/").title == expected


def test_a_heading_that_agrees_with_the_title_element_is_kept() -> None:
    page = titled("<title>Frontend Code Coverage - Nicolas's Blog</title>",
                  "<header><h1>Frontend Code Coverage</h1></header>")
    assert extract_html(page, "https://blog.example/").title == "Frontend Code Coverage"
