"""The store interfaces other than the frontier's (tests/test_frontier_backends.py) give the
same answers on both backends: one test, run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio

from conftest import NewDb

from litecrawl.store.backends import open_frontier, open_index, open_queries
from litecrawl.store.documents import DocumentFilter
from litecrawl.store.queue import NewLink, PageUpdate


def _crawled(location: str, fetched: dict[str, tuple[int, int]]) -> None:
    """Pages of a.test fetched at the given times with the given HTTP status."""

    async def go() -> None:
        async with open_frontier(location) as f:
            await f.add([NewLink(f"http://a.test{p}", "a.test") for p in fetched])
            claimed = await f.claim(len(fetched), 1)
            assert len(claimed) == len(fetched)
            await f.finalize(
                [
                    PageUpdate(f"http://a.test{p}", "a.test", at, at + 3600, "h", status=status)
                    for p, (at, status) in fetched.items()
                ]
            )

    asyncio.run(go())


def test_fetched_urls_come_in_fetch_order_on_both_backends(new_db: NewDb) -> None:
    db = new_db("fetched")
    # added in this order, fetched in another; /e failed
    _crawled(db, {"/a": (300, 200), "/b": (100, 200), "/c": (200, 204), "/e": (150, 500)})
    with open_index(db) as index:
        assert list(index.fetched_urls(None, DocumentFilter())) == [
            "http://a.test/b",
            "http://a.test/c",
            "http://a.test/a",
        ]
        assert list(index.fetched_urls(200, DocumentFilter())) == [
            "http://a.test/c",
            "http://a.test/a",
        ]


def test_the_dashboard_summary_is_the_frontiers(new_db: NewDb) -> None:
    db = new_db("summary")
    _crawled(db, {"/a": (300, 200), "/b": (100, 200), "/e": (150, 500)})

    async def frontier_summary() -> object:
        async with open_frontier(db) as f:
            return await f.summary(1000, None)

    expected = asyncio.run(frontier_summary())
    assert open_queries(db).summary(1000, None) == expected
