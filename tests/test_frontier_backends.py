"""The frontier's contract, one copy run on each backend: a SQLite file and a PostgreSQL server.

Claims and their order, narrowed claims, exclusive claims between workers, writes of crawled
pages and their new links, listed entries, due times, released claims, robots.txt and host state,
run records, request starts reserved in turn (shared pacing), robots.txt fetch claims.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from litecrawl.store.frontier import Frontier
from litecrawl.store.queue import ClaimFocus, NewLink, PageUpdate
from litecrawl.store.workers import WorkerIdentity

NOW = 1_800_000_000
Open = Callable[[], Frontier]


def _link(path: str, depth: int = 0, host: str = "a.test", **kw: object) -> NewLink:
    return NewLink(f"http://{host}{path}", host, depth, **kw)  # type: ignore[arg-type]


def _done(url: str, host: str = "a.test", **kw: object) -> PageUpdate:
    fields: dict[str, object] = {"last_crawl_time": NOW, "next_crawl_time": NOW + 3600}
    fields.update(kw)
    return PageUpdate(url, host, content_hash="h", status=200, **fields)  # type: ignore[arg-type]


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_claims_come_in_order_and_only_once(new_frontier: Open) -> None:
    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            added = await f.add([_link("/d2", 2), _link("/d0", 0), _link("/d1", 1), _link("/d0")])
            assert added == 3
            first = await f.claim(2, NOW)
            assert [p.norm_url for p in first] == ["http://a.test/d0", "http://a.test/d1"]
            rest = await f.claim(10, NOW)
            assert [p.norm_url for p in rest] == ["http://a.test/d2"]
            assert await f.claim(10, NOW) == []  # all claimed
            await f.release(["http://a.test/d2"], not_before=NOW + 60)
            assert await f.claim(10, NOW) == []  # not before its time
            assert [p.norm_url for p in await f.claim(10, NOW + 60)] == ["http://a.test/d2"]
        finally:
            await f.close()

    run(go())


def test_workers_claiming_at_once_never_share_a_url(new_frontier: Open) -> None:
    async def go() -> None:
        workers = [new_frontier() for _ in range(4)]
        for w in workers:
            await w.open()
        try:
            await workers[0].add([_link(f"/p{i}") for i in range(200)])

            async def drain(w: Frontier) -> list[str]:
                got: list[str] = []
                while batch := await w.claim(7, NOW):
                    got += [p.norm_url for p in batch]
                return got

            claimed = await asyncio.gather(*(drain(w) for w in workers))
            every = [u for got in claimed for u in got]
            assert len(every) == 200 and len(set(every)) == 200
        finally:
            for w in workers:
                await w.close()

    run(go())


def test_claims_narrowed_to_hosts_and_urls(new_frontier: Open) -> None:
    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            await f.add([_link("/1"), _link("/2"), _link("/1", host="b.test")])
            only_b = await f.claim(10, NOW, focus=ClaimFocus(("b.test",)))
            assert [p.norm_url for p in only_b] == ["http://b.test/1"]
            one = await f.claim(10, NOW, focus=ClaimFocus(("a.test",), ("http://a.test/2",)))
            assert [p.norm_url for p in one] == ["http://a.test/2"]
        finally:
            await f.close()

    run(go())


def test_finalize_writes_pages_and_counts_new_links(new_frontier: Open) -> None:
    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            await f.add([_link("/")])
            (page,) = await f.claim(1, NOW)
            links = (_link("/x", 1), _link("/y", 1))
            result = await f.finalize([_done(page.norm_url, links=links, etag='"e1"')])
            assert result.new_links == 2
            due = await f.claim(10, NOW)
            assert sorted(p.norm_url for p in due) == ["http://a.test/x", "http://a.test/y"]
            # the crawled page: not due until its next time, with what was stored
            (again,) = await f.claim(10, NOW + 3600)
            assert (again.norm_url, again.etag, again.content_hash) == (page.norm_url, '"e1"', "h")
            # a known link at a smaller depth moves up; a known one is not new
            result = await f.finalize([_done(page.norm_url, links=(_link("/x", 1),))])
            assert result.new_links == 0
        finally:
            await f.close()

    run(go())


def test_listed_entries_and_due_times(new_frontier: Open) -> None:
    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            await f.add([_link("/old"), _link("/map.xml", kind="sitemap")])
            claimed = {p.norm_url: p for p in await f.claim(2, NOW)}
            await f.finalize([_done("http://a.test/old")])
            # a sitemap read 20 s later lists /old as changed after its crawl, and /new
            listed = (_link("/old", lastmod=NOW + 10), _link("/new", lastmod=NOW - 999))
            sitemap = _done("http://a.test/map.xml", links=listed, last_crawl_time=NOW + 20)
            assert "http://a.test/map.xml" in claimed
            assert (await f.finalize([sitemap])).new_links == 1
            # /old was listed as changed after its crawl: due now; /new is new: due
            due = await f.claim(10, NOW + 20)
            assert sorted(p.norm_url for p in due) == ["http://a.test/new", "http://a.test/old"]
            assert {p.lastmod for p in due} == {NOW + 10, NOW - 999}
            for p in due:
                await f.finalize([_done(p.norm_url)])
            assert await f.make_due(["http://a.test/new"], NOW + 30) == 1
            assert [p.norm_url for p in await f.claim(10, NOW + 30)] == ["http://a.test/new"]
            assert await f.known(["http://a.test/old", "http://a.test/zzz"]) == {
                "http://a.test/old"
            }
            claimed = await f.claim_url("http://a.test/zzz", "a.test", 3, NOW)
            assert claimed is not None and claimed.depth == 3
            assert await f.claim_url("http://a.test/zzz", "a.test", 3, NOW) is None  # held
            await f.delete(["http://a.test/zzz"])
            assert await f.known(["http://a.test/zzz"]) == set()
        finally:
            await f.close()

    run(go())


def test_workers_hosts_robots_and_runs(new_frontier: Open) -> None:
    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            worker = await f.register_worker(WorkerIdentity("m1", 123, "", "", "crawl"), NOW)
            await f.add([_link("/a"), _link("/b")])
            await f.claim(10, NOW)
            (record,) = await f.workers()
            assert (record.id, record.identity.hostname, record.claims) == (worker, "m1", 2)
            assert await f.unregister_worker() == 2  # claims held go back
            assert len(await f.claim(10, NOW)) == 2
            await f.put_robots("http://a.test", "rec", NOW + 5)
            await f.put_robots("http://a.test", "rec2", NOW + 9)
            assert await f.get_robots("http://a.test") == ("rec2", NOW + 9)
            assert await f.get_robots("http://b.test") is None
            await f.slow_host("a.test", NOW + 50, 2.0)
            await f.slow_host("a.test", NOW + 10)  # never shortens a slowdown
            assert await f.host_slowdowns(NOW) == {"a.test": NOW + 50}
            run_id = await f.start_run("crawl", NOW)
            await f.finish_run(run_id, '{"fetched": 2}', NOW + 1)
            assert await f.start_run("crawl", NOW + 2) > run_id
        finally:
            await f.close()

    run(go())


def test_request_starts_are_reserved_in_turn_across_workers(new_frontier: Open) -> None:
    async def go() -> None:
        a, b = new_frontier(), new_frontier()
        await a.open()
        await b.open()
        try:
            # two workers, a 2 s interval: starts come 2 s apart whoever asks
            assert await a.reserve_start("h.test", 2.0, NOW) == NOW
            assert await b.reserve_start("h.test", 2.0, NOW) == NOW + 2
            assert await a.reserve_start("h.test", 2.0, NOW + 1) == NOW + 4
            # asking later than the last reservation ends starts then
            assert await b.reserve_start("h.test", 2.0, NOW + 100) == NOW + 100
            # a Retry-After one worker was told holds the other
            await a.slow_host("h.test", NOW + 500)
            assert await b.reserve_start("h.test", 2.0, NOW + 200) == NOW + 500
            # other hosts are not held
            assert await b.reserve_start("other.test", 2.0, NOW) == NOW
            # the summary (stats) shows the next start while it is ahead
            await a.add([_link("/x", host="h.test")])
            [h] = (await a.summary(NOW + 200, hosts=None)).top_hosts
            assert h.host == "h.test" and h.next_start == NOW + 502
            [h] = (await a.summary(NOW + 600, hosts=None)).top_hosts
            assert h.next_start is None
        finally:
            await a.close()
            await b.close()

    run(go())


def test_robots_txt_is_claimed_by_one_worker_until_its_record_or_expiry(
    new_frontier: Open,
) -> None:
    async def go() -> None:
        a, b = new_frontier(), new_frontier()
        await a.open()
        await b.open()
        try:
            origin = "http://r.test"
            assert await a.claim_robots(origin, NOW, 30)
            assert not await b.claim_robots(origin, NOW + 1, 30)  # a is fetching it
            assert await b.get_robots(origin) == ("", NOW + 30)
            await a.put_robots(origin, '{"mode": "allow_all"}', NOW + 3600)
            assert not await b.claim_robots(origin, NOW + 60, 30)  # a record in force
            assert await b.claim_robots(origin, NOW + 3600, 30)  # expired: fetched again
            # a claim of a worker that died runs out
            assert not await a.claim_robots(origin, NOW + 3610, 30)
            assert await a.claim_robots(origin, NOW + 3631, 30)
        finally:
            await a.close()
            await b.close()

    run(go())


def test_change_records_come_a_batch_at_a_time_in_url_order(new_frontier: Open) -> None:
    # the freshness schedule reads every crawled page's change record for its prior, a batch at
    # a time (docs/freshness.md): all of them once, none twice, no page not crawled yet
    from litecrawl.schedule.planner import PageChange

    async def go() -> None:
        f = new_frontier()
        await f.open()
        try:
            paths = ["/c", "/a", "/e", "/b", "/d"]
            await f.add([_link(p) for p in [*paths, "/z"]])
            claimed = [p for p in await f.claim(10, NOW) if not p.norm_url.endswith("/z")]
            await f.finalize(
                [
                    _done(
                        p.norm_url, last_crawl_time=NOW - i, change=PageChange(i, 0, None, f"r{i}")
                    )
                    for i, p in enumerate(claimed)
                ]
            )
            await f.release(["http://a.test/z"])  # known, never crawled
            read, after = [], ""
            while batch := await f.change_records(after, 2):
                assert len(batch) <= 2
                read.extend(batch)
                after = batch[-1][0]
            assert [url for url, _, _ in read] == [f"http://a.test{p}" for p in sorted(paths)]
            by_url = {p.norm_url: i for i, p in enumerate(claimed)}
            assert all((text, last) == (f"r{by_url[u]}", NOW - by_url[u]) for u, text, last in read)
        finally:
            await f.close()

    run(go())
