"""The agent-side files: tool schemas match the MCP contract (DESIGN §6) and the CLI,
and SKILL.md teaches the citation rules check enforces."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fetchledger.cite import RULES, STYLES
from fetchledger.cli import cli

from conftest import MCP_TOOL_CONTRACT as CONTRACT

ADAPTERS = Path(__file__).resolve().parent.parent / "adapters"

def _tools(name: str) -> dict[str, tuple[str, dict[str, Any]]]:
    data = json.loads((ADAPTERS / "tools" / name).read_text(encoding="utf-8"))
    assert isinstance(data, list)
    if name == "openai.json":
        assert all(tool["type"] == "function" for tool in data)
        return {t["function"]["name"]: (t["function"]["description"],
                                        t["function"]["parameters"]) for t in data}
    return {t["name"]: (t["description"], t["input_schema"]) for t in data}


@pytest.mark.parametrize("name", ["anthropic.json", "openai.json"])
def test_tool_schemas_match_the_contract(name: str) -> None:
    tools = _tools(name)
    assert set(tools) == set(CONTRACT)
    for tool, (description, schema) in tools.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        required, optional = CONTRACT[tool]
        assert set(schema["required"]) == required, tool
        assert set(schema["properties"]) == required | optional, tool
        assert len(description) > 40 and "fetchledger" in description
        for prop in schema["properties"].values():
            assert prop.get("description"), tool


def test_both_files_describe_the_same_tools() -> None:
    assert _tools("anthropic.json") == _tools("openai.json")


def test_argument_types_and_values() -> None:
    tools = _tools("anthropic.json")
    valid = {
        "fetch": {"url": "https://example.org", "query": "boiling", "k": 3},
        "http_request": {"method": "POST", "url": "https://api.example.org",
                         "headers": {"Accept": "application/json"}, "body": "{}"},
        "read_file": {"path": "report.pdf", "pages": "3-5", "password": "x"},
        "run_command": {"argv": ["python3", "--version"], "timeout": 10},
        "search_quotes": {"query": "boiling", "k": 2, "source": 3},
        "get_source": {"id": 3},
        "read_source": {"id": 3, "start": 41, "limit": 2000, "pages": "12-14", "version": 1,
                        "outline": True},
        "render": {"text": "Water.[1]", "style": "footnotes"},
        "check": {"text": "Water.[1]"},
    }
    for tool, arguments in valid.items():
        jsonschema.validate(arguments, tools[tool][1])
    invalid = [("fetch", {"url": "https://x", "k": 0}), ("run_command", {"argv": []}),
               ("get_source", {"id": "3"}), ("render", {"text": "x", "style": "apa"}),
               ("read_file", {"path": "x", "pages": "three"}), ("check", {}),
               ("read_source", {"id": 3, "start": 0}), ("read_source", {"start": 2})]
    for tool, arguments in invalid:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(arguments, tools[tool][1])
    # render's styles are exactly the CLI's
    assert tools["render"][1]["properties"]["style"]["enum"] == list(STYLES)
    render_style = next(p for p in cli.commands["render"].params if p.name == "style")
    assert list(render_style.type.choices) == list(STYLES)  # type: ignore[attr-defined]


def test_mcp_client_config_starts_the_server() -> None:
    config = json.loads((ADAPTERS / "mcp" / "mcp.json").read_text(encoding="utf-8"))
    server = config["mcpServers"]["fetchledger"]
    assert server["command"] == "fetchledger" and server["args"][0] == "mcp"
    assert "--root" in server["args"] and "--ledger" in server["args"]


def test_skill_teaches_the_rules() -> None:
    text = (ADAPTERS / "SKILL.md").read_text(encoding="utf-8")
    front = re.match(r"^---\nname: (\S+)\ndescription: (.+?)\n---\n", text, re.DOTALL)
    assert front and front.group(1) == "fetchledger"
    for rule in ("sea level.[3]", "[3][7]", "At most 3 ids", "Never type a URL",
                 "Take figures from the quoted words", "render", "check"):
        assert rule.lower() in text.lower(), rule
    for rule in RULES:  # every check rule is named, so an agent can read a finding
        assert f"`{rule}`" in text, rule
    for tool in CONTRACT:
        assert f"{tool}(" in text or tool in ("render", "check"), tool


def test_skill_shows_the_flow_in_order() -> None:
    """search → ingest → quotes → write → render → check → refresh, each step naming
    its MCP tool (the skill is also the MCP server's prompt) and its CLI verb."""
    text = (ADAPTERS / "SKILL.md").read_text(encoding="utf-8")
    flow = text.split("## The flow", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d\. \*\*(\w+)\*\*", flow, re.MULTILINE)
    assert steps == ["Search", "Ingest", "Quotes", "Write", "Render", "Check", "Refresh"]
    for tool, verb in (("ingest(results)", "fetchledger ingest"),
                       ("search_quotes(query", "fetchledger\n   quotes"),
                       ("render(text)", "fetchledger render"), ("check(text)", "fetchledger check"),
                       ("refresh(all=true)", "fetchledger\n   refresh")):
        assert tool in flow and verb in flow, tool
