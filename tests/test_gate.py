"""The politeness gate's robots.txt answers against real local servers (RFC 9309 2.3.1)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, redirect_to, site_app

from litecrawl.errors import ConnectError, FetchError, RobotsDenied, RobotsUnavailable
from litecrawl.frontier import open_frontier
from litecrawl.politeness.gate import PoliteGate, PolitenessSettings

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
