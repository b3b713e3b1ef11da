"""Loaded into the MCP server subprocesses the tests start (their PYTHONPATH holds this
folder): a socket connect to anything but loopback fails before a packet leaves, and
is written to the file named by $FETCHLEDGER_TEST_ESCAPES, which the tests read.

This is the subprocess twin of the ``loopback_only`` fixture of tests/web/conftest.py:
monkeypatching the test process cannot reach a server running in another process.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

_LOG = os.environ.get("FETCHLEDGER_TEST_ESCAPES", "")
if _LOG:
    open(_LOG, "a").close()  # its existence proves the guard was loaded


def _is_loopback(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # unix sockets never leave the machine
    try:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)


def _refuse(address: Any) -> None:
    if _LOG:
        with open(_LOG, "a", encoding="utf-8") as log:
            log.write(f"{address!r}\n")
    raise OSError(f"test guard: connection to {address!r} refused (not loopback)")


_connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex


def _guarded(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        _refuse(address)
    return _connect(self, address)


def _guarded_ex(self: socket.socket, address: Any) -> Any:
    if not _is_loopback(address):
        _refuse(address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_ex  # type: ignore[method-assign]


# Fault injection for the tests: FETCHLEDGER_TEST_FAULT="module:Class.method" makes that
# method raise RuntimeError, to see how the server reports a bug.
_FAULT = os.environ.get("FETCHLEDGER_TEST_FAULT", "")
if _FAULT:
    import importlib

    _module_name, _, _attribute = _FAULT.partition(":")
    _class_name, _, _method = _attribute.partition(".")
    _owner = getattr(importlib.import_module(_module_name), _class_name)

    def _broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"injected fault in {_FAULT}")

    setattr(_owner, _method, _broken)
