"""Leases: every running worker has a row in the database, renewed by a heartbeat.

A worker's claims are lost with it: another worker recovers them as soon as the worker's
heartbeat is older than ``lease_timeout`` (any machine), or at once when, on the same machine,
the worker's process is gone. The heartbeat runs on its own thread with its own connection, so
neither a busy event loop nor a synchronous hook of the user's lets a live lease lapse.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from litecrawl.errors import DatabaseUnusable, LitecrawlError
from litecrawl.store.workers import WorkerIdentity, WorkerLeases, WorkerRecord

__all__ = [
    "DEFAULT_LEASE_TIMEOUT",
    "Lease",
    "LeaseRules",
    "current_identity",
    "process_alive",
]

log = logging.getLogger("litecrawl")

DEFAULT_LEASE_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class LeaseRules:
    """When a worker counts as dead, and how often a live one says it is alive."""

    lease_timeout: float = DEFAULT_LEASE_TIMEOUT

    @property
    def beat_every(self) -> float:
        # Six beats per lease: a few late beats (a loaded machine) never cost a lease.
        return min(5.0, self.lease_timeout / 6)

    def is_dead(self, worker: WorkerRecord, now: float, here: WorkerIdentity) -> bool:
        if now - worker.heartbeat_at > self.lease_timeout:
            return True
        them = worker.identity
        if them.hostname != here.hostname or them.pid_scope != here.pid_scope:
            return False  # another machine (or pid namespace): only the heartbeat tells
        return not process_alive(them.pid, them.proc_start)

    def overdue(self, worker: WorkerRecord, now: float) -> bool:
        """Missed two beats: probably dead, not yet past its lease."""
        return now - worker.heartbeat_at > 2 * self.beat_every


def current_identity(command: str = "") -> WorkerIdentity:
    pid = os.getpid()
    return WorkerIdentity(socket.gethostname(), pid, _pid_scope(), _proc_start(pid), command)


def process_alive(pid: int, proc_start: str = "") -> bool:
    """Whether ``pid`` runs here and is the process that started at ``proc_start`` (if known)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by another user
    if proc_start:
        now_start = _proc_start(pid)
        if now_start and now_start != proc_start:
            return False  # the pid was reused by a newer process
    return True


def _pid_scope() -> str:
    """The kernel boot and pid namespace a pid is valid in ('' where /proc does not say)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""
    return f"{boot}/{namespace}"


def _proc_start(pid: int) -> str:
    """Field 22 of /proc/<pid>/stat: start time in clock ticks since boot ('' if unknown)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()  # the command name may hold spaces
    return fields[19] if len(fields) > 19 else ""


class Lease:
    """``async with Lease(frontier, rules, command):`` registers this process as a worker,
    beats while the block runs, and on the way out gives back what it still holds."""

    def __init__(self, frontier: WorkerLeases, rules: LeaseRules, command: str = "") -> None:
        self.frontier = frontier
        self.rules = rules
        self.identity = current_identity(command)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._beating = threading.Lock()  # one beat at a time on the frontier's beat connection
        self.progress: Callable[[], int] | None = None  # pages written so far, for the beats

    async def __aenter__(self) -> Self:
        await self.frontier.register_worker(self.identity, time.time())
        self._thread = threading.Thread(target=self._beat, name="litecrawl-lease", daemon=True)
        self._thread.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)
        try:
            released = await self.frontier.unregister_worker()
        except LitecrawlError:
            if exc is None:
                raise
            return  # the error that ended the block is the one to tell; the claims stay held
        if released:
            log.info("gave back %d unprocessed claims", released)

    def is_dead(self, now: float) -> Callable[[WorkerRecord], bool]:
        """The verdict on other workers as of ``now`` (never on this one)."""
        me = self.frontier.worker_id
        return lambda w: w.id != me and self.rules.is_dead(w, now, self.identity)

    def beat_now(self) -> bool:
        """Renew the lease and record the progress now (blocking: call it in a thread)."""
        with self._beating:
            pages = self.progress() if self.progress is not None else None
            return self.frontier.beat(time.time(), pages)

    def _beat(self) -> None:
        while not self._stop.wait(self.rules.beat_every):
            try:
                if not self.beat_now():
                    log.warning(
                        "lease lost (no heartbeat for %.0fs): another worker recovered this "
                        "worker's claims; pages in flight may be fetched twice",
                        self.rules.lease_timeout,
                    )
            except DatabaseUnusable as exc:
                # a full disk, a damaged file: the crawl's own next write (within a second)
                # meets it too and ends the run with its one error line (docs/crawling.md);
                # a warning from this thread first said it twice (test_damage.py)
                log.debug("heartbeat failed: %s", exc)
            except LitecrawlError as exc:
                log.warning("heartbeat failed: %s", exc)
