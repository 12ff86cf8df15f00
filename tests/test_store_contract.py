"""The store interfaces other than the frontier's (tests/test_frontier_backends.py) give the
same answers on both backends: one test, run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
import random

from conftest import NewDb, db_execute, db_query, index_document
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.index.document import IndexDocument, SectionVector
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, hamming
from litecrawl.index.simhash import simhash
from litecrawl.sites.model import SiteCrawl, SiteFeed, SiteSchedule, StartPage
from litecrawl.store.backends import (
    open_frontier,
    open_index,
    open_queries,
    open_sites,
    open_tables,
)
from litecrawl.store.documents import DocumentFilter
from litecrawl.store.queue import NewLink, PageUpdate
from litecrawl.store.sql import changed_links, link_key
from litecrawl.store.tables import TABLES


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


A, B, C, D = "http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/"
FEED = "http://a.test/feed.xml"


def _start_page(feeds: tuple[str, ...]) -> StartPage:
    return StartPage(A, 200, "text/html", "Site A", "words", "en", (), feeds, ())


def test_the_site_queue_on_both_backends(new_db: NewDb) -> None:
    db = new_db("sites")
    # the feed's frontier row, fetched with links: what a feed read leaves (outlinks, listed)
    _crawled_with_links(db, FEED, ["http://a.test/post1", "http://a.test/post2"])
    with open_sites(db) as store:
        made = store.annotate(C, "whitelist", "on topic", 5.0)
        assert made.site_id is None  # no site yet
        assert store.add([A, B, C], 10.0) == 3
        assert store.add([A, D], 11.0) == 1
        sites = {s.base_url: s for s in store.sites(None)}
        assert list(sites) == [A, B, C, D]
        assert {s.source for s in sites.values()} == {"seed"}
        assert [a.site_id for a in store.annotations(C)] == [sites[C].id]
        assert [s.base_url for s in store.sites("whitelisted")] == [C]
        assert [s.base_url for s in store.sites(None, 2)] == [A, B]

        store.record_check(sites[A].id, "relevant", "about a", _start_page((FEED,)), 20.0)
        store.record_check(sites[B].id, "irrelevant", "about b", None, 30.0)
        store.record_check(sites[D].id, "unreachable", "refused", None, 12.0)
        assert store.counts() == {"relevant": 1, "irrelevant": 1, "queued": 1, "unreachable": 1}
        a = store.site(A)
        assert a is not None
        assert (a.status, a.reason, a.checked_at, a.title, a.feeds) == (
            "relevant",
            "about a",
            20.0,
            "Site A",
            (FEED,),
        )
        # never checked first, then the longest unchecked; an unreachable site sooner
        assert [s.base_url for s in store.due_checks(25.0, 10)] == [C, D, A]
        assert [s.base_url for s in store.due_checks(10.0, 10, 15.0)] == [C, D]
        # a changed listing asks for a check again
        assert store.remove_annotations(C, "whitelist") == 1
        assert store.remove_annotations(C, "whitelist") == 0
        store.record_check(sites[C].id, "irrelevant", "about c", None, 40.0)
        store.annotate(C, "blacklist", None, 41.0)
        assert [s.base_url for s in store.due_checks(1.0, 10)] == [C]

        # checkout: one lock at a time, renewed only by its holder
        out = store.checkout("w1", due_by=100.0, now=50.0, lock_sec=60.0)
        assert out is not None and out.base_url == A
        assert store.checkout("w2", due_by=100.0, now=60.0, lock_sec=60.0) is None
        assert store.renew(a.id, "w1", 200.0)
        assert not store.renew(a.id, "w2", 300.0)
        crawl = SiteCrawl(a.id, "full", "w1", 50.0, 70.0, 3, 2, 0, False)
        assert store.checkin(crawl, SiteSchedule(1000.0, 500.0), {B: 2, "http://e.test/": 1}, 70.0)
        assert store.crawls(a.id, 5) == [crawl]
        assert store.site_links(a.id, False, 10) == [(B, 2), ("http://e.test/", 1)]
        assert store.site_links(sites[B].id, True, 10) == [(A, 2)]
        e = store.site("http://e.test/")
        assert e is not None and e.source == "link"
        # due again by its feed crawl (it has a feed), not by its full crawl
        assert store.checkout("w1", due_by=400.0, now=80.0, lock_sec=60.0) is None
        again = store.checkout("w1", due_by=600.0, now=80.0, lock_sec=60.0)
        assert again is not None and (again.next_crawl, again.next_feed_crawl) == (1000.0, 500.0)
        crawl2 = SiteCrawl(a.id, "feed", "w1", 80.0, 90.0, 1, 0, 1, True)
        assert store.checkin(crawl2, SiteSchedule(1000.0, 900.0), {B: 5}, 90.0) == 0
        assert store.crawls(a.id, 5) == [crawl2, crawl]
        assert store.site_links(a.id, False, 1) == [(B, 5)]

        assert store.feeds(a.id) == [SiteFeed(FEED, 20.0, 100, 200, None, None, 2)]
        assert store.outlinks("a.test") == ["http://a.test/post1", "http://a.test/post2"]
        assert sorted(store.listed([FEED, "http://x.test/"])) == [
            "http://a.test/post1",
            "http://a.test/post2",
        ]
        assert store.listed([]) == []


def _crawled_with_links(location: str, url: str, links: list[str]) -> None:
    async def go() -> None:
        async with open_frontier(location) as f:
            await f.add([NewLink(url, "a.test")])
            assert len(await f.claim(1, 1)) == 1
            await f.finalize(
                [PageUpdate(url, "a.test", 100, 3700, "h", status=200, links_out=links)]
            )

    asyncio.run(go())


def test_whole_tables_on_both_backends(new_db: NewDb) -> None:
    db = new_db("tables")
    post1, post2, post3 = (f"http://a.test/post{i}" for i in (1, 2, 3))
    _crawled_with_links(db, FEED, [post2, post1])
    table = {t.name: t for t in TABLES}
    with open_tables(db) as store:
        assert {"norm_url", "host", "change_rate"} <= set(store.columns("pages"))
        assert "tsv" not in store.columns("resources")  # computed columns are not copied
        store.begin_snapshot()
        assert store.read(table["pages"], ["norm_url", "host"], None, 10) == [(FEED, "a.test")]
        # a page's links by target
        assert store.read(table["page_links"], ["src", "dst"], None, 10) == [
            (FEED, post1),
            (FEED, post2),
        ]
        store.end_snapshot()

        hosts = table["hosts"]
        store.write(hosts, ["host", "slowed_until"], [("b.test", 6.0), ("a.test", 5.0)])
        store.write(hosts, ["host", "slowed_until"], [("a.test", 7.0)])  # replaced by key
        assert store.read(hosts, ["host", "slowed_until"], None, 10) == [
            ("a.test", 7.0),
            ("b.test", 6.0),
        ]
        assert store.read(hosts, ["host"], ("a.test",), 10) == [("b.test",)]
        assert store.read(hosts, ["host"], None, 1) == [("a.test",)]
        assert store.count("hosts") == 2

        # a source page's links are replaced as a whole
        links = table["page_links"]
        store.write(links, ["src", "dst", "dst_key"], [(FEED, post3, link_key(post3))])
        assert store.read(links, ["src", "dst"], None, 10) == [(FEED, post3)]
        assert store.read(links, ["src", "dst"], (FEED,), 10) == []

        # keys of two columns; generated ids continue after the copied ones
        site = ["id", "base_url", "host", "added_at"]
        store.write(table["sites"], site, [(7, A, "a.test", 1.0)])
        feeds = table["site_feeds"]
        rows = [(7, "http://a.test/f2", 1.0), (7, "http://a.test/f1", 2.0)]
        store.write(feeds, ["site_id", "url", "first_seen"], rows)
        assert store.read(feeds, ["url"], (7, "http://a.test/f1"), 10) == [("http://a.test/f2",)]
        assert store.count("site_feeds") == 2
        store.finish()
    with open_sites(db) as sites:
        sites.add([B], 2.0)
        b = sites.site(B)
        assert b is not None and b.id == 8


def test_the_index_on_both_backends(new_db: NewDb) -> None:
    db = new_db("index")
    otter = "the sea otter floats on its back and cracks shells with a stone " * 3
    heron = "a grey heron stands still in shallow water waiting for fish " * 3
    docs = {
        "http://a.test/otter?ref=1": index_document("http://a.test/otter?ref=1", "Otters", otter),
        "http://a.test/otter": index_document("http://a.test/otter", "Otters", otter),
        "http://a.test/heron": index_document("http://a.test/heron", "Herons", heron),
    }

    async def write() -> None:
        async with open_frontier(db) as f:
            await f.add([NewLink(url, "a.test") for url in docs])
            assert len(await f.claim(3, 1)) == 3
            await f.finalize(
                [
                    PageUpdate(url, "a.test", 100 + i, 3700, "h", status=200, document=doc)
                    for i, (url, doc) in enumerate(docs.items())
                ]
            )

    asyncio.run(write())
    with open_index(db) as index:
        hits = index.keyword("otter")
        assert [(h.url, h.title, h.other_urls) for h in hits] == [
            ("http://a.test/otter", "Otters", ("http://a.test/otter?ref=1",))
        ]
        assert "[otter]" in hits[0].snippet
        assert index.keyword("otter", offset=1) == []
        assert [h.url for h in index.keyword("shallow water")] == ["http://a.test/heron"]
        otter_id = index.resource_of_url("http://a.test/otter?ref=1")
        assert otter_id == hits[0].resource_id == index.resource_of_url("http://a.test/otter")
        assert index.resource_of_url("http://a.test/none") is None
        heron_id = index.resource_of_url("http://a.test/heron")
        assert heron_id is not None and heron_id != otter_id
        assert index.previews([heron_id]) == {heron_id: ("Herons", heron[:200])}
        assert index.hit(heron_id, 1.0, "s", "t").url == "http://a.test/heron"
        assert list(index.documents(["url", "title"], DocumentFilter(), False)) == [
            (url, doc.title) for url, doc in docs.items()
        ]
        rows = list(index.documents(["url"], DocumentFilter(), True))
        assert rows[-1] == ("http://a.test/heron", heron)


_WATER = [
    "otter",
    "heron",
    "river",
    "stone",
    "shell",
    "water",
    "fish",
    "reed",
    "bank",
    "tide",
    "kelp",
    "sea",
    "float",
    "dive",
    "swim",
]


def _near_pair() -> tuple[str, str]:
    """400 words and the same with one word changed, within the near-duplicate distance."""
    for seed in range(100):
        words = random.Random(seed).choices(_WATER, k=400)
        first = " ".join(words)
        words[200] = "pebble"
        second = " ".join(words)
        if 0 < hamming(simhash(first), simhash(second)) <= NEAR_DUPLICATE_DISTANCE:
            return first, second
    raise AssertionError("no near pair")  # pragma: no cover


def test_index_writes_on_both_backends(new_db: NewDb) -> None:
    """The index's writes (store/index_writes.py) place documents on resources alike on both
    backends: the same text shares one, a near-duplicate joins it, an empty text gets none, a
    URL given twice keeps its last version; a removal deletes the resources left alone."""
    db = new_db("index_writes")
    otter, near = _near_pair()
    heron = "a grey heron stands still in shallow water waiting for fish " * 3
    vector = bytes(range(256)) * 4  # 256 float32
    first = {
        "otter": index_document("http://a.test/otter", "Otters", otter),
        "copy": index_document("http://a.test/otter?ref=1", "Otters again", otter),
        "near": index_document("http://a.test/otter-late", "Otters late", near),
        "empty": index_document("http://a.test/empty", "Nothing", ""),
        "heron": index_document("http://a.test/heron", "Herons, old", "an old heron text"),
    }
    heron_doc = dataclasses.replace(
        index_document("http://a.test/heron", "Herons", heron), embedding=vector
    )

    async def write(docs: list[IndexDocument]) -> None:
        async with open_frontier(db) as f:
            await f.add([NewLink("http://a.test/otter", "a.test")])
            await f.write_documents(docs)

    asyncio.run(write([*first.values(), heron_doc]))
    with open_index(db) as index:
        ids = {name: index.resource_of_url(doc.url) for name, doc in first.items()}
        assert ids["otter"] is not None and ids["otter"] == ids["copy"] == ids["near"]
        assert ids["empty"] is None
        heron_id = ids["heron"]
        assert heron_id is not None and heron_id != ids["otter"]
        assert index.previews([heron_id]) == {heron_id: ("Herons", heron[:200])}
        assert index.vectors.of_resource(heron_id) == vector
        assert [h.url for h in index.keyword("grey")] == ["http://a.test/heron"]
        assert index.keyword("old") == []  # the heron URL's first version is gone
        # the shared resource keeps the text it was made with: the near copy's "pebble" is not
        # searchable, its otters are
        assert index.keyword("pebble") == []
        assert [(h.url, h.other_urls) for h in index.keyword("otter")] == [
            ("http://a.test/otter", ("http://a.test/otter?ref=1", "http://a.test/otter-late"))
        ]

    async def remove(urls: list[str]) -> set[str]:
        async with open_frontier(db) as f:
            await f.remove_documents(urls)
            return await f.known(["http://a.test/otter"])

    # the otter text stays while a document holds it; the frontier's row stays in any case
    kept = asyncio.run(remove(["http://a.test/otter", "http://a.test/otter?ref=1", "http://x/"]))
    assert kept == {"http://a.test/otter"}
    with open_index(db) as index:
        assert [h.url for h in index.keyword("otter")] == ["http://a.test/otter-late"]
    asyncio.run(remove(["http://a.test/otter-late", "http://a.test/heron"]))
    with open_index(db) as index:
        assert index.keyword("otter") == [] and index.keyword("grey") == []
        assert index.previews([ids["otter"], heron_id]) == {}
        assert index.vectors.of_resource(heron_id) is None
        assert list(index.documents(["url"], DocumentFilter(), False)) == [("http://a.test/empty",)]


_PAGES = [f"http://a.test/{c}" for c in "pqrst"]
# batches of pages' links: a page may appear twice in a batch, link itself or one target twice
_BATCHES = st.lists(
    st.lists(st.tuples(st.sampled_from(_PAGES), st.lists(st.sampled_from(_PAGES), max_size=6))),
    min_size=1,
    max_size=4,
)


def _replaced(graph: dict[str, set[str]], batch: list[tuple[str, list[str]]]) -> None:
    """The plain way: each page's stored links replaced by its new ones."""
    for src, dsts in batch:
        graph[src] = {d for d in dsts if d != src}


