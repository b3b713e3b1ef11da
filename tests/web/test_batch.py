"""Batch pre-retrieval through the Python API: limits, retries, robots.txt, resume.

Every host is a loopback server of its own (127.0.0.1, 127.0.0.2, ...); the
servers count what they see, so limits and waits are measured where they apply.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fetchledger import (
    BatchInput,
    Failure,
    Ledger,
    Retrieval,
    Skipped,
    batch_summary,
    read_batch_inputs,
)
from fetchledger.batch.scheduler import BatchOptions, parse_retry_after, run_batch
from fetchledger.batch.worker import WORKER_ENTRY, WorkerDied, WorkerPool
from fetchledger.errors import InvalidArgument
from procs import children_of, dies_with_killed_parent

from .batchserver import RESET, BatchServer, Gauge, page_reply
from .webserver import Reply
from conftest import rows

pytestmark = pytest.mark.both_backends

Servers = Callable[..., list[BatchServer]]


@pytest.fixture
def servers() -> Iterator[Servers]:
    """``servers(n)``: n hosts, 127.0.0.1 .. 127.0.0.n (``same_ip=True``: n ports of
    127.0.0.1); all share one ``Gauge`` of requests in flight."""
    started: list[BatchServer] = []

    def start(count: int, *, same_ip: bool = False) -> list[BatchServer]:
        shared = Gauge()
        for index in range(count):
            host = "127.0.0.1" if same_ip else f"127.0.0.{index + 1}"
            started.append(BatchServer(host, shared=shared).start())
        return started[-count:]

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def led(ledger_path: Path) -> Iterator[Ledger]:
    with Ledger(ledger_path, allow_private=True) as opened:
        yield opened


def gen_urls(hosts: list[BatchServer], per_host: int, delay: float = 0.0) -> list[str]:
    suffix = f"?delay={delay}" if delay else ""
    return [server.url(f"/gen/{h * 100 + i}{suffix}") for h, server in enumerate(hosts)
            for i in range(per_host)]


def batch(led: Ledger, inputs: list[str | BatchInput], **options: object) -> list[object]:
    return asyncio.run(run_batch(led, inputs, BatchOptions(**options)))  # type: ignore[arg-type]


# --- inputs and helpers -----------------------------------------------------------------


def test_read_inputs_takes_urls_and_json_lines_and_flags_bad_lines() -> None:
    lines = ["\ufeff# sources for chapter 2", "", "https://example.org/a  ",
             '{"url": "https://example.org/b", "query": "tides", "k": 2, "note": "kept"}',
             "{broken", '["https://example.org/c"]', '{"query": "no url"}',
             '{"url": "https://example.org/d", "k": 0}', '{"url": "https://e.org", "k": true}',
             '{"url": "https://e.org", "query": 5}', "   # indented comment"]
    found = read_batch_inputs(lines)
    assert found[0] == BatchInput("https://example.org/a", line=3)
    assert found[1] == BatchInput("https://example.org/b", "tides", 2, 4)
    assert [i.line for i in found[2:]] == [5, 6, 7, 8, 9, 10]
    flagged = [found[2], *found[4:]]
    assert all(i.problem and i.problem.startswith(f"line {i.line}: ") for i in flagged)
    assert "not valid JSON" in (found[2].problem or "")
    assert found[3] == BatchInput('["https://example.org/c"]', line=6)  # not a URL: fails later
    assert '"url"' in (found[4].problem or "")


def test_retry_after_is_read_as_seconds_or_an_http_date() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0 ") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("-5") is None
    now = 784111777.0  # Sun, 06 Nov 1994 08:49:37 GMT
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now=now) == pytest.approx(3.0)
    assert parse_retry_after("Sun, 06 Nov 1994 08:40:00 GMT", now=now) == 0.0


def test_options_out_of_range_are_bad_input(led: Ledger, ledger_path: Path) -> None:
    for bad in ({"concurrency": 0}, {"per_host": 0}, {"k": 0}, {"retries": -1},
                {"workers": 0}):
        with pytest.raises(InvalidArgument):
            BatchOptions(**bad)  # type: ignore[arg-type]
    for option in ("concurrency", "per_host", "k"):
        with pytest.raises(InvalidArgument):
            led.batch(["https://example.org/"], **{option: 0})  # type: ignore[arg-type]
    assert rows(ledger_path, "SELECT count(*) FROM attempt") == [(0,)]


# --- registering ------------------------------------------------------------------------


def test_every_input_registers_once_with_verbatim_snippets(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    hosts = servers(3)
    urls = gen_urls(hosts, 4)
    seen: list[tuple[str, str]] = []
    outcomes = asyncio.run(led.fetch_many_async(
        urls, query="harbour wall flooding", k=2,
        on_outcome=lambda outcome, shown: seen.append((type(outcome).__name__, shown))))
    assert all(isinstance(o, Retrieval) for o in outcomes)
    assert [o.source.locator for o in outcomes if isinstance(o, Retrieval)] == urls
    assert sorted(shown for _, shown in seen) == sorted(urls)  # streamed as they finish
    assert rows(ledger_path, "SELECT id FROM source ORDER BY id") == [(i,) for i in range(1, 13)]
    assert rows(ledger_path, "SELECT count(*) FROM attempt WHERE status = 'ok'") == [(12,)]
    for outcome in outcomes:
        assert isinstance(outcome, Retrieval)
        text = led.text(outcome.source.id)
        assert 1 <= len(outcome.snippets) <= 2
        assert "harbour wall" in outcome.snippets[0].quote
        for snippet in outcome.snippets:
            assert text[snippet.start : snippet.end] == snippet.quote
    # quotes handed out are recorded, as for fetch
    assert rows(ledger_path, "SELECT count(*) FROM quote")[0][0] >= 12


def test_the_sync_form_refuses_to_run_inside_an_event_loop(led: Ledger) -> None:
    async def inside() -> None:
        led.batch(["https://example.org/"])

    with pytest.raises(RuntimeError, match="fetch_many_async"):
        asyncio.run(inside())


def test_sync_convenience_and_per_input_query(servers: Servers, led: Ledger) -> None:
    (host,) = servers(1)
    outcomes = led.batch([BatchInput(host.url("/gen/7"), query="autumn equinoctial", k=1),
                          host.url("/gen/8")], k=1)
    first, second = outcomes
    assert isinstance(first, Retrieval) and isinstance(second, Retrieval)
    assert "autumn" in first.snippets[0].quote
    assert second.snippets[0].quote.startswith("Station 8 recorded")  # leading passage


# --- limits -----------------------------------------------------------------------------


def test_per_host_limit_is_honoured_on_every_host(servers: Servers, led: Ledger) -> None:
    hosts = servers(3)
    outcomes = batch(led, list(gen_urls(hosts, 8, delay=0.2)), per_host=2, concurrency=32,
                     robots=False)
    assert all(isinstance(o, Retrieval) for o in outcomes)
    for server in hosts:
        assert server.in_flight.peak == 2  # reached, never passed
        assert server.connections_open.peak <= 2
    assert hosts[0].shared.peak == 6


def test_a_host_is_host_name_and_port(servers: Servers, led: Ledger) -> None:
    ports = servers(3, same_ip=True)  # one address, three ports: three hosts
    batch(led, list(gen_urls(ports, 4, delay=0.2)), per_host=1, robots=False)
    assert [server.in_flight.peak for server in ports] == [1, 1, 1]
    assert ports[0].shared.peak == 3


def test_global_limit_is_honoured_across_hosts(servers: Servers, led: Ledger) -> None:
    hosts = servers(6)
    outcomes = batch(led, list(gen_urls(hosts, 3, delay=0.2)), concurrency=3, per_host=4,
                     robots=False)
    assert all(isinstance(o, Retrieval) for o in outcomes)
    assert hosts[0].shared.peak == 3


def test_hosts_take_turns(servers: Servers, led: Ledger) -> None:
    """A long run of one host's URLs first does not starve the others."""
    big, small = servers(2)
    urls = [*gen_urls([big], 12, delay=0.2), small.url("/gen/900?delay=0.2")]
    outcomes = batch(led, urls, per_host=2)
    assert all(isinstance(o, Retrieval) for o in outcomes)
    # the small host was asked before the big one's first two requests were over
    assert small.times["gen"][0] < big.times["gen"][2]


