"""The batch verbs: many URLs at once, registered, resumable (DESIGN §6); ``ingest`` takes
them from search results and records where the search found each source."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import click

from fetchledger import (
    MAX_INPUT_LIST,
    BatchOutcome,
    Failure,
    InvalidArgument,
    InvalidPath,
    Retrieval,
    batch_json_line,
    batch_summary,
    exit_code_for,
    read_batch_inputs,
    read_named_text,
    read_search_results,
)

from ._base import (
    F,
    WholeNumber,
    cli,
    global_options,
    k_option,
    open_ledger,
    query_option,
    settings,
)


def _batch_options(function: F) -> F:
    """The options of batch retrieval, shared by ``batch`` and ``ingest``."""
    for option in reversed([
        click.argument("file", metavar="FILE|-"),
        query_option,
        k_option(3),
        click.option("--concurrency", type=WholeNumber(min=1), default=32,
                     show_default=True, help="Requests in flight at once."),
        click.option("--per-host", type=WholeNumber(min=1), default=4, show_default=True,
                     help="Requests in flight per host (host name and port)."),
        click.option("--refresh", is_flag=True,
                     help="Fetch inputs that already have a source again (a changed page "
                          "becomes a new version of the same id)."),
        click.option("--no-robots", is_flag=True, help="Ignore robots.txt (honoured by default)."),
        click.option("--render", type=click.Choice(["auto", "always", "never"]), default="auto",
                     show_default=True,
                     help="Run pages' JavaScript in headless Chromium (2 browsers at once): "
                          "auto = only pages that are empty shells without it."),
    ]):
        function = option(function)
    return function


@cli.command()
@_batch_options
@global_options()
@click.pass_context
def batch(ctx: click.Context, file: str, query: str | None, k: int, concurrency: int,
          per_host: int, refresh: bool, no_robots: bool, render: str) -> None:
    """Fetch many URLs concurrently and register each; a re-run resumes.

    \b
    FILE (or - for stdin) holds one URL per line, or one JSON object per line:
      {"url": "https://...", "query": "ranking words", "k": 5}
    Blank lines and lines starting with # are ignored.

    Inputs that already have a source are skipped (their header line is
    printed) unless --refresh; inputs that failed before are tried again.
    Connection errors, HTTP 429 and 503 are retried, honouring Retry-After.
    Prints the header and snippet lines of `fetch` as inputs finish (--json:
    one JSON line per input), a progress bar on a terminal, and a summary by
    status on stderr. Exit 2 if any input was bad, else 3 if any retrieval
    failed, else 0.
    """
    name, text = _read(file)
    inputs = read_batch_inputs(text.splitlines())
    if not inputs:
        raise InvalidArgument(f"no URLs in {name} (blank lines and # comments are ignored)")
    ledger = open_ledger(ctx)
    _run(ctx, "batch", len(inputs), lambda emit: ledger.batch(
        inputs, query=query, k=k, concurrency=concurrency, per_host=per_host,
        refresh=refresh, robots=not no_robots, on_outcome=emit, render=render))


@cli.command()
@_batch_options
@click.option("--search-query", metavar="TEXT",
              help="The query the results answer, when the file does not say.")
@click.option("--engine", metavar="NAME",
              help="The search engine, when the file does not say.")
@global_options()
@click.pass_context
def ingest(ctx: click.Context, file: str, query: str | None, k: int, concurrency: int,
           per_host: int, refresh: bool, no_robots: bool, render: str,
           search_query: str | None, engine: str | None) -> None:
    """Retrieve the results of a search and record where the search found each source.

    \b
    FILE (or - for stdin) holds search results as a search API returns them:
    a JSON list of results, or one under "results" (SearXNG, Tavily, Exa),
    "web" (Brave), "organic" (Serper), "organic_results" (SerpAPI), "items"
    (Google), "data" (Firecrawl, Jina) or "webPages" (Bing), each with a
    "url" or "link"; or one result object per line; or one URL per line.

    Every URL is retrieved as `batch` retrieves it (same options, output and
    exit codes), and every source records its search provenance (query,
    engine, rank, the result's title and snippet): `show N --json` shows it
    under "search", exports keep it. Snippets are ranked for the search query
    unless -q. The search's own snippet is never handed out as a quote. Bad
    JSON or no URL: exit 2, nothing recorded.
    """
    name, text = _read(file)
    found = read_search_results(text, name=name, query=search_query, engine=engine)
    ledger = open_ledger(ctx)
    _run(ctx, "ingest", len(found.inputs), lambda emit: ledger.ingest(
        found, query=query, k=k, concurrency=concurrency, per_host=per_host,
        refresh=refresh, robots=not no_robots, on_outcome=emit, render=render))


def _read(name: str) -> tuple[str, str]:
    """The input list's name and its text (UTF-8, a BOM skipped), read by the library's one
    reader of named files (bad paths, FIFOs, devices, over MAX_INPUT_LIST bytes: exit 2)."""
    return name, read_named_text(name, what="list of inputs", cap=MAX_INPUT_LIST,
                                 error=InvalidPath)


def _run(ctx: click.Context, verb: str, total: int,
         work: Callable[[Callable[[BatchOutcome, str], None]], list[BatchOutcome]]) -> None:
    """Run a batch, printing each outcome as it finishes and the summary at the end."""
    started = time.monotonic()
    with _Output(as_json=settings(ctx).json, total=total) as output:
        outcomes = work(output.emit)
    seconds = time.monotonic() - started
    click.echo(f"fetchledger: {verb}: {batch_summary(outcomes, seconds)}", err=True)
    ctx.exit(exit_code_for(o for o in outcomes if isinstance(o, (Retrieval, Failure))))


class _Output:
    """Prints each outcome as it finishes, with a progress bar when stderr is a terminal."""

    def __init__(self, *, as_json: bool, total: int) -> None:
        self.as_json = as_json
        self.total = total
        self.progress: Any = None
        self.task: Any = None
        self.stdout_is_terminal = sys.stdout.isatty()

    def __enter__(self) -> _Output:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("batch"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TimeRemainingColumn(), console=Console(stderr=True), transient=True,
                # Stray writes go above the bar too; stdout only when it is the terminal
                # (redirected output must not end up on stderr).
                redirect_stdout=self.stdout_is_terminal, redirect_stderr=True)
            self.progress.start()
            self.task = self.progress.add_task("batch", total=self.total)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self.progress is not None:
            self.progress.stop()

    def emit(self, outcome: BatchOutcome, shown: str) -> None:
        if self.as_json:
            self._line(batch_json_line(outcome, shown))
        elif not isinstance(outcome, Failure):
            for line in outcome.text_lines():
                self._line(line)
        if isinstance(outcome, Failure):
            for line in outcome.error_lines():
                self._line(line, err=True)
        elif isinstance(outcome, Retrieval) and not self.as_json:
            for line in outcome.warning_lines():
                self._line(line, err=True)
        if self.progress is not None:
            self.progress.advance(self.task)

    def _line(self, text: str, *, err: bool = False) -> None:
        """One line, above the progress bar while it is drawn on the same terminal;
        never wrapped or read as markup."""
        if self.progress is not None and (err or self.stdout_is_terminal):
            from rich.text import Text

            self.progress.console.print(Text(text), soft_wrap=True)
        else:
            click.echo(text, err=err)
