"""The worker side of batch: extraction and preparation in processes of their own.

Extraction is CPU-bound (trafilatura takes about 16 ms for a real page), so
batch (:mod:`fetchledger.batch`) hands every fetched response to a pool of
worker processes, one per usable core, which turn it into a
:class:`~fetchledger.store.prepare.Prepared` version: the document
(:func:`~fetchledger.adapters.web.document_from_response`), its passages,
the ranked quotes, the hashes and the compressed raw bytes. A page to be
rendered in a browser comes back as :class:`RenderWanted`; once batch has
rendered it, :func:`prepare_rendered` reads the DOM. The main process only
fetches, renders (in render processes of their own) and writes.
``reextract`` uses the same pool for stored raw bytes (:func:`prepare_again`).

A worker is a fresh interpreter started by the batch process through the
one child-process runtime (:mod:`fetchledger.adapters.children`), which
sends it tasks and reads back results as pickle frames over its stdin and
stdout. (Not a ``multiprocessing`` pool: its fork server and spawn methods
run the caller's main module again in every worker, and forking a process
that runs threads can deadlock the child.) Workers die with their parent
(the runtime's parent-death signal); a worker that dies is replaced; its
task fails as ``corrupt`` after a second try.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..adapters.children import (
    PICKLE,
    Child,
    claim_stdout,
    encode_frame,
    interpreter_argv,
    quiet,
    read_frame,
    read_frame_async,
    start_reaper,
)
from ..adapters.stored import document_from_stored, replay_document
from ..adapters.web import Shell, read_response, rendered_document, without_browser
from ..errors import FetchLedgerError, RetrievalFailed, retrieval_error_for_status
from ..store.prepare import prepare

if TYPE_CHECKING:
    from ..adapters.browser import RenderedPage, RenderMode
    from ..config import Limits
    from ..document import Document, StoredRaw
    from ..identity import Identity
    from ..net.client import HTTPResponse
    from ..store.prepare import Prepared

__all__ = [
    "WORKER_ENTRY",
    "RenderWanted",
    "WorkFailure",
    "WorkerDied",
    "WorkerPool",
    "prepare_again",
    "prepare_rendered",
    "prepare_response",
    "prepare_stored",
    "serve",
    "usable_cores",
]

WORKER_ENTRY = "fetchledger.batch.worker:serve"


@dataclass(frozen=True)
class WorkFailure:
    """A failed extraction, as it crosses the process boundary."""

    status: str
    message: str
    hint: str | None = None

    def error(self, locator: str) -> RetrievalFailed:
        return retrieval_error_for_status(self.status)(self.message, locator=locator,
                                                       hint=self.hint)


@dataclass(frozen=True)
class RenderWanted:
    """The page is to be rendered in a browser (batch does it, then
    :func:`prepare_rendered`)."""


class WorkerDied(Exception):
    """The worker process exited (crashed or was killed) before answering."""


def prepare_response(
    response: HTTPResponse, identity: Identity, key: bytes, limits: Limits,
    secrets: tuple[str, ...], query: str | None, k: int, render: RenderMode = "never",
    no_browser: str | None = None,
) -> Prepared | WorkFailure | RenderWanted:
    """Extract a fetched response and prepare its version (runs in a worker; ``key`` is
    the ledger's identity key, for the redirect chain's aliases). A page that
    ``render`` asks to render is RenderWanted, or — when ``no_browser`` says why none
    can — its plain result with a warning."""

    def document() -> Document | RenderWanted:
        read = read_response(response, identity, limits=limits, key=key, secrets=secrets,
                             render=render)
        if not isinstance(read, Shell):
            return read
        return RenderWanted() if no_browser is None else without_browser(read, no_browser)

    return _prepared(document, query, k, limits)


def prepare_rendered(
    page: RenderedPage, identity: Identity, key: bytes, limits: Limits,
    secrets: tuple[str, ...], query: str | None, k: int,
) -> Prepared | WorkFailure:
    """Extract a page a browser rendered and prepare its version (runs in a worker)."""
    prepared = _prepared(lambda: rendered_document(page, identity, limits=limits, key=key,
                                                   secrets=secrets), query, k, limits)
    assert not isinstance(prepared, RenderWanted)
    return prepared


def prepare_stored(
    stored: StoredRaw | None, identity: Identity, key: bytes, limits: Limits,
    query: str | None, k: int,
) -> Prepared | WorkFailure:
    """Extract a source's stored raw bytes and prepare the version (an ``--offline``
    batch: an ``offline_miss`` when there are none)."""
    prepared = _prepared(lambda: replay_document(stored, identity, limits=limits, key=key),
                         query, k, limits)
    assert not isinstance(prepared, RenderWanted)
    return prepared


def prepare_again(stored: StoredRaw, key: bytes, limits: Limits) -> Prepared | WorkFailure:
    """Today's extraction of a stored version's raw bytes, prepared as a version that
    keeps the bytes' retrieval time and hands out no snippet (``reextract``: in a worker,
    or in the caller's process for a few sources). Capped bytes fail as ``raw_capped``."""
    prepared = _prepared(lambda: document_from_stored(stored, limits=limits, key=key),
                         None, 0, limits, retrieved_at=stored.retrieved_at)
    assert not isinstance(prepared, RenderWanted)
    return prepared


