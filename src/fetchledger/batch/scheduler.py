"""Batch pre-retrieval: many URLs fetched at once, registered, resumable.

``fetchledger batch FILE`` and :meth:`fetchledger.Ledger.fetch_many_async`
(sync: :meth:`~fetchledger.Ledger.batch`) run :func:`run_batch`::

    main process (event loop)                worker processes (one per core)
    -------------------------                -------------------------------
    inputs: validate, skip known sources
    dispatcher: N requests at once, M per host
      robots.txt, once per origin
      GET (net.AsyncHTTPClient)       ---->  document_from_response + prepare
      retry connection errors, 429, 503      (extraction, passages, ranking,
      (Retry-After honoured, capped)          quotes, hashes, compression)
    writer thread: one transaction    <----  Prepared
      per group of finished inputs
    outcomes: streamed to ``on_outcome`` as they finish, returned in input order

- **Limits.** At most ``concurrency`` requests in flight, at most ``per_host``
  per host (host name + port); hosts take turns, so one big site cannot hold
  every slot while others wait.
- **Retries.** A connection error (refused, reset, broken off), HTTP 429 or
  503 is retried up to ``retries`` times. The whole host waits: for its
  ``Retry-After`` (seconds or an HTTP date) when it sends one, else for an
  exponential backoff. A ``Retry-After`` longer than ``max_retry_wait`` fails
  the input at once (run the batch again later) rather than asking early. A
  host that stays unreachable through every retry of one input is not retried
  for its other inputs.
- **Resumable.** An input whose URL (or a redirect alias of it) already has a
  source is skipped unless ``refresh``; failed inputs are simply tried again.
  Writes are grouped, all or nothing per group, so a killed batch leaves the
  ledger as of its last group and a re-run picks up the rest.
- **Duplicates** in one batch are fetched once; the later ones are reported as
  skipped with the source (or with the same failure).
- **Rendering.** A page that ``render`` asks for (``auto``: an empty shell
  built by JavaScript) goes to a small pool of browsers of its own
  (``renderers``, default 2, :class:`~fetchledger.adapters.browser.Browser`):
  it frees its request slots first, so rendering never holds up plain
  fetches. Without a browser ``auto`` keeps plain results (with a warning)
  and ``always`` is bad input.
- Failures are recorded as attempts, as ``fetch`` records them; bad input
  (a malformed URL or line) records nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import email.utils
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from ..adapters.browser import (
    Browser,
    RenderedPage,
    RenderMode,
    check_render_mode,
    unavailable_reason,
)
from ..adapters.web import web_identity
from ..config import Limits
from ..document import StoredRaw
from ..errors import (
    BadInput,
    CorruptContent,
    HTTPStatusError,
    InvalidArgument,
    NetworkError,
    RetrievalFailed,
    retrieval_error_for_status,
)
from ..identity import Identity
from ..identity.secrets import request_secrets, shown_url
from ..identity.urls import parse_http_url
from ..models import Failure, Retrieval, SearchHit, Source
from ..net.client import HTTPRequest, HTTPResponse
from ..net.hosts import HostClients
from ..net.policy import AddressPolicy
from ..net.robots import RobotsCache
from ..store.prepare import Failed, Prepared
from ..store.protocol import ClaimRound
from ..text.normalize import one_line
from .claims import Claimer
from .lines import BatchInput, BatchOutcome, Skipped
from .output import OutcomeStream
from .worker import RenderWanted, WorkerDied, WorkerPool, WorkFailure, usable_cores

__all__ = ["BatchLedger", "BatchOptions", "parse_retry_after", "run_batch"]

RETRY_STATUSES = frozenset({429, 503})


# --- inputs, options, outcomes ----------------------------------------------------------


class BatchLedger(Protocol):
    """What a batch needs of the ledger it fills (:class:`fetchledger.Ledger` is one):
    its limits and address policy, its identity key, whether an input already has a
    source, and the ledger's one write path. A batch writes nothing any other way."""

    limits: Limits
    allow_private: bool
    allow_hosts: tuple[str, ...]
    offline: bool  # answer from stored raw bytes (stored_for), never the network

    @property
    def identity_key(self) -> bytes: ...

    def source_for(self, locator: str) -> Source | None: ...

    def stored_for(self, locator: str) -> StoredRaw | None: ...

    def record(self, results: Sequence[Prepared | Failed]) -> list[Retrieval | None]: ...

    def claim_inputs(self, holder: str, want: Sequence[str],
                     finished: Sequence[tuple[str, str, str]], lease: float,
                     since: datetime | None, gone: Sequence[str] = ()) -> ClaimRound | None: ...


