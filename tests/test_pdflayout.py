"""Reading order from segment boxes: two columns drawn row by row are read column by
column; pages already in order, or without columns, are left alone."""

from __future__ import annotations

from fetchledger.adapters.pdflayout import Box, column_order


def rows(count: int, *, top: float = 700, lefts: tuple[float, ...] = (54, 318)) -> list[Box]:
    """Lines of two columns, drawn row by row (left line, right line, next row)."""
    return [Box(left, top - 12 * row - 9, left + 230, top - 12 * row)
            for row in range(count) for left in lefts]


def test_columns_drawn_row_by_row_are_read_column_by_column() -> None:
    boxes = rows(6)
    assert column_order(boxes) == [[0], [2], [4], [6], [8], [10], [1], [3], [5], [7], [9], [11]]


def test_columns_drawn_column_by_column_keep_their_order() -> None:
    boxes = rows(6)
    by_column = [b for b in boxes if b.left < 300] + [b for b in boxes if b.left > 300]
    assert column_order(by_column) is None


def test_one_column_and_short_pages_keep_their_order() -> None:
    assert column_order([Box(54, 700 - 12 * i, 560, 709 - 12 * i) for i in range(20)]) is None
    assert column_order(rows(2)) is None  # too few segments to tell


def test_a_full_width_title_splits_the_page_into_blocks() -> None:
    above, title, below = rows(4, top=740), Box(54, 680, 548, 692), rows(4, top=660)
    boxes = [*above, title, *below]
    order = column_order(boxes)
    assert order is not None
    flat = [i for line in order for i in line]
    assert flat == [0, 2, 4, 6, 1, 3, 5, 7, 8, 9, 11, 13, 15, 10, 12, 14, 16]


def test_pieces_of_one_line_stay_one_line_left_to_right() -> None:
    boxes = rows(6)
    boxes[0:1] = [Box(150, 691, 284, 700), Box(54, 691, 148, 700)]  # line 1 drawn in two pieces
    order = column_order(boxes)
    assert order is not None and order[0] == [1, 0]


def test_words_of_full_lines_are_never_two_columns() -> None:
    """An OCR layer draws every word on its own, with the gaps between words lined up
    from line to line; lines beside a figure stop halfway. None of it is columns."""
    def words(top: float, count: int) -> list[Box]:
        return [Box(54 + 44 * k, top - 9, 94 + 44 * k, top) for k in range(count)]

    boxes = [box for row in range(24)
             for box in words(740 - 12 * row, 6 if 8 <= row < 16 else 11)]
    assert column_order(boxes) is None
