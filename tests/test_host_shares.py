"""A host's slots shared among the workers that want it (docs/scaling.md#workers), on each
backend: the leases claims take, ask for, shrink and grow, and the slots a worker may start
fetches in (``Frontier.host_slots``), never more than ``per_host`` together."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from litecrawl.politeness.gate import PoliteGate, PolitenessSettings
from litecrawl.politeness.host_slots import HostSlots
from litecrawl.store.backends import open_frontier
from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import ClaimFocus, HostRules, NewLink
from litecrawl.store.workers import WorkerIdentity

NOW = 1_800_000_000
PER_HOST = 8
Open = Callable[[], Frontier]


def _rules(in_use: Mapping[str, int] | None = None, wants_more: bool = False) -> HostRules:
    in_use = in_use or {}
    return HostRules(
        per_host=PER_HOST,
        share=64,
        room={h: 100 for h in in_use},
        new_host_room=100,
        in_use=in_use,
        wants_more=wants_more,
    )


async def _workers(new_frontier: Open, n: int) -> list[Frontier]:
    workers = [new_frontier() for _ in range(n)]
    for i, w in enumerate(workers):
        await w.open()
        await w.register_worker(WorkerIdentity("m", 1000 + i, "", "", "crawl"), NOW)
    return workers


def _pages(host: str, n: int) -> list[NewLink]:
    return [NewLink(f"http://{host}/p{i}", host, 1) for i in range(n)]


def test_a_hosts_slots_go_to_the_workers_that_want_it(new_frontier: Open) -> None:
    async def go() -> None:
        one, two = await _workers(new_frontier, 2)
        try:
            await one.add(_pages("a.test", 60))
            assert len(await one.claim(10, NOW, hosts=_rules())) == 10
            assert one.host_slots == {"a.test": 8}  # alone: every slot
            assert await two.claim(10, NOW, hosts=_rules()) == []  # all held by the first
            assert two.host_slots == {}
            # its last claim came back short: it asks for a part, which takes no slot yet
            assert await two.claim(10, NOW, hosts=_rules(wants_more=True)) == []
            assert two.host_slots == {"a.test": 0}
            # the first's part is now half; its 8 fetches running keep their slots
            await one.claim(1, NOW, hosts=_rules({"a.test": 8}))
            assert one.host_slots == {"a.test": 4}
            assert await two.claim(10, NOW, hosts=_rules(wants_more=True)) == []
            # three of its fetches still run: its lease follows them down to its part
            await one.claim(1, NOW, hosts=_rules({"a.test": 3}))
            assert one.host_slots == {"a.test": 4}
            assert len(await two.claim(10, NOW, hosts=_rules(wants_more=True))) == 10
            assert two.host_slots == {"a.test": 4}
            # the second is done with the host: the first's part grows back to every slot
            await two.release_hosts(["a.test"])
            await one.claim(1, NOW, hosts=_rules({"a.test": 4}))
            assert one.host_slots == {"a.test": 8}
        finally:
            for w in (one, two):
                await w.close()

    asyncio.run(go())


def test_a_worker_with_nothing_due_halves_no_ones_slots(new_frontier: Open) -> None:
    """A ``--watch`` process waiting for the next due page, or a site crawl of another host,
    claims and finds nothing of the host it may take: it asks for no part of it."""

    async def go() -> None:
        crawler, watcher, site = await _workers(new_frontier, 3)
        try:
            await crawler.add(_pages("a.test", 10))
            assert len(await crawler.claim(10, NOW, hosts=_rules())) == 10
            assert crawler.host_slots == {"a.test": 8}
            for _ in range(2):
                assert await watcher.claim(10, NOW, hosts=_rules(wants_more=True)) == []
            assert watcher.host_slots == {}
            # more of a.test due, and a host the site crawl is about
            await crawler.add(_pages("a.test", 20)[10:] + _pages("b.test", 3))
            focus = ClaimFocus(("b.test",))
            pages = await site.claim(10, NOW, focus=focus, hosts=_rules(wants_more=True))
            assert len(pages) == 3
            assert site.host_slots == {"b.test": 8}
            await crawler.claim(1, NOW, hosts=_rules({"a.test": 8}))
            assert crawler.host_slots == {"a.test": 8}
        finally:
            for w in (crawler, watcher, site):
                await w.close()

    asyncio.run(go())


def test_four_workers_end_up_sharing_every_host_and_never_exceed_its_slots(
    new_frontier: Open,
) -> None:
    """Four workers claim, fetch and finish in turns: the fetches running of a host never add
    up to more than its slots, and every worker gets pages of every host."""

    async def go() -> None:
        hosts = ["a.test", "b.test", "c.test"]
        workers = await _workers(new_frontier, 4)
        try:
            await workers[0].add([p for h in hosts for p in _pages(h, 150)])
            held = [Counter[str]() for _ in workers]  # pages claimed, not finished
            running = [Counter[str]() for _ in workers]  # fetches holding a host's slots
            short = [False] * len(workers)
            seen: list[set[str]] = [set() for _ in workers]
            claimed = Counter[int]()
            for turn in range(24):
                for i, w in enumerate(workers):
                    for h in list(held[i]):  # half the fetches running finish
                        done = (running[i][h] + 1) // 2 if turn % 3 else running[i][h]
                        running[i][h] -= done
                        held[i][h] -= done
                        if not held[i][h]:
                            del held[i][h], running[i][h]
                            await w.release_hosts([h])
                    rules = _rules({h: running[i][h] for h in held[i]}, short[i])
                    pages = await w.claim(12, NOW, hosts=rules)
                    short[i] = len(pages) < 12
                    claimed[i] += len(pages)
                    for p in pages:
                        held[i][p.norm_url.split("/")[2]] += 1
                    for h in held[i]:  # start what the host's slots here allow
                        seen[i].add(h)
                        may = w.host_slots[h]
                        running[i][h] = max(running[i][h], min(held[i][h], may))
                    for h in hosts:
                        assert sum(r[h] for r in running) <= PER_HOST, (turn, i, running)
            # every worker fetched pages of every host, and all of them a good part of the pages
            assert all(s == set(hosts) for s in seen), seen
            assert sum(claimed.values()) == 450
            assert min(claimed.values()) >= 45, claimed
        finally:
            for w in workers:
                await w.close()

    asyncio.run(go())


def test_host_slots_resized_while_held() -> None:
    async def go() -> list[str]:
        slots = HostSlots(2)
        order: list[str] = []

        async def fetch(name: str, release: asyncio.Event) -> None:
            await slots.acquire()
            order.append(name)
            await release.wait()
            slots.release()

        events = {n: asyncio.Event() for n in "abcde"}
        tasks = [asyncio.create_task(fetch(n, events[n])) for n in "abcde"]
        await asyncio.sleep(0)
        assert order == ["a", "b"]
        slots.resize(1)  # smaller: running ones go on, the next starts wait
        events["a"].set()
        await asyncio.sleep(0.01)
        assert order == ["a", "b"]  # b still holds the one slot left
        tasks[2].cancel()  # c gives up waiting: d is next
        slots.resize(3)  # larger: the waiting start at once
        await asyncio.sleep(0.01)
        assert order == ["a", "b", "d", "e"]
        assert slots.used == 3
        for e in events.values():
            e.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert slots.used == 0
        return order

    asyncio.run(go())


def test_the_gate_reports_what_a_hosts_fetches_may_hold_until_the_claim_is_back(
    tmp_path: Path,
) -> None:
    """A claim sent while a fetch of the host has finished and another may start before the
    claim's smaller part applies: the lease it asks to keep covers that start too."""

    async def go() -> None:
        settings = PolitenessSettings(user_agent="t", per_host=2, concurrency=4, delay_ms=0)
        async with open_frontier(str(tmp_path / "g.db")) as frontier:
            gate = PoliteGate(frontier, settings)
            frontier.host_slots = {"a.test": 2}
            async with gate.slot("a.test"):  # one of two running: one more may start
                assert gate.host_rules({"a.test": 3}).in_use == {"a.test": 2}
                frontier.host_slots = {"a.test": 1}  # the claim came back with a part of one
                gate.leases_changed()
                assert gate.host_rules({"a.test": 3}).in_use == {"a.test": 1}
            assert gate.host_rules({"a.test": 2}).in_use == {"a.test": 1}
            assert gate.host_rules({"b.test": 1}).in_use == {"b.test": 2}  # none here yet

    asyncio.run(go())
