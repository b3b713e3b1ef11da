"""Numbers, dates and quantities: the figures a cited sentence must take from its sources.

A figure is a number as written, with thousands separators removed and a
decimal comma read as a point (``8,849`` -> ``8849``, ``3,5`` -> ``3.5``);
no unit conversion and no rounding. A date (``2023-05-01``, ``1 May 2023``,
``May 1, 2023``, ``May 2023``) is compared as a date, so a source may write
it in another of these forms. Numbers glued to letters before them
(``COVID-19``, ``H2O``, ``A4``) are names, not figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Figure", "SourceFigures", "figures_in", "source_figures"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
         ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
         ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
         ("december", "dec")], start=1)
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DATE_PATTERNS = [
    re.compile(r"(?<!\d)(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)"),
    re.compile(r"(?<!\d)(?P<year>\d{4})/(?P<month>\d{1,2})/(?P<day>\d{1,2})(?!\d)"),
    re.compile(rf"(?<![\w]){_DAY}\.?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    re.compile(rf"(?<![\w]){_MONTH}\s+{_DAY},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    re.compile(rf"(?<![\w]){_MONTH},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
]
# Source-side only: day.month.year and the two readings of a/b/year.
_SOURCE_DATE_PATTERNS = [
    re.compile(r"(?<![\d.])(?P<day>\d{1,2})\.(?P<month>\d{1,2})\.(?P<year>\d{4})(?!\d)"),
    re.compile(r"(?<![\d/])(?P<month>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4})(?!\d)"),
    re.compile(r"(?<![\d/])(?P<day>\d{1,2})/(?P<month>\d{1,2})/(?P<year>\d{4})(?!\d)"),
]
# Source-side only: a day and month without a year ("on April 9th", "7 May"); such a
# date holds a draft's full date when the year appears in the source as well.
_YEARLESS_PATTERNS = [
    re.compile(rf"(?<![\w]){_MONTH}\s+{_DAY}(?![\d,]|,?\s+\d{{4}})", re.IGNORECASE),
    re.compile(rf"(?<![\w]){_DAY}\s+(?:of\s+)?{_MONTH}(?!,?\s+\d{{4}})", re.IGNORECASE),
]
_SEPARATORS = ",\u00a0\u202f\u2009'’"
_NUMBER = re.compile(
    r"(?<![\w.,])(?:\d{1,3}(?:[" + _SEPARATORS + r"]\d{3})+(?:\.\d+)?(?![\d]|[,.]\d)"
    r"|\d+(?:[.,]\d+)?(?![\d]|[,.]\d))"
)


@dataclass(frozen=True)
class Figure:
    """A figure found in text: ``text[start:end]`` as written and its comparable form."""

    start: int
    end: int
    written: str
    value: str  # a normalized number, or an ISO-like date "2023-05-01" / "2023-05"
    is_date: bool


def _number_value(written: str) -> str:
    if re.search(r"[" + _SEPARATORS + r"]\d{3}(?!\d)", written) and (
            re.fullmatch(r"\d{1,3}(?:[" + _SEPARATORS + r"]\d{3})+(?:\.\d+)?", written)):
        return re.sub("[" + _SEPARATORS + "]", "", written)
    return written.replace(",", ".")


def _date_value(match: re.Match[str]) -> str | None:
    month_text = match.group("month")
    month = int(month_text) if month_text.isdigit() else _MONTHS[month_text.lower().rstrip(".")]
    year = int(match.group("year"))
    day = int(match.group("day")) if "day" in match.groupdict() and match.group("day") else 0
    if not 1 <= month <= 12 or day > 31:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if day else f"{year:04d}-{month:02d}"


def _glued_to_word(text: str, start: int) -> bool:
    """``COVID-19``, ``H2O``: a number right after letters (or letters and a hyphen)."""
    if start == 0:
        return False
    before = text[start - 1]
    if _cased(before):
        return True
    return before in "-‐‑" and start >= 2 and _cased(text[start - 2])


def _cased(char: str) -> bool:
    """A letter of a script with case (Latin, Greek, Cyrillic...): CJK text writes
    figures right after its letters, with no space, and they are still figures."""
    return char.isupper() or char.islower()


def figures_in(text: str) -> list[Figure]:
    """The figures of a piece of draft text, in order: dates first claim their digits."""
    found: list[Figure] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            value = _date_value(match)
            if value is None:
                continue
            taken.append(match.span())
            found.append(Figure(match.start(), match.end(), match.group(0), value, True))
    for match in _NUMBER.finditer(text):
        if any(a <= match.start() < b for a, b in taken) or _glued_to_word(text, match.start()):
            continue
        found.append(Figure(match.start(), match.end(), match.group(0),
                            _number_value(match.group(0)), False))
    found.sort(key=lambda f: f.start)
    return found


@dataclass(frozen=True)
class SourceFigures:
    """Every number and date a source's stored text holds, in comparable form."""

    numbers: frozenset[str]
    dates: frozenset[str]  # "YYYY-MM-DD", "YYYY-MM" (every full date also as its month),
    # and "--MM-DD" for a day and month written without a year

    def holds(self, figure: Figure) -> bool:
        if not figure.is_date:
            return figure.value in self.numbers
        if figure.value in self.dates:
            return True
        year, month_day = figure.value[:4], figure.value[4:]
        if year not in self.numbers:
            return False
        if len(month_day) == 6:  # -MM-DD: the day and month without a year, and the year
            return f"-{month_day}" in self.dates
        return any(d.startswith(f"-{month_day}-") for d in self.dates if d.startswith("--"))


def source_figures(text: str) -> SourceFigures:
    numbers: set[str] = set()
    for match in _NUMBER.finditer(text):
        numbers.add(_number_value(match.group(0)))
        numbers.add(match.group(0))
    dates: set[str] = set()
    for pattern in (*_DATE_PATTERNS, *_SOURCE_DATE_PATTERNS):
        for match in pattern.finditer(text):
            value = _date_value(match)
            if value:
                dates.add(value)
                dates.add(value[:7])
    for pattern in _YEARLESS_PATTERNS:
        for match in pattern.finditer(text):
            month = _MONTHS[match.group("month").lower().rstrip(".")]
            day = int(match.group("day"))
            if 1 <= day <= 31:
                dates.add(f"--{month:02d}-{day:02d}")
    return SourceFigures(frozenset(numbers), frozenset(dates))
