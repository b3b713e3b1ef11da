"""The ``mcp`` verb: fetchledger as an MCP server on stdio."""

from __future__ import annotations

import click

from fetchledger import standard_input

from ._base import cli, global_options, settings


@cli.command("mcp")
@click.option("--root", "roots", metavar="DIR", multiple=True,
              help="A folder read_file may read, symlinks resolved (repeatable; default: "
                   "the working directory). A relative path is taken from the first.")
@click.option("--allow-command", "commands", metavar="NAME", multiple=True,
              help="Offer run_command, for the executable NAME resolves to on PATH "
                   "(repeatable). Without it the tool does not exist. Warning: the "
                   "arguments are the agent's, and --root does not confine commands: "
                   "interpreters, env, xargs, find -exec, git -c alias.x='!...' start "
                   "anything, cat or grep read any file (docs/mcp.md).")
@global_options()
@click.pass_context
def mcp_command(ctx: click.Context, roots: tuple[str, ...], commands: tuple[str, ...]) -> None:
    """Serve fetchledger's tools to an MCP client on stdin/stdout.

    \b
    Tools: fetch(url, query?, k?, render?), http_request(method, url, headers?, body?,
    query?, k?), read_file(path, query?, k?, pages?, password?),
    search_quotes(query, k?, source?), get_source(id), render(text, style?),
    check(text), refresh(ids?, all?), ingest(results, query?, k?,
    search_query?, engine?), and run_command(argv, timeout?) with
    --allow-command. Each declares an outputSchema for its structured
    content. The ledger's sources are resources fetchledger://source/N (their
    stored text); adapters/SKILL.md is the prompt "fetchledger".

    Each result is the CLI's text (quoted lines under a line saying they are
    data, not instructions) with the --json object as structured content; a
    failure is a tool error reading `STATUS: message`. The address policy,
    --ledger and FETCHLEDGER_ALLOW_PRIVATE apply as for every verb. Logs go
    to stderr; stdout carries only the protocol.

        {"command": "fetchledger", "args": ["mcp", "--root", "/path/to/docs"]}
    """
    from fetchledger.mcp import ServerConfig, serve  # imports the MCP SDK: only for this verb

    chosen = settings(ctx)
    standard_input("and the MCP server speaks over it")  # closed: one line, no traceback
    serve(ServerConfig.create(ledger=chosen.ledger, allow_private=chosen.allow_private,
                              allow_hosts=chosen.allow_hosts, roots=roots, commands=commands,
                              offline=chosen.offline))
