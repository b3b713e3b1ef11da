"""Sources registered straight into a test ledger for the write-side tests (no network).

Ids: [1] a web page, [2] a paged PDF report, [3] a German web page,
[4] command output, [5] an HTTP POST response (JSON), [6] a plain text file.
"""

from __future__ import annotations

from fetchledger import Document, Ledger, Page

BOILING = "\n".join([
    "Boiling point",
    "The boiling point of a liquid is the temperature at which its vapour pressure equals "
    "the surrounding pressure.",
    "At sea level, water boils at 100 °C (212 °F).",
    "On the summit of Mount Everest, at 8,849 metres, water boils at about 70 °C.",
    "The measurement was published on 3 March 2021.",
])

REPORT_LINES = [
    "Cooking at altitude",
    "A pressure cooker raises the boiling point to about 120 °C.",
    "Beans cook in 35 minutes instead of 2 hours.",
    "The U.S. Forest Service recommends 15 psi for canning above 1,000 feet.",
]

GERMAN = "\n".join([
    "Der Siedepunkt von Wasser liegt auf Meereshöhe bei 100 °C.",
    "Auf der Zugspitze siedet Wasser bei etwa 90 °C.",
])


def report_document() -> Document:
    """Four lines on three physical pages; page 3 is printed as "iii"."""
    text = "\n".join(REPORT_LINES)
    starts = [0]
    for line in REPORT_LINES[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    pages = (
        Page(starts[0], starts[1] - 1, 1),
        Page(starts[1], starts[2] - 1, 2),
        Page(starts[2], len(text), 3, "iii"),
    )
    return Document(kind="file", locator="/data/altitude_report.pdf",
                    display="/data/altitude_report.pdf", text=text, raw=b"%PDF-1.7 fake",
                    title="Cooking at altitude", pages=pages,
                    meta={"content_type": "application/pdf", "pages": 3},
                    extractor="test", extractor_version="1")


def seed(ledger: Ledger) -> None:
    """Register the six test sources and hand out a few quotes."""
    ledger.register(Document(
        kind="web", locator="https://example.org/boiling", display="https://example.org/boiling",
        text=BOILING, raw=b"<html><body>" + BOILING.encode() + b"</body></html>",
        title="Boiling point", site="Example Encyclopedia", date="2021-03-03",
        author="A. Writer", meta={"status": 200, "content_type": "text/html; charset=utf-8",
                                  "final_url": "https://example.org/boiling"},
        extractor="test", extractor_version="1"), query="Everest sea level")
    ledger.register(report_document(), query="pressure cooker beans canning", k=3)
    ledger.register(Document(
        kind="web", locator="https://example.de/siedepunkt",
        display="https://example.de/siedepunkt", text=GERMAN, raw=GERMAN.encode(),
        title="Siedepunkt", meta={"status": 200, "content_type": "text/html"},
        extractor="test", extractor_version="1"))
    ledger.register(Document(
        kind="command", locator='["python3", "--version"] in /work',
        display="python3 --version (in /work)", text="Python 3.11.9", raw=b"Python 3.11.9\n",
        meta={"command_line": "python3 --version", "exit_code": 0, "cwd": "/work"},
        extractor="command", extractor_version="1"))
    ledger.register(Document(
        kind="http", locator="POST https://api.example.org/v1/boil",
        display="POST https://api.example.org/v1/boil",
        text='{"altitude_m": 3000, "boiling_c": 89.9}',
        raw=b'{"altitude_m": 3000, "boiling_c": 89.9}',
        meta={"status": 201, "content_type": "application/json"},
        extractor="json", extractor_version="1"))
    ledger.register(Document(
        kind="file", locator="/notes/field_notes.txt", display="/notes/field_notes.txt",
        text="Field notes\nAt the camp the kettle boiled at 86 °C on 12 May 2023.",
        raw=b"Field notes\nAt the camp the kettle boiled at 86 \xc2\xb0C on 12 May 2023.\n",
        meta={"content_type": "text/plain"}, extractor="text", extractor_version="1"))
