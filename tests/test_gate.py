"""The politeness gate against real local servers: robots.txt answers (RFC 9309 2.3.1), idle
hosts, and a host's pacing shared by workers through the database."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest
from aiohttp import web
from conftest import PATIENCE_SEC, LocalServer, OpenFrontier, redirect_to, site_app

from litecrawl.errors import ConnectError, FetchError, RobotsDenied, RobotsUnavailable
from litecrawl.fetch.base import FetchRequest
from litecrawl.fetch.http import HttpFetcher
from litecrawl.politeness.gate import PoliteGate, PolitenessSettings
from litecrawl.store.backends import open_frontier

Serve = Callable[[web.Application], LocalServer]
SETTINGS = PolitenessSettings(user_agent="litecrawl/1.0 (+https://example.com)")


def check(db: Path, url: str) -> FetchError | None:
    async def go() -> FetchError | None:
        async with open_frontier(str(db)) as frontier, PoliteGate(frontier, SETTINGS) as gate:
            return await gate.check(url)

    return asyncio.run(go())


def test_unreachable_host_is_the_answer_even_from_the_stored_robots(
    tmp_path: Path, refused_base: str
) -> None:
    db = tmp_path / "g.db"
    first = check(db, refused_base + "/page")
    assert isinstance(first, ConnectError) and first.category == "connect" and first.unreachable
    assert first.detail == "connection refused"
    # the next run reads the stored robots.txt outcome (10 minutes): still the same cause
    again = check(db, refused_base + "/other")
    assert isinstance(again, ConnectError) and again.detail == "connection refused"


def test_robots_5xx_and_denial_and_redirect_loop(tmp_path: Path, serve: Serve) -> None:
    broken = serve(site_app({"/robots.txt": (503, "text/plain", "busy")}))
    refused = check(tmp_path / "a.db", broken.url("/x"))
    assert isinstance(refused, RobotsUnavailable) and refused.category == "robots_http_503"
    strict = serve(site_app({"/robots.txt": (200, "text/plain", "User-agent: *\nDisallow: /x")}))
    assert isinstance(check(tmp_path / "b.db", strict.url("/x")), RobotsDenied)
    assert check(tmp_path / "b.db", strict.url("/y")) is None
    looping = web.Application()
    looping.router.add_get("/robots.txt", redirect_to("/robots.txt"))
    loop_site = serve(looping)
    assert check(tmp_path / "c.db", loop_site.url("/x")) is None  # unavailable: allow all


def test_robots_over_500_kib_is_cut_and_obeyed_not_refused(tmp_path: Path, serve: Serve) -> None:
    text = "User-agent: *\nDisallow: /private\n" + "# padding line\n" * 60_000  # ~900 KiB
    site = serve(site_app({"/robots.txt": (200, "text/plain", text)}))
    assert isinstance(check(tmp_path / "g.db", site.url("/private/a")), RobotsDenied)
    assert check(tmp_path / "g.db", site.url("/public")) is None


def test_robots_of_any_size_is_read_to_500_kib(tmp_path: Path, serve: Serve) -> None:
    """11 MiB, more than a page may be, streamed without a length: its first 500 KiB are read
    and obeyed (RFC 9309 2.5), a rule past them is not, and nothing is refused as too large."""
    line = b"# padding line\n"

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        await response.write(b"User-agent: *\nDisallow: /private\n")
        try:
            for _ in range(11 * 1024 * 1024 // (len(line) * 1000)):
                await response.write(line * 1000)
            await response.write(b"Disallow: /late\n")
        except ConnectionError:  # the crawler stops reading at 500 KiB
            pass
        return response

    app = web.Application()
    app.router.add_get("/robots.txt", huge)
    site = serve(app)
    db = tmp_path / "g.db"
    assert isinstance(check(db, site.url("/private/a")), RobotsDenied)
    assert check(db, site.url("/late")) is None
    assert check(db, site.url("/public")) is None
    # the same with its Content-Length told up front
    text = "User-agent: *\nDisallow: /private\n" + "# padding line\n" * 800_000 + "Disallow: /late"
    told = serve(site_app({"/robots.txt": (200, "text/plain", text)}))
    assert isinstance(check(tmp_path / "h.db", told.url("/private/a")), RobotsDenied)
    assert check(tmp_path / "h.db", told.url("/late")) is None


def test_idle_hosts_are_forgotten_unless_their_delay_still_runs(
    tmp_path: Path, serve: Serve
) -> None:
    """Memory follows the hosts in flight: a host with nothing held and nothing pending leaves
    the gate; a host whose Crawl-delay still runs keeps its clock; robots.txt comes back."""
    quick = serve(site_app({"/robots.txt": (200, "text/plain", "User-agent: *\nDisallow: /x")}))
    slow = serve(site_app({"/robots.txt": (200, "text/plain", "User-agent: *\nCrawl-delay: 30")}))
    held = serve(site_app({"/robots.txt": (200, "text/plain", "User-agent: *\nAllow: /")}))
    settings = PolitenessSettings(user_agent=SETTINGS.user_agent, delay_ms=0)

    async def go() -> tuple[int, int, FetchError | None]:
        async with (
            open_frontier(str(tmp_path / "g.db")) as frontier,
            PoliteGate(frontier, settings) as gate,
        ):
            hosts = [s.base.removeprefix("http://") for s in (quick, slow, held)]
            for site, host in zip((quick, slow, held), hosts, strict=True):
                assert await gate.check(site.url("/page")) is None
                async with gate.slot(host):
                    pass
            before = gate.hosts_remembered
            await gate.release_hosts(hosts, held={hosts[2]})
            after = gate.hosts_remembered
            # forgotten, yet still obeyed: the stored robots.txt is read again
            return before, after, await gate.check(quick.url("/x"))

    before, after, refusal = asyncio.run(go())
    assert before == 3
    assert after == 2  # the slow host (Crawl-delay running) and the held one stay
    assert isinstance(refusal, RobotsDenied)


def test_a_robots_txt_without_a_rule_allows_all_and_says_so(
    tmp_path: Path, serve: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """RFC 9309 2.2 parses leniently: no rule to read, nothing disallowed; the log names it."""
    soft = "<!doctype html><title>Not found</title><p>Disallow: /x</p>"
    html = serve(site_app({"/robots.txt": (200, "text/html", soft)}))
    commented = serve(site_app({"/robots.txt": (200, "text/plain", "# nothing to say\n\n")}))
    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        assert check(tmp_path / "a.db", html.url("/x")) is None
        assert check(tmp_path / "b.db", commented.url("/x")) is None
    said = [r.getMessage() for r in caplog.records if "robots.txt" in r.getMessage()]
    assert said == [
        f"{html.url('/robots.txt')} holds no rule (no User-agent group; it starts "
        "'<!doctype html><title>Not found</title><p>Disallow: /x</p>'): all is allowed "
        "(RFC 9309 2.2)"
    ]


@pytest.mark.parametrize("other_asks_after", [0.5, 1.5], ids=["queued-before", "fresh-after"])
def test_a_start_sent_late_keeps_the_whole_interval_across_workers(
    serve: Serve, new_frontier: OpenFrontier, other_asks_after: float
) -> None:
    """Two workers share a host's 1 s pacing through the database. Worker A's second start is
    sent 0.2 s late (its event loop is busy when it falls due: within the quarter of an
    interval a late send may still go). Worker B asks for a start either while A waits (its
    start is reserved behind A's) or after A's late send: either way B's request comes a
    whole interval after A's actual one, not after A's reserved one."""
    site = serve(site_app({"/a1": "a", "/a2": "a", "/b": "b"}))
    host = site.base.removeprefix("http://")
    settings = PolitenessSettings(user_agent=SETTINGS.user_agent, obey_robots=False, delay_ms=1000)
    first_sent = threading.Event()
    t0: list[float] = []
    sent: list[float] = []  # when the gate let each request go

    async def request(gate: PoliteGate, fetcher: HttpFetcher, path: str) -> None:
        async with gate.slot(host):
            sent.append(time.time())
            if not t0:
                t0.append(sent[0])
                first_sent.set()
            await fetcher.fetch(FetchRequest(site.url(path)))

    async def worker_a() -> None:
        async with (
            new_frontier() as frontier,
            PoliteGate(frontier, settings) as gate,
            HttpFetcher(user_agent=SETTINGS.user_agent) as fetcher,
        ):
            await request(gate, fetcher, "/a1")

            async def busy() -> None:  # the loop is held when A's second start falls due
                await asyncio.sleep(max(0.0, t0[0] + 0.9 - time.time()))
                time.sleep(0.3)

            await asyncio.gather(busy(), request(gate, fetcher, "/a2"))

    async def worker_b() -> None:
        async with (
            new_frontier() as frontier,
            PoliteGate(frontier, settings) as gate,
            HttpFetcher(user_agent=SETTINGS.user_agent) as fetcher,
        ):
            await asyncio.sleep(max(0.0, t0[0] + other_asks_after - time.time()))
            await request(gate, fetcher, "/b")

    failed: list[BaseException] = []

    def run_b() -> None:
        try:
            assert first_sent.wait(PATIENCE_SEC)
            asyncio.run(worker_b())
        except BaseException as exc:  # told to the test's thread below
            failed.append(exc)

    other = threading.Thread(target=run_b)
    other.start()
    try:
        asyncio.run(worker_a())
    finally:
        first_sent.set()
        other.join(PATIENCE_SEC)
    assert not failed and not other.is_alive(), failed
    assert sorted(site.paths()) == ["/a1", "/a2", "/b"]
    # 0.8 s before the actual start was stamped. The gate's own times: at the server, its
    # thread (in this process, under the suite's load) adds its own delays to each request
    starts = sorted(sent)
    assert all(b - a >= 1.0 - 1e-3 for a, b in pairwise(starts)), starts