@dataclass(frozen=True)
class BatchOptions:
    """How a batch runs; the defaults are DESIGN §8's."""

    query: str | None = None
    k: int = 3
    concurrency: int = 32  # requests in flight at once
    per_host: int = 4  # requests in flight per host (host name + port)
    refresh: bool = False  # fetch inputs that already have a source again
    robots: bool = True  # honour robots.txt
    retries: int = 3  # after connection errors, 429 and 503
    backoff: float = 0.5  # first wait without Retry-After, doubled each time (jittered)
    max_retry_wait: float = 60.0  # the longest Retry-After honoured
    workers: int | None = None  # extraction processes (default: the usable cores)
    max_group: int = 64  # registrations written in one transaction at most
    claim_lease: float = 60.0  # seconds a claim on a shared ledger lasts unless renewed
    claim_poll: float = 0.5  # seconds between claim rounds while another batch holds inputs
    render: RenderMode = "auto"  # run JavaScript in Chromium: auto (empty shells), always, never
    renderers: int = 2  # pages rendered at once

    def __post_init__(self) -> None:
        check_render_mode(self.render)
        for name in ("k", "concurrency", "per_host", "max_group", "renderers"):
            if getattr(self, name) < 1:
                raise InvalidArgument(f"{name.replace('_', '-')} must be at least 1, "
                                      f"not {getattr(self, name)}")
        if self.claim_lease <= 0 or self.claim_poll <= 0:
            raise InvalidArgument("claim_lease and claim_poll must be positive")
        if self.retries < 0 or self.backoff < 0 or self.max_retry_wait < 0:
            raise InvalidArgument("retries, backoff and max_retry_wait cannot be negative")
        if self.workers is not None and self.workers < 1:
            raise InvalidArgument(f"workers must be at least 1, not {self.workers}")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delay-seconds or an HTTP date
    (RFC 9110 §10.2.3); None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = datetime.now(timezone.utc).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


# --- the run -------------------------------------------------------------------------------


@dataclass(eq=False)
class _Job:
    index: int  # position in the inputs
    url: str
    shown: str  # the input as it may be printed (secrets redacted)
    identity: Identity
    host: _Host
    query: str | None
    k: int
    tries: int = 0
    extraction_tries: int = 0
    duplicates: list[tuple[int, str]] = field(default_factory=list)  # (index, shown)
    search: SearchHit | None = None  # the search hit it came from, recorded with the source


@dataclass(eq=False)
class _Host:
    key: str  # host name + port
    queue: deque[_Job] = field(default_factory=deque)
    active: int = 0
    resume_at: float = 0.0  # monotonic time before which nothing is sent to it
    in_ring: bool = False
    unreachable: bool = False  # an input used every retry on connection errors


@dataclass(frozen=True)
class _Done:
    job: _Job
    result: Prepared | RetrievalFailed


async def run_batch(
    ledger: BatchLedger,
    inputs: Iterable[str | BatchInput],
    options: BatchOptions | None = None,
    *,
    on_outcome: Callable[[BatchOutcome, str], None] | None = None,
) -> list[BatchOutcome]:
    """Fetch, extract and register every input; one outcome per input, in input order.

    ``on_outcome(outcome, shown_input)`` is called as each input finishes (bad
    inputs and skipped ones first), in a thread of its own (one thread, in order:
    :mod:`fetchledger.batch.output`), so that a slow reader never holds the batch
    up; every call is made before this returns. A ledger error (exit 4) stops the batch and
    is raised; everything written before it stays.
    """
    return await _Batch(ledger, options or BatchOptions(), on_outcome).run(
        [i if isinstance(i, BatchInput) else BatchInput(i) for i in inputs])


