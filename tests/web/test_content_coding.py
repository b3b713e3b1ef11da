"""Bounded content decoding: gzip (several members), deflate (wrapped or raw), brotli."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from fetchledger.errors import CorruptContent, UnsupportedType
from fetchledger.net.decoding import CHUNK, DecodingPipeline

TEXT = ("At sea level, water boils at 100 °C. " * 400).encode()


def decode(data: bytes, coding: str, piece: int = 1000) -> bytes:
    pipeline = DecodingPipeline(coding)
    out = bytearray()
    for start in range(0, len(data), piece):
        for chunk in pipeline.feed(data[start : start + piece]):
            assert len(chunk) <= CHUNK
            out += chunk
    for chunk in pipeline.finish():
        out += chunk
    return bytes(out)


@pytest.mark.parametrize(("coding", "encode"), [
    ("gzip", gzip.compress),
    ("x-gzip", gzip.compress),
    ("deflate", zlib.compress),
    ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
    ("br", brotli.compress),
    ("identity", lambda b: b),
    ("", lambda b: b),
    ("gzip, br", lambda b: brotli.compress(gzip.compress(b))),
    ("br, gzip", lambda b: gzip.compress(brotli.compress(b))),
    ("gzip, gzip", lambda b: gzip.compress(gzip.compress(b))),
])
def test_round_trip(coding: str, encode: object) -> None:
    assert callable(encode)
    assert decode(encode(TEXT), coding) == TEXT
    assert decode(encode(TEXT), coding, piece=1) == TEXT


def test_gzip_with_several_members_decodes_all_of_them() -> None:
    assert decode(gzip.compress(b"one ") + gzip.compress(b"two"), "gzip") == b"one two"


def test_output_comes_in_bounded_chunks_even_from_one_tiny_input() -> None:
    bomb = gzip.compress(b"\0" * (8 * CHUNK), 9)
    pipeline = DecodingPipeline("gzip")
    sizes = [len(chunk) for chunk in pipeline.feed(bomb)]
    assert max(sizes) <= CHUNK
    assert sum(sizes) == 8 * CHUNK


def test_truncated_and_damaged_bodies_are_corrupt() -> None:
    with pytest.raises(CorruptContent, match=r"truncated"):
        decode(gzip.compress(TEXT)[:-20], "gzip")
    with pytest.raises(CorruptContent):
        decode(b"\x1f\x8b\x08\x00garbage-garbage-garbage", "gzip")
    with pytest.raises(CorruptContent):
        decode(brotli.compress(TEXT)[:-5], "br")


def test_unknown_coding_is_unsupported() -> None:
    with pytest.raises(UnsupportedType, match=r"zstd"):
        DecodingPipeline("zstd")


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "gzip, br"])
def test_an_empty_body_is_not_truncated(coding: str) -> None:
    assert decode(b"", coding) == b""
