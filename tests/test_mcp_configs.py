"""The ready-to-paste client configurations in adapters/mcp/ start a working server.

Each file is read as its client reads it (the documented top-level key and
fields), its placeholders are filled as the client (or the user) would fill
them, and the server it describes is started with the SDK's stdio client: it
lists the tools and reads a file under its root into the ledger it names, started in
``/`` as desktop clients start servers: no configuration depends on its working
directory.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import MCP_TOOL_CONTRACT as CONTRACT
from conftest import rows
from mcp_session import McpSession, text_of

CONFIGS = Path(__file__).resolve().parent.parent / "adapters" / "mcp"
TOOLS = set(CONTRACT) - {"run_command"}  # every tool but the one --allow-command offers

# file -> (top-level key, how the client starts the server, placeholder -> meaning)
CLIENTS = {
    "claude-desktop.json": ("mcpServers", "absolute --root and --ledger, filled in by the user",
                            {"/Users/you/research": "project"}),
    "claude-code.json": ("mcpServers", "absolute --root and --ledger, filled in by the user",
                         {"/Users/you/research": "project"}),
    "cursor.json": ("mcpServers", "${workspaceFolder} filled in",
                    {"${workspaceFolder}": "project"}),
    "vscode.json": ("servers", "${workspaceFolder} filled in", {"${workspaceFolder}": "project"}),
    "mcp.json": ("mcpServers", "generic: absolute --root and --ledger, filled in by the user",
                 {"/Users/you/research": "project"}),
}


def _entry(name: str) -> dict[str, Any]:
    config = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    key = CLIENTS[name][0]
    assert list(config) == [key], name
    entry = config[key]["fetchledger"]
    assert isinstance(entry, dict)
    return entry


def _fill(value: str, project: Path, placeholders: dict[str, str]) -> str:
    for placeholder in placeholders:
        value = value.replace(placeholder, str(project))
    return value


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.md").write_text("Kelp forests grow up to half a metre a day.\n")
    yield folder


def test_every_config_is_documented() -> None:
    files = {p.name for p in CONFIGS.glob("*.json")}
    assert files == set(CLIENTS)
    guide = (CONFIGS / "README.md").read_text(encoding="utf-8")
    for name in CLIENTS:
        assert f"`{name}`" in guide, name


@pytest.mark.parametrize("name", sorted(CLIENTS))
def test_config_starts_a_working_server(name: str, project: Path, tmp_path: Path) -> None:
    entry = _entry(name)
    assert entry["command"] == "fetchledger" and entry["args"][0] == "mcp"
    if name == "vscode.json":
        assert entry["type"] == "stdio"  # VS Code requires the transport type
    placeholders = CLIENTS[name][2]
    args = [_fill(arg, project, placeholders) for arg in entry["args"]]
    env = {key: _fill(value, project, placeholders)
           for key, value in (entry.get("env") or {}).items()}
    script = shutil.which("fetchledger", path=str(Path(sys.executable).parent))
    assert script, "the fetchledger console script is installed beside this Python"
    # every configuration starts from any working directory: / as desktop clients do
    assert placeholders, f"{name} depends on the working directory it is started in"
    session = McpSession(args, cwd=Path("/"), workdir=tmp_path / "logs", env=env,
                         command=script)
    try:
        assert set(session.tools()) == TOOLS
        result = session.call("read_file", path=str(project / "notes.md"))
        assert not result.is_error, text_of(result)
    finally:
        session.close()
    assert session.stray == [] and session.stderr() == "" and session.escapes() == []
    ledger = project / ".fetchledger" / "ledger.db"
    assert rows(ledger, "SELECT locator FROM source") == [(str(project / "notes.md"),)]
