"""JavaScript pages through headless Chromium, every request under the address policy.

``fetch --render auto|always|never`` (DESIGN §6, §8): with ``auto`` (the
default) a page is rendered only when the plain fetch gives an empty shell —
little or no main text, and a page built by scripts (:func:`wants_render`).
:class:`Browser` renders one already-fetched HTML response:

- a :class:`~fetchledger.net.proxy.PolicyProxy` on 127.0.0.1 carries every
  request the page makes, opened by the HTTP client's guarded connect (the
  address policy checked on the address connected to); refusals are counted
  in the version's metadata and named in a warning, never followed;
- a render process of its own (:mod:`fetchledger.adapters.chromium`) drives
  Debian's Chromium through Playwright with a fresh profile folder, serves
  the main document from the fetched bytes, refuses downloads, popups,
  service workers and schemes other than http(s), and hands back the DOM;
- one deadline (``Limits.render_timeout``, 30 s) for the whole render, a cap
  on the DOM (``Limits.max_dom_bytes``) and on the bytes the page pulls in
  (``Limits.max_render_traffic``);
- the whole browser process tree dies with the call: the render process is
  a child subreaper that kills everything below it when its stdin closes
  (this call ended, or fetchledger died, SIGKILL included); whatever still
  carries this render's mark in its environment is then killed as well.

The rendered DOM becomes the response's body (the raw bytes stored); the
version records the browser as its extractor.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Literal

import httpx

from .._version import __version__
from ..config import Limits
from ..errors import InvalidArgument, RenderFailed, RetrievalFailed, RetrievalTimeout, TooLarge
from ..identity.urls import redact_url
from ..net.client import HTTPResponse
from ..net.connections import Budget, Resolver
from ..net.policy import AddressPolicy
from ..net.proxy import PolicyProxy, ProxyLog
from .children import Child, interpreter_argv, is_alive, start_reaper
from .chromium import INTERNAL_HOST

__all__ = [
    "RENDER_MODES",
    "Browser",
    "RenderMode",
    "RenderedPage",
    "check_render_mode",
    "chromium_executable",
    "looks_script_built",
    "unavailable_reason",
    "wants_render",
]

RenderMode = Literal["auto", "always", "never"]
RENDER_MODES: tuple[RenderMode, ...] = ("auto", "always", "never")
ENV_CHROMIUM = "FETCHLEDGER_CHROMIUM"
_DEBIAN_CHROMIUM = "/usr/lib/chromium/chromium"  # the binary behind Debian's /usr/bin wrapper
_MARK = "FETCHLEDGER_RENDER"  # in the environment of every process of one render
_PROFILE_PREFIX = "fetchledger-render-"
_RENDER_ENTRY = "fetchledger.adapters.chromium:main"
# Headers of the fetched response that do not describe the decoded body served again.
_NOT_SERVED = frozenset({"content-encoding", "content-length", "transfer-encoding",
                         "connection", "keep-alive", "set-cookie"})


def check_render_mode(mode: str) -> RenderMode:
    """``mode`` if it is one of :data:`RENDER_MODES`, else InvalidArgument."""
    for known in RENDER_MODES:
        if mode == known:
            return known
    raise InvalidArgument(f"render must be one of {', '.join(RENDER_MODES)}, not {mode!r}")


# --- is there a browser? -----------------------------------------------------------------


def chromium_executable() -> str | None:
    """``$FETCHLEDGER_CHROMIUM``, else Debian's Chromium, else ``chromium`` on PATH."""
    chosen = os.environ.get(ENV_CHROMIUM, "").strip()
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    if os.access(_DEBIAN_CHROMIUM, os.X_OK):
        return _DEBIAN_CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    """Why no page can be rendered here (a sentence with its remedy), or None."""
    if importlib.util.find_spec("playwright") is None:
        return ("the Playwright package is not installed "
                "(pip install 'fetchledger[browser]')")
    if chromium_executable() is None:
        chosen = os.environ.get(ENV_CHROMIUM, "").strip()
        if chosen:
            return f"{ENV_CHROMIUM}={chosen} is not an executable file"
        return "no Chromium is installed (apt-get install chromium)"
    return None


