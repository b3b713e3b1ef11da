"""Decompression bombs and giant pages from the loopback server, fetched by a child
process whose peak RSS and wall time are measured: every bomb stops at the decoded
cap (DESIGN §8: 50 MB) with memory bounded by the cap, not by the bomb (1 GiB).

``make hardening`` (FETCHLEDGER_HARDENING=1) runs the giant pages at full size.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import brotli
import pytest

from fetchledger import Limits
from fetchledger.net.client import HTTPClient
from fetchledger.text.passages import MAX_QUOTE

from .bombs import GIB, MIB, brotli_zeros, deflate_zeros, gib_bomb, gzip_zeros
from .webserver import LoopbackServer, Reply
from measured import HEAVY, record_figure, run_measured

DECODED_CAP = Limits().max_decoded_bytes
FETCH = """
import json, sys
from fetchledger import Ledger
from fetchledger.errors import FetchLedgerError
ledger_path, url = sys.argv[1:3]
with Ledger(ledger_path, allow_private=True) as ledger:
    try:
        got = ledger.fetch(url, query=sys.argv[3] if len(sys.argv) > 3 else None)
    except FetchLedgerError as error:
        print(json.dumps({"status": error.status, "message": error.message}))
        sys.exit(0)
    text = ledger.text(got.source.id)
    print(json.dumps({"status": "ok", "chars": len(text), "lines": text.count("\\n") + 1,
                      "quotes": [[s.start, s.end, s.quote] for s in got.snippets],
                      "verbatim": all(text[s.start:s.end] == s.quote for s in got.snippets)}))
