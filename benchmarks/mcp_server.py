"""MCP server: the cost of a tool call over stdio, beside the library call it wraps.

A `fetchledger mcp` subprocess is driven by the MCP SDK's stdio client. Reported
per operation: median and p95 latency of the tool call, and in the same run the
same work done in-process (`Ledger.read` / `Ledger.quotes`) on a ledger opened
per call with no other connection (the last close checkpoints the WAL), on a
ledger opened per call beside one kept open (what the server does), and on one
ledger kept open. Also:
the server's start (spawn to first tool list) and the concurrent throughput of
read_file calls sent at once on one session.

    python benchmarks/mcp_server.py [--calls 100]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).parent))
from fetchledger import Ledger

from _common import median_ms, percentile_ms, table

TEXT = ("The harbour wall was raised by two metres after the storm of 1953. "
        "Tide gauges at the pier recorded a surge of 3.9 metres.\n") * 40


def timed(action: Callable[[], object], calls: int) -> list[float]:
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - started)
    return seconds


async def over_stdio(folder: Path, calls: int) -> dict[str, list[float]]:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "fetchledger", "mcp", "--ledger", str(folder / "mcp.db"), "--root", str(folder)])
    results: dict[str, list[float]] = {"start": [], "read_file": [], "search_quotes": [],
                                       "concurrent": []}
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        results["start"].append(time.perf_counter() - started)
        for name, arguments in (("read_file", {"path": "notes.txt"}),
                                ("search_quotes", {"query": "storm surge"})):
            for _ in range(calls):
                begun = time.perf_counter()
                result = await client.call_tool(name, arguments)
                results[name].append(time.perf_counter() - begun)
                assert not result.is_error, result.content
        begun = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(calls):
                group.start_soon(client.call_tool, "read_file", {"path": "notes.txt"})
        results["concurrent"].append(time.perf_counter() - begun)
    return results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "notes.txt").write_text(TEXT, encoding="utf-8")
        stdio = anyio.run(over_stdio, folder, calls)
        path = folder / "direct.db"

        def read_fresh() -> None:
            with Ledger(path) as ledger:
                ledger.read(folder / "notes.txt")

        def quotes_fresh() -> None:
            with Ledger(path) as ledger:
                ledger.quotes("storm surge")

        alone = timed(read_fresh, calls), timed(quotes_fresh, calls)
        with Ledger(path) as kept:  # another connection open, as the server keeps one
            beside = timed(read_fresh, calls), timed(quotes_fresh, calls)
            kept_open = (timed(lambda: kept.read(folder / "notes.txt"), calls),
                         timed(lambda: kept.quotes("storm surge"), calls))

    rows = []
    for index, (label, over) in enumerate((
            ("read_file / Ledger.read", stdio["read_file"]),
            ("search_quotes / Ledger.quotes", stdio["search_quotes"]))):
        rows.append([label, median_ms(over), percentile_ms(over, 0.95),
                     median_ms(alone[index]), median_ms(beside[index]),
                     median_ms(kept_open[index])])
    print(table(["operation", "MCP median ms", "MCP p95 ms",
                 "in-process: ledger per call, alone ms",
                 "ledger per call, another connection open ms",
                 "one ledger kept open ms"], rows))
    print()
    concurrent = stdio["concurrent"][0]
    print(table(["server start (spawn to tool list) s", f"{calls} concurrent read_file calls s",
                 "calls/s"], [[stdio["start"][0], concurrent, calls / concurrent]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
