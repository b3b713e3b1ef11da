"""Drift, as a property over random edits: after a source changes, ``refresh`` reports
every recorded quote whose sentence was deleted or altered, and never one whose
sentence was kept, moved, re-spaced or retyped with other dashes (what ``check`` forgives
is not drift)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fetchledger import Ledger

EDITS = ("keep", "delete", "alter", "respace", "retype")
WORDS = ("tide", "ferry", "harbour", "beacon", "quay", "pier", "dune", "gull")


@dataclass(frozen=True)
class Sentence:
    number: int
    words: tuple[str, str]
    metres: int

    def text(self, edit: str = "keep") -> str:
        first, second = self.words
        dash = "–" if edit == "retype" else "-"
        metres = self.metres + 1000 if edit == "alter" else self.metres
        text = f"Item {self.number} {dash} the {first} and the {second} stand {metres} metres off."
        return text.replace(" ", "  ") if edit == "respace" else text


@st.composite
def edited_pages(draw: st.DrawFn) -> tuple[list[Sentence], list[str], list[int], bool]:
    count = draw(st.integers(min_value=2, max_value=8))
    sentences = [Sentence(i, (draw(st.sampled_from(WORDS)), draw(st.sampled_from(WORDS))),
                          draw(st.integers(min_value=1, max_value=999)))
                 for i in range(1, count + 1)]
    edits = draw(st.lists(st.sampled_from(EDITS), min_size=count, max_size=count))
    order = draw(st.permutations(range(count)))  # the page's sentences may move
    return sentences, edits, [*order], draw(st.booleans())


def page(sentences: list[str]) -> str:
    """Two sentences to a paragraph, paragraphs apart: wrapped prose as a text file has."""
    paragraphs = [" ".join(sentences[i : i + 2]) for i in range(0, len(sentences), 2)]
    return "\n\n".join(paragraphs) + "\n"


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[Ledger, Path]]:
    """One ledger for every example (each example is a file of its own, a source of its
    own): opening a new ledger per example would cost more than the example."""
    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "l.db") as ledger:
        yield ledger, Path(folder)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edited_pages())
def test_drift_is_exactly_the_deleted_and_altered_sentences(
        shared: tuple[Ledger, Path],
        case: tuple[list[Sentence], list[str], list[int], bool]) -> None:
    ledger, folder = shared
    sentences, edits, order, inserted = case
    path = folder / f"{uuid.uuid4().hex}.txt"
    path.write_text(page([s.text() for s in sentences]))
    source_id = ledger.read(path, k=1).source.id
    quoted = {s.number: ledger.quote(source_id, s.text()).snippets[0].text for s in sentences}
    new = [sentences[i].text(edits[i]) for i in order if edits[i] != "delete"]
    if inserted:
        new.insert(len(new) // 2, "A new sentence about the lighthouse appears.")
    path.write_text(page(new or ["Nothing else is left of the page."]))
    [outcome] = ledger.refresh([source_id])
    lost = {quoted[s.number] for s, edit in zip(sentences, edits, strict=True)
            if edit in ("delete", "alter")}
    # the snippet handed out at registration is the first sentence's own quote
    assert {q.text for q in ledger.recorded_quotes(source_id)} == set(quoted.values())
    assert {q.text for q in outcome.drifted} == lost
    assert outcome.checked == len(sentences)
