"""The write side: render (Sources block), check (citation lint), export."""

from __future__ import annotations

import click

from fetchledger import MAX_DRAFT, read_named_text
from fetchledger.cite import (
    DOCUMENT_STYLES,
    EXPORT_FORMATS,
    STYLES,
    check,
    export,
    render,
    write_output,
)

from ._base import cli, global_options, open_ledger, print_json, settings


def read_draft(name: str) -> str:
    """The draft's text (``-`` reads standard input): the library's one reader of named
    files (bad paths, FIFOs, devices, over MAX_DRAFT bytes, not UTF-8: exit 2)."""
    return read_named_text(name, what="draft", cap=MAX_DRAFT)


@cli.command("render")
@click.argument("draft", metavar="DRAFT")
@click.option("--in-place", "-i", "in_place", is_flag=True,
              help="Write the Sources block into DRAFT itself.")
@click.option("-o", "--output", metavar="OUT",
              help="Write the rendered draft to OUT (for bibtex and csl-json: the "
                   "bibliography itself).")
@click.option("--style", type=click.Choice(STYLES), default="markdown", show_default=True,
              help="How the Sources block is written.")
@click.option("--text-fragments", is_flag=True,
              help="Link web sources to their cited quotes (#:~:text=...).")
@click.option("--renumber", is_flag=True,
              help="Number the cited sources 1..k by first appearance, in text and block.")
@global_options()
@click.pass_context
def render_command(ctx: click.Context, draft: str, in_place: bool, output: str | None,
                   style: str, text_fragments: bool, renumber: bool) -> None:
    """Write the Sources block for the ids cited in DRAFT, from the ledger.

    Without --in-place or -o, prints only the Sources block. The block goes
    between <!-- fetchledger:sources --> and <!-- /fetchledger:sources --> at
    the end of the draft; rendering again replaces only it. An id the ledger
    does not have is an error (exit 2) and nothing is written. DRAFT may be -
    for standard input.
    """
    if in_place and output is not None:
        raise click.UsageError("use --in-place or -o OUT, not both")
    if in_place and draft == "-":
        raise click.UsageError("--in-place needs a draft file, not standard input")
    if in_place and style not in DOCUMENT_STYLES:
        raise click.UsageError(
            f"--style {style} is a bibliography, not a document style: print it or use -o OUT")
    text = read_draft(draft)
    ledger = open_ledger(ctx, read_only=True)
    rendered = render(ledger, text, style=style, renumber=renumber,
                      text_fragments=text_fragments)
    written: str | None = None
    if in_place or output is not None:  # -o "" is an empty name, not "no -o"
        target = draft if in_place else str(output)
        if style in DOCUMENT_STYLES:
            content = rendered.text
        else:
            content = rendered.block + "\n" if rendered.block else ""
        if not in_place or rendered.changed:
            write_output(target, content.encode("utf-8"), ledger)
            written = target
    if settings(ctx).json:
        print_json({"style": style, "written": written, **rendered.to_json(with_text=False)})
        return
    if in_place or output is not None:
        what = f"{len(rendered.ids)} source{'' if len(rendered.ids) == 1 else 's'}"
        state = f"wrote {what} to {written}" if written else f"{draft} is up to date ({what})"
        click.echo(f"fetchledger: {state}", err=True)
    elif rendered.block:
        click.echo(rendered.block)
    else:
        click.echo("fetchledger: the draft cites no source", err=True)


@cli.command("check")
@click.argument("draft", metavar="DRAFT")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--allow-links", is_flag=True,
              help="Accept markdown links [text](url); bare URLs and autolinks stay errors.")
@global_options()
@click.pass_context
def check_command(ctx: click.Context, draft: str, strict: bool, allow_links: bool) -> None:
    """Check DRAFT's citations against the ledger.

    Errors: unknown id, quotation not verbatim, URL typed in the draft, cited
    id missing from the Sources block. Warnings: marker placement, grouped
    ids, more than 3 ids in a sentence, figures found in no cited source,
    uncited sentences in a paragraph that cites, Sources block missing, stale
    or listing uncited ids. Exit 1 on an error (or any finding with --strict),
    else 0; 2 for bad arguments or an unreadable draft. DRAFT may be -.
    """
    text = read_draft(draft)
    ledger = open_ledger(ctx, read_only=True)
    report = check(ledger, text, allow_links=allow_links, strict=strict)
    name = "<stdin>" if draft == "-" else draft
    if settings(ctx).json:
        print_json(report.to_json())
    else:
        for problem in report.problems:
            click.echo("\n".join(problem.text_lines(name)))
        click.echo(f"fetchledger: {report.summary(name)}", err=True)
    ctx.exit(report.exit_code)


@cli.command("export")
@click.option("--format", "format_", type=click.Choice(EXPORT_FORMATS), required=True,
              help="pack (a folder), csl-json, bibtex or warc (.warc or .warc.gz).")
@click.option("-o", "--output", metavar="PATH", required=True,
              help="Where to write (a new or empty folder for pack).")
@click.option("--cited-by", metavar="DRAFT",
              help="Only the sources DRAFT cites (its [n] markers, read as render reads "
                   "them; - reads stdin). An id the ledger lacks is exit 2.")
@click.option("--with-raw", is_flag=True,
              help="pack: add each version's raw bytes (raw/N-vV.bin), so raw_sha256 can "
                   "be checked.")
@global_options()
@click.pass_context
def export_command(ctx: click.Context, format_: str, output: str, cited_by: str | None,
                   with_raw: bool) -> None:
    """Export the ledger's sources: an evidence pack, CSL-JSON, BibTeX or WARC.

    Every source, or with --cited-by only those a draft cites. Offsets in a
    pack (start, end, page bounds) count code points of the stored text.
    """
    draft = read_draft(cited_by) if cited_by is not None else None
    ledger = open_ledger(ctx, read_only=True)
    summary = export(ledger, format_, output, cited_by=draft, with_raw=with_raw)
    if settings(ctx).json:
        print_json(summary.to_json())
    else:
        click.echo(f"fetchledger: {summary.line()}", err=True)
