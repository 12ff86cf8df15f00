"""litecrawl.index: simhash properties, and the store (resources, near-duplicates, FTS sync)."""

from __future__ import annotations

import asyncio
import hashlib
import random
import sqlite3
import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litecrawl.index.document import IndexDocument
from litecrawl.index.simhash import NEAR_DUPLICATE_DISTANCE, bands, hamming, simhash
from litecrawl.store.queue import PageUpdate
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.frontier import SQLiteFrontier
from litecrawl.store.sqlite.index import remove_documents, write_documents

# --- text helpers -------------------------------------------------------------------------------

_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "pe", "da", "gu", "ze", "fi", "ba"]


def _vocabulary(size: int = 3000) -> list[str]:
    rng, words = random.Random(0), set[str]()
    while len(words) < size:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCAB = _vocabulary()
WEIGHTS = [1 / (rank + 1) ** 0.8 for rank in range(len(VOCAB))]  # Zipf-like, as in prose


def words(seed: int, n: int) -> list[str]:
    return random.Random(seed).choices(VOCAB, WEIGHTS, k=n)


def article(seed: int, n: int) -> str:
    """``n`` words of seeded pseudo-prose in paragraphs (one per line, like extracted text)."""
    ws, rng, lines = words(seed, n), random.Random(-seed - 1), []
    while ws:
        size = rng.randint(40, 90)
        lines.append(" ".join(ws[:size]))
        ws = ws[size:]
    return "\n".join(lines)


def make_doc(url: str, text: str, **fields: Any) -> IndexDocument:
    values: dict[str, Any] = {
        "title": fields.pop("title", f"Title of {url}"),
        "keywords": ("alpha", "beta"),
        "text_preview": text[:500],
        "text_hash": hashlib.sha256(text.encode()).hexdigest(),
        "simhash": simhash(text),
        "language": "en",
        "content_type": "text/html",
        "status": 200,
    }
    values.update(fields)
    return IndexDocument(url=url, text=text, **values)


# --- simhash ------------------------------------------------------------------------------------


@given(st.text())
def test_identical_text_identical_hash_in_signed_64_bits(text: str) -> None:
    assert simhash(text) == simhash(str(text))
    assert -(2**63) <= simhash(text) < 2**63


@given(
    st.lists(st.sampled_from(VOCAB[:50]), max_size=40), st.sampled_from([" ", "\n", " , ", "  "])
)
def test_whitespace_and_punctuation_do_not_matter(ws: list[str], sep: str) -> None:
    assert simhash(sep.join(ws)) == simhash(" ".join(ws))
    assert simhash(" ".join(ws).upper()) == simhash(" ".join(ws))


def test_no_words_hashes_to_zero() -> None:
    assert simhash("") == simhash("  \n ... !!") == 0
    assert simhash("one") != 0 and simhash("one two") != simhash("two one")


u64 = st.integers(min_value=0, max_value=2**64 - 1)
s64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(s64, s64, s64)
def test_hamming_is_a_metric(a: int, b: int, c: int) -> None:
    assert hamming(a, b) == hamming(b, a)
    assert hamming(a, a) == 0
    assert 0 <= hamming(a, b) <= 64
    assert hamming(a, c) <= hamming(a, b) + hamming(b, c)
    assert hamming(a, b) == hamming(a % 2**64, b % 2**64)  # signed and unsigned agree


@given(u64, st.sets(st.integers(0, 63), max_size=NEAR_DUPLICATE_DISTANCE))
def test_within_the_threshold_some_band_is_shared(h: int, flipped: set[int]) -> None:
    other = h
    for bit in flipped:
        other ^= 1 << bit
    assert hamming(h, other) == len(flipped)
    assert any(x == y for x, y in zip(bands(h), bands(other), strict=True))


@given(s64)
def test_bands_are_the_hash_in_four_16_bit_pieces(h: int) -> None:
    b = bands(h)
    assert all(0 <= part < 2**16 for part in b)
    assert sum(part << (16 * i) for i, part in enumerate(b)) == h % 2**64


