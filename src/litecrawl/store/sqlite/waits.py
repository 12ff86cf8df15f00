"""Waiting for a SQLite database that another process holds locked: said on stderr, not in
silence. SQLite waits inside the statement (``busy_timeout``) and tells nobody; a watcher thread
sees a call of the frontier's that has lasted ``LOCK_NOTICE_SEC``, checks that another
connection holds the write lock (not this one's own long transaction), and logs which processes
of this machine have the file open. One line when the wait starts, one when it ends."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

__all__ = ["LOCK_NOTICE_SEC", "LockWatch", "holders"]

log = logging.getLogger("litecrawl")

LOCK_NOTICE_SEC = 5.0


def holders(path: str) -> list[str]:
    """Other processes of this machine with the database (or its WAL or journal) open, as
    ``pid N (command)``; empty where /proc cannot tell (another machine, no permission)."""
    names = {os.path.realpath(path + suffix) for suffix in ("", "-wal", "-journal")}
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        if proc.name == str(os.getpid()):
            continue
        try:
            if not any(os.path.realpath(fd) in names for fd in (proc / "fd").iterdir()):
                continue
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        command = command.strip()
        found.append(f"pid {proc.name} ({command[:80]}{'...' if len(command) > 80 else ''})")
    return found


def _locked_by_another(path: str) -> bool:
    try:
        probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc) or "busy" in str(exc)
    finally:
        probe.close()


class LockWatch:
    """``begin(conn)`` / ``end()`` around each call on ``conn`` (cheap: two assignments); a
    thread, started at the first call, looks once in a while."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._since: float | None = None
        self._conn: sqlite3.Connection | None = None
        self._noticed: float | None = None  # the start of the call whose wait was told
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def begin(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._since = time.monotonic()
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="litecrawl-lock", daemon=True)
            self._thread.start()

    def end(self) -> None:
        with self._lock:
            self._since = None
            noticed, self._noticed = self._noticed, None
        if noticed is not None:
            waited = time.monotonic() - noticed
            log.warning("database %s: no longer locked, after %.0f s", self.path, waited)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _watch(self) -> None:
        while not self._stop.wait(min(1.0, LOCK_NOTICE_SEC / 2)):
            since, conn = self._since, self._conn
            if since is None or self._noticed is not None or conn is None:
                continue
            if time.monotonic() - since < LOCK_NOTICE_SEC or conn.in_transaction:
                continue  # not long yet, or busy with a transaction of its own
            if not _locked_by_another(self.path):
                continue
            who = holders(self.path)
            with self._lock:
                if self._since != since:
                    continue  # that call is over
                self._noticed = since
            log.warning(
                "database %s is locked by another process (%s): waiting for it",
                self.path,
                ", ".join(who) or "none of this machine's processes we can see has it open",
            )
