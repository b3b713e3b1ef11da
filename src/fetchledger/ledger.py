"""The public API: a persistent, numbered ledger of consulted sources.

Every adapter call registers its source in the same call and hands back
numbered verbatim snippets::

    from fetchledger import Ledger

    with Ledger() as ledger:
        got = ledger.read("notes/boiling.md", query="altitude")
        print("\\n".join(got.text_lines()))

A failed retrieval is recorded as an attempt and raised as a
``RetrievalFailed``; bad input raises ``BadInput`` and records nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from .adapters.command import CommandAdapter, PipedAdapter
from .adapters.files import FileAdapter, PageRange, parse_page_range
from .adapters.protocol import Adapter, CommandInput, FileInput, HttpInput, PipedInput, WebInput
from .config import (
    MAX_CONCURRENCY,
    MAX_ID,
    MAX_PER_HOST,
    MAX_SNIPPETS,
    Limits,
    allow_private_from_env,
    check_count,
    check_seconds,
    is_file_there,
    names_ledger_file,
    resolve_ledger_path,
)
from .document import Document, Page
from .errors import (
    BadInput,
    InvalidArgument,
    InvalidPath,
    LedgerError,
    QuoteNotFound,
    RetrievalFailed,
    UnknownSource,
)
from .hints import Hint
from .models import Copied, Failure, Reading, Retrieval, Snippet, SourceDetails
from .reading import Window, read_window
from .store import open_store, shown_location
from .store.prepare import Failed, Prepared, prepare
from .store.protocol import AttemptRow, ClaimRound, QuoteRow, Store, StoredVersion, utc_now
from .text.passages import (
    QuoteSpan,
    cut_quote,
    display_line,
    query_terms,
    rank_candidates,
    search_words,
    select_quotes,
)
from .text.verbatim import find_verbatim, nearest_passage

if TYPE_CHECKING:
    from datetime import datetime

    from .adapters.curl_args import CurlCommand
    from .adapters.web import WebAdapter
    from .batch.lines import BatchInput, BatchOutcome
    from .batch.searches import SearchResults
    from .document import StoredRaw
    from .models import Attempt, Outcome, Quote, Refreshed, SearchHit, Source
    from .net.client import HTTPClient

__all__ = ["ADAPTERS", "Ledger", "copy_ledger"]

T = TypeVar("T")

_NOT_RECORDED = ("handed out but not recorded: the ledger was busy with another writer or "
                 "cannot be written")
_CANDIDATES = 100  # passages a ledger-wide search takes from the store to rank


class Ledger:
    """A ledger file and the adapters that register into it.

    ``path`` defaults as in DESIGN §4 (``$FETCHLEDGER_LEDGER``, the nearest
    ``.fetchledger/ledger.db`` upwards, else a new one in the working folder).
    ``allow_private`` defaults to ``$FETCHLEDGER_ALLOW_PRIVATE``. ``read_only``
    opens an existing ledger to read it (``list``, ``show``, ``quotes``, ``check``,
    ``render``, ``export``): nothing is created (NoLedger, exit 4, when there is no
    ledger), migrated or locked, and a read-only mounted ledger works; the quotes a
    search hands out are recorded only when that needs no wait, else they carry a
    warning saying so. ``offline=True`` answers ``fetch``, ``curl``, ``http_request``
    and ``batch`` from the stored raw bytes of the sources they name, never opening a
    socket (an ``offline_miss`` attempt for one the ledger lacks).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        limits: Limits | None = None,
        allow_private: bool | None = None,
        allow_hosts: Sequence[str] = (),
        offline: bool = False,
        read_only: bool = False,
    ) -> None:
        self.path: Path | str = resolve_ledger_path(path)
        self.read_only = read_only
        self.location = shown_location(self.path)  # as it may be printed
        self.limits = limits or Limits()
        self.allow_private = allow_private_from_env() if allow_private is None else allow_private
        self.allow_hosts = tuple(allow_hosts)
        self.offline = offline
        self._store: Store = open_store(self.path, busy_timeout=self.limits.ledger_busy_timeout,
                                        read_only=read_only)
        self._key: bytes | None = None  # read on first use
        self._adapters: dict[type[Any], Adapter[Any, Any]] = {}  # made on first use
        self._http_client: HTTPClient | None = None  # made on first use (imports httpx)

    @property
    def identity_key(self) -> bytes:
        """The ledger's random identity key: redacted query and argv values enter source
        identities as HMACs under it (for clients such as batch that compute identities)."""
        if self._key is None:
            self._key = self._store.identity_key()
        return self._key

    def close(self) -> None:
        if self._http_client is not None:
            self._http_client.close()
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- registering ----------------------------------------------------------

    def register(self, document: Document, *, query: str | None = None, k: int = 3) -> Retrieval:
        """Register a document an adapter produced and hand out ``k`` snippets."""
        prepared = prepare(document, query=query, k=k,
                           max_raw_stored=self.limits.max_raw_stored)
        return self.register_prepared(prepared)

    def register_prepared(self, prepared: Prepared) -> Retrieval:
        """Write a prepared version (see :func:`fetchledger.store.prepare.prepare`)."""
        retrieval = self.record([prepared])[0]
        assert retrieval is not None
        return retrieval

    def record(self, results: Sequence[Prepared | Failed]) -> list[Retrieval | None]:
        """Write retrievals (prepared versions) and failed attempts in ONE transaction,
        all or nothing: the one write path of every adapter and of batch. Ids are
        assigned inside it, in the order given; a failure gets none (None in its place)."""
        stored = iter(self._store.register(
            [r.registration() for r in results if isinstance(r, Prepared)],
            [r.attempt_row() for r in results if isinstance(r, Failed)]))
        return [self._retrieval(r, next(stored)) if isinstance(r, Prepared) else None
                for r in results]

    def _retrieval(self, prepared: Prepared, stored: StoredVersion) -> Retrieval:
        source = stored.source or self._store.source(stored.source_id, stored.version_number)
        assert source is not None  # it was registered in the same transaction
        snippets = tuple(self._snippet(source.id, stored.version_number, prepared.version.text, q)
                         for q in prepared.quotes)
        return Retrieval(source, snippets, stored.new_source, stored.new_version,
                         prepared.warnings)

    def _retrieve(self, given: object, *, query: str | None, k: int,
                  page_range: PageRange | None = None) -> Retrieval:
        """The one way an adapter's input becomes a registered source: identify it once
        (bad input raises, nothing recorded), load it, prepare it, write it; a failed
        retrieval is recorded as an attempt under its identity and raised."""
        adapter = self._adapter(type(given))
        identity = adapter.identify(given)
        _check_k(k)
        try:
            document = adapter.load(given, identity)
            prepared = prepare(
                document, query=query, k=k, max_raw_stored=self.limits.max_raw_stored,
                page_range=(page_range.first, page_range.last) if page_range else None)
        except RetrievalFailed as error:
            self.record([Failed(identity.kind, identity.display, error)])
            raise
        return self.register_prepared(prepared)

    def _adapter(self, input_type: type[Any]) -> Adapter[Any, Any]:
        adapter = self._adapters.get(input_type)
        if adapter is None:
            adapter = self._adapters[input_type] = ADAPTERS[input_type](self)
        return adapter

    @staticmethod
    def _snippet(source_id: int, version: int, text: str, span: QuoteSpan) -> Snippet:
        return Snippet(source_id, version, span.start, span.end, span.page, span.label,
                       text[span.start : span.end], line=span.line)

    # --- adapters -----------------------------------------------------------------

    def read(
        self,
        path: str | os.PathLike[str],
        *,
        query: str | None = None,
        k: int = 3,
        pages: str | PageRange | None = None,
        password: str | None = None,
    ) -> Retrieval:
        """Read a local PDF, HTML, Markdown or text file and register it."""
        page_range = parse_page_range(pages) if isinstance(pages, str) else pages
        return self._retrieve(FileInput(path, password), query=query, k=k,
                              page_range=page_range)

    def read_many(
        self,
        paths: Iterable[str | os.PathLike[str]],
        *,
        query: str | None = None,
        k: int = 3,
        pages: str | PageRange | None = None,
        password: str | None = None,
        stdin: IO[bytes] | None = None,
        label: str | None = None,
    ) -> list[Outcome]:
        """``read`` each path in turn; a failure stands in the list in its place.

        The path ``-`` reads ``stdin`` as piped text named ``label``
        (:meth:`read_piped`).
        """
        paths = list(paths)
        if sum(1 for p in paths if str(p) == "-") > 1:
            raise InvalidArgument("stdin (`-`) can be read only once")
        if label is not None and "-" not in (str(p) for p in paths):
            raise InvalidArgument("--label names piped text; pass `-` to read it from stdin")

        def one(path: str | os.PathLike[str]) -> Retrieval:
            if str(path) != "-":
                return self.read(path, query=query, k=k, pages=pages, password=password)
            if stdin is None or label is None:
                raise InvalidArgument("piped text needs --label NAME saying what produced it",
                                      hint=Hint("{pipe_label}"))
            return self.read_piped(stdin, label=label, query=query, k=k)

        return self.collect(paths, one)

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None = None,
        cwd: str | os.PathLike[str] | None = None,
        shell: bool = False,
        stderr: bool = False,
        require_success: bool = False,
        query: str | None = None,
        k: int = 3,
    ) -> Retrieval:
        """Run a command (no shell unless ``shell``) and register its output.

        Identity: argv (secrets redacted) and working directory. A non-zero
        exit registers the output with its status, unless ``require_success``.
        """
        return self._retrieve(CommandInput(argv, cwd, shell, timeout, stderr, require_success),
                              query=query, k=k)

    def read_piped(
        self,
        data: bytes | IO[bytes],
        *,
        label: str,
        cwd: str | os.PathLike[str] | None = None,
        query: str | None = None,
        k: int = 3,
    ) -> Retrieval:
        """Register text an agent already holds (``read - --label LABEL``) as a
        command source. Identity: the label and the working directory."""
        return self._retrieve(PipedInput(data, label, cwd), query=query, k=k)

    def collect(self, inputs: Iterable[T], one: Callable[[T], Retrieval], *,
                shown: Callable[[T], str] = str) -> list[Outcome]:
        """Run ``one`` on every input; good inputs register even when others fail.

        Bad input and failed retrievals become :class:`Failure` entries (the
        input as ``shown`` gives it, e.g. a URL with its secrets redacted); a
        ledger error (exit 4) stops everything and is raised.
        """
        outcomes: list[Outcome] = []
        for item in inputs:
            try:
                outcomes.append(one(item))
            except (BadInput, RetrievalFailed) as error:
                outcomes.append(Failure.from_error(shown(item), error))
        return outcomes

    # --- the web ------------------------------------------------------------------------

    def _client(self) -> HTTPClient:
        if self.offline:  # a bug if reached: offline adapters and verbs never ask
            raise RuntimeError("offline: no HTTP client")
        if self._http_client is None:
            from .net.client import HTTPClient

            self._http_client = HTTPClient(self.limits, allow_private=self.allow_private,
                                           allow_hosts=self.allow_hosts)
        return self._http_client

    def fetch(self, url: str, *, query: str | None = None, k: int = 3,
              robots: bool = False, render: str = "auto") -> Retrieval:
        """Fetch a web page or any URL (HTML, PDF, JSON, text by content type) and register
        it. ``robots=True`` honours robots.txt (RobotsDenied when it disallows the URL).

        ``render``: ``auto`` runs an empty shell's JavaScript in headless Chromium
        (little or no main text and a page built by scripts), ``always`` renders
        every HTML page, ``never`` keeps the plain result. Without a browser
        ``auto`` keeps the plain result with a warning, and ``always`` is bad input.
        """
        return self._retrieve(WebInput(url, robots, render), query=query, k=k)

    def fetch_many(self, urls: Iterable[str], *, query: str | None = None, k: int = 3,
                   robots: bool = False, render: str = "auto") -> list[Outcome]:
        """``fetch`` each URL in turn; a failure stands in the list in its place."""
        from .identity.secrets import shown_url

        return self.collect(
            urls, lambda u: self.fetch(u, query=query, k=k, robots=robots, render=render),
            shown=shown_url)

    async def fetch_many_async(
        self, inputs: Iterable[str | BatchInput], *, query: str | None = None, k: int = 3,
        concurrency: int | None = None, per_host: int | None = None, refresh: bool = False,
        robots: bool = True, on_outcome: Callable[[BatchOutcome, str], None] | None = None,
        render: str = "auto",
    ) -> list[BatchOutcome]:
        """Batch pre-retrieval: fetch many URLs at once (``concurrency`` requests, at most
        ``per_host`` per host), extract them on every core and register them; robots.txt
        honoured unless ``robots=False``. Inputs that already have a source are skipped
        unless ``refresh``. One outcome per input (Retrieval, Failure or Skipped), in
        input order; ``on_outcome(outcome, input)`` sees each as it finishes. ``render``
        as for :meth:`fetch`, with ``Limits.batch_renderers`` browsers at once. See
        :mod:`fetchledger.batch`."""
        from .adapters.browser import check_render_mode
        from .batch.scheduler import BatchOptions, run_batch

        _check_k(k)
        options = BatchOptions(
            query=query, k=k,
            concurrency=check_count(
                self.limits.batch_concurrency if concurrency is None else concurrency,
                "the concurrency", MAX_CONCURRENCY),
            per_host=check_count(self.limits.batch_per_host if per_host is None else per_host,
                                 "the requests per host", MAX_PER_HOST),
            refresh=refresh, robots=robots, render=check_render_mode(render),
            renderers=self.limits.batch_renderers)
        return await run_batch(self, inputs, options, on_outcome=on_outcome)

    def batch(
        self, inputs: Iterable[str | BatchInput], *, query: str | None = None, k: int = 3,
        concurrency: int | None = None, per_host: int | None = None, refresh: bool = False,
        robots: bool = True, on_outcome: Callable[[BatchOutcome, str], None] | None = None,
        render: str = "auto",
    ) -> list[BatchOutcome]:
        """:meth:`fetch_many_async` for callers without an event loop."""
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:  # none running: the expected case
            pass
        else:
            raise RuntimeError("Ledger.batch runs its own event loop; inside one, "
                               "await ledger.fetch_many_async(...) instead")
        return asyncio.run(self.fetch_many_async(
            inputs, query=query, k=k, concurrency=concurrency, per_host=per_host,
            refresh=refresh, robots=robots, on_outcome=on_outcome, render=render))

    def ingest(
        self, results: str | SearchResults, *, search_query: str | None = None,
        engine: str | None = None, name: str = "-", query: str | None = None, k: int = 3,
        concurrency: int | None = None, per_host: int | None = None, refresh: bool = False,
        robots: bool = True, on_outcome: Callable[[BatchOutcome, str], None] | None = None,
        render: str = "auto",
    ) -> list[BatchOutcome]:
        """Batch-retrieve the URLs of search results — JSON of a search API, JSON lines,
        or one URL per line (:mod:`fetchledger.batch.searches`; ``search_query`` and
        ``engine`` stand in where they say nothing) — each source recording where the
        search found it (``details(id).searches``), in the same transaction as its
        registration. Snippets are ranked for the search query unless ``query`` is
        given; the search's own snippet is never handed out. Bad JSON or no URL:
        InvalidArgument before anything is sent. Other options as :meth:`batch`."""
        from .batch.lines import Skipped
        from .batch.searches import read_search_results

        found = results if not isinstance(results, str) else read_search_results(
            results, name=name, query=search_query, engine=engine)
        outcomes = self.batch(found.inputs, query=query or found.query, k=k,
                              concurrency=concurrency, per_host=per_host, refresh=refresh,
                              robots=robots, on_outcome=on_outcome, render=render)
        # Registered sources recorded their hit with them; known ones (and repeats) now.
        self.record_searches([(outcome.source.id, given.search) for outcome, given
                              in zip(outcomes, found.inputs, strict=True)
                              if isinstance(outcome, Skipped) and given.search is not None])
        return outcomes

    def record_searches(self, hits: Sequence[tuple[int, SearchHit]]) -> None:
        """Record where searches found registered sources (``(source id, hit)``); a hit
        recorded before (same source, query, engine and rank) is kept as it was."""
        for source_id, _ in hits:
            self.source(source_id)
        self._store.record_searches(hits)

    def source_for(self, locator: str) -> Source | None:
        """The source a canonical locator (or one of its aliases) names, if any."""
        source_id = self._store.source_id_for([locator])
        return None if source_id is None else self._store.source(source_id)

    def curl(self, args: Sequence[str] | CurlCommand, *, query: str | None = None,
             k: int = 3) -> Retrieval:
        """A curl command line (its arguments, without ``curl``), sent and registered; see
        :mod:`fetchledger.adapters.curl_args` for the options understood."""
        from .adapters.curl_args import CurlCommand, parse_curl_args

        command = args if isinstance(args, CurlCommand) else parse_curl_args(args)
        return self._retrieve(HttpInput(command.http_request(), command.extra_secrets),
                              query=query, k=k)

    def http_request(
        self, method: str, url: str, *, headers: Mapping[str, str] | None = None,
        body: str | bytes | None = None, query: str | None = None, k: int = 3,
        follow_redirects: bool = True, timeout: float | None = None,
    ) -> Retrieval:
        """Send one HTTP request and register its response. A GET without a body is the
        same source as ``fetch(url)``; other requests are identified by method, URL and
        body. Secret headers and parameters are sent but never stored."""
        from .net.client import HTTPRequest

        if timeout is not None:
            check_seconds(timeout, "the timeout")
        try:
            content = body.encode() if isinstance(body, str) else body
        except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800")
            raise InvalidArgument("the body is not valid UTF-8 text") from None
        request = HTTPRequest(url, method, tuple((headers or {}).items()), content or None,
                              follow_redirects=follow_redirects, total_timeout=timeout)
        return self._retrieve(HttpInput(request), query=query, k=k)

    # --- reading the ledger ---------------------------------------------------------

    def sources(self) -> list[Source]:
        """Every source, by id."""
        return self._store.sources()

    def source(self, source_id: int) -> Source:
        """One source as of its latest version; UnknownSource if there is none."""
        if not 0 < source_id <= MAX_ID:  # SQLite cannot even look such an id up
            raise UnknownSource(source_id)
        source = self._store.source(source_id)
        if source is None:
            raise UnknownSource(source_id)
        return source

    def details(self, source_id: int) -> SourceDetails:
        """A source with its versions, aliases, quote count and the searches that found
        it (``show N``)."""
        source = self.source(source_id)
        return SourceDetails(
            source, tuple(self._store.version_details(source_id)),
            tuple(self._store.aliases(source_id)), self._store.quote_count(source_id),
            tuple(self._store.searches(source_id)))

    def text(self, source_id: int, version: int | None = None) -> str:
        """The stored text of a source's latest (or given) version, exactly."""
        self.source(source_id)
        found = self._store.version(source_id, version)
        if found is None:
            raise InvalidArgument(f"source [{source_id}] has no version {version}")
        return found.text

    def read_source(self, source_id: int, start: int = 1, *, last: int | None = None,
                    limit: int | None = None, pages: str | None = None,
                    version: int | None = None, outline: bool = False) -> Reading:
        """Read a source's stored text in order: passages ``start`` (1-based) to ``last``
        as snippet lines, whole passages up to ``limit`` characters of output (default
        4,000; 100,000 with ``last`` or ``pages``), only the headings with ``outline``.
        ``pages`` (``"12-14"``) reads those pages of a paged source. The latest version
        unless ``version``. It records no quote and never fetches."""
        source = self.source(source_id)
        if version is not None:
            found = self._store.source(source_id, version) if 0 < version <= MAX_ID else None
            if found is None:
                raise InvalidArgument(f"source [{source_id}] has no version {version}")
            source = found
        return read_window(self._store, source, Window(start, last, limit, pages, version,
                                                       outline))

    def raw(self, source_id: int, version: int | None = None) -> bytes:
        """The raw bytes kept for a version (compressed in the ledger, capped)."""
        source = self.source(source_id)
        return self._store.raw_bytes(source_id, version or source.version)

    def stored(self, source_id: int, version: int | None = None) -> StoredRaw:
        """A version's raw bytes (the latest by default) with the facts to extract them
        again: what ``reextract`` and ``--offline`` use."""
        self.source(source_id)
        found = self._store.stored_raw(source_id, version)
        if found is None:
            raise InvalidArgument(f"source [{source_id}] has no version {version}")
        return found

    def stored_for(self, locator: str) -> StoredRaw | None:
        """The latest stored version of the source a canonical locator (or alias) names."""
        source_id = self._store.source_id_for([locator])
        return None if source_id is None else self._store.stored_raw(source_id)

    def texts(self, source_id: int) -> dict[int, str]:
        """The stored text of every version of a source: ``{version number: text}``."""
        self.source(source_id)
        return {v.number: v.text for v in self._store.versions(source_id)}

    def pages(self, source_id: int, version: int | None = None) -> tuple[Page, ...]:
        """The pages of a paged source's latest (or given) version; empty when unpaged."""
        source = self.source(source_id)
        return tuple(Page(start, end, number, label) for start, end, number, label
                     in self._store.version_pages(source_id, version or source.version))

    def recorded_quotes(self, source_id: int | None = None) -> list[Quote]:
        """Every quote handed out or confirmed, with its version and page (of one
        source, or of the whole ledger). Reading them records nothing."""
        if source_id is not None:
            self.source(source_id)
        return self._store.recorded_quotes(source_id)

    def attempts(self, *, failed: bool = False) -> list[Attempt]:
        """Every retrieval attempt, oldest first (only the failed ones with ``failed``)."""
        return self._store.attempts(failed_only=failed)

    def quotes(self, query: str, *, k: int = 3, source: int | None = None) -> list[Retrieval]:
        """The ``k`` passages of the whole ledger (or one source) that best match
        ``query``, grouped by source in rank order, each recorded as handed out."""
        _check_k(k)
        if not search_words(query):
            raise InvalidArgument("the query has no words to search for")
        if source is not None:
            return self._quotes_in_source(query, k, source)
        terms = query_terms(query)
        found = self._store.search(search_words(query), limit=max(10 * k, _CANDIDATES))
        candidates = [(hit.context, hit.local()) for hit in found.hits]
        ranked = [index for _, index in rank_candidates(
            candidates, query, collection=found.passages, holding=found.holding)]
        # Hits the scorer finds no term in (the index stems a little differently)
        # follow in the store's order, so a search never finds less than its index.
        scored = set(ranked)
        ranked += [i for i in range(len(candidates)) if i not in scored]
        spans: dict[tuple[int, int, int], list[tuple[QuoteSpan, str]]] = {}
        seen: set[str] = set()
        for index in ranked:
            hit = found.hits[index]
            context, local = candidates[index]
            cut = cut_quote(context, local, terms)
            quote = context[cut.start : cut.end]
            if quote in seen:
                continue
            seen.add(quote)
            shifted = QuoteSpan(cut.start + hit.context_start, cut.end + hit.context_start,
                                cut.page, cut.label, cut.line)
            spans.setdefault((hit.source_id, hit.version_number, hit.version_id),
                             []).append((shifted, quote))
            if len(seen) == k:
                break
        return self._hand_out([(*key, found) for key, found in spans.items()])

    def _quotes_in_source(self, query: str, k: int, source_id: int) -> list[Retrieval]:
        self.source(source_id)
        latest = self._store.version(source_id)
        assert latest is not None
        text = latest.text
        found = select_quotes(text, self._store.passages(latest.version_id), query, k,
                              lead_if_no_match=False)
        if not found:
            return []
        return self._hand_out([(source_id, latest.number, latest.version_id,
                                [(q, text[q.start : q.end]) for q in found])])

    def _hand_out(
        self, groups: Sequence[tuple[int, int, int, Sequence[tuple[QuoteSpan, str]]]],
    ) -> list[Retrieval]:
        """The quotes found in each ``(source, version number, version id)``, recorded
        (read-only: through one writer for them all, opened once)."""
        recorded = self._record_quotes([(source_id, version_id, [
            QuoteRow(q.start, q.end, q.page, q.label, text) for q, text in found])
            for source_id, _, version_id, found in groups])
        out = []
        for (source_id, number, _, found), kept in zip(groups, recorded, strict=True):
            source = self._store.source(source_id, number)
            assert source is not None
            snippets = tuple(Snippet(source_id, number, q.start, q.end, q.page, q.label,
                                     text, line=q.line) for q, text in found)
            out.append(Retrieval(source, snippets, warnings=() if kept else (_NOT_RECORDED,)))
        return out

    def _record_quotes(self, groups: Sequence[tuple[int, int, list[QuoteRow]]]) -> list[bool]:
        """Record handed-out quotes, each group's in its own transaction; read-only,
        only when that needs no wait (another writer holding the ledger, or a read-only
        mount, leaves them unrecorded): which groups were recorded."""
        if not self.read_only:
            for source_id, version_id, rows in groups:
                self._store.record_quotes(source_id, version_id, rows)
            return [True] * len(groups)
        try:
            writer = open_store(self.path, busy_timeout=0.0)
        except LedgerError:
            return [False] * len(groups)
        try:
            return [_recorded(writer, *group) for group in groups]
        finally:
            writer.close()

    def quote(self, source_id: int, text: str) -> Retrieval:
        """Confirm ``text`` is verbatim in source ``source_id`` and register it.

        Whitespace, typographic quotes and dashes may differ; words and digits
        may not. Leading and trailing ``…`` (cut marks) are ignored. The latest
        version is searched first, then older ones. Raises QuoteNotFound (with
        the nearest real passage) when it is not there.
        """
        self.source(source_id)
        needle = text.strip().strip("…").strip()
        if not needle:
            raise InvalidArgument("the quote is empty")
        versions = self._store.versions(source_id)
        for version in versions:
            stored = version.text
            span = find_verbatim(stored, needle)
            if span is None:
                continue
            start, end = span
            page = next((p for p in self._store.passages(version.version_id)
                         if p.start <= start < max(p.end, p.start + 1)), None)
            found = QuoteSpan(start, end, page.page if page else None,
                              page.label if page else None, display_line(stored, start, end))
            return self._hand_out([(source_id, version.number, version.version_id,
                                    [(found, stored[start:end])])])[0]
        stored = versions[0].text
        nearest = nearest_passage(stored, self._store.passages(versions[0].version_id), needle)
        nearest_text = stored[nearest.start : nearest.end] if nearest else None
        raise QuoteNotFound(
            f"the text is not verbatim in source [{source_id}]",
            source_id=source_id, nearest=nearest_text,
            hint=f'nearest passage: "{nearest_text}"' if nearest_text else None)

    # --- keeping evidence checkable -------------------------------------------------

    def reextract(self, source_ids: Iterable[int] | None = None, *,
                  on_outcome: Callable[[Refreshed], None] | None = None,
                  workers: int | None = None) -> list[Refreshed]:
        """Run today's extraction again on the stored raw bytes of each source (all by
        default), no network: a text that changes becomes a new version of the same id.
        Each outcome lists the recorded quotes its latest version no longer holds.
        ``workers``: extraction processes (default one per usable core; 1: none).
        See :mod:`fetchledger.replay.reextract`."""
        from .replay import reextract

        if workers is not None and workers < 1:
            raise InvalidArgument(f"workers must be at least 1, not {workers}")
        return reextract(self, self._existing(source_ids), on_outcome, workers=workers)

    def refresh(self, source_ids: Iterable[int] | None = None, *,
                on_outcome: Callable[[Refreshed], None] | None = None) -> list[Refreshed]:
        """Retrieve each source (all by default) again, conditionally (ETag,
        Last-Modified): a 304 keeps the version, a changed page is a new version of the
        same id; each outcome lists the recorded quotes that drifted. Not offline.
        See :mod:`fetchledger.replay.refresh`."""
        from .replay import refresh

        if self.offline:
            raise InvalidArgument("refresh retrieves sources again, which --offline forbids",
                                  hint=Hint("{reextract}"))
        return refresh(self, self._existing(source_ids),
                       lambda: cast("WebAdapter", self._adapter(WebInput)), on_outcome)

    def record_unchanged(self, source_id: int, message: str) -> None:
        """Record a retrieval that found source ``source_id`` unchanged (HTTP 304): an
        ``ok`` attempt, its last retrieval time now, no new version."""
        source = self.source(source_id)
        self._store.record_unchanged(
            source_id, AttemptRow(source.kind, source.locator, "ok", message), utc_now())

    def _existing(self, source_ids: Iterable[int] | None) -> list[int]:
        """The ids asked for (every source's when None), each checked first: an unknown
        id is bad input before anything is done."""
        if source_ids is None:
            return [s.id for s in self.sources()]
        ids = list(dict.fromkeys(source_ids))
        for source_id in ids:
            self.source(source_id)
        return ids

    def reset(self) -> None:
        """Empty the ledger: every source, version, quote and attempt is deleted and
        ids start again at 1. (This ends the ledger's life; ids are not reused within it.)"""
        self._store.reset()

    def integrity_check(self) -> str:
        """The backend's own consistency check of the ledger (``"ok"`` when sound)."""
        return self._store.integrity_check()

    def claim_inputs(self, holder: str, want: Sequence[str],
                     finished: Sequence[tuple[str, str, str]], lease: float,
                     since: datetime | None, gone: Sequence[str] = ()) -> ClaimRound | None:
        """One round of batch claims on a shared ledger (:mod:`fetchledger.batch.claims`):
        None on a ledger only one machine writes (SQLite)."""
        return self._store.claim(holder, want, finished, lease=lease, since=since, gone=gone)

    def copy_to(self, destination: str | os.PathLike[str]) -> Copied:
        """Copy this whole ledger into the EMPTY ledger at ``destination`` (a file or a
        PostgreSQL URL, either backend), in one transaction: ids, versions, quotes and
        attempts unchanged. InvalidArgument, and nothing written, if it is not empty."""
        target = resolve_ledger_path(destination)
        shown = shown_location(target)
        if shown == self.location or (isinstance(target, Path)
                                      and names_ledger_file(target, self.path)):
            raise InvalidArgument(f"{shown} is the ledger being copied (or one of its files)")
        store = open_store(target, busy_timeout=self.limits.ledger_busy_timeout)
        try:
            store.import_rows(self._store.export_rows())
            return Copied(self.location, shown, store.counts())
        finally:
            store.close()


