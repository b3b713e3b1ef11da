"""Decompression bombs for the hardening tests and benchmarks, built in milliseconds.

Each decodes to ``size`` zero bytes (1 GiB in the tests) from about a megabyte.
Deflate streams are built from one compressed MiB that ends in a full flush
(byte-aligned, no back references), repeated: a valid stream of that many MiB
without compressing a gigabyte.
"""

from __future__ import annotations

import gzip
import zlib
from functools import cache

import brotli

from .webserver import bomb

MIB = 1 << 20
GIB = 1 << 30


def _raw_deflate_zeros(size: int) -> tuple[bytes, bytes]:
    """(the repeated segments, the closing empty block) of a raw deflate stream."""
    chunk = bytes(MIB)
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    segment = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()
    return segment * (size // MIB), final


def deflate_zeros(size: int) -> bytes:
    """A zlib-wrapped deflate stream (``Content-Encoding: deflate``)."""
    body, final = _raw_deflate_zeros(size)
    checksum = 1
    for _ in range(size // MIB):
        checksum = zlib.adler32(bytes(MIB), checksum)
    return b"\x78\xda" + body + final + checksum.to_bytes(4, "big")


def gzip_zeros(size: int) -> bytes:
    """One gzip member (httpx's own gzip decoder reads only the first member)."""
    body, final = _raw_deflate_zeros(size)
    crc = 0
    for _ in range(size // MIB):
        crc = zlib.crc32(bytes(MIB), crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + body + final + crc.to_bytes(4, "little") + (size % (1 << 32)).to_bytes(
        4, "little")


def brotli_zeros(size: int) -> bytes:
    packer = brotli.Compressor(quality=1)
    chunk = bytes(MIB)
    return b"".join(packer.process(chunk) for _ in range(size // MIB)) + packer.finish()


@cache
def gib_bomb(coding: str) -> bytes:
    """A body that decodes to 1 GiB through ``Content-Encoding: coding`` (a coding
    named "... (one member)" is gzip with one member rather than 1,024)."""
    bodies = {
        "gzip": lambda: bomb("gzip"),  # 1,024 gzip members of 1 MiB of zeros each
        "gzip (one member)": lambda: gzip_zeros(GIB),
        "deflate": lambda: deflate_zeros(GIB),
        "br": lambda: brotli_zeros(GIB),
        "gzip, gzip": lambda: bomb("gzip-gzip"),
        "gzip, gzip (one member)": lambda: gzip.compress(gzip_zeros(GIB)),
        "gzip, br": lambda: brotli.compress(bomb("gzip")),  # gzip first, then brotli
        "br, gzip": lambda: gzip.compress(brotli_zeros(GIB)),
        "deflate, deflate": lambda: zlib.compress(deflate_zeros(GIB), 9),
    }
    return bodies[coding]()
