"""The frontier interface: a lease-based queue of pages in a database.

A *claim* stamps due rows with ``processing_time`` (and the claiming worker) so no other process
takes them; *finalize* writes a processed page back (schedule, hash, outcome) together with the
links it found. Claims come back two ways: a worker whose lease lapsed (no heartbeat for
``lease_timeout``, or its process gone on this machine) loses all its claims at once; and any claim
older than the processing timeout is *recovered* (docs/python-api.md, step 2). SQLite and PostgreSQL
implement the same methods.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from litecrawl.frontier.lost import ClaimKind
from litecrawl.schedule import Schedule
from litecrawl.strategy.domain import partition_hash

__all__ = [
    "ClaimFocus",
    "ClaimedPage",
    "ErrorSummary",
    "FinalizeResult",
    "Frontier",
    "FrontierSummary",
    "HostRules",
    "HostSummary",
    "LinkWrite",
    "NewLink",
    "PageUpdate",
    "RunSummary",
    "StrategyWrites",
    "WorkerIdentity",
    "WorkerRecord",
]

# next_crawl_time of a URL a strategy knows (state, score, meta) but did not queue.
PARKED = 1 << 62


@dataclass(frozen=True, slots=True)
class NewLink:
    """A URL to add to the frontier if it is not there yet (docs/python-api.md, step 6)."""

    url: str
    host: str
    depth: int = 0
    source: str = "link"  # seed | sitemap | feed | link | redirect
    score: float = 0.5
    kind: str = "page"  # page | sitemap | feed
    lastmod: int | None = None  # from a sitemap or feed entry, epoch seconds


@dataclass(frozen=True, slots=True)
class ClaimFocus:
    """Claims narrowed to part of a shared frontier (the site crawler crawls one site at a
    time): URLs of ``hosts`` only, and of those only ``urls`` when given (a feed crawl)."""

    hosts: tuple[str, ...]
    urls: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class HostRules:
    """Claims that know hosts (the CLI's crawls): a worker takes URLs only of hosts it may fetch
    soon, and leases a share of a host's ``per_host`` slots while it holds its pages, so the
    workers of a database together never exceed ``per_host``.

    Passed over: hosts under a ``Retry-After`` or whose next start, reserved by the workers'
    shared pacing, is more than ``horizon`` seconds ahead; hosts whose slots other workers hold
    in full; and hosts whose ``room`` (how many more of its pages this worker may hold) is 0.
    A host not in ``room`` may give ``new_host_room`` pages. A new lease takes at most
    ``share`` slots (the worker's own concurrency), so a host with many slots can be shared.
    Within what is allowed the claim order is docs/python-api.md's (step 3)."""

    per_host: int
    share: int
    room: Mapping[str, int] = field(default_factory=dict)
    new_host_room: int = 1
    horizon: float = 2.0


@dataclass(frozen=True, slots=True)
class ClaimedPage:
    norm_url: str
    last_crawl_time: int | None
    next_crawl_time: int | None
    content_hash: str
    depth: int = 0
    source: str = "link"
    etag: str | None = None
    last_modified: str | None = None
    kind: str = "page"
    lastmod: int | None = None
    score: float = 0.5
    meta: str | None = None  # the strategy's meta (JSON, see litecrawl.strategy.codec)


@dataclass(frozen=True, slots=True)
class LinkWrite:
    """What a crawling strategy changed for one URL; None = leave the stored value."""

    url: str
    host: str
    depth: int
    state: int | None = None
    meta: str | None = None
    score: float | None = None
    queue: bool = False  # schedule(): due now if not queued yet; False: known, not queued

    def row(self) -> dict[str, Any]:
        """The statement parameters of both stores' strategy writes, by name."""
        return {
            "url": self.url,
            "host": self.host,
            "depth": self.depth,
            "state": self.state,
            "meta": self.meta,
            "score": self.score,
            "queue": self.queue,
            "parked": PARKED,
            "part": partition_hash(self.url, self.meta, self.host),
        }


@dataclass(frozen=True, slots=True)
class StrategyWrites:
    """A strategy's writes, batched with the page's own. Domain metadata: (domain, the JSON
    this worker loaded, its JSON now (None = gone)); the store merges the change into what it
    holds (``litecrawl.strategy.metadata.merge``)."""

    links: tuple[LinkWrite, ...] = ()
    domains: tuple[tuple[str, str | None, str | None], ...] = ()


@dataclass(frozen=True, slots=True)
class WorkerIdentity:
    """Who a worker is: enough for a process on the same machine to tell whether it still runs.

    ``pid_scope`` names the kernel boot and pid namespace ``pid`` belongs to (empty where
    unknown); ``proc_start`` is the process's start time in that scope, so a pid reused by a new
    process is not mistaken for the worker.
    """

    hostname: str
    pid: int
    pid_scope: str = ""
    proc_start: str = ""
    command: str = ""


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """A registered worker as the database knows it, with the number of claims it holds."""

    id: int
    identity: WorkerIdentity
    started_at: float
    heartbeat_at: float
    claims: int = 0
    pages: int = 0  # written in its run, as of its last heartbeat

    @classmethod
    def from_row(cls, r: Sequence[Any]) -> WorkerRecord:
        """From (id, hostname, pid, pid_scope, proc_start, command, started_at, heartbeat_at,
        claims, pages), the order both stores select them in."""
        return cls(r[0], WorkerIdentity(r[1], r[2], r[3], r[4], r[5]), r[6], r[7], r[8], r[9])


@dataclass(frozen=True, slots=True)
class HostSummary:
    host: str
    pages: int
    crawled: int  # fetched without error at least once and last time
    errors: int
    due: int
    claimed: int
    slowed_until: float | None  # a 429/503 Retry-After still in force
    crawl_delay: float | None
    avg_response_ms: float | None = None  # over the host's pages' last fetches
    # the next request start reserved by the workers' shared pacing, when still ahead
    next_start: float | None = None
    leases: dict[int, int] = field(default_factory=dict)  # worker id -> slots it leases


@dataclass(frozen=True, slots=True)
class ErrorSummary:
    category: str
    pages: int
    sample_url: str


@dataclass(frozen=True, slots=True)
class RunSummary:
    id: int
    command: str
    started_at: int
    finished_at: int | None
    worker_id: int | None
    stats: dict[str, object]


@dataclass(frozen=True, slots=True)
class FrontierSummary:
    """What ``litecrawl stats`` shows, read from the store at any time."""

    by_state: dict[str, int]
    by_kind: dict[str, int]
    due_now: int
    claimed: int
    hosts: int
    errors: list[ErrorSummary]
    next_due: int | None
    runs: list[RunSummary]
    top_hosts: list[HostSummary] = field(default_factory=list)
    workers: list[WorkerRecord] = field(default_factory=list)
    # pages parked because they may kill their workers (litecrawl.frontier.lost), and the
    # soonest next try of one
    parked: int = 0
    parked_next: int | None = None


@dataclass(frozen=True, slots=True)
class PageUpdate:
    """Everything finalize writes for one processed page (docs/python-api.md step 9's upsert,
    and more).

    ``content_hash=None`` keeps the stored hash (a failed fetch does not erase what we had).
    """

    norm_url: str
    host: str
    last_crawl_time: int
    next_crawl_time: int
    content_hash: str | None
    depth: int = 0
    status: int | None = None
    error: str | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    links: Sequence[NewLink] = field(default_factory=tuple)
    document: object | None = None  # the index document (litecrawl.index), if analyzed
    # Skipped because its listed lastmod was old: if a sitemap has meanwhile listed a newer
    # lastmod, the page is due again at once instead (decided inside the write, race-free).
    recheck_lastmod: bool = False
    # Freshness decided in the write (no hook needs it earlier): when any of ``links`` is new
    # to the frontier, the page is fresh and ``next_crawl_time_if_new_links`` applies.
    next_crawl_time_if_new_links: int | None = None
    strategy: StrategyWrites | None = None  # written after the page itself
    # The page's outgoing links as now read (replacing the stored ones); None when the page was
    # not read this time (an error, a 304, not HTML), so the stored links stay.
    links_out: Sequence[str] | None = None
    response_ms: int | None = None  # the fetch's time to the whole body; None keeps the stored
    kind: str | None = None  # a link that turned out to be a feed: "feed"; None keeps the stored

    def page_row(self) -> dict[str, Any]:
        """The pages row finalize upserts, by column name (both stores' statements)."""
        return {
            "norm_url": self.norm_url,
            "host": self.host,
            "last_crawl_time": self.last_crawl_time,
            "next_crawl_time": self.next_crawl_time,
            "content_hash": self.content_hash,
            "depth": self.depth,
            "state": 3 if self.error else 2,
            "status": self.status,
            "error": self.error,
            "content_type": self.content_type,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "recheck_lastmod": self.recheck_lastmod,
            "response_ms": self.response_ms,
            "kind": self.kind,
            # the partition hash, for when the upsert inserts (a redirect target)
            "part": partition_hash(self.norm_url, host=self.host),
        }


@dataclass(frozen=True, slots=True)
class FinalizeResult:
    new_links: int = 0  # links that were not in the frontier before
    fresh_by_links: int = 0  # pages that turned fresh in the write because of them


class Frontier(abc.ABC):
    """``async with frontier:`` opens and migrates the store; methods are safe across processes.

    One frontier object is one worker: after :meth:`register_worker` its claims name it.
    """

    worker_id: int | None = None
    # host -> slots this worker leases (claims with HostRules take them, release_hosts frees)
    host_slots: dict[str, int]

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abc.abstractmethod
    async def open(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def add(self, links: Iterable[NewLink]) -> int:
        """Insert pages that are not known yet; returns how many were new."""

    @abc.abstractmethod
    async def recover_stale(
        self, older_than: int, now: int, schedule: Schedule, retry_uncrawled: bool = False
    ) -> int:
        """Reset claims stamped before ``older_than`` and reschedule those rows as stale.

        With ``retry_uncrawled`` a never-crawled row is made due again instead, once: the CLI's
        resume after kill -9 finishes the crawl, while a page whose processing keeps dying is
        still parked (docs/python-api.md, step 2). One transaction, so two processes recovering
        at once never double-handle a row. Returns the number of rows recovered.
        """

    @abc.abstractmethod
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
        """Atomically claim up to ``limit`` due rows, never-crawled first, then oldest due;
        ``by_score``: highest score first (crawling strategies); ``partition`` (K, N): only URLs
        whose partition key (litecrawl.strategy.domain) hashes to K; ``focus``: only part of
        the frontier (a site crawl); ``hosts``: only of hosts that may be fetched now, taking
        leases on their slots (:attr:`host_slots`); ``kind``: pages lost with their worker or
        not (:mod:`litecrawl.frontier.lost`)."""

    @abc.abstractmethod
    async def release_hosts(self, hosts: Sequence[str]) -> None:
        """Give back this worker's leases on ``hosts`` (nothing of theirs in flight here)."""

    @abc.abstractmethod
    async def claim_url(self, url: str, host: str, depth: int, now: int) -> ClaimedPage | None:
        """Claim one URL (inserting it if unknown); None if another worker holds it."""

    @abc.abstractmethod
    async def next_claimable(
        self,
        now: float,
        horizon: float,
        partition: tuple[int, int] | None = None,
        focus: ClaimFocus | None = None,
    ) -> float | None:
        """When a claim that knows hosts (``horizon`` as in :class:`HostRules`) may next find
        an unclaimed page (of the partition, of the focus): the soonest due time of the pages
        of hosts free now, or of a held-back host (Retry-After, starts reserved beyond the
        horizon) when it is free again; None: no page left."""

    @abc.abstractmethod
    async def known(self, urls: Sequence[str]) -> set[str]:
        """The subset of ``urls`` already in the frontier."""

    @abc.abstractmethod
    async def finalize(self, updates: Sequence[PageUpdate]) -> FinalizeResult:
        """Write processed pages and their links in one transaction; clears their claims."""

    @abc.abstractmethod
    async def delete(self, urls: Sequence[str]) -> None:
        """Remove rows (invalid URLs)."""

    @abc.abstractmethod
    async def release(self, urls: Sequence[str], not_before: int | None = None) -> None:
        """Give claims back unprocessed: due at once, or not before ``not_before`` (429)."""

    @abc.abstractmethod
    async def make_due(self, urls: Sequence[str], now: int) -> int:
        """Make known, unclaimed pages due at ``now`` (a retry of failed URLs); returns how
        many were scheduled later than that."""

    @abc.abstractmethod
    async def known_urls(self, after: str, limit: int) -> list[str]:
        """Up to ``limit`` URLs the frontier knows (pages, sitemaps, feeds) after ``after``, in
        URL order: all of them, a batch at a time."""

    async def make_all_due(self, now: int, match: Callable[[str], bool] | None = None) -> int:
        """Make every known, unclaimed page, sitemap and feed (or those ``match`` takes) due at
        ``now`` (a forced re-crawl: listings read again find new pages); returns how many were
        scheduled later than that."""
        made, after = 0, ""
        while urls := await self.known_urls(after, 10_000):
            after = urls[-1]
            chosen = urls if match is None else [u for u in urls if match(u)]
            if chosen:
                made += await self.make_due(chosen, now)
        return made

    @abc.abstractmethod
    async def add_listed(self, links: Sequence[NewLink], now: int) -> int:
        """Add sitemap/feed entries; a known URL whose ``lastmod`` is newer than its last crawl
        becomes due now. Returns how many were new."""

    # -- leases: workers and their claims ----------------------------------------------------

    @abc.abstractmethod
    async def register_worker(self, identity: WorkerIdentity, now: float) -> int:
        """Add this worker's row; from now on claims made here name it. Returns its id."""

    @abc.abstractmethod
    def beat(self, now: float, pages: int | None = None) -> bool:
        """Renew this worker's lease (and record the ``pages`` it has written in
        its run: :mod:`litecrawl.frontier.lost` reads it).
        Blocking and safe from any thread (its own connection), so a busy event loop cannot
        let the lease lapse. False when the row was gone (another worker took this one for
        dead and recovered its claims) and has been put back."""

    @abc.abstractmethod
    async def unregister_worker(self) -> int:
        """Clean exit: give back any claim still held (due at once) and delete the row.
        Returns how many claims were given back."""

    @abc.abstractmethod
    async def workers(self) -> list[WorkerRecord]:
        """Every registered worker with the claims it holds."""

    @abc.abstractmethod
    async def recover_lost(self, is_dead: Callable[[WorkerRecord], bool], now: int) -> int:
        """Delete the rows of workers ``is_dead`` condemns and recover their claims (and claims
        naming no registered worker), in one transaction: due again as they were, unless
        :mod:`litecrawl.frontier.lost` parks them. Returns the number of claims recovered."""

    # -- crawling strategies (litecrawl.strategy) ----------------------------------------------

    @abc.abstractmethod
    async def write_strategy(self, writes: StrategyWrites) -> int:
        """Write a strategy's changes outside a page (seeds); returns how many URLs were new."""

    @abc.abstractmethod
    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]:
        """Synchronous (a hook's ``refresh_states``): state, score, meta of the known URLs."""

    @abc.abstractmethod
    def read_domain(self, domain: str) -> str | None:
        """Synchronous: the stored domain metadata (JSON) of a registered domain."""

    @abc.abstractmethod
    async def partitions(self, n: int, now: int) -> dict[int, dict[str, int]]:
        """Pages, crawled and due now in each partition K of ``n``."""

    @abc.abstractmethod
    async def domain_metadata(self) -> dict[str, str]:
        """All domain metadata (``litecrawl stats --domains``)."""

    @abc.abstractmethod
    async def known_hosts(self) -> list[str]:
        """The hosts (``host[:port]``) of the pages the frontier holds: a crawl given no seeds
        resumes the frontier and stays on these sites."""

    # -- per-host state shared by every worker -----------------------------------------------

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

    # -- observability -------------------------------------------------------------------------

    @abc.abstractmethod
    async def start_run(self, command: str, now: int) -> int: ...

    @abc.abstractmethod
    async def finish_run(self, run_id: int, stats: str, now: int) -> None: ...

    @abc.abstractmethod
    async def summary(self, now: int, hosts: int | None = 10) -> FrontierSummary:
        """The store at a glance; ``hosts`` top hosts by pages (None: all of them)."""
