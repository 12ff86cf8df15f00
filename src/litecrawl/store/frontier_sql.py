"""What both frontiers do alike, written once (:mod:`litecrawl.store.dialect`): the claim's
call, the host state (robots.txt cache, slowdowns, reserved and taken starts), run records and the
strategies' and freshness' reads. A backend gives :meth:`SQLFrontier._query` (one statement on
its connection) and :meth:`SQLFrontier._claim`; the claims themselves, the finalize's writes
and the leases stay in each backend (``SKIP LOCKED``, upserts in batches)."""

from __future__ import annotations

import abc
from functools import cache
from typing import Any

from litecrawl.frontier.lost import ClaimKind
from litecrawl.store.dialect import Dialect
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import Claim, ClaimedPage, ClaimFocus, HostRules
from litecrawl.store.sql import TAKE_START, take_start_params, taken_start

__all__ = ["SQLFrontier"]

_CHANGE_RATES = (
    "SELECT host, change_rate FROM pages WHERE last_crawl_time IS NOT NULL AND kind = 'page'"
)
_CHANGE_RECORDS = (
    "SELECT norm_url, change_history, last_crawl_time FROM pages"
    " WHERE norm_url > ? AND last_crawl_time IS NOT NULL AND kind = 'page'"
    " ORDER BY norm_url LIMIT ?"
)
# One robots.txt fetch per origin for all workers: an empty record claims the fetch until it
# expires; a record in force (or another worker's claim) is left alone.
_CLAIM_ROBOTS = """
INSERT INTO robots (origin, record, expires_at) VALUES (:origin, '', :until)
ON CONFLICT (origin) DO UPDATE SET record = '', expires_at = excluded.expires_at
WHERE robots.expires_at <= :now
RETURNING origin
"""


@cache
def _reserve_start(dialect: Dialect) -> str:
    """The reserved start is the later of the earliest wanted, a Retry-After and the previous
    reservation's end; the row keeps the end of this one (its start + interval)."""
    return f"""
INSERT INTO hosts (host, next_start) VALUES (:host, :earliest + :interval)
ON CONFLICT (host) DO UPDATE SET
  next_start = {dialect.greatest}(hosts.next_start, hosts.slowed_until, :earliest) + :interval
RETURNING next_start
"""


@cache
def _slow_host(dialect: Dialect) -> str:
    return (
        "INSERT INTO hosts (host, slowed_until, crawl_delay) VALUES (?, ?, ?) "
        "ON CONFLICT (host) DO UPDATE SET "
        f"slowed_until = {dialect.greatest}(hosts.slowed_until, excluded.slowed_until), "
        "crawl_delay = coalesce(excluded.crawl_delay, hosts.crawl_delay)"
    )


class SQLFrontier(Frontier):
    dialect: Dialect

    @abc.abstractmethod
    async def _query(
        self, sql: str, params: Any = (), *, write: bool = False
    ) -> list[tuple[Any, ...]]:
        """The rows of one statement in SQLite's spelling (``[]`` when it returns none);
        ``write``: it reads what it writes, so SQLite takes the writer's lock first."""

    @abc.abstractmethod
    async def _claim(self, claim: Claim) -> tuple[list[ClaimedPage], dict[str, int]]:
        """The pages claimed and the host slots this worker now leases."""

    async def claim(
        self,
        limit: int,
        now: int,
        by_score: bool = False,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
        hosts: HostRules | None = None,
        kind: ClaimKind = ClaimKind.ANY,
    ) -> list[ClaimedPage]:
        request = Claim(self.worker_id, limit, now, by_score, partition, focus, hosts, kind)
        pages, slots = await self._claim(request)
        if hosts is not None:  # every lease this worker holds, as the claim left them
            self.host_slots = slots
        return pages

    async def known_urls(self, after: str, limit: int) -> list[str]:
        rows = await self._query(
            "SELECT norm_url FROM pages WHERE norm_url > ? ORDER BY norm_url LIMIT ?",
            (after, limit),
        )
        return [url for (url,) in rows]

    async def change_rates(self) -> list[tuple[str, float | None]]:
        return [(h, r) for h, r in await self._query(_CHANGE_RATES)]

    async def change_records(
        self, after: str, limit: int
    ) -> list[tuple[str, str | None, int | None]]:
        rows = await self._query(_CHANGE_RECORDS, (after, limit))
        return [(url, text, last) for url, text, last in rows]

    # -- crawling strategies --------------------------------------------------------------------

    async def domain_metadata(self) -> dict[str, str]:
        rows = await self._query("SELECT domain, data FROM domain_metadata ORDER BY domain")
        return {domain: data for domain, data in rows}

    async def known_hosts(self) -> list[str]:
        rows = await self._query("SELECT DISTINCT host FROM pages WHERE host <> ''")
        return [host for (host,) in rows]

    # -- per-host state -----------------------------------------------------------------------

    async def get_robots(self, origin: str) -> tuple[str, float] | None:
        rows = await self._query(
            "SELECT record, expires_at FROM robots WHERE origin = ?", (origin,)
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def put_robots(self, origin: str, record: str, expires_at: float) -> None:
        await self._query(
            "INSERT INTO robots (origin, record, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT (origin) DO UPDATE SET record = excluded.record, "
            "expires_at = excluded.expires_at",
            (origin, record, expires_at),
        )

    async def claim_robots(self, origin: str, now: float, hold: float) -> bool:
        params = {"origin": origin, "until": now + hold, "now": now}
        return bool(await self._query(_CLAIM_ROBOTS, params, write=True))

    async def slow_host(self, host: str, until: float, crawl_delay: float | None = None) -> None:
        await self._query(_slow_host(self.dialect), (host, until, crawl_delay))

    async def host_slowdowns(self, now: float) -> dict[str, float]:
        rows = await self._query(
            "SELECT host, slowed_until FROM hosts WHERE slowed_until > ?", (now,)
        )
        return {host: until for host, until in rows}

    async def reserve_start(self, host: str, interval: float, earliest: float) -> float:
        params = {"host": host, "earliest": earliest, "interval": interval}
        rows = await self._query(_reserve_start(self.dialect), params, write=True)
        return float(rows[0][0]) - interval

    async def take_start(
        self, host: str, interval: float, now: float, *, force: bool = False
    ) -> float:
        params = take_start_params(host, interval, now, force)
        rows = await self._query(TAKE_START, params, write=True)
        return taken_start(rows[0] if rows else None, interval, now)

    # -- observability --------------------------------------------------------------------------

    async def start_run(self, command: str, now: int) -> int:
        rows = await self._query(
            "INSERT INTO runs (started_at, command, worker_id) VALUES (?, ?, ?) RETURNING id",
            (now, command, self.worker_id),
        )
        return int(rows[0][0])

    async def finish_run(self, run_id: int, stats: str, now: int) -> None:
        await self._query(
            "UPDATE runs SET finished_at = ?, stats = ? WHERE id = ?", (now, stats, run_id)
        )