def copy_ledger(source: str | os.PathLike[str], destination: str | os.PathLike[str], *,
                limits: Limits | None = None) -> Copied:
    """Copy the ledger at ``source`` into the EMPTY ledger at ``destination`` (files or
    PostgreSQL URLs, either direction; see :meth:`Ledger.copy_to`). InvalidPath if
    ``source`` is a file that does not exist: a copy never creates its source."""
    location = resolve_ledger_path(source)
    if isinstance(location, Path) and not is_file_there(location):
        raise InvalidPath(f"no ledger at {location}",
                          hint="name an existing ledger file or a PostgreSQL URL")
    with Ledger(location, limits=limits) as ledger:
        return ledger.copy_to(destination)


def _check_k(k: int) -> None:
    check_count(k, "the number of snippets (k)", MAX_SNIPPETS)


# --- the adapters, by the input each takes -------------------------------------------------


def _web_adapter(ledger: Ledger) -> Adapter[WebInput, Any]:
    if ledger.offline:
        return _offline_adapter(ledger)
    from .adapters.web import WebAdapter  # imports httpx: only once the web is used

    return WebAdapter(ledger._client(), ledger.identity_key)


def _http_adapter(ledger: Ledger) -> Adapter[HttpInput, Any]:
    if ledger.offline:
        return _offline_adapter(ledger)
    from .adapters.http import HttpAdapter

    return HttpAdapter(ledger._client(), ledger.identity_key)


def _offline_adapter(ledger: Ledger) -> Adapter[Any, Any]:
    from .adapters.stored import OfflineAdapter

    return OfflineAdapter(ledger.stored_for, ledger.identity_key, ledger.limits)


ADAPTERS: dict[type[Any], Callable[[Ledger], Adapter[Any, Any]]] = {
    FileInput: lambda ledger: FileAdapter(ledger.limits),
    CommandInput: lambda ledger: CommandAdapter(ledger.identity_key, ledger.limits),
    PipedInput: lambda ledger: PipedAdapter(ledger.identity_key, ledger.limits),
    WebInput: _web_adapter,
    HttpInput: _http_adapter,
}
"""The one table the Ledger dispatches on: an input's type -> its adapter, made on the
Ledger's first call with such an input."""


def _recorded(writer: Store, source_id: int, version_id: int, rows: list[QuoteRow]) -> bool:
    try:
        writer.record_quotes(source_id, version_id, rows)
    except LedgerError:
        return False
    return True