def _prepared(document: Callable[[], Document | RenderWanted], query: str | None, k: int,
              limits: Limits, *, retrieved_at: str | None = None,
              ) -> Prepared | WorkFailure | RenderWanted:
    try:
        read = document()
        if isinstance(read, RenderWanted):
            return read
        return prepare(read, query=query, k=k, max_raw_stored=limits.max_raw_stored,
                       retrieved_at=retrieved_at)
    except FetchLedgerError as error:
        status = error.status if isinstance(error, RetrievalFailed) else "corrupt"
        return WorkFailure(status, error.message, error.hint)
    except Exception as exc:  # a parser bug on one page must not end a batch of thousands
        return WorkFailure("corrupt", f"the content could not be read ({type(exc).__name__}: "
                                      f"{exc})")


def usable_cores() -> int:
    """The cores this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


# --- the worker process ---------------------------------------------------------------------

_FUNCTIONS: dict[str, Callable[..., Any]] = {"prepare_response": prepare_response,
                                             "prepare_stored": prepare_stored,
                                             "prepare_again": prepare_again,
                                             "prepare_rendered": prepare_rendered,
                                             "ping": os.getpid}


def serve() -> None:
    """Answer tasks from stdin until it closes: ``(function name, args)`` in, the
    function's result out (the runtime has tied this process to the batch process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the batch process's to handle
    results = claim_stdout()
    quiet(stderr=False)  # library chatter would interleave with batch output
    with contextlib.suppress(ImportError):
        import trafilatura  # noqa: F401  (imported before the first page arrives)
    stdin = sys.stdin.buffer
    while True:
        try:
            name, args = read_frame(stdin, PICKLE)
        except EOFError:
            return
        results.write(encode_frame(_FUNCTIONS[name](*args), PICKLE))
        results.flush()


# --- the pool, in the batch process -------------------------------------------------------


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        # Its own process group, tied to the reaper: it dies with the batch however the
        # batch dies, even while it is still starting (before it can ask for the
        # parent-death signal: seconds on a loaded machine).
        self.child = Child(process.pid, group=True).track()

    async def call(self, name: str, args: tuple[Any, ...]) -> Any:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(encode_frame((name, args), PICKLE))
            await stdin.drain()
            return await read_frame_async(stdout, PICKLE)
        except (asyncio.IncompleteReadError, ConnectionError, pickle.UnpicklingError) as exc:
            raise WorkerDied(f"the extraction process {self.process.pid} died") from exc

    def kill(self) -> None:
        if self.process.returncode is None:  # nothing once asyncio has reaped it
            self.child.kill()

    async def wait(self) -> None:
        await self.process.wait()
        self.child.reaped()


class WorkerPool:
    """``size`` worker processes; :meth:`call` runs a task on the next idle one."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._workers: list[_Worker] = []
        self._closed = False

    async def start(self) -> WorkerPool:
        for worker in await asyncio.gather(*(self._spawn() for _ in range(self.size))):
            self._idle.put_nowait(worker)
        return self

    async def _spawn(self) -> _Worker:
        start_reaper()  # before the worker's group exists: it is tied the moment it does
        process = await asyncio.create_subprocess_exec(
            *interpreter_argv(WORKER_ENTRY), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, start_new_session=True)
        worker = _Worker(process)
        self._workers.append(worker)
        return worker

    @property
    def pids(self) -> list[int]:
        return [w.process.pid for w in self._workers]

    async def call(self, name: str, *args: Any) -> Any:
        """Run ``name(*args)`` in a worker. WorkerDied if the worker died on it (it is
        replaced by a new one)."""
        worker = await self._idle.get()
        try:
            result = await worker.call(name, args)
        except WorkerDied:
            worker.kill()
            await worker.wait()
            self._workers.remove(worker)
            if not self._closed:
                self._idle.put_nowait(await self._spawn())
            raise
        except BaseException:  # cancelled mid-task: the stream is out of step
            worker.kill()
            raise
        self._idle.put_nowait(worker)
        return result

    async def close(self, timeout: float = 5.0) -> None:
        """Let the workers finish and exit (stdin closed); kill any that linger."""
        self._closed = True
        for worker in self._workers:
            if worker.process.stdin is not None:
                worker.process.stdin.close()
        for worker in self._workers:
            try:
                await asyncio.wait_for(worker.wait(), timeout)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                worker.kill()
                await worker.wait()

