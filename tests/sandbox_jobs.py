"""Jobs the sandbox tests run in a child process (importable by a fresh interpreter)."""

from __future__ import annotations

import os
import time
from typing import Any

from fetchledger.adapters.sandbox import Emit


def echo(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    emit({"t": "echo", "size": len(payload), "params": params, "pid": os.getpid()})


def spin(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    emit({"t": "started", "pid": os.getpid()})
    while True:
        time.sleep(0.01)


def burn(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    while True:  # pure CPU: only the wall clock or RLIMIT_CPU can stop it
        pass


def hog(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    blocks = []
    for _ in range(params["mib"]):
        blocks.append(bytearray(1 << 20))
    emit({"t": "allocated", "mib": len(blocks)})


def chatter(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    for _ in range(params["frames"]):
        emit({"t": "x", "data": "y" * 1000})


def fail(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    raise ValueError("the parser gave up")


def die(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    os.kill(os.getpid(), 9)


def noisy(payload: bytes, params: dict[str, Any], emit: Emit) -> None:
    import logging
    import sys

    print("stray print on stdout")
    print("stray print on stderr", file=sys.stderr)
    logging.getLogger("pypdf").warning("a library warning")
    emit({"t": "done"})


def sleep_a_minute() -> None:
    """An entry for a fresh interpreter of the child-process runtime."""
    time.sleep(60)


def exit_with(status: str) -> int:
    """An entry whose return value is the interpreter's exit status."""
    return int(status)
