"""A tiny PDF writer for tests: real PDF bytes, authored here, no corpus needed.

Each page is a list of text lines (drawn top-down in Helvetica), raw content
bytes, or an :class:`ImagePage` (an image and no text: what a scan looks like).
Page labels, document info and extra objects (for hostile files) are optional.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ImagePage:
    """A page that draws one grey image and holds no text."""

    width: int = 8
    height: int = 8


@dataclass(frozen=True)
class RawPage:
    """A page with this content stream and these extra resources (PDF source text)."""

    content: bytes
    resources: str = ""
    compress: bool = False
    filters: str = ""  # e.g. " /Filter /FlateDecode" when ``content`` is already encoded


Page = Sequence[str] | ImagePage | RawPage


@dataclass
class _Objects:
    bodies: list[bytes] = field(default_factory=list)

    def reserve(self) -> int:
        self.bodies.append(b"")
        return len(self.bodies)

    def set(self, number: int, body: bytes | str) -> None:
        self.bodies[number - 1] = body.encode("latin-1") if isinstance(body, str) else body

    def add(self, body: bytes | str) -> int:
        number = self.reserve()
        self.set(number, body)
        return number


def pdf_string(text: str) -> str:
    """A PDF literal string (text in the WinAnsi encoding)."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"({escaped})"


def stream(data: bytes, extra: str = "", *, compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data)
        extra = f"{extra} /Filter /FlateDecode"
    return (f"<< /Length {len(data)}{extra} >>\nstream\n".encode("latin-1") + data
            + b"\nendstream")


def text_content(lines: Sequence[str], *, size: int = 11, leading: int = 14) -> bytes:
    ops = [f"BT /F1 {size} Tf {leading} TL 72 760 Td"]
    for line in lines:
        ops.append(f"{pdf_string(line)} Tj T*")
    ops.append("ET")
    return "\n".join(ops).encode("cp1252")  # the font's WinAnsiEncoding


def make_pdf(
    pages: Sequence[Page],
    *,
    title: str | None = None,
    author: str | None = None,
    page_labels: Sequence[tuple[int, str | None, str | None, int]] = (),
    extra_objects: Sequence[str | bytes] = (),
    compress: bool = False,
    rotate: int = 0,
) -> bytes:
    """PDF bytes. ``page_labels``: ``(first page index, style /D /r /R /a /A or
    None, prefix or None, first number)``. ``extra_objects`` are appended after
    the pages and numbered from ``first_extra_object(len(pages))``; ``rotate`` sets
    every page's ``/Rotate``."""
    objects = _Objects()
    catalog = objects.reserve()
    page_tree = objects.reserve()
    font = objects.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                       "/Encoding /WinAnsiEncoding >>")
    kids: list[int] = []
    for page in pages:
        page_number = objects.reserve()
        kids.append(page_number)
        resources = f"/Font << /F1 {font} 0 R >>"
        if isinstance(page, ImagePage):
            pixels = bytes(i % 256 for i in range(page.width * page.height))
            image = objects.add(stream(
                pixels,
                f" /Type /XObject /Subtype /Image /Width {page.width} /Height {page.height}"
                " /ColorSpace /DeviceGray /BitsPerComponent 8"))
            resources += f" /XObject << /Im1 {image} 0 R >>"
            content = b"q 400 0 0 400 100 300 cm /Im1 Do Q"
            page_compress = compress
        elif isinstance(page, RawPage):
            # a page that brings its own /Font dictionary replaces the default one
            resources = (page.resources if "/Font" in page.resources
                         else f"{resources} {page.resources}")
            content = page.content
            page_compress = page.compress or compress
        else:
            content = text_content(page)
            page_compress = compress
        filters = page.filters if isinstance(page, RawPage) else ""
        contents = objects.add(stream(content, filters, compress=page_compress))
        rotation = f"/Rotate {rotate} " if rotate else ""
        objects.set(page_number, (
            f"<< /Type /Page /Parent {page_tree} 0 R /MediaBox [0 0 612 792] {rotation}"
            f"/Resources << {resources} >> /Contents {contents} 0 R >>"))
    for extra in extra_objects:
        objects.add(extra)
    kid_refs = " ".join(f"{k} 0 R" for k in kids)
    objects.set(page_tree, f"<< /Type /Pages /Kids [{kid_refs}] /Count {len(kids)} >>")
    catalog_body = f"<< /Type /Catalog /Pages {page_tree} 0 R"
    if page_labels:
        nums = []
        for index, style, prefix, start in page_labels:
            entry = "<<"
            if style:
                entry += f" /S {style}"
            if prefix:
                entry += f" /P {pdf_string(prefix)}"
            entry += f" /St {start} >>"
            nums.append(f"{index} {entry}")
        catalog_body += f" /PageLabels << /Nums [{' '.join(nums)}] >>"
    objects.set(catalog, catalog_body + " >>")
    info = None
    if title is not None or author is not None:
        parts = []
        if title is not None:
            parts.append(f"/Title {pdf_string(title)}")
        if author is not None:
            parts.append(f"/Author {pdf_string(author)}")
        info = objects.add(f"<< {' '.join(parts)} >>")
    return _serialize(objects.bodies, catalog, info)


