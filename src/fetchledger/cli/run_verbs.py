"""The ``run`` verb: run a command and register its output as a source."""

from __future__ import annotations

import click

from fetchledger import command_line

from ._base import (
    Seconds,
    cli,
    emit_outcomes,
    global_options,
    k_option,
    open_ledger,
    query_option,
)


@cli.command(context_settings={"ignore_unknown_options": True,
                               "allow_interspersed_args": False})
@click.option("--timeout", type=Seconds(min=0, min_open=True), metavar="S",
              help="Kill the command (and its process group) after S seconds, 0.01 to "
                   "86,400 [default: 60].")
@click.option("--cwd", metavar="DIR", help="Run in DIR (part of the source's identity).")
@click.option("--shell", is_flag=True,
              help="Run CMD ARGS... joined with spaces as one `sh -c` script.")
@click.option("--stderr", "with_stderr", is_flag=True,
              help="Capture stderr too, merged with stdout as 2>&1 would.")
@click.option("--require-success", is_flag=True,
              help="Fail (exit 3, status command_failed) when the command exits non-zero.")
@query_option
@k_option(3)
@global_options()
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD ARGS...")
@click.pass_context
def run(ctx: click.Context, argv: tuple[str, ...], timeout: float | None, cwd: str | None,
        shell: bool, with_stderr: bool, require_success: bool, query: str | None,
        k: int) -> None:
    """Run a command (no shell) and register its output as a numbered source.

    The source is the command line and the working directory; each distinct
    output is a version of it. A command that exits non-zero is still
    registered, with its exit status in the header, and fetchledger exits 0,
    unless --require-success. Secrets in arguments (--token=..., -H
    "Authorization: ...") are redacted in what is stored and shown.

        fetchledger run -- git log --oneline -5
    """
    ledger = open_ledger(ctx)
    outcomes = ledger.collect(
        [list(argv)],
        lambda command: ledger.run(command, timeout=timeout, cwd=cwd, shell=shell,
                                   stderr=with_stderr, require_success=require_success,
                                   query=query, k=k),
        shown=lambda command: command_line(command, shell=shell))
    emit_outcomes(ctx, outcomes)
