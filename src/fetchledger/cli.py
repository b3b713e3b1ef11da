"""The ``fetchledger`` command line: a thin front end over :class:`fetchledger.Ledger`.

Each command parses its options, calls one library function, and prints the
result (DESIGN §5 text or ``--json``). Library errors carry their own exit code
and become one ``fetchledger: error: ...`` line on stderr (plus a hint).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

import click

from ._version import __version__
from .errors import FetchLedgerError, QuoteNotFound
from .ledger import Ledger
from .results import Failure, Outcome, Retrieval, exit_code_for, outcomes_json, outcomes_text

__all__ = ["cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])


# --- global options -----------------------------------------------------------------


@dataclass
class Settings:
    """The global options, gathered from before and after the verb."""

    ledger: str | None = None
    json: bool = False
    allow_private: bool | None = None
    allow_hosts: list[str] = field(default_factory=list)

    def open(self) -> Ledger:
        return Ledger(self.ledger, allow_private=self.allow_private,
                      allow_hosts=self.allow_hosts)


def _settings(ctx: click.Context) -> Settings:
    root = ctx.find_root()
    settings = root.meta.get("fetchledger.settings")
    if settings is None:
        settings = root.meta["fetchledger.settings"] = Settings()
    assert isinstance(settings, Settings)
    return settings


def _set_ledger(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is not None:
        _settings(ctx).ledger = value


def _set_json(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        _settings(ctx).json = True


def _set_private(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        _settings(ctx).allow_private = True


def _add_hosts(ctx: click.Context, _: click.Parameter, value: Sequence[str]) -> None:
    _settings(ctx).allow_hosts.extend(value)


def global_options(*, json_flag: bool = True) -> Callable[[F], F]:
    """``--ledger``, ``--json``, ``--allow-private`` and ``--allow-host``, accepted
    before the verb and by every verb (``curl`` keeps ``--json`` for itself)."""

    def decorate(function: F) -> F:
        options = [
            click.option("--ledger", metavar="PATH", expose_value=False, callback=_set_ledger,
                         help="Ledger file (default: $FETCHLEDGER_LEDGER, else the nearest "
                              ".fetchledger/ledger.db upwards, else a new one here)."),
            click.option("--allow-private", is_flag=True, expose_value=False,
                         callback=_set_private,
                         help="Allow loopback and private addresses "
                              "(also FETCHLEDGER_ALLOW_PRIVATE=1)."),
            click.option("--allow-host", "allow_hosts", metavar="NAME", multiple=True,
                         expose_value=False, callback=_add_hosts,
                         help="Allow this host name even on a private address (repeatable)."),
        ]
        if json_flag:
            options.append(click.option("--json", "json_output", is_flag=True,
                                        expose_value=False, callback=_set_json,
                                        help="Print JSON instead of text."))
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def _with_ledger(ctx: click.Context) -> Ledger:
    ledger = _settings(ctx).open()
    ctx.call_on_close(ledger.close)
    return ledger


# --- output -----------------------------------------------------------------------------


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _warn(message: str) -> None:
    click.echo(f"fetchledger: warning: {message}", err=True)


def _emit_outcomes(ctx: click.Context, outcomes: Sequence[Outcome]) -> None:
    """Print registered inputs (text or JSON), failures on stderr, and exit with
    2 if any input was bad, else 3 if any retrieval failed, else 0."""
    as_json = _settings(ctx).json
    if as_json:
        click.echo(outcomes_json(outcomes))
    else:
        text = outcomes_text(outcomes)
        if text:
            click.echo(text)
    for outcome in outcomes:
        if isinstance(outcome, Failure):
            click.echo(outcome.error_line(), err=True)
            if outcome.hint:
                click.echo(f"hint: {outcome.hint}", err=True)
        elif not as_json:
            for warning in outcome.warnings:
                _warn(f"[{outcome.source.id}] {warning}")
    ctx.exit(exit_code_for(outcomes))


def _emit_retrievals(ctx: click.Context, retrievals: Sequence[Retrieval]) -> None:
    if _settings(ctx).json:
        _print_json([r.to_json() for r in retrievals])
    else:
        for retrieval in retrievals:
            click.echo("\n".join(retrieval.text_lines()))


# --- the command group --------------------------------------------------------------------


class FetchLedgerGroup(click.Group):
    """Maps every expected failure to one error line and its exit code."""

    def main(self, *args: Any, **kwargs: Any) -> NoReturn:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except FetchLedgerError as error:
            _fail(error.message, error.hint, error.exit_code)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.ctx.get_help() if error.ctx else str(error), err=True)
            sys.exit(2)
        except click.UsageError as error:
            verb = error.ctx.command_path if error.ctx else "fetchledger"
            _fail(error.format_message(), f"see `{verb} --help`", error.exit_code)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            _fail("aborted", None, 130)
        except KeyboardInterrupt:
            _fail("interrupted", None, 130)
        sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, hint: str | None, code: int) -> NoReturn:
    click.echo(f"fetchledger: error: {' '.join(message.split())}", err=True)
    if hint:
        click.echo(f"hint: {' '.join(hint.split())}", err=True)
    sys.exit(code)


@click.group(cls=FetchLedgerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@global_options()
@click.version_option(__version__, prog_name="fetchledger")
def cli() -> None:
    """Retrieve sources, register each in a numbered ledger, and quote them verbatim.

    Every retrieval registers its source in the same call and prints numbered
    snippets such as [3] "At sea level, water boils at 100 °C." Cite with the
    number; `render` builds the Sources block and `check` proves the draft.

    Exit codes: 0 ok, 1 check found problems, 2 bad input, 3 retrieval failed,
    4 ledger unusable.
    """


_query = click.option("-q", "--query", metavar="Q", help="Rank passages for this query.")


def _k_option(default: int) -> Callable[[F], F]:
    return click.option("-k", "k", type=click.IntRange(min=1), default=default,
                        show_default=True, help="How many snippets to hand out.")


@cli.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@_query
@_k_option(3)
@click.option("--pages", metavar="A-B", help="Quote only from these pages of a PDF (N, A-B, A-).")
@click.option("--password", metavar="P", help="Password of an encrypted PDF.")
@global_options()
@click.pass_context
def read(ctx: click.Context, paths: tuple[str, ...], query: str | None, k: int,
         pages: str | None, password: str | None) -> None:
    """Read local PDF, HTML, Markdown or text files and register each."""
    ledger = _with_ledger(ctx)
    _emit_outcomes(ctx, ledger.read_many(paths, query=query, k=k, pages=pages,
                                         password=password))


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="QUERY")
@_k_option(3)
@click.option("--source", "source_id", type=int, metavar="N", help="Search only source N.")
@global_options()
@click.pass_context
def quotes(ctx: click.Context, words: tuple[str, ...], k: int, source_id: int | None) -> None:
    """Search every stored passage of the ledger (BM25) and hand out the best."""
    ledger = _with_ledger(ctx)
    found = ledger.quotes(" ".join(words), k=k, source=source_id)
    _emit_retrievals(ctx, found)
    if not found and not _settings(ctx).json:
        click.echo("fetchledger: no passage matches the query", err=True)


@cli.command()
@click.argument("source_id", type=int, metavar="N")
@click.argument("words", nargs=-1, required=True, metavar="TEXT")
@global_options()
@click.pass_context
def quote(ctx: click.Context, source_id: int, words: tuple[str, ...]) -> None:
    """Confirm TEXT is verbatim in source N, register the quote, print where it is.

    Exits 1 (and registers nothing) when TEXT is not in the source, showing the
    nearest real passage.
    """
    ledger = _with_ledger(ctx)
    try:
        found = ledger.quote(source_id, " ".join(words))
    except QuoteNotFound as error:
        if _settings(ctx).json:
            _print_json({"input": " ".join(words), "error": {
                "status": error.status, "message": error.message, "nearest": error.nearest}})
        raise
    if _settings(ctx).json:
        _print_json(found.to_json())
        return
    snippet = found.snippets[0]
    click.echo("\n".join(found.text_lines()))
    click.echo(f"  verbatim in version {snippet.version}, characters "
               f"{snippet.start}-{snippet.end}")


@cli.command("list")
@click.option("--failed", is_flag=True, help="List failed attempts instead of sources.")
@global_options()
@click.pass_context
def list_(ctx: click.Context, failed: bool) -> None:
    """List the ledger's sources (or, with --failed, its failed attempts)."""
    ledger = _with_ledger(ctx)
    as_json = _settings(ctx).json
    if failed:
        attempts = ledger.attempts(failed=True)
        if as_json:
            _print_json([a.to_json() for a in attempts])
        for attempt in [] if as_json else attempts:
            click.echo(attempt.text_line())
        return
    sources = ledger.sources()
    if as_json:
        _print_json([s.to_json(with_versions=True) for s in sources])
        return
    for source in sources:
        versions = f", {source.versions} versions" if source.versions > 1 else ""
        click.echo(f"{source.header()}  ({source.kind}{versions}, {source.last_retrieved})")


@cli.command()
@click.argument("source_id", type=int, metavar="N")
@click.option("--text", "as_text", is_flag=True,
              help="Print the stored text of the latest version exactly, nothing else.")
@global_options()
@click.pass_context
def show(ctx: click.Context, source_id: int, as_text: bool) -> None:
    """Show one source: metadata and versions, or its stored text."""
    ledger = _with_ledger(ctx)
    if as_text:
        sys.stdout.write(ledger.text(source_id))
        sys.stdout.flush()
        return
    details = ledger.details(source_id)
    if _settings(ctx).json:
        _print_json(details.to_json())
    else:
        click.echo("\n".join(details.text_lines()))


@cli.command()
@click.option("--yes", is_flag=True, help="Really delete everything in the ledger.")
@global_options()
@click.pass_context
def reset(ctx: click.Context, yes: bool) -> None:
    """Delete every source, quote and attempt; ids start again at [1]."""
    if not yes:
        raise click.UsageError("reset deletes the whole ledger; pass --yes to confirm")
    ledger = _with_ledger(ctx)
    ledger.reset()
    click.echo(f"fetchledger: emptied {ledger.path}", err=True)


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="fetchledger")
