"""SQLite claims in claim order read the claim index in order and stop at the limit, however
many pages the frontier knows: SQLite keeps no statistics, and left to itself it read every
page not claimed (through idx_pages_processing) and sorted them, a cost that grew with the
frontier (bench/README.md, issue 33)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from litecrawl.store.queue import Claim, ClaimFocus, HostRules, NewLink
from litecrawl.store.sqlite.claims import (
    claim_pages,
    claim_statement,
    first_free_statement,
    next_claimable,
)
from litecrawl.store.sqlite.frontier import SQLiteFrontier

NOW = 1_800_000_000
_CLAIMS = {
    "plain": Claim(1, 64, NOW),
    "hosts": Claim(1, 64, NOW, hosts=HostRules(per_host=4, share=4, room={"a.test": 2})),
    "partition": Claim(1, 64, NOW, partition=(0, 1)),
    "focus": Claim(1, 64, NOW, focus=ClaimFocus(("a.test",))),
}


def _frontier(tmp_path: Path) -> Path:
    db = tmp_path / "c.db"

    async def fill() -> None:
        async with SQLiteFrontier(db) as f:
            await f.add(
                [
                    NewLink(f"http://{h}.test/{i}", f"{h}.test", depth=i % 3)
                    for h in "ab"
                    for i in range(40)
                ]
            )

    asyncio.run(fill())
    return db


@pytest.mark.parametrize("name", sorted(_CLAIMS))
def test_a_claim_reads_the_claim_index_in_order(tmp_path: Path, name: str) -> None:
    db = _frontier(tmp_path)
    statement, params = claim_statement(_CLAIMS[name])
    conn = sqlite3.connect(db)
    try:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}", params)]
        # and the statement claims what it did before: of each host, its shallowest pages
        conn.execute("BEGIN IMMEDIATE")
        claimed, _ = claim_pages(conn, _CLAIMS[name])
        left = conn.execute("SELECT host, depth FROM pages WHERE processing_time IS NULL")
        shallowest_left = {}
        for host, depth in left:
            shallowest_left[host] = min(depth, shallowest_left.get(host, depth))
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    assert any("USING INDEX idx_pages_claim" in step for step in plan), plan
    assert not any("idx_pages_processing" in step for step in plan), plan
    assert claimed
    for page in claimed:
        host = page.norm_url.split("/")[2]
        assert page.depth <= shallowest_left.get(host, page.depth), (page, shallowest_left)


def test_when_nothing_is_due_the_next_claimable_time_is_read_in_claim_order(
    tmp_path: Path,
) -> None:
    db = _frontier(tmp_path)
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE pages SET next_crawl_time = 1000 + length(norm_url) * 10 + depth")
        conn.commit()
        statement, params = first_free_statement(0, 60, None, None)
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}", params)]
        soonest = conn.execute("SELECT min(next_crawl_time) FROM pages").fetchone()[0]
        found = next_claimable(conn, 0, 60, None, None)
    finally:
        conn.close()
    assert any("USING INDEX idx_pages_claim" in step for step in plan), plan
    assert not any("idx_pages_processing" in step for step in plan), plan
    assert found == soonest
