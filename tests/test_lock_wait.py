"""A SQLite database held locked by another process for long: the crawl says so (which process
holds it, that it waits) instead of hanging silently, and goes on once the lock is free."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import PATIENCE_SEC

from litecrawl.store.queue import NewLink
from litecrawl.store.sqlite import waits
from litecrawl.store.sqlite.frontier import SQLiteFrontier

# Holds the write lock until told to let go (a line on stdin): the test lets go once the wait
# was told, so the notice never races a fixed hold on a loaded machine.
HOLD = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


class _Told(logging.Handler):
    """Sets ``seen`` when a record starting with ``prefix`` is logged."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix, self.seen = prefix, threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(self.prefix):
            self.seen.set()


def test_a_long_wait_for_another_process_lock_is_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "locked.db"
    monkeypatch.setattr(waits, "LOCK_NOTICE_SEC", 0.3)  # the default's 5 s, shorter

    told = _Told(f"database {db} is locked by another process")

    def let_go(holder: subprocess.Popen[str]) -> None:
        told.seen.wait(PATIENCE_SEC)  # a bound on a hang: the assertions below say what came
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.close()

    async def go() -> tuple[int, int]:
        async with SQLiteFrontier(db) as f:
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLD, str(db)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert holder.stdout is not None and holder.stdout.readline() == "held\n"
                releaser = threading.Thread(target=let_go, args=(holder,))
                releaser.start()
                added = await f.add([NewLink("http://a.test/", "a.test")])
                releaser.join(PATIENCE_SEC)
                holder.wait(PATIENCE_SEC)
            finally:
                if holder.poll() is None:
                    holder.kill()
                    holder.wait(10)
            return added, holder.pid

    logging.getLogger("litecrawl").addHandler(told)
    try:
        with caplog.at_level(logging.WARNING, logger="litecrawl"):
            added, pid = asyncio.run(go())
    finally:
        logging.getLogger("litecrawl").removeHandler(told)
    assert added == 1
    said = [r.getMessage() for r in caplog.records]
    told = [m for m in said if m.startswith(f"database {db} is locked by another process")]
    assert len(told) == 1 and f"pid {pid} (" in told[0] and "waiting for it" in told[0], said
    assert any(m.startswith(f"database {db}: no longer locked") for m in said), said


def test_a_quick_call_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(waits, "LOCK_NOTICE_SEC", 0.3)

    async def go() -> None:
        async with SQLiteFrontier(tmp_path / "free.db") as f:
            for i in range(20):
                await f.add([NewLink(f"http://a.test/{i}", "a.test")])
                await asyncio.sleep(0.05)

    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        asyncio.run(go())
    assert not [r for r in caplog.records if "locked" in r.getMessage()]
