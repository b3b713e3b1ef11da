"""Inside the render process: one page in headless Chromium, driven by Playwright.

:mod:`fetchledger.adapters.browser` runs :func:`main` in a process of its own
for every render (through :mod:`fetchledger.adapters.children`). It reads one
job from stdin — a JSON line, then the bytes of the document the plain fetch
already received — and writes one answer to stdout: a JSON line, then the
serialized DOM.

- **Chromium** is Debian's (``executable_path``; Playwright never downloads
  one), headless, with a fresh profile folder the caller made, every request
  sent to the caller's policy proxy (loopback not bypassed), its own host
  resolver mapped to nothing, QUIC off, WebRTC kept off UDP, background
  services off and their update/sign-in URLs pointed at a host the proxy
  answers itself.
- **The page**: the main document is served from the plain fetch's bytes (the
  browser renders exactly what was fetched and checked); every other request
  goes out through the proxy. Requests for schemes other than http(s) are
  aborted, downloads refused, service workers blocked, popups closed.
- **Time**: the load event, then network quiet (at most ``settle`` seconds),
  all within the job's deadline less a margin for serializing the DOM.
- **Lifetime**: this process is a child subreaper, so every process Chromium
  starts stays its descendant. When stdin closes — the caller finished, gave
  up, or died, SIGKILL included — a watchdog thread kills every descendant and
  exits; the same happens on SIGTERM, which Linux sends when the caller dies
  (``PR_SET_PDEATHSIG``, asked for SIGTERM here in place of the runtime's
  SIGKILL, so that the descendants go first).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
import threading
import time
from typing import IO, Any
from urllib.parse import urlsplit

from .supervised import kill_descendants

__all__ = ["INTERNAL_HOST", "chromium_flags", "main"]

# Chromium's own services (component updates, account checks) are pointed here;
# the policy proxy answers this host itself and never connects anywhere for it.
INTERNAL_HOST = "chromium-services.fetchledger.invalid"
_INTERNAL = f"http://{INTERNAL_HOST}/"

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_MARGIN = 1.0  # seconds kept back for serializing the DOM and answering


def chromium_flags(proxy: str) -> list[str]:
    """The switches added to Playwright's own (which already turn off background
    networking, component updates, sync, extensions and first-run tasks)."""
    return [
        f"--proxy-server=http://{proxy}",
        "--proxy-bypass-list=<-loopback>",  # even loopback goes through the proxy
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",  # no DNS of its own
        "--disable-quic",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--dns-prefetch-disable",
        "--no-pings",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        f"--component-updater=url-source={_INTERNAL}cu",
        f"--gaia-url={_INTERNAL}",
        f"--google-apis-url={_INTERNAL}",
        f"--lso-url={_INTERNAL}",
        "--disable-gpu",
        "--no-first-run",
        "--js-flags=--max-old-space-size=1024",
    ]


# --- lifetime ------------------------------------------------------------------------


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _end(status: int) -> None:
    kill_descendants()
    os._exit(status)


def _bind_lifetime(stdin: IO[bytes]) -> None:
    """Die, with everything below, when the caller closes our stdin or dies."""
    signal.signal(signal.SIGTERM, lambda *_: _end(1))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
    libc = _libc()
    if libc is not None:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def watch() -> None:
        while stdin.read(4096):
            pass
        _end(1)

    threading.Thread(target=watch, name="fetchledger-lifeline", daemon=True).start()


# --- the page -------------------------------------------------------------------------


class _Facts:
    """What happened while the page rendered (stored with the version)."""

    def __init__(self) -> None:
        self.requests: dict[str, int] = {}
        self.failed = 0
        self.aborted_schemes: dict[str, int] = {}
        self.popups = 0
        self.downloads = 0
        self.websockets = 0
        self.load_event = False
        self.network_quiet = False
        self.navigation_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "requests": dict(sorted(self.requests.items())),
            "failed_requests": self.failed, "popups_closed": self.popups,
            "downloads_refused": self.downloads, "websockets": self.websockets,
            "load_event": self.load_event, "network_quiet": self.network_quiet,
        }
        if self.aborted_schemes:
            data["refused_schemes"] = dict(sorted(self.aborted_schemes.items()))
        if self.navigation_error:
            data["navigation_error"] = self.navigation_error
        return data


class _Render:
    """One job: Chromium launched, the page loaded and watched, its DOM serialized."""

    def __init__(self, job: dict[str, Any], document: bytes, started: float) -> None:
        self.job, self.document, self.started = job, document, started
        self.facts = _Facts()
        self.served = False

    def left(self) -> float:
        """Seconds left before the margin kept for the answer."""
        return float(self.job["seconds"]) - (time.monotonic() - self.started) - _MARGIN

    def run(self) -> tuple[dict[str, Any], bytes]:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                self.job["profile"], executable_path=self.job["executable"], headless=True,
                args=chromium_flags(self.job["proxy"]),
                ignore_default_args=["--disable-popup-blocking"], accept_downloads=False,
                service_workers="block", viewport={"width": 1280, "height": 1024},
                timeout=_ms(self.left()), handle_sigint=False, handle_sigterm=False,
                handle_sighup=False)
            try:
                page = context.pages[0] if context.pages else context.new_page()
                self._watch(context, page)
                self._load(page, PlaywrightError)
                return self._snapshot(page, context.browser.version if context.browser
                                      else "unknown")
            finally:
                with contextlib.suppress(PlaywrightError):
                    context.close()

    def _watch(self, context: Any, page: Any) -> None:
        """Count requests, close popups, refuse downloads and other schemes, and serve
        the first navigation (the page itself) from the fetched bytes."""
        from playwright.sync_api import Error as PlaywrightError

        facts = self.facts
        agent = page.evaluate("() => navigator.userAgent")
        context.set_extra_http_headers({"User-Agent": f"{agent} {self.job['user_agent']}"})

        def popup(opened: Any) -> None:
            if opened != page:
                facts.popups += 1
                with contextlib.suppress(PlaywrightError):
                    opened.close()

        def request_seen(request: Any) -> None:
            kind = request.resource_type
            facts.requests[kind] = facts.requests.get(kind, 0) + 1

        def download(item: Any) -> None:
            facts.downloads += 1
            with contextlib.suppress(PlaywrightError):
                item.cancel()

        def failed(_: Any) -> None:
            facts.failed += 1

        def websocket(_: Any) -> None:
            facts.websockets += 1

        context.on("page", popup)
        context.on("request", request_seen)
        context.on("requestfailed", failed)
        page.on("download", download)
        page.on("websocket", websocket)
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        request = route.request
        if not self.served and request.is_navigation_request():
            self.served = True
            route.fulfill(status=self.job["status"], headers=dict(self.job["headers"]),
                          body=self.document)
            return
        scheme = urlsplit(request.url).scheme.lower()
        if scheme not in ("http", "https"):
            self.facts.aborted_schemes[scheme] = self.facts.aborted_schemes.get(scheme, 0) + 1
            route.abort("blockedbyclient")
            return
        route.continue_()

    def _load(self, page: Any, error: type[Exception]) -> None:
        """The load event, then network quiet, each within the time left."""
        try:
            page.goto(self.job["url"], wait_until="load", timeout=_ms(self.left()))
            self.facts.load_event = True
        except error as exc:  # the deadline, or a navigation the page started itself
            self.facts.navigation_error = str(exc).splitlines()[0][:300]
            return
        with contextlib.suppress(error):
            page.wait_for_load_state("networkidle",
                                     timeout=_ms(min(self.job["settle"], self.left())))
            self.facts.network_quiet = True

    def _snapshot(self, page: Any, version: str) -> tuple[dict[str, Any], bytes]:
        cap = self.job["max_dom_bytes"]
        size = page.evaluate("() => document.documentElement ? "
                             "document.documentElement.outerHTML.length : 0")
        dom = b"" if size > cap else page.content().encode("utf-8", "surrogatepass")
        if size > cap or len(dom) > cap:
            return {"ok": False, "status": "too_large",
                    "message": f"the rendered page's DOM is over the cap of {cap:,} bytes"}, b""
        return {"ok": True, "url": page.url, "browser": version,
                "facts": self.facts.to_json(), "dom_bytes": len(dom)}, dom


def _ms(seconds: float) -> float:
    return max(seconds, 0.05) * 1000


def main() -> int:
    """Read one job from stdin, render it, write the answer to stdout, and exit with
    every process below this one gone."""
    from .children import claim_stdout, quiet

    started = time.monotonic()
    stdin = sys.stdin.buffer
    answers = claim_stdout()
    quiet(stderr=False)  # stderr stays: the caller shows its last line when all fails
    job = json.loads(stdin.readline())
    document = stdin.read(job["document_bytes"])
    _bind_lifetime(stdin)  # from here on the watchdog reads stdin, to its end
    try:
        answer, dom = _Render(job, document, started).run()
    except Exception as exc:  # Playwright's and Chromium's failures, reported, not raised
        first = str(exc).splitlines()[0][:300] if str(exc) else ""
        answer, dom = {"ok": False, "status": "browser_failed",
                       "message": f"{type(exc).__name__}: {first}".rstrip(": ")}, b""
    answers.write(json.dumps(answer).encode() + b"\n" + dom)
    answers.flush()
    _end(0)
    return 0
