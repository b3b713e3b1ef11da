"""The command group, global options, and output helpers every verb module uses."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

import click

from fetchledger import (
    Failure,
    FetchLedgerError,
    Ledger,
    Outcome,
    Retrieval,
    __version__,
    children_die_on_interrupt,
    error_json,
    error_json_of,
    error_lines,
    exit_code_for,
    json_text,
)

__all__ = [
    "F",
    "Integer",
    "Seconds",
    "Settings",
    "WholeNumber",
    "cli",
    "echo_lines",
    "emit_outcomes",
    "emit_retrievals",
    "global_options",
    "k_option",
    "main",
    "open_ledger",
    "print_json",
    "query_option",
    "settings",
]

F = TypeVar("F", bound=Callable[..., Any])


# --- global options -----------------------------------------------------------------


@dataclass
class Settings:
    """The global options, gathered from before and after the verb."""

    ledger: str | None = None
    json: bool = False
    allow_private: bool | None = None
    allow_hosts: list[str] = field(default_factory=list)
    offline: bool = False

    def open(self, *, read_only: bool = False) -> Ledger:
        return Ledger(self.ledger, allow_private=self.allow_private,
                      allow_hosts=self.allow_hosts, offline=self.offline,
                      read_only=read_only)


def settings(ctx: click.Context) -> Settings:
    root = ctx.find_root()
    settings = root.meta.get("fetchledger.settings")
    if settings is None:
        settings = root.meta["fetchledger.settings"] = Settings()
    assert isinstance(settings, Settings)
    return settings


def _set_ledger(ctx: click.Context, _: click.Parameter, value: str | None) -> None:
    if value is not None:
        settings(ctx).ledger = value


def _set_json(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        settings(ctx).json = True
        _JSON_WANTED[0] = True


def _set_private(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        settings(ctx).allow_private = True


def _add_hosts(ctx: click.Context, _: click.Parameter, value: Sequence[str]) -> None:
    settings(ctx).allow_hosts.extend(value)


def _set_offline(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        settings(ctx).offline = True


def global_options(*, json_flag: bool = True) -> Callable[[F], F]:
    """``--ledger``, ``--json``, ``--allow-private``, ``--allow-host`` and ``--offline``,
    accepted before the verb and by every verb (``curl`` keeps ``--json`` for itself)."""

    def decorate(function: F) -> F:
        options = [
            click.option("--ledger", metavar="PATH|URL", expose_value=False,
                         callback=_set_ledger,
                         help="Ledger file, or a PostgreSQL URL postgresql://... for a "
                              "shared ledger (default: $FETCHLEDGER_LEDGER, else the nearest "
                              ".fetchledger/ledger.db upwards, else a new one here)."),
            click.option("--allow-private", is_flag=True, expose_value=False,
                         callback=_set_private,
                         help="Allow loopback and private addresses "
                              "(also FETCHLEDGER_ALLOW_PRIVATE=1)."),
            click.option("--allow-host", "allow_hosts", metavar="NAME", multiple=True,
                         expose_value=False, callback=_add_hosts,
                         help="Allow this host name even on a private address (repeatable)."),
            click.option("--offline", is_flag=True, expose_value=False, callback=_set_offline,
                         help="Answer fetch, curl, batch and MCP fetches from the ledger's "
                              "stored raw bytes only; never open a socket (a URL the ledger "
                              "lacks is an offline_miss, exit 3)."),
        ]
        if json_flag:
            options.append(click.option("--json", "json_output", is_flag=True,
                                        expose_value=False, callback=_set_json,
                                        help="Print JSON instead of text."))
        for option in reversed(options):
            function = option(function)
        return function

    return decorate


def open_ledger(ctx: click.Context, *, read_only: bool = False) -> Ledger:
    """The ledger of the global options; ``read_only`` for verbs that only read it (they
    create no ledger, take no lock, and work on a read-only mount)."""
    ledger = settings(ctx).open(read_only=read_only)
    ctx.call_on_close(ledger.close)
    return ledger


# --- output -----------------------------------------------------------------------------


def print_json(data: Any) -> None:
    click.echo(json_text(data))


def echo_lines(lines: Sequence[str], *, err: bool = False) -> None:
    for line in lines:
        click.echo(line, err=err)


def emit_outcomes(ctx: click.Context, outcomes: Sequence[Outcome]) -> None:
    """Print registered inputs (text or JSON), failures on stderr, and exit with
    2 if any input was bad, else 3 if any retrieval failed, else 0."""
    as_json = settings(ctx).json
    if as_json:
        print_json([o.to_json() for o in outcomes])
    else:
        echo_lines([line for o in outcomes if isinstance(o, Retrieval)
                    for line in o.text_lines()])
    for outcome in outcomes:
        if isinstance(outcome, Failure):
            echo_lines(outcome.error_lines(), err=True)
        elif not as_json:
            echo_lines(outcome.warning_lines(), err=True)
    ctx.exit(exit_code_for(outcomes))


def emit_retrievals(ctx: click.Context, retrievals: Sequence[Retrieval]) -> None:
    if settings(ctx).json:
        print_json([r.to_json() for r in retrievals])
    else:
        for retrieval in retrievals:
            click.echo("\n".join(retrieval.text_lines()))
            echo_lines(retrieval.warning_lines(), err=True)


# --- the command group --------------------------------------------------------------------


# Whether this run asked for JSON: set by --json as it is parsed, so that a failure
# after the context is gone (or before the verb ran) still prints its JSON object.
_JSON_WANTED = [False]


class FetchLedgerGroup(click.Group):
    """Maps every expected failure to one error line (and, under ``--json``, one JSON
    error object on stdout) and its exit code."""

    def main(self, *args: Any, **kwargs: Any) -> NoReturn:
        kwargs["standalone_mode"] = False
        given = list(args[0] if args else kwargs.get("args") or sys.argv[1:])
        _JSON_WANTED[0] = False
        try:
            with children_die_on_interrupt():
                code = super().main(*args, **kwargs)
        except FetchLedgerError as error:
            _fail(error.message, error.hint, error.exit_code, error_json_of(error), given)
        except click.exceptions.NoArgsIsHelpError as error:
            click.echo(error.ctx.get_help() if error.ctx else str(error), err=True)
            _fail_json(error_json("invalid_argument", "no verb given",
                                  "see `fetchledger --help`"), given)
            sys.exit(2)
        except click.UsageError as error:
            verb = error.ctx.command_path if error.ctx else "fetchledger"
            hint = f"see `{verb} --help`"
            _fail(error.format_message(), hint, error.exit_code,
                  error_json("invalid_argument", error.format_message(), hint), given)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.Abort:
            _fail("aborted", None, 130, error_json("interrupted", "aborted"), given)
        except KeyboardInterrupt:
            _fail("interrupted", None, 130, error_json("interrupted", "interrupted"), given)
        sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, hint: str | None, code: int, data: dict[str, Any],
          given: Sequence[str]) -> NoReturn:
    echo_lines(error_lines(message, hint), err=True)
    _fail_json(data, given)
    sys.exit(code)


def _fail_json(data: dict[str, Any], given: Sequence[str]) -> None:
    if _JSON_WANTED[0] or _json_among(given):
        print_json(data)


def _json_among(given: Sequence[str]) -> bool:
    """``--json`` among fetchledger's own arguments: not after ``--`` (a command's), nor
    after ``curl`` (its JSON body)."""
    for word in given:
        if word in ("--", "curl"):
            return False
        if word == "--json":
            return True
    return False


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


query_option = click.option("-q", "--query", metavar="Q", help="Rank passages for this query.")


_WHOLE = re.compile(r"[+-]?[0-9]+")
_SECONDS = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)",
                      re.IGNORECASE)


class WholeNumber(click.IntRange):
    """A whole number written in ASCII digits (an optional sign, nothing else: Python's
    ``int`` would also read ``1_0`` as 10, `` 3``, ``３`` and ``٣``)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _WHOLE.fullmatch(value):
            self.fail(f"{value!r} is not a valid integer (ASCII digits 0-9)", param, ctx)
        return super().convert(value, param, ctx)


class Integer(click.types.IntParamType):
    """:class:`WholeNumber` without bounds (an id: the ledger says which exist)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        return WholeNumber().convert(value, param, ctx)


class Seconds(click.FloatRange):
    """A number of seconds written in ASCII (``2``, ``0.5``, ``1e3``; ``inf`` and ``nan``
    reach the documented bound's message), never ``1_0`` or other digits."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _SECONDS.fullmatch(value):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        return super().convert(value, param, ctx)


def k_option(default: int) -> Callable[[F], F]:
    return click.option("-k", "k", type=WholeNumber(min=1), default=default,
                        show_default=True, help="How many snippets to hand out.")


def main() -> None:
    """Console-script entry point."""
    cli.main(prog_name="fetchledger")