class _Batch:
    def __init__(self, ledger: BatchLedger, options: BatchOptions,
                 on_outcome: Callable[[BatchOutcome, str], None] | None) -> None:
        self.ledger = ledger
        self.options = options
        # on_outcome runs in a thread of its own: a reader not reading never stops the loop
        self.output = OutcomeStream(on_outcome) if on_outcome is not None else None
        self.per_host = min(options.per_host, options.concurrency)
        self.workers = options.workers or usable_cores()
        # Fetched but not yet written: bounds the bodies held in memory.
        self.max_in_progress = 2 * options.concurrency + 2 * self.workers
        self.outcomes: list[BatchOutcome | None] = []
        self.hosts: dict[str, _Host] = {}
        self.ring: deque[_Host] = deque()  # hosts with queued jobs, in turn
        self.active = 0  # requests in flight
        self.in_progress = 0  # jobs dispatched and not yet written (or re-queued)
        self.unfinished = 0
        self.wake = asyncio.Event()
        self.write_wake = asyncio.Event()
        self.to_write: list[_Done] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.robots = RobotsCache() if options.robots else None
        self.robots_locks: dict[str, asyncio.Lock] = {}
        self.crash: BaseException | None = None
        self.pool_ready: asyncio.Task[WorkerPool] | None = None
        self.clients = HostClients(ledger.limits, allow_private=ledger.allow_private,
                                   allow_hosts=ledger.allow_hosts, connections=self.per_host)
        self.offline = ledger.offline
        self.closing: set[asyncio.Task[None]] = set()
        self.claimer: Claimer[_Job] | None = None  # on a shared ledger
        self.claim_wake = asyncio.Event()
        self.browser: Browser | None = None
        self.no_browser: str | None = None  # why no page can be rendered here
        if options.render != "never" and not self.offline:  # offline: stored bytes only
            self.no_browser = unavailable_reason()
            if self.no_browser is not None and options.render == "always":
                raise InvalidArgument(f"--render always needs a browser, and {self.no_browser}")
            if self.no_browser is None:
                self.browser = Browser(AddressPolicy.of(ledger.allow_private,
                                                        ledger.allow_hosts), None, ledger.limits)
        self.render_slots = asyncio.Semaphore(options.renderers)
        self.renderer: ThreadPoolExecutor | None = None  # created at the first render
        self.stop_rendering = threading.Event()

    # --- planning ---

    def _emit(self, index: int, outcome: BatchOutcome, shown: str) -> None:
        self.outcomes[index] = outcome
        if self.output is not None:
            self.output.put(outcome, shown)

    def _plan(self, inputs: Sequence[BatchInput]) -> list[_Job]:
        """Bad inputs and known sources are settled here; the rest become jobs."""
        self.outcomes = [None] * len(inputs)
        jobs: list[_Job] = []
        by_locator: dict[str, _Job] = {}
        for index, item in enumerate(inputs):
            shown = shown_url(item.url)
            try:
                identity = _identity(item, self.ledger.identity_key)
            except BadInput as error:
                self._emit(index, Failure.from_error(shown, error), shown)
                continue
            first = by_locator.get(identity.locator)
            if first is not None:
                first.duplicates.append((index, shown))
                continue
            known = None if self.options.refresh else self.ledger.source_for(identity.locator)
            if known is not None:
                self._emit(index, Skipped(shown, known), shown)
                continue
            url = parse_http_url(item.url)
            key = f"{url.host}:{url.port or (443 if url.scheme == 'https' else 80)}"
            host = self.hosts.setdefault(key, _Host(key))
            job = _Job(index, item.url, shown, identity, host,
                       item.query if item.query is not None else self.options.query,
                       item.k or self.options.k, search=item.search)
            by_locator[identity.locator] = job
            jobs.append(job)
        return jobs

    # --- running ---

    async def run(self, inputs: Sequence[BatchInput]) -> list[BatchOutcome]:
        try:
            outcomes = await self._claim_and_run(inputs)
        except Exception:
            if self.output is not None:  # what finished before the failure is still told
                with contextlib.suppress(Exception):
                    self.output.close()
            raise
        if self.output is not None:  # all work done (claims reported): wait for the reader
            await asyncio.to_thread(self.output.close)
        return outcomes

    async def _claim_and_run(self, inputs: Sequence[BatchInput]) -> list[BatchOutcome]:
        options = self.options
        claimer: Claimer[_Job] = Claimer(
            self.ledger.claim_inputs, lambda job: job.identity.locator,
            lease=options.claim_lease, poll=options.claim_poll, round_size=options.concurrency)
        # Before planning: an input another batch finishes after this instant (even
        # before this batch claims anything) is reported as that batch left it.
        if claimer.round(queued=0) is not None:
            self.claimer = claimer
        jobs = self._plan(inputs)
        if jobs:
            await self._run(jobs)
        assert all(o is not None for o in self.outcomes)
        return [o for o in self.outcomes if o is not None]

    async def _run(self, jobs: list[_Job]) -> None:
        self.unfinished = len(jobs)
        self._claim_or_queue(jobs)
        # Workers start (interpreter, imports) while the first requests are out.
        pool = WorkerPool(min(self.workers, len(jobs)))
        self.pool_ready = asyncio.create_task(pool.start())
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fetchledger-writer")
        # Claim rounds in a thread (and on a ledger connection) of their own: a round
        # never waits behind a group being written, so leases are renewed on time.
        claims = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fetchledger-claims")
        dispatcher = asyncio.create_task(self._dispatch())
        writing = asyncio.create_task(self._write_loop(writer))
        claiming = asyncio.create_task(self._claim_loop(claims))
        try:
            done, _ = await asyncio.wait({dispatcher, writing, claiming},
                                         return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # raises the first failure (a ledger error, a crash)
            if self.crash is not None:
                raise self.crash
        finally:
            for task in (dispatcher, writing, claiming, *self.tasks):
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(dispatcher, writing, claiming, *self.tasks,
                                     return_exceptions=True)
            await asyncio.gather(*self.closing, return_exceptions=True)
            await self.clients.aclose()
            writer.shutdown(wait=True)
            claims.shutdown(wait=True)
            self.stop_rendering.set()  # renders in flight end now, their browsers with them
            if self.renderer is not None:
                self.renderer.shutdown(wait=True)
            with contextlib.suppress(BaseException):
                await self.pool_ready
            await pool.close()

    # --- claims (a shared ledger: several batches, one list) ---

    def _claim_or_queue(self, jobs: list[_Job]) -> None:
        """On a shared ledger, claim the first round of jobs; elsewhere take them all."""
        if self.claimer is None:
            for job in jobs:
                self._queue(job)
            return
        self.claimer.unclaimed.extend(jobs)
        first = self.claimer.round(queued=0)
        assert first is not None  # the ledger claims (it answered before planning)
        self._claimed(*self._settled_elsewhere(*first))

    async def _claim_loop(self, claims: ThreadPoolExecutor) -> None:
        """Claim rounds while the batch runs (in the ``claims`` thread, on a ledger
        connection of its own), then one more to report the last inputs finished."""
        claimer = self.claimer
        if claimer is None:
            return
        loop = asyncio.get_running_loop()
        while self.unfinished:
            queued = sum(len(host.queue) for host in self.hosts.values())
            if claimer.due(queued):
                self._claimed(*await loop.run_in_executor(claims, self._claim_round, queued))
                continue
            self.claim_wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.claim_wake.wait(), claimer.poll)
        if claimer.finished:  # wants nothing more: only reports
            await loop.run_in_executor(claims, claimer.round, claimer.round_size)

    def _claim_round(self, queued: int) -> tuple[list[_Job], list[tuple[_Job, BatchOutcome]]]:
        assert self.claimer is not None
        got = self.claimer.round(queued)
        assert got is not None  # the ledger claimed in the first round
        return self._settled_elsewhere(*got)

    def _settled_elsewhere(self, granted: list[_Job], done: Sequence[tuple[_Job, str, str]]
                           ) -> tuple[list[_Job], list[tuple[_Job, BatchOutcome]]]:
        """The jobs to fetch here, and the outcomes of jobs another batch finished: the
        source it registered, or its failure (ledger reads: in the claims thread)."""
        fetch = list(granted)
        settled: list[tuple[_Job, BatchOutcome]] = []
        for job, status, message in done:
            if status != "ok":
                error = retrieval_error_for_status(status)(message,
                                                           locator=job.identity.display)
                settled.append((job, Failure.from_error(job.shown, error)))
            elif (source := self.ledger.source_for(job.identity.locator)) is not None:
                settled.append((job, Skipped(job.shown, source)))
            else:  # registered elsewhere, then emptied (reset): fetched here after all
                fetch.append(job)
        return fetch, settled

    def _claimed(self, granted: list[_Job],
                 settled: Sequence[tuple[_Job, BatchOutcome]]) -> None:
        for job in granted:
            self._queue(job)
        if granted:
            self.wake.set()
        for job, outcome in settled:
            self._settle(job, outcome)

    def _queue(self, job: _Job, *, front: bool = False) -> None:
        host = job.host
        if front:
            host.queue.appendleft(job)
        else:
            host.queue.append(job)
        if not host.in_ring:
            host.in_ring = True
            self.ring.append(host)

    async def _dispatch(self) -> None:
        while self.unfinished:
            if self.crash is not None:
                raise self.crash
            self.wake.clear()
            job = self._next_job()
            if job is not None:
                task = asyncio.create_task(self._fetch(job))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self._until_a_host_resumes())

    def _next_job(self) -> _Job | None:
        """The next job of the next host in turn that has a free slot and is not waiting."""
        if self.active >= self.options.concurrency or self.in_progress >= self.max_in_progress:
            return None
        now = time.monotonic()
        for _ in range(len(self.ring)):
            host = self.ring[0]
            if not host.queue:
                self.ring.popleft()
                host.in_ring = False
                continue
            self.ring.rotate(-1)
            if host.active < self.per_host and host.resume_at <= now:
                host.active += 1
                self.active += 1
                self.in_progress += 1
                return host.queue.popleft()
        return None

    def _until_a_host_resumes(self) -> float | None:
        now = time.monotonic()
        waits = [h.resume_at - now for h in self.ring
                 if h.queue and h.active < self.per_host and h.resume_at > now]
        return max(min(waits), 0.001) if waits else None

    # --- one input ---

    async def _fetch(self, job: _Job) -> None:
        if self.offline:
            await self._replay(job)
            return
        try:
            try:
                response = await self._get(job)
            except RetrievalFailed as error:
                self._failed_fetch(job, error)
                return
            except Exception as exc:  # anything the client did not map: recorded, not retried
                self._to_writer(_Done(job, NetworkError(f"{type(exc).__name__}: {exc}",
                                                        locator=job.identity.display)))
                return
            finally:
                self._release(job.host)
            job.host.unreachable = False
            result = await self._extract(job, response)
            self._to_writer(_Done(job, result))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a bug: stop the batch and show it
            self.crash = exc
            self.wake.set()

    async def _replay(self, job: _Job) -> None:
        """Offline: the job's stored bytes, extracted in a worker; nothing is sent."""
        try:
            self._release(job.host)
            stored = self.ledger.stored_for(job.identity.locator)
            result = await self._in_worker(job, "prepare_stored", stored, job.identity,
                                           self.ledger.identity_key, self.ledger.limits,
                                           job.query, job.k)
            assert not isinstance(result, RenderWanted)
            self._to_writer(_Done(job, result))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a bug (or a ledger error): stop the batch and show it
            self.crash = exc
            self.wake.set()

    async def _get(self, job: _Job) -> HTTPResponse:
        client = self.clients.get(job.host.key)
        if self.robots is not None:
            origin = RobotsCache.robots_url(job.url)
            lock = self.robots_locks.setdefault(origin, asyncio.Lock())
            async with lock:  # one robots.txt request per origin, the others wait for it
                await self.robots.check_async(job.url, client)
        return await client.send(HTTPRequest(job.url))

    def _release(self, host: _Host) -> None:
        """A request is over: free its slots; a host with nothing left closes its pool."""
        host.active -= 1
        self.active -= 1
        self.wake.set()
        if not host.queue and not host.active:
            task = asyncio.create_task(self.clients.close(host.key))
            self.closing.add(task)
            task.add_done_callback(self.closing.discard)

    def _failed_fetch(self, job: _Job, error: RetrievalFailed) -> None:
        delay = self._retry_delay(job, error)
        if isinstance(delay, float):
            job.tries += 1
            job.host.resume_at = max(job.host.resume_at, time.monotonic() + delay)
            self.in_progress -= 1
            self._queue(job, front=True)
            return
        self._to_writer(_Done(job, delay))

    def _retry_delay(self, job: _Job, error: RetrievalFailed) -> float | RetrievalFailed:
        """Seconds to wait before trying again, or the error to record."""
        options = self.options
        connection = isinstance(error, NetworkError)
        status = error.http_status if isinstance(error, HTTPStatusError) else None
        if not connection and status not in RETRY_STATUSES:
            return error
        if connection and job.host.unreachable:
            return error
        wait = None
        if isinstance(error, HTTPStatusError):
            wait = parse_retry_after(error.retry_after)
            if wait is not None and wait > options.max_retry_wait:
                return _amended(error, f"(Retry-After {wait:g} s is longer than the "
                                       f"{options.max_retry_wait:g} s a batch waits; run "
                                       f"the batch again later)")
        if job.tries >= options.retries:
            if connection:
                job.host.unreachable = True
            if job.tries == 0:
                return error
            return _amended(error, f"(after {job.tries} "
                                   f"retr{'y' if job.tries == 1 else 'ies'})")
        if wait is None:
            wait = options.backoff * 2 ** job.tries * (1 + random.random() / 4)
        return float(wait)

    async def _extract(self, job: _Job, response: HTTPResponse) -> Prepared | RetrievalFailed:
        key = self.ledger.identity_key
        result = await self._in_worker(job, "prepare_response", response, job.identity, key,
                                       self.ledger.limits, tuple(request_secrets(job.url)),
                                       job.query, job.k, self.options.render, self.no_browser)
        if not isinstance(result, RenderWanted):
            return result
        # Waiting for a browser holds no slot of the plain fetches.
        self.in_progress -= 1
        self.wake.set()
        try:
            page = await self._render(response)
            if isinstance(page, RetrievalFailed):
                return page
            rendered = await self._in_worker(job, "prepare_rendered", page, job.identity, key,
                                             self.ledger.limits,
                                             tuple(request_secrets(job.url)), job.query, job.k)
        finally:
            self.in_progress += 1
        assert not isinstance(rendered, RenderWanted)
        return rendered

    async def _in_worker(self, job: _Job, name: str, *args: Any
                         ) -> Prepared | RenderWanted | RetrievalFailed:
        assert self.pool_ready is not None
        pool = await self.pool_ready
        while True:
            try:
                result = await pool.call(name, *args)
            except WorkerDied:
                # A worker died on it (a parser crash, or killed): it has been replaced;
                # try the page once more, and record a page that kills it twice.
                job.extraction_tries += 1
                if job.extraction_tries > 1:
                    return CorruptContent("the extraction process died reading this page",
                                          locator=job.identity.display)
                continue
            if isinstance(result, WorkFailure):
                return result.error(job.identity.display)
            assert isinstance(result, (Prepared, RenderWanted))
            return result

    async def _render(self, response: HTTPResponse) -> RenderedPage | RetrievalFailed:
        """The page rendered by one of the pool's browsers (at most ``renderers`` at once,
        each in a thread of its own that waits on its render process)."""
        assert self.browser is not None
        browser = self.browser
        async with self.render_slots:
            if self.renderer is None:
                self.renderer = ThreadPoolExecutor(max_workers=self.options.renderers,
                                                   thread_name_prefix="fetchledger-render")
            loop = asyncio.get_running_loop()
            try:
                return await loop.run_in_executor(
                    self.renderer, lambda: browser.render(response, stop=self.stop_rendering))
            except RetrievalFailed as error:
                return error

    def _to_writer(self, done: _Done) -> None:
        self.to_write.append(done)
        self.write_wake.set()

    # --- writing ---

    async def _write_loop(self, writer: ThreadPoolExecutor) -> None:
        """Write what has finished, one transaction per group; whatever finishes while
        a group is being written forms the next group."""
        loop = asyncio.get_running_loop()
        while self.unfinished:
            if not self.to_write:
                self.write_wake.clear()
                await self.write_wake.wait()
                continue
            group = self.to_write[: self.options.max_group]
            del self.to_write[: len(group)]
            outcomes = await loop.run_in_executor(writer, self._write, group)
            for done, outcome in zip(group, outcomes, strict=True):
                self._complete(done.job, outcome)

    def _write(self, group: Sequence[_Done]) -> list[Retrieval | Failure]:
        """One transaction for the group, through the ledger's write path."""
        results = [(replace(d.result, searches=(d.job.search,)) if d.job.search else d.result)
                   if isinstance(d.result, Prepared)
                   else Failed(d.job.identity.kind, d.job.identity.display, d.result)
                   for d in group]
        outcomes: list[Retrieval | Failure] = []
        for done, retrieval in zip(group, self.ledger.record(results), strict=True):
            if isinstance(done.result, RetrievalFailed):
                outcomes.append(Failure.from_error(done.job.shown, done.result))
            else:
                assert retrieval is not None
                outcomes.append(retrieval)
        return outcomes

    def _complete(self, job: _Job, outcome: Retrieval | Failure) -> None:
        self.in_progress -= 1
        if self.claimer is not None:  # other batches learn of it at the next round
            self.claimer.finished.append(
                (job.identity.locator, "ok", "") if isinstance(outcome, Retrieval)
                else (job.identity.locator, outcome.status, outcome.message))
            self.claim_wake.set()
        self._settle(job, outcome)

    def _settle(self, job: _Job, outcome: BatchOutcome) -> None:
        """A job's outcome, for it and for its duplicates in the inputs."""
        self._emit(job.index, outcome, job.shown)
        for index, shown in job.duplicates:
            same: BatchOutcome = (replace(outcome, input=shown) if isinstance(outcome, Failure)
                                  else Skipped(shown, outcome.source))
            self._emit(index, same, shown)
        self.unfinished -= 1
        for loop_wake in (self.wake, self.write_wake, self.claim_wake):
            loop_wake.set()  # each loop sees when nothing is left


def _identity(item: BatchInput, key: bytes) -> Identity:
    if item.problem is not None:
        raise InvalidArgument(item.problem)
    try:
        return web_identity(item.url, key)
    except BadInput as error:
        if item.line is None:
            raise
        raise type(error)(f"line {item.line}: {error.message}", hint=error.hint) from error


def _amended(error: RetrievalFailed, note: str) -> RetrievalFailed:
    """The same error (class, status, attributes) with a note added to its message."""
    amended = copy.copy(error)
    amended.message = f"{error.message} {one_line(note)}"
    amended.args = (amended.message,)
    return amended
