"""Claims lost with their worker, on each backend: pages in flight at a kill are due again at
once however often it happens; a page lost alone at three consecutive claims by workers that
had written other pages is parked, for longer each time; lost alone by workers that had
written nothing, never; processing it clears that; pages parked by the old rule come back."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import (
    PATIENCE_SEC,
    LocalServer,
    NewDb,
    crawler_env,
    db_execute,
    db_query,
    html_page,
    site_app,
)
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.frontier.lost import ClaimKind
from litecrawl.lease import current_identity
from litecrawl.store.backends import open_frontier
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import HostRules, NewLink, PageUpdate
from litecrawl.store.sqlite.frontier import SQLiteFrontier
from litecrawl.store.sqlite.migrations import MIGRATIONS
from litecrawl.store.workers import WorkerIdentity
from litecrawl.urls import host_of

NOW = 1_800_000_000
Open = Callable[[], Frontier]
KILLER = "http://a.test/killer"
MATE = "http://a.test/mate"


async def lose(
    new_frontier: Open, pid: int, now: int, n: int, kind: ClaimKind, wrote: int = 1
) -> list[str]:
    """A worker on another machine, whose heartbeat says it has written ``wrote`` pages,
    claims ``n`` pages of ``kind`` and dies; a survivor recovers them. Returns the URLs it
    held."""
    async with new_frontier() as doomed:
        await doomed.register_worker(WorkerIdentity("elsewhere", pid, "b/ns", "1"), now)
        assert doomed.beat(now, wrote)
        held = [p.norm_url for p in await doomed.claim(n, now, kind=kind)]
    async with new_frontier() as survivor:
        assert await survivor.recover_lost(lambda w: w.identity.pid == pid, now) == len(held)
    return held


async def parked(new_frontier: Open, now: int) -> tuple[int, int | None]:
    async with new_frontier() as f:
        s = await f.summary(now, hosts=0)
        return s.parked, s.parked_next


def test_pages_lost_together_are_due_again_at_once_every_time(new_frontier: Open) -> None:
    async def go() -> None:
        async with new_frontier() as f:
            await f.add([NewLink(KILLER, "a.test"), NewLink(MATE, "a.test")])
        assert sorted(await lose(new_frontier, 1, NOW, 2, ClaimKind.ANY)) == [KILLER, MATE]
        for pid in range(2, 8):  # lost together, however often: never parked
            assert sorted(await lose(new_frontier, pid, NOW, 2, ClaimKind.ANY)) == [KILLER, MATE]
        assert await parked(new_frontier, NOW) == (0, None)
        async with new_frontier() as f:
            assert (await f.summary(NOW, hosts=0)).suspects == 2  # what stats shows
            # both were lost: a claim of clean pages passes them over, a claim of suspects
            # takes one at a time
            assert await f.claim(10, NOW, kind=ClaimKind.CLEAN) == []
            assert len(await f.claim(10, NOW, kind=ClaimKind.SUSPECTS)) == 1
            assert (await f.summary(NOW, hosts=0)).due_now == 1

    asyncio.run(go())


def test_a_page_lost_alone_at_three_claims_in_a_row_is_parked_for_longer_each_time(
    new_frontier: Open,
) -> None:
    async def go() -> None:
        async with new_frontier() as f:  # the mate comes first in claim order (depth)
            await f.add([NewLink(KILLER, "a.test", 1), NewLink(MATE, "a.test", 0)])
        await lose(new_frontier, 1, NOW, 2, ClaimKind.ANY)  # both in flight: no blame
        async with new_frontier() as f:
            assert [p.norm_url for p in await f.claim(1, NOW, kind=ClaimKind.SUSPECTS)] == [MATE]
            await f.finalize([PageUpdate(MATE, "a.test", NOW, NOW + 3600, "h")])
        for pid in (2, 3):  # alone, twice: due again at once
            assert await lose(new_frontier, pid, NOW, 5, ClaimKind.SUSPECTS) == [KILLER]
            assert await parked(new_frontier, NOW) == (0, None)
        assert await lose(new_frontier, 4, NOW, 5, ClaimKind.SUSPECTS) == [KILLER]
        assert await parked(new_frontier, NOW) == (1, NOW + 600)  # ten minutes, not a day
        async with new_frontier() as f:
            assert (await f.summary(NOW, hosts=0)).suspects == 0  # parked, no longer a suspect
        assert await lose(new_frontier, 5, NOW + 599, 5, ClaimKind.SUSPECTS) == []
        later = NOW + 600
        assert await lose(new_frontier, 6, later, 5, ClaimKind.SUSPECTS) == [KILLER]
        assert await parked(new_frontier, later) == (1, later + 2400)  # four times longer
        async with new_frontier() as f:  # the page that was processed is a clean page again
            assert [p.norm_url for p in await f.claim(5, NOW + 3600, kind=ClaimKind.CLEAN)] == [
                MATE
            ]
            await f.release([MATE])
            assert len(await f.claim(1, later + 2400, kind=ClaimKind.SUSPECTS)) == 1
            await f.finalize([PageUpdate(KILLER, "a.test", later, later + 3600, "h")])
        assert await parked(new_frontier, later) == (0, None)
        async with new_frontier() as f:
            assert len(await f.claim(5, later + 3600, kind=ClaimKind.CLEAN)) == 2

    asyncio.run(go())


def test_a_page_lost_alone_by_workers_that_had_written_nothing_is_never_parked(
    new_frontier: Open,
) -> None:
    """A crawl killed in its first seconds, again and again, with its first page in flight:
    nothing says that page is to blame."""

    async def go() -> None:
        async with new_frontier() as f:
            await f.add([NewLink(KILLER, "a.test")])
        assert await lose(new_frontier, 1, NOW, 5, ClaimKind.CLEAN, wrote=0) == [KILLER]
        for pid in range(2, 9):
            assert await lose(new_frontier, pid, NOW, 5, ClaimKind.SUSPECTS, wrote=0) == [KILLER]
        assert await parked(new_frontier, NOW) == (0, None)
        # the count that parks is of claims lost by workers that had written pages
        for pid in (10, 11):
            assert await lose(new_frontier, pid, NOW, 5, ClaimKind.SUSPECTS) == [KILLER]
        assert await lose(new_frontier, 12, NOW, 5, ClaimKind.SUSPECTS, wrote=0) == [KILLER]
        assert await parked(new_frontier, NOW) == (0, None)
        assert await lose(new_frontier, 13, NOW, 5, ClaimKind.SUSPECTS) == [KILLER]
        assert await parked(new_frontier, NOW) == (1, NOW + 600)

    asyncio.run(go())


def test_stats_shows_the_suspects(tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    def new() -> Frontier:
        return SQLiteFrontier(db)

    async def go() -> None:
        async with new() as f:
            await f.add([NewLink(KILLER, "a.test"), NewLink(MATE, "a.test")])
        await lose(new, 1, NOW, 2, ClaimKind.ANY)

    asyncio.run(go())
    out = CliRunner().invoke(app, ["stats", "--db", str(db)], env={"COLUMNS": "200"}).stdout
    assert "suspects: 2 pages lost with their worker (a kill, a crash), each tried alone" in out


# What each migration from lost_claims on adds, taken away again: a file as the version before
# lost_claims left it. A new migration needs its line here (the test says which).
_UNDO = {
    "lost_claims": "DROP INDEX idx_pages_lost; ALTER TABLE pages DROP COLUMN lost;"
    " ALTER TABLE pages DROP COLUMN lost_alone;",
    "section_vectors": "DROP TRIGGER section_vectors_gone; DROP TRIGGER section_vectors_stale;"
    " DROP TABLE section_vectors;",
    "change_rate": "ALTER TABLE pages DROP COLUMN checks; ALTER TABLE pages DROP COLUMN changes;"
    " ALTER TABLE pages DROP COLUMN change_rate; ALTER TABLE pages DROP COLUMN change_history;",
    "tsv_written": "",  # nothing on SQLite (PostgreSQL's tsvector)
    "text_lz4": "",  # nothing on SQLite (PostgreSQL's compression)
    "host_last_start": "ALTER TABLE hosts DROP COLUMN last_start;",
    "change_rate_measured": "",  # data only: unmeasured rates set to NULL
    "near_bands": "".join(
        f"DROP INDEX idx_resources_near{n};"
        f" CREATE INDEX idx_resources_band{n} ON resources(band{n});"
        for n in range(4)
    ),
    "section_places": "ALTER TABLE section_vectors DROP COLUMN places;",
    "links_in": "DROP TABLE page_links_in_new; DROP TABLE page_links_in;"
    " CREATE TABLE page_links_old (src TEXT NOT NULL, dst TEXT NOT NULL,"
    " dst_key INTEGER NOT NULL);"
    " INSERT INTO page_links_old SELECT src, dst, dst_key FROM page_links;"
    " DROP TABLE page_links; DELETE FROM sqlite_sequence WHERE name = 'page_links';"
    " ALTER TABLE page_links_old RENAME TO page_links;"
    " CREATE INDEX idx_page_links_src ON page_links(src);"
    " CREATE INDEX idx_page_links_dst ON page_links(dst_key);",
    "section_at": "ALTER TABLE section_vectors DROP COLUMN heading_at;",
    "vector_model": "DROP TABLE vector_model;",
    "fts_insert_written": "CREATE TRIGGER resources_ai AFTER INSERT ON resources BEGIN"
    " INSERT INTO resources_fts(rowid, title, text) VALUES (new.id, new.title, new.text); END;",
    "recrawl_interval": "ALTER TABLE pages DROP COLUMN recrawl_interval;",
    "section_vectors_rowid": "DROP TRIGGER section_vectors_gone; DROP TRIGGER"
    " section_vectors_stale; CREATE TABLE old_sections (resource_id INTEGER NOT NULL,"
    " ord INTEGER NOT NULL, heading TEXT NOT NULL, anchor TEXT NULL, model TEXT NOT NULL,"
    " vector BLOB NOT NULL, places TEXT NULL, heading_at INTEGER NULL,"
    " PRIMARY KEY (resource_id, ord)) WITHOUT ROWID; INSERT INTO old_sections SELECT *"
    " FROM section_vectors; DROP TABLE section_vectors;"
    " ALTER TABLE old_sections RENAME TO section_vectors;"
    " CREATE TRIGGER section_vectors_gone AFTER DELETE ON resources BEGIN DELETE FROM"
    " section_vectors WHERE resource_id = old.id; END; CREATE TRIGGER section_vectors_stale"
    " AFTER UPDATE OF text ON resources WHEN old.text IS NOT new.text BEGIN DELETE FROM"
    " section_vectors WHERE resource_id = old.id; END;",
}


def _undo_migrations_from(name: str) -> str:
    names = [n for n, _ in MIGRATIONS]
    first = names.index(name)
    missing = [n for n in names[first:] if n not in _UNDO]
    assert not missing, f"add what migration {missing} adds to _UNDO"
    undo = "".join(_UNDO[n] for n in reversed(names[first:]))
    return f"{undo} PRAGMA user_version = {first};"


def _old_database(tmp_path: Path, migration: str, sql: str) -> Path:
    """A database of the version before ``migration`` (KILLER and MATE queued), then ``sql``."""
    db = tmp_path / "old.db"

    async def create() -> None:
        async with SQLiteFrontier(db) as f:
            await f.add([NewLink(KILLER, "a.test"), NewLink(MATE, "a.test")])

    asyncio.run(create())
    conn = sqlite3.connect(db)
    conn.executescript(_undo_migrations_from(migration) + sql)
    conn.close()
    return db


def test_pages_parked_by_the_old_rule_are_due_again(tmp_path: Path) -> None:
    """A database of the version before: a never-crawled page parked for a day after its
    second lost claim (error claim_timeout, a made-up last crawl) is due again."""
    db = _old_database(
        tmp_path,
        "lost_claims",
        f"UPDATE pages SET error = 'claim_timeout', state = 3, last_crawl_time = {NOW},"
        f" next_crawl_time = {NOW + 86400} WHERE norm_url = '{KILLER}';"
        f"UPDATE pages SET error = 'claim_timeout', state = 3, last_crawl_time = {NOW},"
        f" next_crawl_time = {NOW + 86400}, status = 200 WHERE norm_url = '{MATE}';",
    )

    async def claim() -> list[str]:
        async with SQLiteFrontier(db) as f:
            return [p.norm_url for p in await f.claim(5, NOW + 60)]

    # the page that was crawled before keeps its schedule (docs/python-api.md, step 2)
    assert asyncio.run(claim()) == [KILLER]


def test_a_stored_prior_is_no_change_rate_after_the_migration(tmp_path: Path) -> None:
    """Rows of the version before kept the estimator's prior as the change rate of a page never
    re-fetched (checks 0): the migration clears it and keeps measured rates
    (docs/freshness.md)."""
    db = _old_database(
        tmp_path,
        "change_rate_measured",
        f"UPDATE pages SET checks = 0, change_rate = 1.0 / 86400 WHERE norm_url = '{KILLER}';"
        f"UPDATE pages SET checks = 1, change_rate = 2.0 / 86400 WHERE norm_url = '{MATE}';",
    )

    async def reopen() -> None:
        async with SQLiteFrontier(db):
            pass

    asyncio.run(reopen())
    rates = dict(sqlite3.connect(db).execute("SELECT norm_url, change_rate FROM pages"))
    assert rates == {KILLER: None, MATE: 2.0 / 86400}


def test_a_suspect_of_a_host_this_worker_only_asked_for_is_crawled(
    serve: Callable[[web.Application], LocalServer], new_db: NewDb
) -> None:
    # A live worker (this test) holds the host's slots in full, so the crawler's claims bring
    # nothing and ask for a part (a lease of none). A worker on another machine that held a
    # page dies meanwhile: the crawler recovers its claim and tries it alone, as a suspect,
    # without a lease. Its fetch waited for one of the slots the ask gave it, none, and no
    # claim came to change that: the crawler never ended (seen with kill -9 of two of four
    # workers on a loaded machine).
    site = serve(site_app({p: html_page(f"<p>{p}</p>") for p in ("/", "/a", "/b", "/lost")}))
    db = new_db("w")
    host = host_of(site.url())
    now = int(time.time())

    async def setup() -> tuple[int, int]:
        async with open_frontier(db) as f:
            await f.add([NewLink(site.url(p), host, 1) for p in ("/a", "/b")])
        async with open_frontier(db) as live:  # this process: alive while it beats
            await live.register_worker(current_identity("test"), now)
            assert len(await live.claim(1, now, hosts=HostRules(per_host=2, share=2))) == 1
            assert live.host_slots == {host: 2}
        async with open_frontier(db) as doomed:
            await doomed.register_worker(WorkerIdentity("elsewhere", 7, "b/ns", "1"), now)
            assert await doomed.claim_url(site.url("/lost"), host, 1, now) is not None
        assert live.worker_id is not None and doomed.worker_id is not None
        return live.worker_id, doomed.worker_id

    live, doomed = asyncio.run(setup())
    # a lease long enough that this test, beating as the live worker, is not taken for dead
    # on a loaded machine (the worker elsewhere dies a lease after its last beat)
    flags = ["--per-host", "2", "--delay-ms", "0", "--lease-timeout", "6", "--no-cache", "-q"]
    crawler = subprocess.Popen(
        [sys.executable, "-m", "litecrawl", "crawl", site.url(), "--db", db, *flags],
        stderr=subprocess.PIPE,
        env=crawler_env(),
    )
    try:
        deadline = time.monotonic() + PATIENCE_SEC
        beating = [live, doomed]  # the doomed worker beats until the crawler has asked
        lost = (
            f"SELECT worker_id, last_crawl_time FROM pages WHERE norm_url = '{site.url('/lost')}'"
        )
        while True:
            assert time.monotonic() < deadline and crawler.poll() is None, crawler.poll()
            ids = ", ".join(map(str, beating))
            db_execute(db, f"UPDATE workers SET heartbeat_at = {time.time()} WHERE id IN ({ids})")
            asked = db_query(db, f"SELECT worker_id FROM host_leases WHERE worker_id <> {live}")
            if asked:
                assert db_query(db, "SELECT slots FROM host_leases WHERE slots = 0") == [(0,)]
                beating = [live]
                held, crawled = db_query(db, lost)[0]
                if held == asked[0][0] or crawled is not None:  # the suspect is the crawler's
                    break
            time.sleep(0.2)
        # the live worker ends: what it held goes back, and the crawler takes the rest
        db_execute(
            db,
            f"UPDATE pages SET processing_time = NULL, worker_id = NULL WHERE worker_id = {live}",
        )
        db_execute(db, f"DELETE FROM host_leases WHERE worker_id = {live}")
        db_execute(db, f"DELETE FROM workers WHERE id = {live}")
        _, err = crawler.communicate(timeout=60)
    finally:
        if crawler.poll() is None:
            crawler.kill()
            crawler.wait(10)
    assert crawler.returncode == 0, err.decode()
    fetched = Counter(p for p in site.paths() if p != "/robots.txt")
    assert fetched == {"/": 1, "/a": 1, "/b": 1, "/lost": 1}
