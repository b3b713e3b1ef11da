"""Reading order of a page's text segments: columns before rows.

A text engine hands out a page in drawing order. Most producers draw a column
to its end before the next (pdfTeX does), but some draw a two-column page row
by row, and then line 1 of the left column is followed by line 1 of the right
one: sentences of the two columns interleave. :func:`column_order` looks at
the boxes of the page's text segments (one per line piece, in drawing order)
and, when they stand in two columns with a gutter between them *and* the
drawing order keeps jumping between the columns, gives the segments in reading
order instead. Segments drawn one after another along a baseline with gaps
smaller than a line height (the words of a line) are one piece first, so a
gap between words is never taken for a gutter. Full-width pieces (a title, a
figure caption) split the page into blocks; each block is read left column
first.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["Box", "column_order"]


class Box(NamedTuple):
    """A segment's box in PDF user space (y grows upwards)."""

    left: float
    bottom: float
    right: float
    top: float


_MIN_SEGMENTS = 8
_COLUMN_SHARE = 0.2  # each column holds at least this share of the segments
_CROSSING_SHARE = 0.1  # at most this share of segments may cross the gutter


def column_order(boxes: Sequence[Box]) -> list[list[int]] | None:
    """The segments (indices into ``boxes``) as lines in reading order, or None when
    the drawing order is already the reading order (or the page has no columns)."""
    usable = [i for i, b in enumerate(boxes) if b.right > b.left and b.top > b.bottom]
    pieces = _pieces(usable, boxes)
    if len(pieces) < _MIN_SEGMENTS:
        return None
    extent = {n: _union([boxes[i] for i in piece]) for n, piece in enumerate(pieces)}
    gutter = _gutter(list(extent.values()))
    if gutter is None:
        return None
    side = {n: _side(box, gutter) for n, box in extent.items()}
    sides = [s for s in side.values() if s != "span"]
    jumps = sum(1 for a, b in itertools.pairwise(sides) if a != b)
    spans = sorted((n for n in side if side[n] == "span"), key=lambda n: -_middle(extent[n]))
    if jumps <= 2 * (len(spans) + 1):
        return None  # column by column already
    lines: list[list[int]] = []
    for block in range(len(spans) + 1):
        if block:
            lines.append(pieces[spans[block - 1]])
        above = _middle(extent[spans[block - 1]]) if block else float("inf")
        below = _middle(extent[spans[block]]) if block < len(spans) else float("-inf")
        for column in ("left", "right"):
            members = [n for n in side if side[n] == column
                       and below < _middle(extent[n]) <= above]
            for line in _lines(members, extent):
                lines.append([i for n in line for i in pieces[n]])
    return lines


def _pieces(usable: list[int], boxes: Sequence[Box]) -> list[list[int]]:
    """Runs of segments drawn one after the other along one baseline with no more
    than a line height between them (words of a line, pieces of a line in another
    font): a gap between columns is wider, a gap between words is not."""
    pieces: list[list[int]] = []
    for i in usable:
        box = boxes[i]
        if pieces:
            last = boxes[pieces[-1][-1]]
            height = min(last.top - last.bottom, box.top - box.bottom)
            overlap = min(last.top, box.top) - max(last.bottom, box.bottom)
            if overlap > 0.5 * height and 0 <= box.left - last.right < 1.5 * height:
                pieces[-1].append(i)
                continue
        pieces.append([i])
    return pieces


def _union(boxes: list[Box]) -> Box:
    return Box(min(b.left for b in boxes), min(b.bottom for b in boxes),
               max(b.right for b in boxes), max(b.top for b in boxes))


def _gutter(boxes: list[Box]) -> float | None:
    """An x position near the middle of the text that (almost) no segment crosses,
    with a column's worth of segments on either side."""
    low = min(b.left for b in boxes)
    width = int(max(b.right for b in boxes) - low)
    if width < 100:
        return None
    coverage = [0] * (width + 2)
    for b in boxes:
        coverage[int(b.left - low)] += 1
        coverage[int(b.right - low) + 1] -= 1
    running = 0
    for x in range(len(coverage)):
        running += coverage[x]
        coverage[x] = running
    lo, hi = int(0.25 * width), int(0.75 * width)
    fewest = min(coverage[lo:hi + 1])
    if fewest > _CROSSING_SHARE * len(boxes):
        return None
    run = [x for x in range(lo, hi + 1) if coverage[x] == fewest]
    middle = run[len(run) // 2] + low
    left = sum(1 for b in boxes if b.right <= middle)
    right = sum(1 for b in boxes if b.left >= middle)
    if min(left, right) < _COLUMN_SHARE * len(boxes):
        return None
    return middle


def _side(box: Box, gutter: float) -> str:
    if box.right <= gutter:
        return "left"
    if box.left >= gutter:
        return "right"
    return "span"


def _middle(box: Box) -> float:
    return (box.bottom + box.top) / 2


def _lines(members: list[int], boxes: dict[int, Box]) -> list[list[int]]:
    """Segments of one column grouped into lines (top down, left to right)."""
    ordered = sorted(members, key=lambda i: (-boxes[i].top, boxes[i].left))
    lines: list[list[int]] = []
    for i in ordered:
        if lines:
            last = boxes[lines[-1][0]]
            if abs(_middle(boxes[i]) - _middle(last)) < 0.5 * (last.top - last.bottom):
                lines[-1].append(i)
                continue
        lines.append([i])
    for line in lines:
        line.sort(key=lambda i: boxes[i].left)
    return lines
