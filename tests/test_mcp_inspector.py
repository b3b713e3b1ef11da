"""The MCP server as a third-party client sees it: the MCP Inspector's CLI
(``@modelcontextprotocol/inspector --cli``, Node.js, the TypeScript SDK) starts
``fetchledger mcp`` over stdio and lists, calls and reads.

The test never installs anything: it uses ``$FETCHLEDGER_INSPECTOR`` (the path of
an installed ``mcp-inspector``) or ``mcp-inspector`` on PATH
(``npm install -g @modelcontextprotocol/inspector``), and skips, saying which,
when Node.js or the Inspector is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fetchledger import Ledger

from mcp_session import GUARD

pytestmark = pytest.mark.both_backends


def _inspector() -> str:
    if shutil.which("node") is None:
        pytest.skip("Node.js (node) is not installed: the MCP Inspector runs on it")
    found = os.environ.get("FETCHLEDGER_INSPECTOR") or shutil.which("mcp-inspector")
    if not found:
        pytest.skip("the MCP Inspector is not installed (npm install -g "
                    "@modelcontextprotocol/inspector, or FETCHLEDGER_INSPECTOR=PATH of its "
                    "mcp-inspector)")
    return found


def _run(inspector: str, server: list[str], env: dict[str, str], *method: str,
         ok: bool = True) -> Any:
    """One Inspector CLI call; its JSON answer (or, with ``ok=False``, its output)."""
    environment = [part for key, value in env.items() for part in ("-e", f"{key}={value}")]
    done = subprocess.run([inspector, "--cli", *environment, *server, "--method", *method],
                          capture_output=True, text=True, timeout=120, check=False, cwd="/")
    if not ok:
        assert done.returncode != 0, done.stdout
        return done.stdout + done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_the_inspector_lists_calls_and_reads(tmp_path: Path, ledger_path: Any) -> None:
    inspector = _inspector()
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "otters.txt").write_text("Otters hold hands while they sleep. They float.\n")
    script = Path(sys.executable).with_name("fetchledger")
    server = [str(script), "mcp", "--ledger", str(ledger_path), "--root", str(folder)]
    env = {"PYTHONPATH": str(GUARD), "FETCHLEDGER_TEST_ESCAPES": str(tmp_path / "escapes")}

    tools = {t["name"]: t for t in _run(inspector, server, env, "tools/list")["tools"]}
    assert {"fetch", "read_file", "search_quotes", "refresh", "ingest"} <= set(tools)
    for name, tool in tools.items():
        jsonschema.Draft202012Validator.check_schema(tool["outputSchema"])
        assert "k" in tool["inputSchema"]["properties"] or (
            "query" not in tool["inputSchema"]["properties"]), name

    read = _run(inspector, server, env, "tools/call", "--tool-name", "read_file",
                "--tool-arg", "path=otters.txt", "--tool-arg", "k=1")
    assert read["isError"] is False
    jsonschema.validate(read["structuredContent"], tools["read_file"]["outputSchema"])
    assert len(read["structuredContent"]["snippets"]) == 1
    source_id = read["structuredContent"]["source"]["id"]

    contents = _run(inspector, server, env, "resources/read", "--uri",
                    f"fetchledger://source/{source_id}")["contents"]
    with Ledger(ledger_path) as ledger:
        assert contents[0]["text"] == ledger.text(source_id)

    # a tool error: its structured content is checked against the schema by the
    # Inspector's SDK too (the failure branch of every outputSchema)
    failed = _run(inspector, server, env, "tools/call", "--tool-name", "read_file",
                  "--tool-arg", "path=/etc/passwd")
    assert failed["isError"] is True
    assert failed["content"][0]["text"].startswith("invalid_path: /etc/passwd is outside")

    unknown = _run(inspector, server, env, "tools/call", "--tool-name", "no_such_tool",
                   ok=False)
    assert "-32602" in unknown and "Unknown tool: no_such_tool" in unknown
    escapes = tmp_path / "escapes"
    assert not escapes.exists() or escapes.read_text() == ""