def _graph(db: str) -> dict[str, set[str]]:
    links = next(t for t in TABLES if t.name == "page_links")
    with open_tables(db) as store:
        rows = store.read(links, ["src", "dst"], None, 1000)
    graph: dict[str, set[str]] = {}
    for src, dst in rows:
        graph.setdefault(str(src), set()).add(str(dst))
    assert len(rows) == sum(len(dsts) for dsts in graph.values())  # no row twice
    return graph


def test_link_graph_only_changed_pages_rewritten_same_rows(new_db: NewDb) -> None:
    """The link graph after any sequence of batches, written only where a page's links
    changed, holds the rows the plain replacement of every page's links gives."""
    db = new_db("graph")

    async def finalize(batch: list[tuple[str, list[str]]]) -> None:
        async with open_frontier(db) as f:
            await f.finalize(
                [PageUpdate(s, "a.test", 100, 3700, "h", status=200, links_out=d) for s, d in batch]
            )

    @settings(max_examples=25)
    @given(batches=_BATCHES)
    def check(batches: list[list[tuple[str, list[str]]]]) -> None:
        expected = _graph(db)  # what earlier examples left
        for batch in batches:
            asyncio.run(finalize(batch))
            _replaced(expected, batch)
            assert _graph(db) == {src: dsts for src, dsts in expected.items() if dsts}

    check()


