"""robots.txt policies for the gate: memory, then the database, then the network.

One fetch per origin however many fetches wait for it, and one per database however many
workers share it (:meth:`~litecrawl.store.frontier.Frontier.claim_robots`: the others wait for
its record). What is kept in memory follows the hosts being crawled: the gate forgets an idle
host's policies (:meth:`RobotsCache.forget`) and they come back from the database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from types import TracebackType
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from litecrawl.errors import FetchError, TooManyRedirects
from litecrawl.fetch.base import FetchRequest
from litecrawl.fetch.http import HttpFetcher
from litecrawl.politeness.robots import MAX_ROBOTS_BYTES, RobotsPolicy, robots_url
from litecrawl.store.frontier import Frontier

if TYPE_CHECKING:
    from litecrawl.politeness.gate import PolitenessSettings

__all__ = ["RobotsCache"]

log = logging.getLogger("litecrawl.politeness")
_POLL_SEC = 0.2  # how often a worker looks for the robots.txt another one fetches


class RobotsCache:
    """``async with RobotsCache(frontier, settings)`` (owns an HTTP session for robots.txt)."""

    def __init__(self, frontier: Frontier, settings: PolitenessSettings) -> None:
        self.frontier = frontier
        self.settings = settings
        # RFC 9309 2.5: of a robots.txt of any size, the first 500 KiB are read and parsed
        # (one byte more tells robots.py that the file goes on: it cuts at the last full line)
        self._fetcher = HttpFetcher(
            user_agent=settings.user_agent,
            timeout=settings.robots_timeout,
            max_bytes=MAX_ROBOTS_BYTES + 1,
            cut_at_max_bytes=True,
        )
        self._policies: dict[str, RobotsPolicy] = {}
        self._origin_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def __aenter__(self) -> Self:
        await self._fetcher.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._fetcher.__aexit__(exc_type, exc, tb)

    async def policy(self, url: str) -> tuple[RobotsPolicy, bool]:
        """``url``'s origin's policy, and whether it was loaded just now (not from memory)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        now = time.time()
        policy = self._policies.get(origin)
        if policy is not None and not policy.is_expired(now):
            return policy, False
        async with self._origin_locks[origin]:  # one fetch per origin, however many wait
            policy = self._policies.get(origin)
            if policy is not None and not policy.is_expired(now):
                return policy, False
            policy = await self._load(origin, now) or await self._fetch_once(url, origin)
            self._policies[origin] = policy
            return policy, True

    def busy(self, host: str) -> bool:
        """Whether a policy of ``host`` is being loaded or fetched now."""
        return any(
            (lock := self._origin_locks.get(origin)) is not None and lock.locked()
            for origin in _origins(host)
        )

    def forget(self, host: str) -> None:
        """Drop ``host``'s policies from memory (the database keeps them)."""
        for origin in _origins(host):
            self._policies.pop(origin, None)
            self._origin_locks.pop(origin, None)

    def hosts(self) -> set[str]:
        """The hosts with a policy in memory."""
        return {urlsplit(origin).netloc for origin in self._policies}

    async def _load(self, origin: str, now: float) -> RobotsPolicy | None:
        cached = await self.frontier.get_robots(origin)
        if cached is None or cached[1] <= now:
            return None
        try:
            return RobotsPolicy.from_record(json.loads(cached[0]), self.settings.user_agent)
        except (ValueError, TypeError):
            return None

    async def _fetch_once(self, url: str, origin: str) -> RobotsPolicy:
        """robots.txt fetched by one worker of the database; the others wait for its record
        (or for its claim to run out: a worker that died while fetching)."""
        hold = 2 * self.settings.robots_timeout + 5
        while True:
            now = time.time()
            if await self.frontier.claim_robots(origin, now, hold):
                return await self._fetch(url, now)
            await asyncio.sleep(_POLL_SEC)
            policy = await self._load(origin, time.time())
            if policy is not None:
                return policy

    async def _fetch(self, url: str, now: float) -> RobotsPolicy:
        location = robots_url(url)
        status: int | None
        cause, detail = None, ""
        try:
            result = await self._fetcher.fetch(FetchRequest(location))
            status, body = result.status, result.body
        except TooManyRedirects:
            # RFC 9309 2.3.1.2: redirects that lead nowhere = robots.txt "unavailable": allow all
            status, body = 300, b""
        except FetchError as exc:
            log.warning("robots.txt unreachable (%s): the host's pages wait a while", exc)
            status, body = None, b""
            cause, detail = exc.category, str(exc).removeprefix(f"{location}: ")
        policy = RobotsPolicy.from_response(
            status, body, now, self.settings.user_agent, cause=cause, cause_detail=detail
        )
        if policy.problem is not None:
            log.warning("%s %s", location, policy.problem)
        origin = location.removesuffix("/robots.txt")
        await self.frontier.put_robots(origin, json.dumps(policy.to_record()), policy.expires_at)
        return policy


def _origins(host: str) -> tuple[str, str]:
    return f"http://{host}", f"https://{host}"