def _edit_one_word(seed: int, n: int) -> tuple[str, str]:
    ws = words(seed, n)
    edited = list(ws)
    rng = random.Random(seed)
    position = rng.randrange(n)
    edited[position] = next(w for w in rng.sample(VOCAB, 10) if w != ws[position])
    return " ".join(ws), " ".join(edited)


def test_one_word_edit_stays_within_the_threshold_unrelated_texts_do_not() -> None:
    """Simhash is statistical: one word in 300 touches 1% of the shingles, which moves each bit
    with probability ~angle/pi, about 2.6 bits in all (measured: ~70% within 3 bits). Longer
    texts are steadier. Unrelated texts are ~32 bits apart and never within the threshold."""
    short = [hamming(*map(simhash, _edit_one_word(seed, 300))) for seed in range(200)]
    assert statistics.mean(short) < 3.5
    assert sum(d <= NEAR_DUPLICATE_DISTANCE for d in short) >= 0.6 * len(short)
    long = [hamming(*map(simhash, _edit_one_word(seed, 2000))) for seed in range(100)]
    assert sum(d <= NEAR_DUPLICATE_DISTANCE for d in long) >= 0.95 * len(long)
    unrelated = [
        hamming(simhash(" ".join(words(seed, 300))), simhash(" ".join(words(seed + 1000, 300))))
        for seed in range(200)
    ]
    assert min(unrelated) > 3 * NEAR_DUPLICATE_DISTANCE
    assert 28 < statistics.mean(unrelated) < 36


# --- store --------------------------------------------------------------------------------------


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "index.db"

    async def migrate() -> None:
        async with SQLiteFrontier(path):
            pass

    asyncio.run(migrate())
    return path


@pytest.fixture
def conn(db_path: Path) -> Iterator[sqlite3.Connection]:
    connection = connect(db_path)
    yield connection
    connection.close()


