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
) -> bytes:
    """PDF bytes. ``page_labels``: ``(first page index, style /D /r /R /a /A or
    None, prefix or None, first number)``. ``extra_objects`` are appended after
    the pages and numbered from ``first_extra_object(len(pages))``."""
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
            resources += f" {page.resources}"
            content = page.content
            page_compress = page.compress or compress
        else:
            content = text_content(page)
            page_compress = compress
        filters = page.filters if isinstance(page, RawPage) else ""
        contents = objects.add(stream(content, filters, compress=page_compress))
        objects.set(page_number, (
            f"<< /Type /Page /Parent {page_tree} 0 R /MediaBox [0 0 612 792] "
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