"""


def test_the_bomb_builders_make_what_they_claim() -> None:
    """The hand-built deflate and brotli bodies are valid streams of exactly that many
    zero bytes (1 GiB under make hardening, 64 MiB here), decoded in bounded steps."""
    from fetchledger.net.decoding import DecodingPipeline

    size = GIB if HEAVY else 64 * MIB
    for coding, build in (("deflate", deflate_zeros), ("gzip", gzip_zeros),
                          ("br", brotli_zeros)):
        body = build(size)
        pipeline = DecodingPipeline(coding)
        total = sum(len(piece) for piece in pipeline.feed(body))
        total += sum(len(piece) for piece in pipeline.finish())
        assert total == size and len(body) < 2 * MIB


@pytest.mark.parametrize("coding", ["br", "gzip, br", "br, br"])
def test_a_large_brotli_page_decodes(web: LoopbackServer, coding: str) -> None:
    """brotli's decoder stops near the output limit with more output pending while it
    reports it "can accept more data": every page decoding to more than 64 KiB from
    one network read was refused as truncated (corrupt)."""
    page = "".join(f"Line {n}: the gauge at the north bank read {n % 97} cm.\n"
                   for n in range(40_000)).encode()
    body = page
    for name in coding.split(", "):
        body = gzip.compress(body) if name == "gzip" else brotli.compress(body, quality=5)
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/plain; charset=utf-8",
                                         "Content-Encoding": coding}, body)
    with HTTPClient(allow_private=True) as client:
        response = client.get(web.url("/mutable"))
    assert response.content == page and response.received == len(body)


def fetch_measured(web: LoopbackServer, tmp_path: Path, case: str, path: str = "/mutable",
                   query: str | None = None) -> tuple[dict[str, object], float, float]:
    args = [str(tmp_path / "l.db"), web.url(path)] + ([query] if query else [])
    run = run_measured(FETCH, *args)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    result = run.result()
    record_figure(case, run, status=result["status"])
    return result, run.peak_mib, run.cpu_seconds


@pytest.mark.parametrize("coding", ["gzip", "gzip (one member)", "deflate", "br", "gzip, gzip",
                                    "gzip, gzip (one member)", "gzip, br", "br, gzip",
                                    "deflate, deflate"])
def test_a_1_gib_bomb_stops_at_the_decoded_cap(web: LoopbackServer, tmp_path: Path,
                                               coding: str) -> None:
    body = gib_bomb(coding)
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html", "Content-Encoding":
                                         coding.removesuffix(" (one member)")}, body)
    result, peak, seconds = fetch_measured(web, tmp_path, f"bomb {coding}")
    assert result["status"] == "too_large", result
    assert f"decodes to over {DECODED_CAP:,} bytes" in str(result["message"])
    # the cap (50 MB) plus an interpreter, never the bomb (1,024 MiB)
    assert peak < 100 + 2 * DECODED_CAP / MIB, f"peak RSS {peak:.0f} MiB"
    assert seconds < 30
    from conftest import rows

    assert rows(tmp_path / "l.db", "SELECT count(*) FROM source") == [(0,)]
    assert rows(tmp_path / "l.db", "SELECT status FROM attempt") == [("too_large",)]


def _one_line_page(size: int) -> bytes:
    sentence = "The gauge at the north bank read high water again on day {n}. "
    parts, total, n = [], 0, 0
    while total < size:
        part = sentence.format(n=n)
        parts.append(part)
        total += len(part)
        n += 1
    return ("<html><head><title>One line</title></head><body><article><p>" + "".join(parts)
            + "</p><p>The last paragraph names the harbour master.</p></article></body></html>"
            ).encode()


def test_a_50_mb_page_is_refused_as_received(web: LoopbackServer, tmp_path: Path) -> None:
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html"}, b"x" * 50_000_000)
    result, peak, seconds = fetch_measured(web, tmp_path, "50 MB page, identity")
    assert result["status"] == "too_large"
    assert "announces 50,000,000 bytes" in str(result["message"])
    assert peak < 150 and seconds < 10


def test_a_single_line_page_over_the_decoded_cap_is_refused(web: LoopbackServer,
                                                           tmp_path: Path) -> None:
    body = gzip.compress(_one_line_page(60_000_000), 6)
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html",
                                         "Content-Encoding": "gzip"}, body)
    result, peak, seconds = fetch_measured(web, tmp_path, "60 MB one-line page, gzip")
    assert result["status"] == "too_large"
    assert peak < 100 + 2 * DECODED_CAP / MIB and seconds < 30


def test_a_single_line_page_under_the_caps_is_handled(web: LoopbackServer,
                                                      tmp_path: Path) -> None:
    """A 48 MB page whose text is one paragraph with no newline: decoded, extracted and
    registered; quotes verbatim, one line, at most 300 characters."""
    size = 48_000_000 if HEAVY else 6_000_000
    web.replies["mutable"] = Reply(200, {"Content-Type": "text/html",
                                         "Content-Encoding": "gzip"},
                                   gzip.compress(_one_line_page(size), 6))
    result, peak, seconds = fetch_measured(web, tmp_path, f"{size // 1_000_000} MB one-line "
                                           "page, gzip", query="harbour master")
    assert result["status"] == "ok", result
    assert result["verbatim"] is True and result["lines"] == 2
    quotes = result["quotes"]
    assert quotes[0][2] == "The last paragraph names the harbour master."  # type: ignore[index]
    assert all(len(q) <= MAX_QUOTE and "\n" not in q for _, _, q in quotes)  # type: ignore[attr-defined]
    # the body, its text, lxml's tree, trafilatura's copies, passages and their tokens
    assert peak < 150 + 30 * size / MIB, f"peak RSS {peak:.0f} MiB"
    assert seconds < (180 if HEAVY else 60)


def test_figures_record_json(tmp_path: Path) -> None:
    """record_figure writes one JSON line per case when make hardening asks for it."""
    import measured

    figures = tmp_path / "figures.jsonl"
    run = measured.Measured(0, "{}", "", 12.5, 0.25, 0.2)
    original = measured.FIGURES
    measured.FIGURES = str(figures)
    try:
        measured.record_figure("case", run, size=3)
    finally:
        measured.FIGURES = original
    assert json.loads(figures.read_text()) == {"case": "case", "peak_mib": 12.5,
                                               "seconds": 0.25, "cpu_seconds": 0.2,
                                               "size": 3}
