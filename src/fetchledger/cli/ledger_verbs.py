"""Verbs over the ledger itself: read (files), quotes, quote, list, show, reset, copy."""

from __future__ import annotations

import sys

import click

from fetchledger import copy_ledger, parse_passage_range, standard_input

from ._base import (
    Integer,
    cli,
    emit_outcomes,
    emit_retrievals,
    global_options,
    k_option,
    open_ledger,
    print_json,
    query_option,
    settings,
)


@cli.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@query_option
@k_option(3)
@click.option("--pages", metavar="A-B",
              help="Quote only from these pages of a PDF (N, A-B, A-, -B); a page past the "
                   "last one is an error.")
@click.option("--password", metavar="P", help="Password of an encrypted PDF.")
@click.option("--label", metavar="NAME",
              help="For `-`: what produced the piped text (e.g. the command line).")
@global_options()
@click.pass_context
def read(ctx: click.Context, paths: tuple[str, ...], query: str | None, k: int,
         pages: str | None, password: str | None, label: str | None) -> None:
    """Read local PDF, HTML, Markdown or text files and register each.

    `-` reads text piped on stdin (output you already hold) as a source named
    by --label.
    """
    ledger = open_ledger(ctx)
    stdin = standard_input() if "-" in paths else None
    emit_outcomes(ctx, ledger.read_many(paths, query=query, k=k, pages=pages,
                                         password=password, stdin=stdin, label=label))


@cli.command()
@click.argument("words", nargs=-1, required=True, metavar="QUERY")
@k_option(3)
@click.option("--source", "source_id", type=Integer(), metavar="N",
              help="Search only source N.")
@global_options()
@click.pass_context
def quotes(ctx: click.Context, words: tuple[str, ...], k: int, source_id: int | None) -> None:
    """Search every stored passage of the ledger (BM25) and hand out the best.

    It only reads the ledger: the quotes it hands out are recorded when that needs no
    wait (a warning says when they were not: another writer held the ledger, or it
    cannot be written)."""
    ledger = open_ledger(ctx, read_only=True)
    found = ledger.quotes(" ".join(words), k=k, source=source_id)
    emit_retrievals(ctx, found)
    if not found and not settings(ctx).json:
        click.echo("fetchledger: no passage matches the query", err=True)


@cli.command()
@click.argument("source_id", type=Integer(), metavar="N")
@click.argument("words", nargs=-1, required=True, metavar="TEXT")
@global_options()
@click.pass_context
def quote(ctx: click.Context, source_id: int, words: tuple[str, ...]) -> None:
    """Confirm TEXT is verbatim in source N, register the quote, print where it is.

    Exits 1 (and registers nothing) when TEXT is not in the source, showing the
    nearest real passage.
    """
    ledger = open_ledger(ctx)
    found = ledger.quote(source_id, " ".join(words))
    if settings(ctx).json:
        print_json(found.to_json())
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
    ledger = open_ledger(ctx, read_only=True)
    as_json = settings(ctx).json
    if failed:
        attempts = ledger.attempts(failed=True)
        if as_json:
            print_json([a.to_json() for a in attempts])
        for attempt in [] if as_json else attempts:
            click.echo(attempt.text_line())
        return
    sources = ledger.sources()
    if as_json:
        print_json([s.to_json(with_versions=True) for s in sources])
        return
    for source in sources:
        click.echo(source.list_line())


@cli.command()
@click.argument("source_id", type=Integer(), metavar="N")
@click.option("--text", "as_text", is_flag=True,
              help="Print the stored text of the latest version exactly, nothing else.")
@click.option("--passages", metavar="A-B",
              help="Read passages A to B in order, one snippet line each (N, A-B, A-, -B); "
                   "a window ends with the passage to go on from.")
@click.option("--pages", metavar="A-B",
              help="Read these pages of a paged source (PDF); a page past the last one is "
                   "an error.")
@click.option("--outline", is_flag=True,
              help="List only the headings, each with its passage number.")
@click.option("--limit", type=Integer(), metavar="CHARS",
              help="At most this many characters of lines (default 4,000; 100,000 for "
                   "A-B or --pages); whole passages only.")
@global_options()
@click.pass_context
def show(ctx: click.Context, source_id: int, as_text: bool, passages: str | None,
         pages: str | None, outline: bool, limit: int | None) -> None:
    """Show one source: metadata and versions, its stored text, or a window of it.

    With --passages, --pages or --outline it reads the latest version in order:
    each line is a snippet (`[N] "passage"`, a heading led by `§ `) that can be
    cited as it is; reading records no quote.
    """
    ledger = open_ledger(ctx, read_only=True)
    if passages or pages or outline or limit is not None:
        if as_text:
            raise click.UsageError("--text prints the whole text; it takes no --passages, "
                                   "--pages, --outline or --limit")
        first, last = parse_passage_range(passages) if passages else (1, None)
        reading = ledger.read_source(source_id, first, last=last, limit=limit, pages=pages,
                                     outline=outline)
        if settings(ctx).json:
            print_json(reading.to_json())
        else:
            click.echo("\n".join(reading.text_lines()))
        return
    if as_text:
        sys.stdout.write(ledger.text(source_id))
        sys.stdout.flush()
        return
    details = ledger.details(source_id)
    if settings(ctx).json:
        print_json(details.to_json())
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
    ledger = open_ledger(ctx)
    ledger.reset()
    click.echo(f"fetchledger: emptied {ledger.location}", err=True)


@cli.command()
@click.argument("source_ledger", metavar="SRC")
@click.argument("destination", metavar="DST")
@global_options()
@click.pass_context
def copy(ctx: click.Context, source_ledger: str, destination: str) -> None:
    """Copy a whole ledger into an empty one, across backends, ids unchanged.

    SRC and DST are ledger files or PostgreSQL URLs (postgresql://...), in
    either direction. DST must be empty (a new file, an empty database or
    schema); the copy is one transaction, all or nothing.
    """
    copied = copy_ledger(source_ledger, destination)
    if settings(ctx).json:
        print_json(copied.to_json())
    else:
        click.echo(f"fetchledger: {copied.text_line()}", err=True)