# --- is the page an empty shell? ---------------------------------------------------------

_LITTLE_TEXT_WORDS = 40  # main text shorter than this is "little or no main text"
_SHELL_VISIBLE_CHARS = 600  # a script page whose whole body shows less than this is a shell
_MOUNTED_VISIBLE_CHARS = 3000  # ... or less than this when it has an empty mount point
_INLINE_APP_CHARS = 200  # inline code shorter than this builds no page (a variable, a tag)
_MOUNT_IDS = re.compile(r"^(root|app|__next|__nuxt|___gatsby|svelte|main|application|"
                        r"react-root|app-root|ember-app|q-app)$", re.IGNORECASE)
_JS_TYPES = frozenset({"", "text/javascript", "application/javascript", "module",
                       "text/ecmascript", "application/ecmascript"})
_NOSCRIPT_JS = re.compile(r"javascript|\bJS\b", re.IGNORECASE)


def looks_script_built(html: str) -> bool:
    """True when the page is built by its scripts: it loads a script (or runs a
    substantial inline one), and its body shows almost nothing without them — or
    little, beside an empty mount point such as ``<div id="root"></div>`` or a
    ``<noscript>`` asking for JavaScript."""
    from lxml import etree
    from lxml import html as lxml_html

    try:
        tree = lxml_html.document_fromstring(html)
    except (ValueError, TypeError, etree.ParserError):  # empty or unparsable
        return False
    scripts = [s for s in tree.iter("script")
               if (s.get("type") or "").strip().lower() in _JS_TYPES]
    external = any(s.get("src") for s in scripts)
    inline = sum(len((s.text or "").strip()) for s in scripts if not s.get("src"))
    body = tree.find("body")
    if body is None:
        return external or inline > 0
    asks_for_js = any(_NOSCRIPT_JS.search(n.text_content()) for n in body.iter("noscript"))
    mount = any(_MOUNT_IDS.match(e.get("id") or "") and not e.text_content().strip()
                for e in body.iter("div", "main", "section", "app-root"))
    signals = mount or asks_for_js
    if not (external or inline >= _INLINE_APP_CHARS or (signals and inline)):
        return False
    for hidden in list(body.iter("script", "style", "noscript", "template", "svg")):
        hidden.drop_tree()
    visible = len(" ".join(body.text_content().split()))
    return visible < (_MOUNTED_VISIBLE_CHARS if signals else _SHELL_VISIBLE_CHARS)


def wants_render(mode: RenderMode, html: Callable[[], str | None], main_text: str) -> bool:
    """Whether to render a fetched page: ``html()`` gives its decoded HTML (None when
    the response is not HTML; called only when needed), ``main_text`` is what the
    plain extraction found ("" if none). ``always`` renders every HTML page;
    ``auto`` only empty shells."""
    if mode == "never":
        return False
    if mode == "auto" and len(main_text.split()) >= _LITTLE_TEXT_WORDS:
        return False
    page = html()
    return page is not None and (mode == "always" or looks_script_built(page))


# --- rendering ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedPage:
    """A page as Chromium left it: ``response`` is the fetched response with the
    serialized DOM as its body; ``facts`` what the render met (stored with the
    version: requests by kind, refusals, popups, downloads, timing)."""

    response: HTTPResponse
    engine: str  # "Chromium 156.0.8078.114"
    facts: dict[str, Any]

    @property
    def refused(self) -> list[dict[str, str]]:
        refused: list[dict[str, str]] = self.facts.get("refused", [])
        return refused