def write(conn: sqlite3.Connection, docs: Sequence[IndexDocument]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    write_documents(conn, docs)
    conn.execute("COMMIT")


def remove(conn: sqlite3.Connection, urls: Sequence[str]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    remove_documents(conn, urls)
    conn.execute("COMMIT")


def resource_of(conn: sqlite3.Connection, url: str) -> int | None:
    row = conn.execute("SELECT resource_id FROM documents WHERE url = ?", (url,)).fetchone()
    assert row is not None, url
    return row[0]  # type: ignore[no-any-return]


def count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def fts_urls(conn: sqlite3.Connection, query: str) -> set[str]:
    """URLs whose resource matches ``query`` in the full-text index."""
    rows = conn.execute(
        "SELECT d.url FROM resources_fts JOIN documents AS d ON d.resource_id = resources_fts.rowid"
        " WHERE resources_fts MATCH ?",
        (query,),
    )
    return {url for (url,) in rows}


def assert_fts_in_sync(conn: sqlite3.Connection) -> None:
    # rank 1: also compare the index with the external content table (resources)
    conn.execute("INSERT INTO resources_fts(resources_fts, rank) VALUES ('integrity-check', 1)")
    orphans = conn.execute(
        "SELECT count(*) FROM resources AS r"
        " WHERE NOT EXISTS (SELECT 1 FROM documents WHERE resource_id = r.id)"
    ).fetchone()[0]
    assert orphans == 0


def test_exact_duplicates_share_one_resource(conn: sqlite3.Connection) -> None:
    text = article(1, 200)
    write(conn, [make_doc("https://a.example/x", text), make_doc("https://b.example/y", text)])
    write(conn, [make_doc("https://a.example/x?utm=1", text)])
    ids = {resource_of(conn, u) for u in ("https://a.example/x", "https://b.example/y")}
    assert len(ids) == 1 and None not in ids
    assert resource_of(conn, "https://a.example/x?utm=1") in ids
    assert count(conn, "resources") == 1 and count(conn, "documents") == 3
    assert_fts_in_sync(conn)


def test_same_article_with_different_boilerplate_is_one_resource(conn: sqlite3.Connection) -> None:
    text = article(7, 2000)
    write(
        conn,
        [
            make_doc("https://news.example/a", f"Home News Contact\n{text}\nCopyright Daily"),
            make_doc("https://mirror.example/a", f"Start Menu Blog\n{text}\nAll rights reserved"),
            make_doc("https://news.example/a?print=1", text),
        ],
    )
    assert count(conn, "resources") == 1
    assert (
        len({resource_of(conn, u) for u in ("https://news.example/a", "https://mirror.example/a")})
        == 1
    )
    assert_fts_in_sync(conn)


def test_near_duplicate_rate_and_no_false_merges(conn: sqlite3.Connection) -> None:
    """Over many seeded articles: a different footer line mostly merges; different articles on
    the same template (a shared 150-word header) never do."""
    merged = 0
    template = article(999, 150)
    for seed in range(30):
        text = article(seed + 100, 2000)
        write(conn, [make_doc(f"https://a.example/{seed}", f"{template}\n{text}\nPosted in news")])
        write(conn, [make_doc(f"https://b.example/{seed}", f"{template}\n{text}\nFiled under x")])
        merged += resource_of(conn, f"https://a.example/{seed}") == resource_of(
            conn, f"https://b.example/{seed}"
        )
    assert merged >= 24  # ~93% expected (see litecrawl.index.simhash)
    first = {resource_of(conn, f"https://a.example/{seed}") for seed in range(30)}
    assert len(first) == 30  # no two different articles share a resource
    assert_fts_in_sync(conn)


def test_different_and_short_pages_stay_apart(conn: sqlite3.Connection) -> None:
    write(conn, [make_doc(f"https://x.example/{i}", article(i, 300)) for i in range(20)])
    # short texts (< 50 words) are only merged when identical
    write(conn, [make_doc("https://x.example/s1", "Contact us at the office on Monday")])
    write(conn, [make_doc("https://x.example/s2", "Contact us at the office on Tuesday")])
    assert count(conn, "resources") == 22
    assert resource_of(conn, "https://x.example/s1") != resource_of(conn, "https://x.example/s2")


def test_rewrite_with_new_text_replaces_it_everywhere(conn: sqlite3.Connection) -> None:
    write(conn, [make_doc("https://x.example/p", "zebra " + article(1, 300))])
    assert fts_urls(conn, "zebra") == {"https://x.example/p"}
    write(conn, [make_doc("https://x.example/p", "giraffe " + article(2, 300))])
    assert fts_urls(conn, "zebra") == set()
    assert fts_urls(conn, "giraffe") == {"https://x.example/p"}
    assert count(conn, "resources") == 1
    assert_fts_in_sync(conn)


def test_leaving_a_shared_resource_keeps_it_for_the_others(conn: sqlite3.Connection) -> None:
    shared = "zebra " + article(1, 300)
    write(conn, [make_doc("https://x.example/a", shared), make_doc("https://x.example/b", shared)])
    old = resource_of(conn, "https://x.example/a")
    write(conn, [make_doc("https://x.example/a", "giraffe " + article(2, 300))])
    assert resource_of(conn, "https://x.example/b") == old
    assert resource_of(conn, "https://x.example/a") not in (None, old)
    assert fts_urls(conn, "zebra") == {"https://x.example/b"}
    assert fts_urls(conn, "giraffe") == {"https://x.example/a"}
    # a moves onto b's text again: its own resource is an orphan and goes
    write(conn, [make_doc("https://x.example/a", shared)])
    assert resource_of(conn, "https://x.example/a") == old
    assert count(conn, "resources") == 1
    assert fts_urls(conn, "giraffe") == set()
    assert_fts_in_sync(conn)


def test_empty_text_gives_a_document_without_resource(conn: sqlite3.Connection) -> None:
    write(conn, [make_doc("https://x.example/p", "zebra " + article(1, 100))])
    write(conn, [make_doc("https://x.example/p", ""), make_doc("https://x.example/q", "  \n")])
    assert resource_of(conn, "https://x.example/p") is None
    assert resource_of(conn, "https://x.example/q") is None
    assert count(conn, "resources") == 0 and count(conn, "documents") == 2
    assert fts_urls(conn, "zebra") == set()
    assert_fts_in_sync(conn)


def test_crawled_at_is_kept_updated_at_moves_only_on_change(conn: sqlite3.Connection) -> None:
    text = article(3, 300)
    write(conn, [make_doc("https://x.example/p", text, title="One")])
    old = "2001-01-01 00:00:00"
    conn.execute("UPDATE documents SET crawled_at = ?, updated_at = ?", (old, old))

    def stamps() -> tuple[str, str]:
        row = conn.execute(
            "SELECT crawled_at, updated_at FROM documents WHERE url = 'https://x.example/p'"
        ).fetchone()
        return row[0], row[1]

    write(conn, [make_doc("https://x.example/p", text, title="One", depth=5, source="sitemap")])
    assert stamps() == ("2001-01-01 00:00:00", "2001-01-01 00:00:00")
    write(conn, [make_doc("https://x.example/p", text, title="Two")])
    crawled, updated = stamps()
    assert crawled == "2001-01-01 00:00:00" and updated > "2020"
    conn.execute("UPDATE documents SET updated_at = '2001-01-01 00:00:00'")
    write(conn, [make_doc("https://x.example/p", text + " more words here", title="Two")])
    assert stamps()[1] > "2020"  # the text changed (resource rewritten in place)
    row = conn.execute("SELECT title, keywords, depth FROM documents").fetchone()
    assert row == ("Two", '["alpha", "beta"]', 0)


def test_remove_documents_deletes_rows_and_orphans(conn: sqlite3.Connection) -> None:
    shared, own = article(1, 200), "zebra " + article(2, 200)
    write(
        conn,
        [
            make_doc("https://x.example/a", shared),
            make_doc("https://x.example/b", shared),
            make_doc("https://x.example/c", own),
            make_doc("https://x.example/d", ""),
        ],
    )
    remove(conn, ["https://x.example/a", "https://x.example/c", "https://x.example/d", "nope"])
    assert [u for (u,) in conn.execute("SELECT url FROM documents")] == ["https://x.example/b"]
    assert count(conn, "resources") == 1
    assert fts_urls(conn, "zebra") == set()
    remove(conn, ["https://x.example/b"])
    assert count(conn, "resources") == 0 and count(conn, "documents") == 0
    assert_fts_in_sync(conn)


def test_duplicates_within_one_batch(conn: sqlite3.Connection) -> None:
    text = article(5, 120)
    write(conn, [make_doc(f"https://x.example/{i}", text) for i in range(5)])
    assert count(conn, "resources") == 1
    assert len({resource_of(conn, f"https://x.example/{i}") for i in range(5)}) == 1


def _near_pair() -> tuple[str, str]:
    """A seeded article and a one-word edit of it that is within the threshold."""
    for seed in range(100):
        a, b = _edit_one_word(seed, 400)
        if 0 < hamming(simhash(a), simhash(b)) <= NEAR_DUPLICATE_DISTANCE:
            return a, b
    raise AssertionError("no near pair")  # pragma: no cover


NEAR_A, NEAR_B = _near_pair()


def test_a_large_batch_spans_several_lookup_rounds(conn: sqlite3.Connection) -> None:
    texts = [article(seed, 120) for seed in range(37)]
    docs = [make_doc(f"https://x.example/{i}", texts[i % 37]) for i in range(250)]
    write(conn, docs)
    assert count(conn, "documents") == 250 and count(conn, "resources") == 37
    for i in (0, 37, 111, 249):  # duplicates found across rounds of 100 documents
        assert resource_of(conn, f"https://x.example/{i}") == resource_of(
            conn, f"https://x.example/{i % 37}"
        )
    write(conn, [make_doc(f"https://x.example/{i}", "") for i in range(250)])
    assert count(conn, "resources") == 0
    assert_fts_in_sync(conn)


def test_batch_edge_cases(conn: sqlite3.Connection) -> None:
    one, two = "zebra " + article(1, 300), "giraffe " + article(2, 300)
    write(conn, [make_doc("https://x.example/a", one), make_doc("https://x.example/b", two)])
    # the two pages swap their texts in one batch
    write(conn, [make_doc("https://x.example/a", two), make_doc("https://x.example/b", one)])
    assert fts_urls(conn, "zebra") == {"https://x.example/b"}
    assert count(conn, "resources") == 2
    # one URL twice in a batch: the last version wins, nothing is left behind
    write(conn, [make_doc("https://x.example/c", one), make_doc("https://x.example/c", "")])
    assert resource_of(conn, "https://x.example/c") is None
    assert count(conn, "resources") == 2
    assert_fts_in_sync(conn)


def test_a_small_change_refreshes_the_text_in_place(conn: sqlite3.Connection) -> None:
    write(conn, [make_doc("https://x.example/a", NEAR_A)])
    rid = resource_of(conn, "https://x.example/a")
    write(conn, [make_doc("https://x.example/a", NEAR_B)])
    assert resource_of(conn, "https://x.example/a") == rid
    stored = conn.execute("SELECT text FROM resources WHERE id = ?", (rid,)).fetchone()[0]
    assert stored == NEAR_B
    # shared with another URL: the resource keeps its text, both stay on it
    write(conn, [make_doc("https://x.example/b", NEAR_B)])
    write(conn, [make_doc("https://x.example/a", NEAR_A)])
    assert resource_of(conn, "https://x.example/a") == resource_of(conn, "https://x.example/b")
    assert count(conn, "resources") == 1
    assert_fts_in_sync(conn)


POOL = ["", "short text only", NEAR_A, NEAR_B, article(11, 300), article(12, 80)]
batches = st.lists(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, len(POOL) - 1)), max_size=6),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batches)
def test_any_sequence_of_batches_keeps_the_index_consistent(
    db_path: Path, steps: list[list[tuple[int, int]]]
) -> None:
    conn = connect(db_path)
    try:
        conn.execute("DELETE FROM documents")
        conn.execute("DELETE FROM resources")
        latest: dict[str, IndexDocument] = {}
        for step in steps:
            docs = [make_doc(f"https://x.example/{u}", POOL[t]) for u, t in step]
            write(conn, docs)
            latest.update((d.url, d) for d in docs)
            assert_fts_in_sync(conn)
            rows = conn.execute(
                "SELECT d.url, r.text_hash, r.simhash FROM documents d"
                " LEFT JOIN resources r ON r.id = d.resource_id"
            ).fetchall()
            assert {url for url, _, _ in rows} == set(latest)
            for url, text_hash, h in rows:
                doc = latest[url]
                if not doc.text.strip():
                    assert text_hash is None
                elif text_hash != doc.text_hash:  # a near-duplicate of a long text
                    assert hamming(h, doc.simhash) <= NEAR_DUPLICATE_DISTANCE
                    assert len(doc.text.split()) >= 50
    finally:
        conn.close()


def test_finalize_writes_documents_and_gone_pages_leave(db_path: Path) -> None:
    doc = make_doc("https://x.example/p", "zebra " + article(1, 100))

    def update(status: int, document: object | None) -> PageUpdate:
        return PageUpdate(
            norm_url=doc.url,
            host="x.example",
            last_crawl_time=1,
            next_crawl_time=2,
            content_hash="h",
            status=status,
            document=document,
        )

    async def run() -> None:
        async with SQLiteFrontier(db_path) as frontier:
            await frontier.finalize([update(200, doc)])
            check = connect(db_path)
            assert fts_urls(check, "zebra") == {doc.url}
            await frontier.finalize([update(404, None)])
            assert fts_urls(check, "zebra") == set()
            assert count(check, "documents") == 0 and count(check, "resources") == 0
            check.close()

    asyncio.run(run())
