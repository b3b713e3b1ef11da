"""Reading order of a page's text segments: columns before rows.

A text engine hands out a page in drawing order. Most producers draw a column
to its end before the next (pdfTeX does), but some draw a two-column page row
by row, and then line 1 of the left column is followed by line 1 of the right
one: sentences of the two columns interleave. :func:`column_order` looks at
the boxes of the page's text segments (one per line piece, in drawing order)
and, when they stand in two columns with a gutter between them *and* the
drawing order keeps jumping between the columns, gives the segments in reading
order instead: full-width segments (a title, a figure caption) split the page
into blocks, and each block is read left column first.
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
    if len(usable) < _MIN_SEGMENTS:
        return None
    gutter = _gutter([boxes[i] for i in usable])
    if gutter is None:
        return None
    side = {i: _side(boxes[i], gutter) for i in usable}
    sides = [side[i] for i in usable if side[i] != "span"]
    jumps = sum(1 for a, b in itertools.pairwise(sides) if a != b)
    spans = sorted((i for i in usable if side[i] == "span"), key=lambda i: -_middle(boxes[i]))
    if jumps <= 2 * (len(spans) + 1):
        return None  # column by column already
    lines: list[list[int]] = []
    for block in range(len(spans) + 1):
        if block:
            lines.append([spans[block - 1]])
        above = _middle(boxes[spans[block - 1]]) if block else float("inf")
        below = _middle(boxes[spans[block]]) if block < len(spans) else float("-inf")
        for column in ("left", "right"):
            members = [i for i in usable if side[i] == column
                       and below < _middle(boxes[i]) <= above]
            lines.extend(_lines(members, boxes))
    return lines


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


def _lines(members: list[int], boxes: Sequence[Box]) -> list[list[int]]:
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