class Browser:
    """Renders fetched HTML pages in Chromium under ``policy`` (thread-safe: each
    render has its own proxy, process and profile)."""

    def __init__(self, policy: AddressPolicy, resolver: Resolver | None = None,
                 limits: Limits | None = None) -> None:
        self.policy = policy
        self.resolver = resolver
        self.limits = limits or Limits()
        _remove_stale_profiles()

    def render(self, fetched: HTTPResponse, *, stop: threading.Event | None = None
               ) -> RenderedPage:
        """Render ``fetched`` (an HTML response): RetrievalTimeout past the deadline,
        TooLarge over a cap, RenderFailed when the browser cannot do it (or ``stop``
        was set: the caller is shutting down)."""
        executable = chromium_executable()
        reason = unavailable_reason()
        if reason is not None or executable is None:
            raise RenderFailed(f"cannot render the page: {reason}")
        limits = self.limits
        started = time.monotonic()
        budget = Budget(started + limits.render_timeout, limits.render_timeout)
        with PolicyProxy(self.policy, self.resolver, budget=budget,
                         connect_timeout=limits.connect_timeout,
                         max_bytes=limits.max_render_traffic,
                         internal_hosts=frozenset({INTERNAL_HOST})) as proxy, \
                _RenderProcess() as process:
            job = self._job(fetched, proxy.address, executable, process.profile, budget)
            answer, dom = process.exchange(job, fetched.content, budget,
                                           limits.max_dom_bytes, stop)
        if proxy.log.over_cap:
            raise TooLarge(f"the page pulled in over {limits.max_render_traffic:,} bytes "
                           f"while rendering (the render traffic cap)")
        if not answer.get("ok"):
            raise _failure(answer, budget.seconds)
        return _page(fetched, answer, dom, proxy.log, started)

    def _job(self, fetched: HTTPResponse, proxy: str, executable: str, profile: str,
             budget: Budget) -> dict[str, Any]:
        """What the render process is told (the document's bytes follow it)."""
        limits = self.limits
        return {
            "url": fetched.url, "status": fetched.status,
            "headers": _served_headers(fetched.headers), "document_bytes": len(fetched.content),
            "proxy": proxy, "executable": executable, "profile": profile,
            "seconds": max(budget.left() - 0.5, 0.1), "settle": limits.render_settle,
            "max_dom_bytes": limits.max_dom_bytes,
            "user_agent": f"fetchledger/{__version__} (citation ledger)",
        }


def _page(fetched: HTTPResponse, answer: dict[str, Any], dom: bytes, log: ProxyLog,
          started: float) -> RenderedPage:
    """The rendered page: the fetched response with the DOM as its body, and the facts
    of the render (the render process's and the proxy's)."""
    facts = {**answer["facts"], "seconds": round(time.monotonic() - started, 3),
             "refused": [{"target": r.target, "reason": r.reason} for r in log.refused],
             "bytes_received": log.received}
    final = str(answer.get("url") or "")
    if final and final != fetched.url:
        facts["location"] = redact_url(final)  # a navigation the page made itself
    headers = httpx.Headers([(n, v) for n, v in fetched.headers.multi_items()
                             if n.lower() not in _NOT_SERVED | {"content-type"}])
    headers["Content-Type"] = "text/html; charset=utf-8"
    response = replace(fetched, headers=headers, content=dom,
                       elapsed=fetched.elapsed + time.monotonic() - started)
    return RenderedPage(response, f"Chromium {answer['browser']}", facts)


def _served_headers(headers: httpx.Headers) -> list[tuple[str, str]]:
    served = [(n, v) for n, v in headers.multi_items() if n.lower() not in _NOT_SERVED]
    if not any(n.lower() == "content-type" for n, _ in served):
        served.append(("Content-Type", "text/html"))
    return served


def _failure(answer: dict[str, Any], seconds: float) -> RetrievalFailed:
    status, message = answer.get("status"), str(answer.get("message") or "")
    if status == "too_large":
        return TooLarge(message)
    if message.startswith("TimeoutError"):  # every wait there (launch too) ends at the deadline
        return RetrievalTimeout(f"the page did not finish rendering within {seconds:g} s "
                                f"(the render deadline; {message})")
    return RenderFailed(f"Chromium could not render the page: {message}")


# --- the render process --------------------------------------------------------------------


