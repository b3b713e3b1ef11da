"""Verbs over the web: fetch (pages and any URL) and curl (curl-style requests)."""

from __future__ import annotations

import click

from fetchledger import BadInput, Failure, Outcome, RetrievalFailed, parse_curl

from ._base import cli, emit_outcomes, global_options, k_option, open_ledger, query_option, settings


@cli.command()
@click.argument("urls", nargs=-1, required=True, metavar="URL...")
@query_option
@k_option(3)
@click.option("--robots", is_flag=True,
              help="Honour robots.txt: a disallowed URL fails with robots_denied.")
@click.option("--render", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True,
              help="Run the page's JavaScript in headless Chromium: auto = only pages that "
                   "are empty shells without it.")
@global_options()
@click.pass_context
def fetch(ctx: click.Context, urls: tuple[str, ...], query: str | None, k: int,
          robots: bool, render: str) -> None:
    """Fetch web pages or any http(s) URL and register each.

    HTML gives its main text and metadata; PDF, JSON, plain text, Markdown
    and CSV are read by content type. Redirects are followed (at most 10,
    each hop checked by the address policy); loopback and private addresses
    need --allow-private or --allow-host NAME.

    A page built by JavaScript (little or no text without it) is rendered in
    headless Chromium, every request it makes checked by the same address
    policy; without Chromium the plain result stands, with a warning.
    """
    ledger = open_ledger(ctx)
    emit_outcomes(ctx, ledger.fetch_many(urls, query=query, k=k, robots=robots,
                                         render=render))


@cli.command(context_settings={"ignore_unknown_options": True,
                               "allow_interspersed_args": False})
@click.argument("args", nargs=-1, required=True, type=click.UNPROCESSED, metavar="ARGS...")
@global_options(json_flag=False)
@click.pass_context
def curl(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Send a curl-style request and register the response.

    \b
    Understood as curl does: -X METHOD, -H 'Name: value' (or -H @FILE, one
    header a line; @- reads stdin), -d/--data, --data-raw, --data-binary,
    --data-urlencode, --json DATA, -G, -u USER:PASS, -A AGENT, -e REFERER,
    -b 'name=value', -L, -I, -m/--max-time S, --connect-timeout S, the URL
    anywhere. Without -L a redirect is not followed (an http_error naming
    its target), as in curl.

    \b
    Accepted, and always so here:
      -f, --fail        an HTTP status >= 400 is always a failed retrieval:
                        recorded as an attempt, exit 3, no id (an error page
                        is not a source, so there is no body to print)
      -s, --silent      there is no progress meter; results go to stdout
      -S, --show-error  an error is always one line on stderr
      --compressed      gzip, deflate and brotli are always asked for and
                        decoded (within the decoded-size cap)
      -N, --no-progress-meter, --no-buffer   nothing to turn off

    \b
    Refused, each with its reason: -v/--verbose and -w/--write-out (the
    exchange is registered, not printed: `fetchledger show N --json` lists
    its HTTP facts; --json before the verb prints the result as JSON),
    --retry (a failure is recorded; run again, or `batch`, whose re-run
    retries failed inputs), -o/-O (no files), -k (no TLS opt-out), -x,
    --resolve, --connect-to (they would bypass the address policy), -F, -T.

    \b
    fetchledger's own options may stand anywhere: --ledger PATH,
    --allow-private, --allow-host NAME, --query Q (rank snippets),
    --snippets N (how many, default 3). For JSON output put --json before
    the verb (`fetchledger --json curl ...`): after it, --json is curl's
    JSON body.

    A GET without a body is the same source as `fetch URL`. Authorization,
    Cookie and API-key headers, user-info and secret query parameters are
    sent but never stored or shown; so are tokens known by their shape
    (ghp_..., xoxb-..., AKIA..., JWTs...) anywhere in the request and the
    secret part of webhook URLs (Slack, Discord, Telegram, Teams...).
    """
    command = parse_curl(args)  # bad input fails here: exit 2, nothing recorded
    own = command.options
    chosen = settings(ctx)
    if own.ledger:
        chosen.ledger = own.ledger
    if own.allow_private:
        chosen.allow_private = True
    chosen.allow_hosts.extend(own.allow_hosts)
    ledger = open_ledger(ctx)
    outcome: Outcome
    try:
        outcome = ledger.curl(command, query=own.query, k=own.k or 3)
    except (BadInput, RetrievalFailed) as error:
        outcome = Failure.from_error(command.shown, error)
    emit_outcomes(ctx, [outcome])
