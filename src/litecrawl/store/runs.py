"""Run records and what ``litecrawl stats`` (and the dashboard) read of a frontier."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

from litecrawl.store.workers import WorkerRecord

__all__ = ["ErrorSummary", "FrontierSummary", "HostSummary", "RunRecords", "RunSummary"]


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
    # pages lost with their worker, not parked: tried alone at the next runs
    suspects: int = 0
    # re-fetched pages by what their checks found (store.sql.change_bands; docs/freshness.md)
    changes: dict[str, int] = field(default_factory=dict)


class RunRecords(abc.ABC):
    """A run's record (command, times, statistics) and the store at a glance."""

    @abc.abstractmethod
    async def start_run(self, command: str, now: int) -> int: ...

    @abc.abstractmethod
    async def finish_run(self, run_id: int, stats: str, now: int) -> None: ...

    @abc.abstractmethod
    async def summary(self, now: int, hosts: int | None = 10) -> FrontierSummary:
        """The store at a glance; ``hosts`` top hosts by pages (None: all of them)."""
