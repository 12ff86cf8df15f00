"""Per-host state every worker of a database shares: the robots.txt cache, Retry-After and
Crawl-delay slowdowns, and the pacing of request starts."""

from __future__ import annotations

import abc

__all__ = ["HostState"]


class HostState(abc.ABC):
    """Politeness held by the database, not by each process."""

    @abc.abstractmethod
    async def get_robots(self, origin: str) -> tuple[str, float] | None:
        """The cached robots.txt record (JSON) of an origin and its expiry time."""

    @abc.abstractmethod
    async def put_robots(self, origin: str, record: str, expires_at: float) -> None: ...

    @abc.abstractmethod
    async def claim_robots(self, origin: str, now: float, hold: float) -> bool:
        """True when this worker is to fetch the origin's robots.txt: no record in force and
        no other worker fetching it. The claim is an empty record until ``now + hold`` (a
        worker that dies while fetching holds it no longer), replaced by ``put_robots``."""

    @abc.abstractmethod
    async def slow_host(self, host: str, until: float, crawl_delay: float | None = None) -> None:
        """Remember that a host asked us to wait (Retry-After) or to pace (Crawl-delay)."""

    @abc.abstractmethod
    async def host_slowdowns(self, now: float) -> dict[str, float]:
        """Hosts still slowed down at ``now`` and until when."""

    @abc.abstractmethod
    async def reserve_start(self, host: str, interval: float, earliest: float) -> float:
        """Reserve the next request start to ``host`` for this worker, atomically among all
        workers of the database: the returned epoch time is no sooner than ``earliest``, than
        a Retry-After in force (``slow_host``) or than ``interval`` seconds after the start
        reserved before it. Politeness held by the database, not by each process."""

    @abc.abstractmethod
    async def take_start(
        self, host: str, interval: float, now: float, *, force: bool = False
    ) -> float:
        """A request to ``host`` is about to start at ``now`` (after ``reserve_start``): the
        actual start is stamped on the host's row, atomically among all workers, unless
        another one started less than ``interval`` before ``now``. Returns ``now`` when
        stamped (send now), else the time this one may start (wait, then take it again). A
        send woken late, or queued behind another worker's reservation that was sent late,
        thus never comes sooner than ``interval`` after the start before it. ``force``: the
        start stamped before was this one's and it went later: move the stamp to ``now``."""
