"""A batch's outcomes handed to its caller from a thread of their own.

The caller's ``on_outcome`` prints (``fetchledger batch`` writes a line per input
to stdout). Called on the batch's event loop, a reader that is not reading yet
(a full pipe, a paused terminal, a script waiting on another process first)
would stop the whole batch inside ``print``: no request sent, no response read,
no claim renewed — on a shared ledger its claims then lapse and other batches
fetch its URLs again. Here the loop only queues each outcome; one thread calls
``on_outcome`` for each, in the order they finished, and the batch waits for it
(:meth:`OutcomeStream.close`) only once all its work is done.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from .lines import BatchOutcome

__all__ = ["OutcomeStream"]

_END = None


class OutcomeStream:
    """``on_outcome`` called for each outcome put, in order, in a thread of its own.

    An exception it raises (a closed stdout) stops the calls; it is raised again by
    the next :meth:`put` and by :meth:`close`, so the batch stops as it did when the
    callback ran on its loop."""

    def __init__(self, on_outcome: Callable[[BatchOutcome, str], None]) -> None:
        self._on_outcome = on_outcome
        self._queue: queue.SimpleQueue[tuple[BatchOutcome, str] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def put(self, outcome: BatchOutcome, shown: str) -> None:
        if self.error is not None:
            raise self.error
        if self._thread is None:
            # a daemon: a batch interrupted (Ctrl-C) is not kept alive by its reader
            self._thread = threading.Thread(target=self._run, name="fetchledger-output",
                                            daemon=True)
            self._thread.start()
        self._queue.put((outcome, shown))

    def close(self) -> None:
        """Wait until every outcome put has been handed over (or the callback failed)."""
        if self._thread is not None:
            self._queue.put(_END)
            self._thread.join()
            self._thread = None
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        while (item := self._queue.get()) is not _END:
            if self.error is None:
                try:
                    self._on_outcome(*item)
                except BaseException as exc:  # raised again in the batch's own thread
                    self.error = exc