@settings(max_examples=200)
@given(
    stored=st.lists(st.tuples(st.sampled_from(_PAGES), st.sampled_from(_PAGES)), unique=True),
    batch=st.lists(st.tuples(st.sampled_from(_PAGES), st.lists(st.sampled_from(_PAGES)))),
)
def test_changed_links_gives_what_the_plain_replacement_gives(
    stored: list[tuple[str, str]], batch: list[tuple[str, list[str]]]
) -> None:
    held: dict[str, set[str]] = {}
    for src, dst in stored:
        held.setdefault(src, set()).add(dst)
    plain = {src: set(dsts) for src, dsts in held.items()}
    _replaced(plain, batch)
    gone, rows = changed_links(batch, stored)
    fast = {src: set(dsts) for src, dsts in held.items() if src not in gone}
    for src, dst, key in rows:
        assert key == link_key(dst)
        fast.setdefault(src, set()).add(dst)
    assert len(rows) == len(set(rows))
    assert {s: d for s, d in fast.items() if d} == {s: d for s, d in plain.items() if d}
    # a page whose links are those stored is neither deleted nor written
    touched = set(gone) | {src for src, _, _ in rows}
    assert all(plain.get(src, set()) != held.get(src, set()) for src in touched)


def test_a_batch_of_long_texts_gets_a_resource_each(new_db: NewDb) -> None:
    """~2.4 MB of new texts in one write (PostgreSQL sends them in statements of ~1 MB, so
    no connection keeps a buffer the size of a whole batch): each page gets its own resource
    with its own title and text, however the rows were split."""
    db = new_db("long_texts")
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=7)) for _ in range(900)]
    docs = [
        index_document(f"http://a.test/{i}", f"Page {i}", " ".join(rng.choices(words, k=5000)))
        for i in range(60)
    ]

    async def write() -> None:
        async with open_frontier(db) as f:
            await f.write_documents(docs)

    asyncio.run(write())
    with open_index(db) as index:
        ids = [index.resource_of_url(doc.url) for doc in docs]
        assert None not in ids and len(set(ids)) == len(docs)
        shown = index.previews([i for i in ids if i is not None])
        assert [shown[i] for i in ids if i is not None] == [(d.title, d.text[:200]) for d in docs]


