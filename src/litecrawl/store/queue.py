"""The page queue: a lease-based queue of pages in a database, and its rows.

A *claim* stamps due rows with ``processing_time`` (and the claiming worker) so no other process
takes them; *finalize* writes a processed page back (schedule, hash, outcome) together with the
links it found. Claims come back two ways: a worker whose lease lapsed (no heartbeat for
``lease_timeout``, or its process gone on this machine) loses all its claims at once
(:mod:`litecrawl.store.workers`); and any claim older than the processing timeout is
*recovered* (docs/python-api.md, step 2). SQLite and PostgreSQL implement the same methods.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from litecrawl.frontier.lost import ClaimKind
from litecrawl.index.document import IndexDocument
from litecrawl.schedule import Schedule
from litecrawl.schedule.planner import PageChange
from litecrawl.store.states import PageState
from litecrawl.store.strategies import StrategyWrites
from litecrawl.strategy.domain import partition_hash

__all__ = [
    "Claim",
    "ClaimFocus",
    "ClaimedPage",
    "FinalizeResult",
    "HostRules",
    "NewLink",
    "PageQueue",
    "PageUpdate",
]


class NewLink(NamedTuple):
    """A URL to add to the frontier if it is not there yet (docs/python-api.md, step 6).

    A NamedTuple, not a frozen dataclass: the event loop makes one for each of a page's links
    (~25 a kit page), and a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``: 2.2 against 0.6 us a link (timeit, load ~20; bench/README.md,
    issue 29, session 9)."""

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
    A host not in ``room`` may give ``new_host_room`` pages.

    A host's slots are shared among the workers that want it (docs/scaling.md#workers): a
    lease takes at most ``share`` slots (the worker's own concurrency) and at most its part of
    ``per_host`` split among the workers with a lease of the host. Each claim sets this
    worker's leases of the hosts it holds pages of to that part, never under ``in_use`` (how
    many of their slots its fetches may hold until the claim is back), and drops the others;
    ``wants_more`` (its last claim brought nothing) asks for a part of the hosts whose next
    due pages it passed over because other workers hold all their slots: a lease of none,
    which makes theirs smaller at their next claims. Within what is allowed the claim order is
    docs/python-api.md's (step 3)."""

    per_host: int
    share: int
    room: Mapping[str, int] = field(default_factory=dict)
    new_host_room: int = 1
    horizon: float = 2.0
    in_use: Mapping[str, int] = field(default_factory=dict)
    wants_more: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """One call of :meth:`PageQueue.claim` as a backend's claim statements take it: the
    claimed rows are stamped with ``worker_id``."""

    worker_id: int | None
    limit: int
    now: int
    by_score: bool = False
    partition: tuple[int, int] | None = None
    focus: ClaimFocus | None = None
    hosts: HostRules | None = None
    kind: ClaimKind = ClaimKind.ANY


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
    change_history: str | None = None  # the change-rate estimator's record (schedule.planner)
    recrawl_interval: int | None = None  # seconds the schedule gave it at its last visit


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
    document: IndexDocument | None = None  # if analyzed
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
    change: PageChange | None = None  # the change statistics after this fetch; None keeps them
    # seconds from this visit to the next that the schedule gave (``next_crawl_time`` is
    # earlier for a page visited late: its next visit is one interval after it was due)
    recrawl_interval: int | None = None

    def page_row(self) -> dict[str, Any]:
        """The pages row finalize upserts, by column name (both stores' statements)."""
        return {
            "norm_url": self.norm_url,
            "host": self.host,
            "last_crawl_time": self.last_crawl_time,
            "next_crawl_time": self.next_crawl_time,
            "content_hash": self.content_hash,
            "depth": self.depth,
            "state": PageState.after_fetch(self.error).value,
            "status": self.status,
            "error": self.error,
            "content_type": self.content_type,
            "etag": self.etag,
            "last_modified": self.last_modified,
            "recheck_lastmod": self.recheck_lastmod,
            "response_ms": self.response_ms,
            "kind": self.kind,
            "checks": self.change.checks if self.change else None,
            "changes": self.change.changes if self.change else None,
            "change_rate": self.change.change_rate if self.change else None,
            "change_history": self.change.change_history if self.change else None,
            "recrawl_interval": self.recrawl_interval,
            # the partition hash, for when the upsert inserts (a redirect target)
            "part": partition_hash(self.norm_url, host=self.host),
        }

    def fresh_by_links(self, row: dict[str, Any]) -> None:
        """``row`` (:meth:`page_row`) made due as a fresh page's: a link of it was new."""
        due = self.next_crawl_time_if_new_links
        assert due is not None
        row["next_crawl_time"] = due
        if self.recrawl_interval is not None:  # the interval given moves with the due time
            row["recrawl_interval"] = self.recrawl_interval + due - self.next_crawl_time


@dataclass(frozen=True, slots=True)
class FinalizeResult:
    new_links: int = 0  # links that were not in the frontier before
    fresh_by_links: int = 0  # pages that turned fresh in the write because of them


class PageQueue(abc.ABC):
    """Adding, claiming, finalizing and releasing pages."""

    # host -> slots this worker leases (claims with HostRules take them, release_hosts frees)
    host_slots: dict[str, int]

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

    @abc.abstractmethod
    async def change_rates(self) -> list[tuple[str, float | None]]:
        """(host, change rate per second, None: not estimated yet) of every page crawled at
        least once: what the re-crawl budget is shared among (docs/freshness.md)."""

    @abc.abstractmethod
    async def change_records(
        self, after: str, limit: int
    ) -> list[tuple[str, str | None, int | None]]:
        """Up to ``limit`` (URL, change record, last visit) of pages crawled at least once, after
        ``after`` in URL order: every page's record a batch at a time, what the freshness
        schedule learns its prior of change rates and its hazard from (docs/freshness.md)."""

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
