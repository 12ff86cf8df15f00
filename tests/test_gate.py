"""The politeness gate's robots.txt answers against real local servers (RFC 9309 2.3.1)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, redirect_to, site_app

from litecrawl.errors import ConnectError, FetchError, RobotsDenied, RobotsUnavailable
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
