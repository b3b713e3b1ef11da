"""Content-Encoding decoders with bounded output (gzip, deflate, brotli).

httpx's own decoders cannot enforce a decoded-size cap: one chunk of a
``gzip, gzip`` bomb can expand to a gigabyte inside ``iter_bytes()``. These
decoders hand out at most ``CHUNK`` bytes at a time (zlib's ``max_length``,
brotli's ``output_buffer_limit``), so the caller counts as it goes and stops
at the cap with memory bounded by the cap, not by the bomb.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

from ..errors import CorruptContent, UnsupportedType

__all__ = ["ACCEPT_ENCODING", "CHUNK", "Decoder", "DecodingPipeline", "decoders_for"]

CHUNK = 64 * 1024  # most bytes one decode step hands out
ACCEPT_ENCODING = "gzip, deflate, br"


class Decoder(Protocol):
    def decode(self, data: bytes) -> Iterator[bytes]: ...
    def flush(self) -> Iterator[bytes]: ...


class _Identity:
    def decode(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data

    def flush(self) -> Iterator[bytes]:
        return iter(())


class _Zlib:
    """gzip (several members allowed) or deflate (zlib-wrapped, or raw as some servers send)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._wbits = 16 + zlib.MAX_WBITS if gzip else zlib.MAX_WBITS
        self._inflater = zlib.decompressobj(self._wbits)
        self._head = b""  # deflate: the first two bytes tell zlib-wrapped from raw
        self._started = gzip
        self._fed = False  # an empty body (HEAD, 204) is not a truncated one

    def decode(self, data: bytes) -> Iterator[bytes]:
        buffer = data
        self._fed = self._fed or bool(data)
        if not self._started:
            self._head += data
            if len(self._head) < 2:
                return
            buffer, self._head, self._started = self._head, b"", True
            cmf, flg = buffer[0], buffer[1]
            if cmf & 0x0F != 8 or (cmf * 256 + flg) % 31:  # no zlib header: raw deflate
                self._wbits = -zlib.MAX_WBITS
                self._inflater = zlib.decompressobj(self._wbits)
        while buffer:
            try:
                out = self._inflater.decompress(buffer, CHUNK)
            except zlib.error as exc:
                raise CorruptContent(f"the compressed body is damaged: {exc}") from exc
            if out:
                yield out
            buffer = self._inflater.unconsumed_tail
            if self._inflater.eof:
                rest = self._inflater.unused_data
                if not (self._gzip and rest.strip(b"\0")):
                    return  # trailing padding after the last member is ignored
                self._inflater = zlib.decompressobj(self._wbits)  # the next gzip member
                buffer = rest

    def flush(self) -> Iterator[bytes]:
        if self._head:  # a one-byte deflate body
            self._started = True
            yield from self.decode(b"")
        while True:
            out = self._inflater.decompress(b"", CHUNK)
            if not out:
                break
            yield out
        if self._fed and not self._inflater.eof:
            raise CorruptContent("the compressed body ends early (truncated)")


class _Brotli:
    def __init__(self) -> None:
        try:
            import brotli
        except ImportError as exc:  # pragma: no cover - brotli is a dependency
            raise UnsupportedType("the body is brotli-compressed and brotli is missing") from exc
        self._error = brotli.error
        self._decoder = brotli.Decompressor()
        self._fed = False

    def decode(self, data: bytes) -> Iterator[bytes]:
        self._fed = self._fed or bool(data)
        yield from self._drain(data)

    def _drain(self, data: bytes) -> Iterator[bytes]:
        # Output stops at about the limit while more may be pending, even when the
        # decoder says it "can accept more data" (all input consumed): ask again
        # with no input until nothing more comes.
        try:
            out = self._decoder.process(data, output_buffer_limit=CHUNK)
            while out:
                yield out
                out = self._decoder.process(b"", output_buffer_limit=CHUNK)
        except self._error as exc:
            raise CorruptContent(f"the brotli body is damaged: {exc}") from exc

    def flush(self) -> Iterator[bytes]:
        if self._fed:
            yield from self._drain(b"")
            if not self._decoder.is_finished():
                raise CorruptContent("the brotli body ends early (truncated)")


def decoders_for(content_encoding: str) -> list[Decoder]:
    """Decoders for a Content-Encoding header, in the order to apply them.

    ``gzip, br`` means gzip was applied first, so brotli is undone first.
    Raises UnsupportedType for a coding fetchledger did not ask for.
    """
    names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
    decoders: list[Decoder] = []
    for name in reversed(names):
        if name in ("gzip", "x-gzip"):
            decoders.append(_Zlib(gzip=True))
        elif name == "deflate":
            decoders.append(_Zlib(gzip=False))
        elif name == "br":
            decoders.append(_Brotli())
        elif name == "identity":
            decoders.append(_Identity())
        else:
            raise UnsupportedType(f"the body uses content-encoding {name!r}, which fetchledger "
                                  f"does not decode ({ACCEPT_ENCODING})")
    return decoders


class DecodingPipeline:
    """Raw body chunks in, decoded chunks out, through every decoder lazily.

    The caller feeds what it receives (sync or async alike) and iterates the
    output; each step holds at most one ``CHUNK`` per decoder in memory.
    """

    def __init__(self, content_encoding: str) -> None:
        self._decoders = decoders_for(content_encoding)

    def _pass(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._decoders):
            if data:
                yield data
            return
        for out in self._decoders[index].decode(data):
            yield from self._pass(index + 1, out)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Decoded output for one raw chunk."""
        yield from self._pass(0, data)

    def finish(self) -> Iterator[bytes]:
        """Whatever the decoders still hold once the raw body has ended."""
        for index, decoder in enumerate(self._decoders):
            for out in decoder.flush():
                yield from self._pass(index + 1, out)