class _RenderProcess:
    """One render process (started through the child-process runtime, in a process
    group of its own), its profile folder and its mark; leaving the block ends all of
    them."""

    def __init__(self) -> None:
        self.mark = os.urandom(12).hex()
        self.profile = tempfile.mkdtemp(prefix=f"{_PROFILE_PREFIX}{os.getpid()}-")
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed by _cleanup)
        self._process: subprocess.Popen[bytes] | None = None
        self._child: Child | None = None

    def __enter__(self) -> _RenderProcess:
        start_reaper()  # the tree is tied to fetchledger's life from its first instant
        try:
            self._process = subprocess.Popen(
                interpreter_argv(_RENDER_ENTRY), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._errors, start_new_session=True,
                env={**os.environ, _MARK: self.mark})
        except OSError as exc:
            self._cleanup()
            raise RenderFailed(f"cannot start the render process: {exc}") from exc
        self._child = Child.of(self._process, group=True)
        return self

    def exchange(self, job: dict[str, Any], document: bytes, budget: Budget,
                 max_dom: int, stop: threading.Event | None) -> tuple[dict[str, Any], bytes]:
        """Send the job and the document; the answer line and the DOM bytes."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        stdin = process.stdin
        threading.Thread(target=_send, args=(stdin, json.dumps(job).encode() + b"\n" + document),
                         daemon=True, name="fetchledger-render-job").start()
        data = _read_until_eof(process.stdout.fileno(), budget, max_dom + (1 << 20), stop)
        head, newline, dom = data.partition(b"\n")
        if not newline:
            raise RenderFailed(f"the render process ended without an answer"
                               f"{self._error_tail()}")
        answer: dict[str, Any] = json.loads(head)
        if answer.get("ok") and len(dom) != answer.get("dom_bytes"):
            raise RenderFailed("the render process's answer was cut short")
        return answer, dom

    def _error_tail(self) -> str:
        self._errors.seek(0)
        lines = [line for line in self._errors.read().decode("utf-8", "replace").splitlines()
                 if line.strip()]
        return f" ({lines[-1].strip()[:300]})" if lines else ""

    def __exit__(self, *exc_info: object) -> None:
        self._cleanup()

    def _cleanup(self) -> None:
        process, child = self._process, self._child
        self._process = self._child = None
        if process is not None:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()  # the lifeline: the render process ends its tree
            if child is not None:
                child.reap(grace=2.0)  # past it, the whole group is killed
            if process.stdout is not None:
                process.stdout.close()
        kill_marked(self.mark)
        self._errors.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def _send(stdin: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        stdin.write(data)
        stdin.flush()  # stdin stays open: closing it tells the render process to end


def _read_until_eof(fd: int, budget: Budget, cap: int, stop: threading.Event | None) -> bytes:
    buffer = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            if stop is not None and stop.is_set():
                raise RenderFailed("the render was stopped (the batch is ending)")
            left = budget.left()
            if left <= 0:
                raise RetrievalTimeout(f"the page did not finish rendering within "
                                       f"{budget.seconds:g} s (the render deadline)")
            if not selector.select(min(left, 0.25)):
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return bytes(buffer)
            buffer += chunk
            if len(buffer) > cap:
                raise TooLarge(f"the rendered page's DOM is over the cap of {cap:,} bytes")


def kill_marked(mark: str) -> list[int]:
    """SIGKILL every process whose environment carries this render's mark (a process
    that escaped the render process's tree); the pids killed."""
    needle = f"{_MARK}={mark}".encode() + b"\0"
    killed = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle not in environ.read_bytes():
                continue
            pid = int(environ.parent.name)
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except (OSError, ValueError):
            continue
    return killed


def _remove_stale_profiles() -> None:
    """Profile folders left by a fetchledger process that was killed mid-render."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_PROFILE_PREFIX}*-*"):
        owner = folder.name[len(_PROFILE_PREFIX):].split("-", 1)[0]
        if owner.isdigit() and not is_alive(int(owner)):
            shutil.rmtree(folder, ignore_errors=True)


