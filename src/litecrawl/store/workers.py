"""Worker leases: each worker's row and heartbeat, and the recovery of the claims of workers
that are gone."""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from litecrawl.frontier.lost import LOST_CATEGORY

__all__ = ["CLAIM_TIMEOUT", "WORKERS", "WorkerIdentity", "WorkerLeases", "WorkerRecord"]

# The error a stale claim carries until the page is processed again; a never-crawled page
# recovered a second time in a row is parked (it may be what kills its workers).
CLAIM_TIMEOUT = LOST_CATEGORY

# Every worker with the claims it holds, in the order WorkerRecord.from_row reads (both stores).
WORKERS = (
    "SELECT w.id, w.hostname, w.pid, w.pid_scope, w.proc_start, w.command, w.started_at,"
    " w.heartbeat_at, (SELECT count(*) FROM pages p WHERE p.worker_id = w.id), w.pages"
    " FROM workers w ORDER BY w.id"
)


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


class WorkerLeases(abc.ABC):
    """One object is one worker: after :meth:`register_worker` its claims name it."""

    worker_id: int | None = None

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
