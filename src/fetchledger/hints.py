"""Hints that name something to do, phrased for the front that shows them.

A hint such as "run `fetchledger render DRAFT --in-place`" is right on a terminal
and wrong for an agent that has only the MCP tools, which cannot run a CLI verb.
So a hint names its action by key (``Hint("{render} to rewrite the Sources
block")``) and each front phrases it from :data:`ACTIONS`: the CLI with its
verbs, the MCP server with its tools. A :class:`Hint` *is* its CLI phrasing (a
``str``: stderr lines, ``--json`` and logs need nothing new);
:func:`phrased` gives the phrasing of a front. Library code names no CLI verb
anywhere else (``tests/test_hints.py`` reads the source to hold it so).
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["ACTIONS", "Front", "Hint", "phrased"]

Front = Literal["cli", "mcp"]

# action -> how each front says it. Each phrase reads in the templates that use it.
ACTIONS: dict[str, dict[Front, str]] = {
    "render": {"cli": "run `fetchledger render DRAFT --in-place`",
               "mcp": "call render(text) and use the text it returns"},
    "list": {"cli": "`fetchledger list` shows",
             "mcp": "the server's resources (fetchledger://source/N) list"},
    "retrievals": {"cli": "fetch, read, run or quotes",
                   "mcp": "fetch, http_request, read_file, run_command, ingest or "
                          "search_quotes"},
    "refresh": {"cli": "`fetchledger refresh` shows", "mcp": "refresh(ids) shows"},
    "quotes": {"cli": "`fetchledger quotes WORDS --source N` finds",
               "mcp": "search_quotes(query, source=N) finds"},
    "read": {"cli": "use `fetchledger read PATH`", "mcp": "call read_file(path)"},
    "read_piped": {"cli": "pipe its content with `fetchledger read -` instead",
                   "mcp": "read_file reads regular files only"},
    "label": {"cli": 'e.g. fetchledger read - --label "git log -5"',
              "mcp": "run_command(argv) registers a command's output with its command line"},
    "pipe_label": {"cli": 'e.g. git log -5 | fetchledger read - --label "git log -5"',
                   "mcp": "run_command(argv) registers a command's output with its command "
                          "line"},
    "run": {"cli": "fetchledger run -- CMD ARGS...", "mcp": 'run_command(argv=["CMD", "ARG"])'},
    "no_robots": {"cli": "fetch without --robots to ignore robots.txt",
                  "mcp": "fetch(url) does not read robots.txt"},
    "reextract": {"cli": "reextract runs today's extraction on the stored bytes",
                  "mcp": "this server was started with --offline: it fetches nothing again"},
}


class Hint(str):
    """A hint whose ``{action}`` fields (keys of :data:`ACTIONS`) each front phrases;
    other fields are filled from ``values`` as given. The string is the CLI phrasing."""

    template: str
    values: dict[str, str]

    def __new__(cls, template: str, **values: str) -> Hint:
        hint = super().__new__(cls, _phrase(template, "cli", values))
        hint.template, hint.values = template, values
        return hint

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Pickled (errors cross process boundaries in batch) as the template."""
        return (self.template,), self.values

    def phrased(self, front: Front) -> str:
        return _phrase(self.template, front, self.values)


def phrased(hint: str | None, front: Front) -> str | None:
    """``hint`` as ``front`` says it (a plain string is the same on every front)."""
    return hint.phrased(front) if isinstance(hint, Hint) else hint


def _phrase(template: str, front: Front, values: dict[str, str]) -> str:
    actions = {name: phrases[front] for name, phrases in ACTIONS.items()}
    return template.format_map({**actions, **values})