# --- retries ------------------------------------------------------------------------------


def test_429_retry_after_is_honoured_measured_at_the_server(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    host.scripts["busy"] = [Reply(429, {"Retry-After": "1"}, b"slow down"), page_reply(1)]
    host.scripts["down"] = [Reply(503, {"Retry-After": "1", "Content-Type": "text/plain"},
                                  b"maintenance"), page_reply(2)]
    outcomes = batch(led, [host.url("/script/busy"), host.url("/script/down")])
    assert all(isinstance(o, Retrieval) for o in outcomes)
    for name in ("busy", "down"):
        first, second = host.times[name]
        assert 1.0 <= second - first < 2.5
    assert rows(ledger_path, "SELECT status FROM attempt") == [("ok",), ("ok",)]


def test_a_host_asking_to_wait_is_not_asked_meanwhile(servers: Servers, led: Ledger) -> None:
    (host,) = servers(1)
    host.scripts["busy"] = [Reply(429, {"Retry-After": "1"}, b""), page_reply(1)]
    host.scripts["other"] = [page_reply(2)]
    outcomes = batch(led, [host.url("/script/busy"), host.url("/script/other?x=1")],
                     per_host=1)
    assert all(isinstance(o, Retrieval) for o in outcomes)
    assert host.times["other"][0] - host.times["busy"][0] >= 1.0


def test_retry_after_past_the_cap_fails_at_once(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    host.scripts["later"] = [Reply(429, {"Retry-After": "3600"}, b"")]
    (outcome,) = batch(led, [host.url("/script/later")])
    assert isinstance(outcome, Failure) and outcome.status == "http_error"
    assert "Retry-After 3600 s" in outcome.message
    assert len(host.times["later"]) == 1
    assert rows(ledger_path, "SELECT status, locator FROM attempt") == [
        ("http_error", host.url("/script/later"))]


def test_connection_errors_are_retried_with_backoff(servers: Servers, led: Ledger) -> None:
    (host,) = servers(1)
    host.scripts["flaky"] = [RESET, page_reply(3)]
    (outcome,) = batch(led, [host.url("/script/flaky")], backoff=0.2)
    assert isinstance(outcome, Retrieval)
    first, second = host.times["flaky"]
    assert second - first >= 0.2


def test_retries_run_out_and_the_failure_is_recorded(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    host.scripts["down"] = [Reply(503, {}, b"")]
    host.scripts["gone"] = [Reply(404, {}, b"")]
    down, gone = batch(led, [host.url("/script/down"), host.url("/script/gone")],
                       retries=2, backoff=0.01)
    assert isinstance(down, Failure) and down.message.endswith("(after 2 retries)")
    assert len(host.times["down"]) == 3
    assert isinstance(gone, Failure) and len(host.times["gone"]) == 1  # 404: no retry
    assert sorted(rows(ledger_path, "SELECT status FROM attempt")) == [
        ("http_error",), ("http_error",)]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]


def test_an_unreachable_host_is_not_retried_for_every_input(led: Ledger) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    urls = [f"http://127.0.0.1:{port}/p{i}" for i in range(6)]
    outcomes = batch(led, urls, retries=2, backoff=0.05, per_host=1)
    assert all(isinstance(o, Failure) and o.status == "network_error" for o in outcomes)
    retried = [o for o in outcomes if isinstance(o, Failure) and "retries" in o.message]
    assert len(retried) == 1


def test_an_unexpected_client_error_is_recorded_not_retried(
        servers: Servers, led: Ledger, ledger_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fetchledger.net.client import AsyncHTTPClient

    (host,) = servers(1)
    calls: list[str] = []
    send = AsyncHTTPClient.send

    async def odd(self: AsyncHTTPClient, request: object) -> object:
        calls.append(request.url)  # type: ignore[attr-defined]
        if "/gen/2" in request.url:  # type: ignore[attr-defined]
            raise ValueError("a server the client did not expect")
        return await send(self, request)  # type: ignore[arg-type]

    monkeypatch.setattr(AsyncHTTPClient, "send", odd)
    first, second = batch(led, [host.url("/gen/1"), host.url("/gen/2")], robots=False)
    assert isinstance(first, Retrieval)
    assert isinstance(second, Failure) and second.status == "network_error"
    assert second.message == "ValueError: a server the client did not expect"
    assert calls.count(host.url("/gen/2")) == 1
    assert rows(ledger_path, "SELECT status, locator FROM attempt WHERE status != 'ok'") == [
        ("network_error", host.url("/gen/2"))]


# --- robots.txt ------------------------------------------------------------------------------


def test_robots_txt_is_honoured_by_default_and_fetched_once(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    host.replies["robots"] = Reply(200, {"Content-Type": "text/plain"},
                                   b"User-agent: *\nDisallow: /gen/1\n")
    urls = [host.url(f"/gen/{n}") for n in (1, 2, 3, 10, 20)]
    outcomes = batch(led, urls)
    statuses = [o.status if isinstance(o, Failure) else "ok" for o in outcomes]
    assert statuses == ["robots_denied", "ok", "ok", "robots_denied", "ok"]
    assert host.paths_hit("/robots.txt") == ["/robots.txt"]
    assert "/gen/1" not in host.paths_hit("/gen/")
    assert rows(ledger_path, "SELECT status FROM attempt WHERE status != 'ok' ORDER BY id") == [
        ("robots_denied",), ("robots_denied",)]
    again = batch(led, urls, robots=False)
    assert all(isinstance(o, (Retrieval, Skipped)) for o in again)
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(5,)]


# --- resume, skip, refresh, duplicates ---------------------------------------------------------


def test_a_rerun_skips_registered_inputs_and_retries_failed_ones(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    host.scripts["late"] = [Reply(404, {}, b""), page_reply(5)]
    urls = [host.url("/gen/1"), host.url("/script/late"), host.url("/gen/2")]
    first = batch(led, urls)
    assert [type(o).__name__ for o in first] == ["Retrieval", "Failure", "Retrieval"]
    hits_before = len(host.paths_hit("/gen/"))
    second = batch(led, urls)
    assert [type(o).__name__ for o in second] == ["Skipped", "Retrieval", "Skipped"]
    skipped = second[0]
    assert isinstance(skipped, Skipped) and skipped.source.locator == urls[0]
    assert skipped.to_json() == {"input": urls[0], "skipped": True,
                                 "source": skipped.source.to_json()}
    assert len(host.paths_hit("/gen/")) == hits_before  # nothing fetched again
    assert sorted(rows(ledger_path, "SELECT id, locator FROM source WHERE id < 3")) in (
        [(1, urls[0]), (2, urls[2])], [(1, urls[2]), (2, urls[0])])
    assert rows(ledger_path, "SELECT id, locator FROM source WHERE id >= 3") == [(3, urls[1])]
    assert batch_summary(second) == "3 inputs: 1 ok (1 new source), 2 skipped"


def test_refresh_fetches_again_and_a_changed_page_is_a_new_version(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    urls = [host.url("/mutable"), host.url("/gen/1")]
    batch(led, urls)
    host.replies["mutable"] = Reply(200, {"Content-Type": "text/html"},
                                    b"<html><body><p>The second edition says the bridge opens "
                                    b"in June.</p></body></html>")
    again = batch(led, urls, refresh=True)
    assert all(isinstance(o, Retrieval) for o in again)
    assert sorted(rows(ledger_path, "SELECT s.locator, max(v.number) FROM source s "
                                    "JOIN version v ON v.source_id = s.id GROUP BY s.id")) == [
        (urls[1], 1), (urls[0], 2)]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(2,)]
    assert len(host.paths_hit("/gen/")) == 2


def test_duplicates_in_one_batch_are_fetched_once(
        servers: Servers, led: Ledger, ledger_path: Path) -> None:
    (host,) = servers(1)
    url = host.url("/gen/4")
    outcomes = batch(led, [url, url + "?utm_source=feed", url + "#part", host.url("/status/404"),
                           host.url("/status/404")])
    first, second, third, bad1, bad2 = outcomes
    assert isinstance(first, Retrieval)
    assert isinstance(second, Skipped) and second.source.id == first.source.id
    assert isinstance(third, Skipped) and third.input == url  # fragment dropped when shown
    assert isinstance(bad1, Failure) and isinstance(bad2, Failure)
    assert bad2.input == host.url("/status/404") and bad2.status == "http_error"
    assert host.paths_hit("/gen/") == ["/gen/4"]
    assert rows(ledger_path, "SELECT count(*) FROM attempt WHERE status != 'ok'") == [(1,)]


def test_bad_inputs_record_nothing(led: Ledger, ledger_path: Path) -> None:
    outcomes = batch(led, [BatchInput("ftp://example.org/x", line=4),
                           BatchInput("{oops", line=9, problem="line 9: not valid JSON"),
                           "http://"])
    assert [o.status for o in outcomes if isinstance(o, Failure)] == [
        "invalid_url", "invalid_argument", "invalid_url"]
    assert isinstance(outcomes[0], Failure) and outcomes[0].message.startswith("line 4: ")
    assert all(isinstance(o, Failure) and o.exit_code == 2 for o in outcomes)
    assert rows(ledger_path, "SELECT count(*) FROM attempt") == [(0,)]


# --- the write side of a batch ----------------------------------------------------------------


def test_a_group_is_written_all_or_nothing(servers: Servers, led: Ledger,
                                           ledger_path: Path) -> None:
    from fetchledger.adapters.web import web_identity
    from fetchledger.document import Document
    from fetchledger.errors import HTTPStatusError
    from fetchledger.store.prepare import Failed, prepare

    def prepared(n: int, meta: dict[str, object]) -> object:
        ident = web_identity(f"https://example.org/{n}", led.identity_key)
        return prepare(Document(kind="web", locator=ident.locator, display=ident.display,
                                text=f"Paragraph {n} of text.", raw=b"raw", meta=meta))

    good, broken = prepared(1, {}), prepared(2, {"unserializable": object()})
    failed = Failed("web", "https://example.org/3", HTTPStatusError("HTTP 500"))
    with pytest.raises(TypeError):
        led.record([good, broken, failed])  # type: ignore[list-item]
    assert rows(ledger_path, "SELECT count(*) FROM source") == [(0,)]
    assert rows(ledger_path, "SELECT count(*) FROM attempt") == [(0,)]
    done = led.record([good, failed, prepared(2, {})])  # type: ignore[list-item]
    assert [r.source.id if r else None for r in done] == [1, None, 2]
    assert rows(ledger_path, "SELECT status, locator FROM attempt ORDER BY id") == [
        ("ok", "https://example.org/1"), ("ok", "https://example.org/2"),
        ("http_error", "https://example.org/3")]


# --- workers ---------------------------------------------------------------------------------


def test_a_dead_worker_is_replaced() -> None:
    async def scenario() -> tuple[int, int]:
        pool = await WorkerPool(1).start()
        try:
            first = await pool.call("ping")
            os.kill(first, signal.SIGKILL)
            with pytest.raises(WorkerDied):
                await pool.call("ping")
            return first, await pool.call("ping")
        finally:
            await pool.close()

    first, second = asyncio.run(scenario())
    assert first != second


def test_workers_exit_when_the_batch_ends(servers: Servers, led: Ledger) -> None:
    (host,) = servers(1)
    batch(led, [host.url("/gen/1")])
    assert [pid for pid in children_of(os.getpid())
            if WORKER_ENTRY.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()] == []


def test_integrity_after_a_concurrent_batch(servers: Servers, led: Ledger,
                                            ledger_path: Path) -> None:
    hosts = servers(4)
    batch(led, list(gen_urls(hosts, 6)), concurrency=8, max_group=3)
    assert led.integrity_check() == "ok"
    assert rows(ledger_path, "SELECT id FROM source ORDER BY id") == [(n,) for n in range(1, 25)]


BUSY_WORKER_PARENT = """
import subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", (
    "import os, time; from fetchledger.adapters.children import die_with_parent; "
    "die_with_parent(os.getppid()); print('ready', flush=True); time.sleep(60)")],
    stdout=subprocess.PIPE, text=True)
worker.stdout.readline()
print(worker.pid, flush=True)
worker.wait()
"""


def test_a_busy_worker_dies_with_its_parent() -> None:
    """Not only an idle worker (whose stdin closes): one in the middle of a long task is
    killed by the kernel when the batch process is."""
    assert dies_with_killed_parent(BUSY_WORKER_PARENT), "the worker outlived its parent"
