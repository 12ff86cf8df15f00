"""The politeness gate between the engine and the network.

It answers two questions for every URL: *may* we fetch it (robots.txt, cached per origin in the
database with its expiry: robots_cache.py) and *when* (a per-host concurrency cap, then the
host's pacer: per-host delay, ``Crawl-delay``, optional token bucket, ``Retry-After`` back-off,
and only then one of the worker's fetch slots, so pages waiting for their host hold none). When
the host has a delay, each start is also reserved on the host's row in the database
(:meth:`~litecrawl.store.frontier.Frontier.reserve_start`), so every worker sharing the database
keeps it together: N workers never reach a host faster than one would.

It also says which hosts the next claim may take pages of (:meth:`PoliteGate.host_rules`): no
more of a host than can start within a couple of seconds, none of a host under a Retry-After.
The per-host cap is the share of the host's slots the worker leased with its claims
(:attr:`~litecrawl.store.frontier.Frontier.host_slots`), so all workers together keep it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from litecrawl.errors import (
    FetchError,
    HostHeldBack,
    RobotsDenied,
    RobotsUnavailable,
    error_for,
)
from litecrawl.fetch.base import FetchResult
from litecrawl.politeness.host_slots import HostSlots
from litecrawl.politeness.ratelimit import HostPacer, parse_retry_after
from litecrawl.politeness.robots import RobotsPolicy
from litecrawl.politeness.robots_cache import RobotsCache
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import HostRules

if TYPE_CHECKING:
    from litecrawl.config import CrawlConfig

__all__ = ["PoliteGate", "PolitenessSettings"]

log = logging.getLogger("litecrawl.politeness")
# A shared start missed by more than this share of the host's interval is taken anew (_paced).
LATE_SHARE = 0.25

# A start sent later than reserved by more than this is stamped on the host's row (_started):
# about the event loop's timer resolution, so a start on time costs no statement more.
_ON_TIME_SEC = 0.002
# Back-off when a 429/503 carries no usable Retry-After.
DEFAULT_BACKOFF_SEC = 60.0
# A claim takes no more pages of a host than can start within this many seconds: a page
# claimed long before its fetch is work a crash strands, and slots other hosts could use.
CLAIM_HORIZON_SEC = 2.0
# A claimed page whose host may not start it for longer (a Retry-After told to another fetch,
# starts reserved by other workers up to a long Crawl-delay) is given back, due then.
MAX_WAIT_SEC = 30.0
# Idle hosts' state is looked at this often, or when this many hosts are idle.
_SWEEP_SEC = 5.0
_SWEEP_HOSTS = 1024


@dataclass(frozen=True, slots=True)
class PolitenessSettings:
    user_agent: str
    obey_robots: bool = True
    per_host: int = 4  # concurrent requests per host, all workers together (docs/crawling.md)
    concurrency: int = 16  # concurrent fetches of this worker
    delay_ms: float = 500.0  # minimal gap between request starts per host (docs/crawling.md)
    rate: float | None = None  # requests/s per host, token bucket, off unless given
    robots_timeout: float = 10.0
    max_crawl_delay: float = 60.0  # a robots.txt asking for more is capped, not obeyed blindly

    @classmethod
    def of(cls, config: CrawlConfig) -> PolitenessSettings:
        """The settings a crawl configuration asks for."""
        return cls(
            user_agent=config.effective_user_agent(),
            obey_robots=config.obey_robots,
            per_host=config.concurrency.per_host,
            concurrency=config.concurrency.global_,
            delay_ms=config.rate_limit.per_host_delay_ms,
            rate=config.rate_limit.requests_per_second,
        )


class PoliteGate:
    """``async with PoliteGate(frontier, settings) as gate`` (owns an HTTP session for robots)."""

    def __init__(self, frontier: Frontier, settings: PolitenessSettings) -> None:
        self.frontier = frontier
        self.settings = settings
        self._robots = RobotsCache(frontier, settings)
        self._host_slots: dict[str, HostSlots] = {}
        self._host_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._pacers: dict[str, HostPacer] = {}
        # Hosts with nothing in flight here: their state above is forgotten once nothing of it
        # is pending (robots.txt comes back from the database, not the network), so memory
        # follows the hosts being crawled now, not every host the crawl ever met.
        self._idle: set[str] = set()
        self._last_sweep = 0.0
        self._fetch_slots = asyncio.Semaphore(settings.concurrency)
        self.waiting = 0  # fetches waiting for their host (its slots or its pacing)
        self._stamps: set[asyncio.Task[float]] = set()  # starts stamped after they went

    async def __aenter__(self) -> Self:
        await self._robots.__aenter__()
        for host, until in (await self.frontier.host_slowdowns(time.time())).items():
            self._pacer(host).slow_down(until)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._stamps:
            await asyncio.wait(self._stamps)
        await self._robots.__aexit__(exc_type, exc, tb)

    # -- may we? ------------------------------------------------------------------------------

    async def check(self, url: str) -> FetchError | None:
        """None when robots.txt lets us fetch ``url``; else why not, as the error to record:
        a refusal (``robots``), robots.txt answering 5xx/429 (``robots_http_503``: RFC 9309's
        disallow for a while), or the host unreachable (``dns``, ``connect``, ``timeout``...)."""
        if not self.settings.obey_robots:
            return None
        policy = await self.robots(url)
        if policy.allowed(url):
            return None
        if policy.mode != "disallow_all":
            return RobotsDenied(url, "disallowed by robots.txt")
        if policy.status is not None:
            return RobotsUnavailable(url, policy.status)
        return error_for(policy.cause or "network", url, policy.cause_detail)

    async def robots(self, url: str) -> RobotsPolicy:
        """The robots.txt policy of ``url``'s origin: memory, then database, then network."""
        policy, fresh = await self._robots.policy(url)
        if fresh:  # newly loaded: its Crawl-delay paces the host from now on
            self._pacer(urlsplit(url).netloc).set_crawl_delay(policy.crawl_delay())
        return policy

    # -- when? --------------------------------------------------------------------------------

    def _pacer(self, host: str) -> HostPacer:
        pacer = self._pacers.get(host)
        if pacer is None:
            s = self.settings
            pacer = HostPacer(delay_ms=s.delay_ms, rate=s.rate, max_crawl_delay=s.max_crawl_delay)
            self._pacers[host] = pacer
        return pacer

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one of the host's concurrent slots, starting no sooner than its pacer allows,
        then one of the worker's fetch slots (taken last: a page waiting for its host holds
        none of them)."""
        slots = self._host_slots.get(host)
        if slots is None:
            # this worker's part of the host (its lease). A lease of none is an ask
            # (docs/scaling.md#workers): a page of its host here came without a lease (a
            # suspect, tried alone: docs/crawling.md, "Resume after a kill, and parked pages"),
            # and no claim comes meanwhile to give it a slot; it goes under the host's own cap,
            # as a page of a host this worker leases nothing of (it waited for ever)
            limit = self.frontier.host_slots.get(host) or self.settings.per_host
            slots = self._host_slots[host] = HostSlots(limit)
        self.waiting += 1
        waiting = True
        try:
            await slots.acquire()
            try:
                pacer = self._pacer(host)
                async with self._host_locks[host]:
                    start, queued = await self._paced(host, pacer)
                    self.waiting -= 1
                    waiting = False
                    await self._started(host, pacer, start, queued)
                try:
                    yield
                finally:
                    self._fetch_slots.release()
            finally:
                slots.release()
        finally:
            if waiting:
                self.waiting -= 1

    def leases_changed(self) -> None:
        """After a claim: this worker's share of each host it holds may have moved (more
        workers want the host, or fewer): the hosts' slots here follow."""
        leased = self.frontier.host_slots
        for host, slots in self._host_slots.items():
            limit = leased.get(host)
            if limit is not None and limit != slots.limit:
                slots.resize(limit)

    async def _paced(self, host: str, pacer: HostPacer) -> tuple[float, bool]:
        """Wait for the host's next start; returns it, and whether it was set by the
        database (another worker's reservation, or a Retry-After told to one) rather than by
        this worker's own pacing."""
        while True:
            start = pacer.next_allowed(time.time())
            queued = False
            if (interval := pacer.shared_interval) > 0:
                # the start reserved on the host's row, in turn with every worker of the
                # database: together they keep the delay, the Crawl-delay, the rate limit and
                # a Retry-After any of them was told
                reserved = await self.frontier.reserve_start(host, interval, start)
                queued = reserved > start + _ON_TIME_SEC
                start = max(start, reserved)
            if start - time.time() > MAX_WAIT_SEC:
                raise HostHeldBack(host, start)
            while (wait := start - time.time()) > 0:
                await asyncio.sleep(wait)
            if interval > 0 and time.time() - start > LATE_SHARE * interval:
                # woken late (a loaded machine): the next worker's start was reserved after
                # this one's and comes on time, so sending now would shorten the host's delay;
                # take a new start after the reservations made meanwhile
                continue
            if pacer.slow_until <= time.time():
                return start, queued  # else a 429 came meanwhile (to another fetch): again

    async def _started(self, host: str, pacer: HostPacer, start: float, queued: bool) -> None:
        """Take one of the worker's fetch slots and record the request's actual start. When
        the host's pacing is shared and this start came late, or was queued behind another
        worker's (which may have come late), the actual start is stamped on the host's row
        (:meth:`~litecrawl.store.frontier.Frontier.take_start`): the host's interval runs
        from when requests really start, not from when they were reserved
        (docs/scaling.md#workers)."""
        while True:
            await self._fetch_slots.acquire()
            now = time.time()
            interval = pacer.shared_interval
            if interval <= 0 or (not queued and now - start <= _ON_TIME_SEC):
                break  # on time and in this worker's own turn: the reservation holds
            try:
                allowed = await self.frontier.take_start(host, interval, now)
            except BaseException:
                self._fetch_slots.release()
                raise
            if allowed <= now:
                sent = time.time()
                if sent - now > _ON_TIME_SEC:
                    # the statement itself took a while (a loaded machine): the row gets the
                    # time the request really goes, well before the next one may check it
                    self._stamp_later(host, interval, sent)
                now = sent
                break
            # the start before this one came later than reserved: its interval first
            self._fetch_slots.release()
            while (wait := allowed - time.time()) > 0:
                await asyncio.sleep(wait)
            start = allowed
        pacer.record_request(now)

    def _stamp_later(self, host: str, interval: float, sent: float) -> None:
        task = asyncio.create_task(self.frontier.take_start(host, interval, sent, force=True))
        self._stamps.add(task)
        task.add_done_callback(self._stamp_done)

    def _stamp_done(self, task: asyncio.Task[float]) -> None:
        self._stamps.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            # the database's own failures show on the page's next statement; pacing goes on
            log.warning("the start of a request could not be stamped: %s", exc)

    # -- which hosts the next claim may take --------------------------------------------------

    def host_rules(self, held: Mapping[str, int], wants_more: bool = False) -> HostRules:
        """The rules for the next claim, given how many pages of each host this worker holds;
        ``wants_more``: ask for a part of the hosts other workers hold in full (the last claim
        brought nothing)."""
        now = time.time()
        room = {host: max(0, self._claim_cap(host, now) - n) for host, n in held.items()}
        # what each held host's fetches may hold until this claim's leases come back: the
        # slots held now, or as many as may start meanwhile (a smaller part is applied only
        # when the claim is back: leases_changed)
        in_use = {}
        for host in held:
            slots = self._host_slots.get(host)
            if slots is None:
                in_use[host] = self.frontier.host_slots.get(host, self.settings.per_host)
            else:
                in_use[host] = max(slots.used, slots.limit)
        return HostRules(
            per_host=self.settings.per_host,
            share=self.settings.concurrency,
            room=room,
            new_host_room=self._claim_cap(None, now),
            horizon=CLAIM_HORIZON_SEC,
            in_use=in_use,
            wants_more=wants_more,
        )

    def _claim_cap(self, host: str | None, now: float) -> int:
        """How many pages of ``host`` (None: a host not seen yet) to hold at once: its slots
        here and half as many waiting, but no more than can start within the horizon."""
        s = self.settings
        pacer = self._pacers.get(host) if host is not None else None
        if pacer is None:
            pacer = HostPacer(delay_ms=s.delay_ms, rate=s.rate)  # what every host starts with
        elif pacer.slow_until > now + CLAIM_HORIZON_SEC:
            return 0
        slots = self.frontier.host_slots.get(host, s.per_host) if host is not None else s.per_host
        slots = min(slots, s.concurrency)
        cap = slots + max(slots // 2, 2)
        if (interval := pacer.shared_interval) > 0:
            cap = min(cap, max(1, int(CLAIM_HORIZON_SEC / interval)))
        return cap

    async def release_hosts(
        self, hosts: Collection[str], held: Collection[str] = (), claims_next: bool = False
    ) -> None:
        """Nothing of ``hosts`` in flight here any more: their leases go back to the others.
        ``held``: the hosts this worker still holds pages of (their state is kept).
        ``claims_next``: this worker claims again soon, and its next claim gives back the
        leases of hosts it holds nothing of (or keeps them, if it takes pages of them again),
        in the claim's own transaction: no statement now (a host whose last page here has
        finished and whose next comes with the next claim kept its lease without a write, and
        without asking the others again for a part)."""
        leased = [h for h in hosts if h in self.frontier.host_slots]
        for host in hosts:
            self._host_slots.pop(host, None)  # the next lease may give another share
        self._idle.update(hosts)
        if leased and not claims_next:
            await self.frontier.release_hosts(leased)
        now = time.time()
        if now - self._last_sweep >= _SWEEP_SEC or len(self._idle) > _SWEEP_HOSTS:
            self._last_sweep = now
            self._forget_idle(held, now)

    def _forget_idle(self, held: Collection[str], now: float) -> None:
        """Drop what is kept of idle hosts whose pacing has nothing pending: no delay still
        running, no Retry-After, no fetch of their robots.txt under way."""
        for host in list(self._idle):
            if host in held or host in self._host_slots:
                self._idle.discard(host)  # busy again: back here when it is released
                continue
            pacer = self._pacers.get(host)
            if pacer is not None and not pacer.ready(now):
                continue  # its delay or back-off still runs: keep its clock
            lock = self._host_locks.get(host)
            if (lock is not None and lock.locked()) or self._robots.busy(host):
                continue
            self._idle.discard(host)
            self._pacers.pop(host, None)
            self._host_locks.pop(host, None)
            # with the pacer: the policy sets the next pacer's Crawl-delay when loaded
            self._robots.forget(host)

    @property
    def hosts_remembered(self) -> int:
        """Hosts with any per-host state in this gate (memory: see ``_idle``)."""
        kept = set(self._pacers) | set(self._host_slots) | set(self._host_locks)
        return len(self._robots.hosts() | kept)

    async def observe(self, host: str, result: FetchResult | None) -> float | None:
        """After a response: a 429/503 slows the host down. Returns the time to retry after."""
        if result is None or result.status not in (429, 503):
            return None
        now = time.time()
        until = parse_retry_after(result.headers.get("retry-after", ""), now)
        if until is None:
            until = now + DEFAULT_BACKOFF_SEC
        self._pacer(host).slow_down(until)
        await self.frontier.slow_host(host, until)
        log.info("%s answered %d: slowed down until %.0f", host, result.status, until)
        return until