def test_vectors_of_one_text_under_two_urls_in_one_write(new_db: NewDb) -> None:
    """Two URLs with the same text, each with its vector and section vectors, in one write
    (PostgreSQL writes a batch's vectors in one statement, which may propose a row once only):
    the shared resource keeps the first URL's vectors, as when written one by one."""
    db = new_db("shared_vectors")
    text = "the sea otter floats on its back and cracks shells with a stone " * 3
    first, second = bytes(range(256)) * 4, bytes(reversed(range(256))) * 4
    docs = [
        dataclasses.replace(
            index_document(url, "Otters", text),
            embedding=vector,
            sections=(
                SectionVector("", None, vector),
                SectionVector(
                    "Shells", "shells", vector[::-1], at=10, places='[[10, "Shells", "shells"]]'
                ),
            ),
        )
        for url, vector in (("http://a.test/1", first), ("http://a.test/2", second))
    ]

    async def write() -> None:
        async with open_frontier(db) as f:
            await f.write_documents(docs)

    asyncio.run(write())
    with open_index(db) as index:
        rid = index.resource_of_url("http://a.test/1")
        assert rid is not None and index.resource_of_url("http://a.test/2") == rid
        assert index.vectors.of_resource(rid) == first
        assert index.vectors.section_vectors([rid]) == [
            (rid, "", None, first),
            (rid, "Shells", "shells", first[::-1]),
        ]
        stored = index.vectors.headings([rid])[1]
        assert (stored.at, stored.places) == (10, ((10, "Shells", "shells"),))


