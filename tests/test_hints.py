"""Hints name things to do as each front says them (fetchledger.hints): the CLI its
verbs, the MCP server its tools. No library string outside the phrase table names a
CLI verb, so no hint can reach an MCP client phrased for a terminal."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import fetchledger
from fetchledger import UnknownSource, tool_error_lines
from fetchledger.cli import cli
from fetchledger.hints import ACTIONS, Hint, phrased

ROOT = Path(fetchledger.__file__).parent
VERBS = sorted(set(cli.commands) - {"mcp"})
# "fetchledger render", "`render DRAFT", "`quotes WORDS": a CLI verb named as a command
CLI_VERB = re.compile(rf"\bfetchledger (?:{'|'.join(VERBS)})\b|`(?:{'|'.join(VERBS)}) [A-Z-]")


# The phrase table, and the parser of curl command lines (only the CLI's curl verb reads
# one: MCP's http_request takes method, url, headers and body as arguments).
CLI_ONLY = {Path("hints.py"), Path("adapters/curl_args.py")}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_no_library_string_names_a_cli_verb() -> None:
    """Outside the CLI and the phrase table, a string that names a CLI verb is a hint
    phrased for one front only (docstrings and comments are for readers of the code)."""
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] == "cli" or relative in CLI_ONLY:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in skip and CLI_VERB.search(node.value)):
                offenders.append(f"{relative}:{node.lineno}: {node.value!r}")
    assert offenders == []


def test_every_action_is_phrased_for_both_fronts() -> None:
    for name, phrases in ACTIONS.items():
        assert set(phrases) == {"cli", "mcp"}, name
        assert not CLI_VERB.search(phrases["mcp"]), name
    hint = Hint("{render} to rewrite the Sources block")
    assert hint == "run `fetchledger render DRAFT --in-place` to rewrite the Sources block"
    assert phrased(hint, "cli") == hint
    assert phrased(hint, "mcp") == ("call render(text) and use the text it returns to "
                                    "rewrite the Sources block")
    assert phrased("a plain hint", "mcp") == "a plain hint" and phrased(None, "mcp") is None


def test_values_are_filled_as_given_and_survive_pickling() -> None:
    hint = Hint('nearest passage: "{text}"; {quotes} more', text="set {braces} {render}")
    assert hint == ('nearest passage: "set {braces} {render}"; `fetchledger quotes WORDS '
                    '--source N` finds more')
    copy = pickle.loads(pickle.dumps(hint))
    assert copy == hint and copy.phrased("mcp") == hint.phrased("mcp")
    assert "search_quotes(query, source=N)" in copy.phrased("mcp")


def test_an_mcp_tool_error_names_tools() -> None:
    error = UnknownSource(7)
    assert error.hint == "`fetchledger list` shows the ids this ledger has"  # the CLI's
    assert tool_error_lines(error) == [
        "unknown_source: no source [7] in this ledger",
        "hint: the server's resources (fetchledger://source/N) list the ids this ledger has"]