def first_extra_object(page_count: int, image_pages: int = 0) -> int:
    """The object number of the first of ``extra_objects`` (see :func:`make_pdf`)."""
    return 3 + 2 * page_count + image_pages + 1


def _serialize(bodies: Sequence[bytes], root: int, info: int | None) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(bodies) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    trailer = f"<< /Size {len(bodies) + 1} /Root {root} 0 R"
    if info is not None:
        trailer += f" /Info {info} 0 R"
    out.write(f"trailer\n{trailer} >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def encrypt(pdf: bytes, password: str, *, algorithm: str = "AES-256") -> bytes:
    """The same PDF encrypted with pypdf's writer (user password ``password``)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=password, owner_password=password + "-owner",
                   algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def fanout_pdf(depth: int, *, fan: int = 4, leaf_ops: int = 1) -> bytes:
    """A hostile PDF: one page draws a form that draws the next form ``fan`` times,
    ``depth`` levels down, so a few kilobytes make a text extractor do
    ``fan ** depth`` drawing calls (pypdf stops counting at 5,000 forms, but each
    leaf still shows ``leaf_ops`` strings)."""
    first = first_extra_object(1)
    forms: list[bytes] = []
    for level in range(depth):
        if level < depth - 1:
            content = f"/X{level + 1} Do ".encode() * fan
            child = first + level + 1
            resources = f"/XObject << /X{level + 1} {child} 0 R >> /Font << /F1 3 0 R >>"
        else:
            content = b"BT /F1 9 Tf 10 10 Td " + b"(leaf words here) Tj T* " * leaf_ops + b"ET"
            resources = "/Font << /F1 3 0 R >>"
        forms.append(stream(content, " /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                                     f"/Resources << {resources} >>", compress=True))
    return make_pdf([RawPage(b"/X0 Do", f"/XObject << /X0 {first} 0 R >>")],
                    extra_objects=forms)


def flate_bomb_pdf(expanded: int) -> bytes:
    """A PDF whose one content stream inflates from a few kilobytes to ``expanded`` bytes."""
    packer = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    parts = [packer.compress(chunk) for _ in range(expanded // len(chunk))]
    parts.append(packer.flush())
    return make_pdf([RawPage(b"".join(parts), filters=" /Filter /FlateDecode")])


def mapped_font_pdf(before: Sequence[Page], mapping: dict[int, str], content: bytes) -> bytes:
    """``before`` and then a page drawn with font ``/F9``, a Helvetica whose
    ``/ToUnicode`` maps each byte code in ``mapping`` to its string (a string of
    several characters is one glyph that stands for them all, as shapers write
    Arabic words). ``content`` is the page's content stream; ``/F1`` is plain
    Helvetica there too."""
    first = first_extra_object(len(before) + 1)
    pairs = "\n".join(f"<{code:02X}> <{''.join(f'{ord(ch):04X}' for ch in text)}>"
                      for code, text in mapping.items())
    cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            "1 begincodespacerange <00> <FF> endcodespacerange\n"
            f"{len(mapping)} beginbfchar\n{pairs}\nendbfchar\n"
            "endcmap CMapName currentdict /CMap defineresource pop end end").encode()
    font = (f"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding "
            f"/ToUnicode {first + 1} 0 R >>")
    page = RawPage(content, f"/Font << /F1 3 0 R /F9 {first} 0 R >>")  # one /Font entry
    return make_pdf([*before, page], extra_objects=[font, stream(cmap)])


def mojibake_pdf(before: Sequence[Page], text: str) -> bytes:
    """``before`` and then a page whose font maps every glyph to a private-use code point
    (a broken ``/ToUnicode``, as in PDFs that subset fonts without a usable map): every
    engine reads nonsense there."""
    mapping = {code: chr(0xE000 + code) for code in range(0x20, 0x7F)}
    content = f"BT /F9 12 Tf 72 700 Td {pdf_string(text)} Tj ET".encode("latin-1")
    return mapped_font_pdf(before, mapping, content)


def without_startxref(pdf: bytes) -> bytes:
    """The same PDF without its cross-reference table and ``startxref`` (the trailer
    kept): pypdf refuses it ("startxref not found"), a reader that rebuilds the table
    from the objects reads it."""
    head, trailer = pdf[: pdf.rindex(b"xref\n0 ")], pdf[pdf.rindex(b"trailer"):]
    return head + trailer[: trailer.index(b"startxref")] + b"%%EOF\n"


def wordy_pdf(pages: int, lines: int = 60) -> bytes:
    """Many pages of distinct lines (about 3 kB of text per page at 60 lines)."""
    return make_pdf([[f"Line {n} of page {p} holds a few plain words of text." for n in
                      range(lines)] for p in range(pages)])


_PAPER_WORDS = """analysis approach baseline behaviour between boundary calibration careful
channel climate coastal collected compared condition consistent constant current data
dataset decade density depth detection difference direction distance distribution
during effect estimate evidence experiment field figure flow frequency gauge growth
higher estimates independent instrument interval lake larger layer level linear
lower measured measurement method model monitoring network observed occurrence
pattern period physical pressure procedure profile rainfall range rate recorded
region relation remained repeated reported result river sample sampling seasonal
sediment sensor series signal similar site slope spatial station stream surface
survey temperature temporal threshold trend uncertainty upstream validation value
variation velocity volume water weekly winter yearly""".split()
_PAPER_GLUE = "the a of in on at for with and from by over under across".split()


def paper_sentences(count: int, seed: int = 7) -> list[str]:
    """Plain prose sentences (deterministic for a seed) for authored papers."""
    import random

    rng = random.Random(seed)
    sentences = []
    for _ in range(count):
        words = []
        for position in range(rng.randint(9, 24)):
            pool = _PAPER_GLUE if position % 3 == 1 else _PAPER_WORDS
            words.append(rng.choice(pool))
            if position > 3 and rng.random() < 0.08:
                words[-1] += ","
        words[-1] = words[-1].rstrip(",")
        sentences.append(" ".join(words).capitalize() + ".")
    return sentences


def paper_pdf(pages: int, *, interleaved: bool = False, seed: int = 7) -> tuple[bytes, list[str]]:
    """A two-column paper as pdfTeX writes one (Times, words placed with kerning
    arrays and no space glyphs, section headings, words hyphenated at line ends,
    page numbers in the footer) and its sentences that lie whole on one page, in
    reading order.

    ``interleaved`` draws the columns row by row (line 1 of the left column, line 1
    of the right one, ...), as some word processors do: the drawing order is then
    no longer the reading order."""
    per_column, chars_per_line = 54, 46
    sentences = paper_sentences(pages * 2 * per_column // 2, seed)
    lines: list[tuple[str, str]] = []  # (font, text) in reading order
    paragraph: list[str] = []
    section = 0
    for index, sentence in enumerate(sentences):
        paragraph.append(sentence)
        if len(paragraph) < 4 + index % 3:
            continue
        if index % 11 == 0:
            section += 1
            lines.append(("F2", f"{section} Section {section}"))
        lines.extend(("F1", line) for line in _wrap(" ".join(paragraph), chars_per_line))
        paragraph = []
    content_pages: list[RawPage] = []
    fonts = "/Font << /F1 {r} 0 R /F2 {b} 0 R >>"
    for number in range(pages):
        columns = [lines[(2 * number + c) * per_column:(2 * number + c + 1) * per_column]
                   for c in range(2)]
        placed = [(c, row, font, text) for c, column in enumerate(columns)
                  for row, (font, text) in enumerate(column)]
        if interleaved:
            placed.sort(key=lambda item: (item[1], item[0]))
        ops = []
        for c, row, font, text in placed:
            x, y = 54 + c * 264, 740 - row * 12
            ops.append(f"BT /{font} 10 Tf 1 0 0 1 {x} {y} Tm {_tj(text)} TJ ET")
        ops.append(f"BT /F1 10 Tf 1 0 0 1 300 30 Tm ({number + 1}) Tj ET")
        content_pages.append(RawPage("\n".join(ops).encode("cp1252"), fonts, compress=True))
    first = first_extra_object(pages)
    for page in content_pages:
        object.__setattr__(page, "resources", fonts.format(r=first, b=first + 1))
    data = make_pdf(content_pages, extra_objects=[
        "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman /Encoding /WinAnsiEncoding >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Times-Bold /Encoding /WinAnsiEncoding >>"])
    per_page = [_unhyphenated(" ".join(text for _, text in
                                       lines[2 * n * per_column:2 * (n + 1) * per_column]))
                for n in range(pages)]
    return data, [s for s in sentences if any(s in page for page in per_page)]


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters; a long word that does not fit is
    hyphenated after its first half."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            room = width - len(line) - 2
            if len(word) >= 8 and room >= 4:
                cut = min(room, len(word) // 2)
                lines.append(f"{line} {word[:cut]}-")
                line = word[cut:]
                continue
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def _unhyphenated(text: str) -> str:
    import re

    return re.sub(r"(\w)- (?=[a-z])", r"\1", text)


def _tj(line: str) -> str:
    """A pdfTeX-style kerning array: words as strings, spaces as -333 kerns, a kern
    inside some words."""
    parts = []
    for word in line.split(" "):
        if len(word) > 5:
            parts.append(f"{pdf_string(word[:2])}28{pdf_string(word[2:])}")
        else:
            parts.append(pdf_string(word))
    return "[" + "-333".join(parts) + "]"