def test_a_document_s_updated_at_moves_only_when_it_changed(new_db: NewDb) -> None:
    """Written again as it was (depth and source are not what a reader sees), a document
    keeps its times; a new title or text moves updated_at, never crawled_at (both backends:
    PostgreSQL writes a batch's documents as an insert of the new and an update of the known)."""
    db = new_db("updated_at")
    text = "the sea otter floats on its back and cracks shells with a stone " * 3
    url = "http://a.test/otter"
    old = "2001-01-01 00:00:00"

    def write(doc: IndexDocument) -> tuple[str, str]:
        async def run() -> None:
            async with open_frontier(db) as f:
                await f.write_documents(
                    [doc, index_document("http://a.test/other", "Other", "other")]
                )

        asyncio.run(run())
        rows = db_query(db, f"SELECT crawled_at, updated_at FROM documents WHERE url = '{url}'")
        return rows[0][0], rows[0][1]

    write(index_document(url, "One", text))
    db_execute(db, f"UPDATE documents SET crawled_at = '{old}', updated_at = '{old}'")
    assert write(dataclasses.replace(index_document(url, "One", text), depth=5)) == (old, old)
    crawled, updated = write(index_document(url, "Two", text))
    assert crawled == old and updated > "2020"
    db_execute(db, f"UPDATE documents SET updated_at = '{old}'")
    assert write(index_document(url, "Two", text + " and more words"))[1] > "2020"
    assert db_query(db, f"SELECT title, depth FROM documents WHERE url = '{url}'") == [("Two", 0)]
