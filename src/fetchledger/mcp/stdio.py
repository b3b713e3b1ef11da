"""The stdio side of the server: what comes in that is no JSON-RPC message, what
goes out on the wire, and what happens when the client goes away."""

import fcntl
import io
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from fetchledger import kill_children, printable_json

__all__ = ["printable_wire", "relay_until_closed"]

_GONE_GRACE = 1.0  # seconds the calls of a client that went away have to finish


async def relay_until_closed(incoming: Any, relay: Any, outgoing: Any) -> None:
    """Hand the messages read from stdin to the server (``relay``); answer a line that
    was no message on ``outgoing`` at once. When stdin closes, kill the calls' child
    processes and end the process within :data:`_GONE_GRACE` seconds."""
    async with relay:
        async for message in incoming:
            if isinstance(message, Exception):  # the line was no JSON-RPC message
                await outgoing.send(SessionMessage(_unreadable(message)))
            else:
                await relay.send(message)
    kill_children()
    threading.Thread(target=_exit_after, args=(_GONE_GRACE,), daemon=True).start()


class _PrintableWire(io.TextIOWrapper):
    """The wire, each message written with the characters the display function escapes
    as JSON escapes (:func:`fetchledger.printable_json`): the SDK writes JSON with them
    raw (C1 controls, bidi overrides, invisible fillers from a page's title or text),
    which a terminal, a log viewer or a client showing the line would act on."""

    def write(self, text: str) -> int:
        return super().write(printable_json(text))


@contextmanager
def printable_wire() -> Iterator[anyio.AsyncFile[str]]:
    """The stdout of the SDK's stdio transport, written through :class:`_PrintableWire`.
    Meanwhile fd 1 points at stderr, as the SDK's own claim of stdout does, so that a
    call's stray output (a library printing, a child inheriting fd 1) misses the wire;
    it points at the wire again afterwards."""
    sys.stdout.flush()
    wire = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(2, 1)
    try:
        with _PrintableWire(io.FileIO(wire, "w", closefd=False), encoding="utf-8",
                            line_buffering=False, write_through=True) as text:
            yield anyio.wrap_file(text)
    finally:
        os.dup2(wire, 1)
        os.close(wire)


def _exit_after(seconds: float) -> None:
    """End the process after ``seconds`` unless it ended first (a call stuck in a thread
    cannot be cancelled; its work is not the client's any more)."""
    time.sleep(seconds)
    logging.shutdown()
    os._exit(0)


def _unreadable(error: Exception) -> JSONRPCError:
    """The answer to a line that is not JSON (-32700), or JSON that is no JSON-RPC
    message (-32600, with the request's id when it has one)."""
    problems = error.errors() if isinstance(error, ValidationError) else []
    invalid = [p for p in problems if p["type"] == "json_invalid"]
    given: Any = _lenient_json(invalid[0]["input"]) if invalid else None
    if not problems or (invalid and not isinstance(given, dict)):
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    if invalid:  # JSON the SDK's parser refuses, Python's reads: a lone surrogate escape
        return JSONRPCError(jsonrpc="2.0", id=_request_id(given), error=ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: the message is not Unicode text "
            "(a lone surrogate escape, U+D800 to U+DFFF)"))
    given = next((p["input"] for p in problems if isinstance(p["input"], dict)), {})
    return JSONRPCError(jsonrpc="2.0", id=_request_id(given),
                        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request"))


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lenient_json(line: object) -> object:
    """``line`` read by Python's JSON parser when it holds a surrogate escape (Python
    takes a lone one, the SDK's parser refuses it), else None."""
    if not isinstance(line, str) or not _SURROGATE_ESCAPE.search(line):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def _request_id(given: dict[str, Any]) -> int | str | None:
    request_id = given.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return request_id
