"""Verbs that keep evidence checkable after the web moves: refresh and reextract."""

from __future__ import annotations

from collections.abc import Callable

import click

from fetchledger import Refreshed, chosen_sources, json_text, refresh_exit_code

from ._base import WholeNumber, cli, echo_lines, global_options, open_ledger, settings

_IDS = click.argument("source_ids", nargs=-1, type=WholeNumber(min=1), metavar="[N...]")
_ALL = click.option("--all", "every", is_flag=True, help="Every source of the ledger.")


def _printer(ctx: click.Context) -> Callable[[Refreshed], None]:
    """Each outcome as it is known: a JSON line, or its text lines (errors on stderr)."""
    as_json = settings(ctx).json

    def emit(outcome: Refreshed) -> None:
        if as_json:
            click.echo(json_text(outcome.to_json(), indent=None))
        elif outcome.error is None:
            echo_lines(outcome.text_lines())
        if outcome.error is not None:
            echo_lines(outcome.error_lines(), err=True)

    return emit


@cli.command()
@_IDS
@_ALL
@global_options()
@click.pass_context
def refresh(ctx: click.Context, source_ids: tuple[int, ...], every: bool) -> None:
    """Fetch sources again and report every recorded quote that is no longer verbatim.

    \b
    Web pages are fetched conditionally (If-None-Match / If-Modified-Since
    from the first response's ETag / Last-Modified): an unchanged page costs
    a 304 and keeps its version; a changed page becomes a new version of the
    same id. Files are read again. Commands, non-GET requests and URLs that
    carried secrets are skipped (nothing to repeat them with).

    Text: one line per source, then `[N] drifted: "QUOTE" (version V,
    characters A-B)` for each recorded quote the latest version no longer
    holds. --json: one JSON line per source, {"source", "changed", "version",
    "drifted": [{"quote", "start", "end", "version"}]}. Exit 1 when a quote
    drifted, 3 when a retrieval failed (recorded as an attempt; the source
    keeps its versions), 2 for an unknown id (nothing done).
    """
    chosen = chosen_sources(source_ids, every)
    ledger = open_ledger(ctx)
    ctx.exit(refresh_exit_code(ledger.refresh(chosen, on_outcome=_printer(ctx))))


@cli.command()
@_IDS
@_ALL
@global_options()
@click.pass_context
def reextract(ctx: click.Context, source_ids: tuple[int, ...], every: bool) -> None:
    """Run today's extraction again on the stored raw bytes; no network.

    A text that changes becomes a new version of the same id, recording the
    new extractor version; ids never change. This is how a ledger built
    before an extraction fix gets the fix. A version whose raw bytes were
    capped when stored is skipped. Output and exit codes as `refresh`
    (exit 3 when stored bytes could not be extracted again).
    """
    chosen = chosen_sources(source_ids, every)
    ledger = open_ledger(ctx)
    ctx.exit(refresh_exit_code(ledger.reextract(chosen, on_outcome=_printer(ctx))))
