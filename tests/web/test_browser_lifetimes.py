"""Issue 13, nothing left running, for the browser: any death of fetchledger mid-render
(SIGTERM, SIGINT, SIGHUP, SIGKILL; the MCP client closing stdin) leaves no process of
the render — the render process, Playwright's driver, Chromium and its helpers, the
reaper — within 2 s of it.

Real Chromium, real signals, through the front ends people run: ``fetch --render
always``, the MCP ``fetch`` tool and ``batch``. The page (``/app/never``) holds an image
that never answers, so the render is in flight until its deadline; the kill comes once
Chromium asked for that image. Every process carries a mark in its environment and
its end is seen through its pidfd (``tests/procs.py``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from fetchledger.adapters.browser import unavailable_reason
from procs import SIGNALS, Run, marked

from .webserver import LoopbackServer

REQUIRED = os.environ.get("FETCHLEDGER_TEST_BROWSER") == "1"
pytestmark = pytest.mark.skipif(unavailable_reason() is not None and not REQUIRED,
                                reason=f"no browser: {unavailable_reason()}")

# python (fetchledger), the render process, Playwright's driver, Chromium (and helpers)
RENDERING = 4


def _mid_render(run: Run, web: LoopbackServer, before: int) -> None:
    """Wait until Chromium asked for the image that never comes (the render is in flight)
    and its processes are up."""
    deadline = time.monotonic() + 40
    while "/stall-headers" not in [hit.path for hit in web.hits[before:]]:
        assert time.monotonic() < deadline, "Chromium never asked for the stalled image"
        assert run.process.poll() is None, "fetchledger ended before the render"
        time.sleep(0.05)
    assert len(marked(run.mark)) >= RENDERING, marked(run.mark)


@pytest.mark.parametrize("how", SIGNALS)
def test_fetch_killed_mid_render_leaves_no_browser_process(web: LoopbackServer, tmp_path: Path,
                                                           how: str) -> None:
    before = len(web.hits)
    run = Run(["fetch", "--allow-host", "127.0.0.1", "--render", "always",
               web.url("/app/never")], tmp_path, stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
    _mid_render(run, web, before)
    run.kill_and_check(how, "fetch --render always, mid-render")


@pytest.mark.parametrize("how", ["stdin", *SIGNALS])
def test_the_mcp_server_leaves_no_browser_process_mid_fetch(web: LoopbackServer,
                                                             tmp_path: Path, how: str) -> None:
    before = len(web.hits)
    run = Run(["mcp", "--allow-host", "127.0.0.1"], tmp_path, stdin=subprocess.PIPE,
              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    run.call_mcp_tool("fetch", {"url": web.url("/app/never"), "render": "always"},
                      "browser-lifetimes")
    _mid_render(run, web, before)
    run.kill_and_check(how, "mcp, mid fetch with render")
    assert run.process.returncode is not None


@pytest.mark.parametrize("how", SIGNALS)
def test_batch_killed_mid_render_leaves_no_browser_process(web: LoopbackServer, tmp_path: Path,
                                                           how: str) -> None:
    before = len(web.hits)
    urls = tmp_path / "urls.txt"
    urls.write_text(f"{web.url('/app/never')}\n{web.url('/app/never?second')}\n")
    run = Run(["batch", "--allow-host", "127.0.0.1", "--no-robots", "--render", "always",
               str(urls)], tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _mid_render(run, web, before)
    run.kill_and_check(how, "batch --render always, mid-render")
