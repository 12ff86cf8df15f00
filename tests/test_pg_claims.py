"""Claims that know hosts on PostgreSQL (``store/postgres/claims.py``): a lease whose slots stay
the same is not written again (each claim used to rewrite every lease of its worker)."""

from __future__ import annotations

import asyncio

import psycopg

from litecrawl.store.postgres.frontier import PostgresFrontier
from litecrawl.store.queue import HostRules, NewLink
from litecrawl.store.workers import WorkerIdentity

NOW = 1_800_000_000


def _rules(in_use: dict[str, int], wants_more: bool = False) -> HostRules:
    room = {h: 4 for h in in_use}
    return HostRules(8, 64, room, new_host_room=4, in_use=in_use, wants_more=wants_more)


async def _worker(pg_url: str, pid: int) -> PostgresFrontier:
    frontier = PostgresFrontier(pg_url, pool_size=1)
    await frontier.open()
    await frontier.register_worker(WorkerIdentity("m", pid, "", "", "crawl"), NOW)
    return frontier


def _leases(pg_url: str) -> dict[tuple[str, int], tuple[int, str]]:
    """(host, worker) -> (slots, the row version's transaction)."""
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT host, worker_id, slots, xmin::text FROM host_leases")
        return {(host, worker): (slots, version) for host, worker, slots, version in rows}


def test_a_claim_rewrites_only_the_leases_whose_slots_change(pg_url: str) -> None:
    async def go() -> None:
        one = await _worker(pg_url, 1001)
        two = await _worker(pg_url, 1002)
        try:  # a.test's pages first in claim order (shallower), then b.test's
            await one.add([NewLink(f"http://a.test/p{i}", "a.test", 1) for i in range(20)])
            await one.add([NewLink(f"http://b.test/p{i}", "b.test", 2) for i in range(20)])
            assert len(await one.claim(8, NOW, hosts=_rules({}))) == 8  # 4 of each
            first = _leases(pg_url)
            assert {k: v[0] for k, v in first.items()} == {
                ("a.test", one.worker_id): 8,
                ("b.test", one.worker_id): 8,
            }
            # more of the hosts it holds, nobody else: its leases stay as they are, unwritten
            assert len(await one.claim(2, NOW, hosts=_rules({"a.test": 4, "b.test": 4}))) == 2
            assert _leases(pg_url) == first
            # a second worker asks for a part of a.test: the first's lease of a.test shrinks
            # (to its 6 fetches), b.test's stays the same row version
            assert await two.claim(1, NOW, hosts=_rules({}, wants_more=True)) == []
            await one.claim(1, NOW, hosts=_rules({"a.test": 6, "b.test": 4}))
            after = _leases(pg_url)
            assert after[("b.test", one.worker_id)] == first[("b.test", one.worker_id)]
            assert after[("a.test", one.worker_id)][0] == 6
            assert after[("a.test", one.worker_id)][1] != first[("a.test", one.worker_id)][1]
            assert after[("a.test", two.worker_id)][0] == 0
        finally:
            await one.close()
            await two.close()

    asyncio.run(go())
