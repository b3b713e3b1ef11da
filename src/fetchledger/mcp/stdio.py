"""The stdio side of the server: what comes in that is no JSON-RPC message, and what
happens when the client goes away."""

import logging
import os
import threading
import time
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from fetchledger import kill_children

__all__ = ["relay_until_closed"]

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
    if not problems or any(p["type"] == "json_invalid" for p in problems):
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    given = next((p["input"] for p in problems if isinstance(p["input"], dict)), {})
    request_id = given.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        request_id = None
    return JSONRPCError(jsonrpc="2.0", id=request_id,
                        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request"))
