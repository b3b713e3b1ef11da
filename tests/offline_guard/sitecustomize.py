"""Loaded into every interpreter an offline test starts (their PYTHONPATH holds this
folder; batch workers inherit it): an audit hook writes every network socket opened,
every connect and every name lookup to the file named by $FETCHLEDGER_TEST_SOCKETS.
An offline run must leave that file empty.

Not written: Unix sockets and socket pairs (event loops wake themselves with them),
and the one socket urllib3 (imported by trafilatura) makes when it is imported, to
learn whether the machine has IPv6: it binds it to ::1 and closes it, nothing is sent
(``urllib3.util.connection._has_ipv6``). Any other network socket is written."""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

_LOG = os.environ.get("FETCHLEDGER_TEST_SOCKETS", "")
_NETWORK = (socket.AF_INET, socket.AF_INET6)


def _write(line: str) -> None:
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {line}\n")


def _ipv6_probe() -> bool:
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_name == "_has_ipv6" and "urllib3" in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.__new__" and len(args) > 1 and args[1] in _NETWORK:
        if not _ipv6_probe():
            _write(f"socket family={args[1]!r} type={args[2]!r}")
    elif event in ("socket.getaddrinfo", "socket.gethostbyname"):
        _write(f"{event} {args[0]!r}")
    elif event in ("socket.connect", "socket.sendto", "socket.bind"):
        address = args[1]
        if isinstance(address, tuple) and (event != "socket.bind" or address[0] != "::1"):
            _write(f"{event} {address!r}")


if _LOG:
    open(_LOG, "a").close()  # its existence proves the hook was loaded
    sys.addaudithook(_audit)
