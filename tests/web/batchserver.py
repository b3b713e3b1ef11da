"""Loopback servers for the batch tests: many hosts, generated pages, scripted replies,
and gauges of the requests and connections each host sees at once.

``BatchServer`` extends the web tests' ``LoopbackServer`` (its routes stay) with:

- ``/gen/N`` — an article of its own for every N (``?delay=S`` answers after S s);
  ``server.times["gen"]`` holds when each arrived;
- ``/script/NAME`` — the replies queued in ``server.scripts[NAME]``, one per request
  (the last one repeats); ``RESET`` closes the connection without an answer.
  ``server.times[NAME]`` holds when each request arrived (monotonic).

Each server counts the requests it is answering (``in_flight``) and its open
connections (``connections_open``); a ``Gauge`` shared by several servers counts
requests across all of them (the global limit).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .webserver import Handler, LoopbackServer, Reply

RESET = Reply(status=0)


class Gauge:
    """How many at once, now and at most."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            yield
        finally:
            with self._lock:
                self.now -= 1


def article(number: int) -> bytes:
    """A page with enough prose for the extractor, unique to ``number``."""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Survey report {number}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Survey report {number}</h1>
<p>Station {number} recorded a high water of {number + 1.5} metres on the morning of the
spring survey, the highest reading of the season at that station.</p>
<p>Observers at station {number} noted that the harbour wall held through the night and
that no flooding was reported anywhere in the town or along the coast road.</p>
<p>The next survey of station {number} is planned for the autumn, when the equinoctial
tides are expected to reach similar heights along the whole of the northern shore.</p>
</article><footer>Copyright the survey office.</footer></body></html>""".encode()


class BatchServer(LoopbackServer):
    def __init__(self, host: str = "127.0.0.1", *, shared: Gauge | None = None) -> None:
        super().__init__(host)
        self.in_flight = Gauge()
        self.connections_open = Gauge()
        self.shared = shared or Gauge()
        self.scripts: dict[str, list[Reply]] = {}
        self.times: dict[str, list[float]] = defaultdict(list)

    def route_for(self, path: str) -> Any:
        if path.startswith("/gen/"):
            return self._generated
        if path.startswith("/script/"):
            return self._scripted
        return super().route_for(path)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.connections_open.held():
            super().process_request_thread(request, client_address)  # type: ignore[misc]

    def paths_hit(self, prefix: str = "/") -> list[str]:
        return [hit.path for hit in self.hits if hit.path.startswith(prefix)]

    @staticmethod
    def _generated(handler: Handler, query: dict[str, list[str]]) -> None:
        server = handler.server
        assert isinstance(server, BatchServer)
        number = int(handler.path.split("?")[0].rsplit("/", 1)[-1])
        server.times["gen"].append(time.monotonic())
        # Counted from arrival to the end of the wait, before the answer leaves: a
        # client cannot have started its next request while this one is counted.
        with server.in_flight.held(), server.shared.held():
            time.sleep(float(query.get("delay", ["0"])[0]))
        handler.send_body(200, article(number), "text/html; charset=utf-8")

    @staticmethod
    def _scripted(handler: Handler, query: dict[str, list[str]]) -> None:
        server = handler.server
        assert isinstance(server, BatchServer)
        name = handler.path.split("?")[0].rsplit("/", 1)[-1]
        server.times[name].append(time.monotonic())
        queue = server.scripts[name]
        reply = queue.pop(0) if len(queue) > 1 else queue[0]
        if reply is RESET:
            handler.close_connection = True
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                          b"\x01\0\0\0\0\0\0\0")
            handler.connection.close()
            return
        handler.send_body(reply.status, reply.body, None, reply.headers)


def page_reply(number: int) -> Reply:
    return Reply(200, {"Content-Type": "text/html; charset=utf-8"}, article(number))
