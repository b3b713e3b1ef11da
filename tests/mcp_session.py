"""A real MCP client session with ``python -m fetchledger mcp ...`` for synchronous tests.

The server runs as a subprocess, spoken to over stdio by the SDK's own client
(``mcp.Client`` on ``stdio_client``), exactly as an agent's host would. An
anyio blocking portal keeps the client's event loop in a thread, so one
server process serves many tests and each call is a plain function call.

- ``notifications``: the method of every notification the server sent.
- ``stray``: anything the server wrote on stdout that was not a JSON-RPC
  message (the SDK hands it to the message handler as an exception).
- ``stderr()``: what the server logged.
- ``escapes()``: non-loopback connects the server attempted; the guard in
  ``tests/mcp_guard/sitecustomize.py`` refuses them before a packet leaves.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, Tool

from fetchledger import json_schema
from fetchledger.cli import cli

GUARD = Path(__file__).resolve().parent / "mcp_guard"
VERBS = "|".join(sorted(set(cli.commands) - {"mcp"}))
CLI_VERB = re.compile(rf"\bfetchledger (?:{VERBS})\b")


class McpSession:
    def __init__(self, args: Sequence[str], *, cwd: Path, workdir: Path,
                 env: dict[str, str] | None = None, mode: str = "legacy",
                 command: str | None = None) -> None:
        """Start ``python -m fetchledger ARGS...`` (or ``COMMAND ARGS...``) in ``cwd``;
        ``workdir`` receives its stderr and the guard's log."""
        workdir.mkdir(parents=True, exist_ok=True)
        self.args = list(args)
        self.escape_log = workdir / "escapes.log"
        self.stderr_path = workdir / "stderr.log"
        self.stray: list[Exception] = []
        self.notifications: list[str] = []  # the methods of the notifications received
        self._schemas: dict[str, dict[str, Any] | None] | None = None
        environment = {"PYTHONPATH": str(GUARD), "FETCHLEDGER_TEST_ESCAPES": str(self.escape_log),
                       **(env or {})}
        params = StdioServerParameters(
            command=command or sys.executable,
            args=self.args if command else ["-m", "fetchledger", *self.args],
            cwd=str(cwd), env=environment)
        self._errlog = open(self.stderr_path, "w+", encoding="utf-8")  # noqa: SIM115
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        client = Client(stdio_client(params, errlog=self._errlog), mode=mode,  # type: ignore[arg-type]
                        message_handler=self._on_message, read_timeout_seconds=60)
        self._client_cm = self.portal.wrap_async_context_manager(client)
        try:
            self.client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.stray.append(message)
        else:
            self.notifications.append(message.method)

    def tools(self) -> dict[str, Tool]:
        listed = self.portal.call(self.client.list_tools)
        return {tool.name: tool for tool in listed.tools}

    def call(self, name: str, **arguments: Any) -> CallToolResult:
        """Call a tool; its structured content is checked against the tool's declared
        outputSchema (a tool error's against the failure shape too) before it is returned."""
        result: CallToolResult = self.portal.call(self.client.call_tool, name, arguments)
        self.validate(name, result)
        return result

    def validate(self, name: str, result: CallToolResult) -> None:
        """The structured content has the declared shape, and no text names a CLI verb
        (an agent on MCP cannot run one: hints name the tools)."""
        for block in result.content:
            text = getattr(block, "text", "")
            assert not CLI_VERB.search(text), (name, text)
        assert not CLI_VERB.search(json.dumps(result.structured_content)), name
        if self._schemas is None:
            self._schemas = {n: t.output_schema for n, t in self.tools().items()}
        schema = self._schemas[name]
        assert schema is not None, f"{name} declares no outputSchema"
        jsonschema.Draft202012Validator(schema).validate(result.structured_content)
        if result.is_error:  # and it is a failure, not a result that failed
            jsonschema.validate(result.structured_content, json_schema("failure"))

    def call_many(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[CallToolResult]:
        """Send the calls at once (concurrent requests on one session)."""

        async def run() -> list[CallToolResult]:
            results: list[CallToolResult | None] = [None] * len(calls)

            async def one(index: int, name: str, arguments: dict[str, Any]) -> None:
                results[index] = await self.client.call_tool(name, arguments)

            async with anyio.create_task_group() as group:
                for index, (name, arguments) in enumerate(calls):
                    group.start_soon(one, index, name, arguments)
            return [r for r in results if r is not None]

        results = self.portal.call(run)
        for (name, _), result in zip(calls, results, strict=True):
            self.validate(name, result)
        return results

    def stderr(self) -> str:
        if not self._errlog.closed:
            self._errlog.flush()
        return self.stderr_path.read_text(encoding="utf-8")

    def escapes(self) -> list[str]:
        assert self.escape_log.exists(), "the socket guard was not loaded into the server"
        return self.escape_log.read_text(encoding="utf-8").splitlines()

    def close(self) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._errlog.close()


def text_of(result: CallToolResult) -> str:
    """The one text block of a result."""
    assert len(result.content) == 1 and result.content[0].type == "text", result.content
    return result.content[0].text

