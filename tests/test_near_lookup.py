"""The near-duplicate look-up asked of the database (store/sql.py ``near_resources``) places
documents as the plain look-up does, on both backends: the plain one reads every resource and
measures the distance to each in Python (what the bands and the SQL check only narrow down)."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from conftest import NewDb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litecrawl.index.document import IndexDocument
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, hamming
from litecrawl.index.placement import Known, Placement, Ref, chunks
from litecrawl.store.backends import open_frontier, open_tables
from litecrawl.store.tables import TABLES, TableStore

_TABLE = {t.name: t for t in TABLES}
_SIGN = 1 << 63


def _signed(h: int) -> int:
    return (h + _SIGN) % (1 << 64) - _SIGN


def _document(url: str, simhash: int) -> IndexDocument:
    """A long text (a near-duplicate candidate) of its own under the simhash given: which texts
    are near is the simhash's alone, so the test chooses the distances."""
    text = " ".join(["word"] * 60) + f" {url} {simhash}"
    return IndexDocument(
        url=url,
        title="t",
        keywords=(),
        text_preview=text[:100],
        text=text,
        text_hash=hashlib.sha256(text.encode()).hexdigest(),
        simhash=simhash,
    )


def _rows(store: TableStore, table: str, columns: list[str]) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in store.read(_TABLE[table], columns, None, 1_000_000)]


def _plain(store: TableStore, docs: Sequence[IndexDocument]) -> dict[str, Ref | None]:
    """Where the plain look-up puts each URL of the batch: a resource id, or the text hash of a
    new resource."""
    rows = _rows(store, "resources", ["id", "text_hash", "simhash"])
    resources = [(int(i), int(h)) for i, _, h in rows]
    hashes = {str(t): int(i) for i, t, _ in rows}
    documents = {str(u): r for u, r in _rows(store, "documents", ["url", "resource_id"])}
    references = Counter(rid for rid in documents.values() if rid is not None)
    plan = Placement()
    for chunk in chunks(docs):
        wanted = plan.wants(chunk)
        near = {
            asked: {i: h for i, h in resources if hamming(h, asked) <= NEAR_DUPLICATE_DISTANCE}
            for asked in wanted.simhashes
        }
        current = {u: documents[u] for u in wanted.urls if u in documents}
        by_hash = {t: i for t, i in hashes.items() if t in wanted.hashes}
        plan.know(wanted, Known(current, by_hash, near, dict(references)))
        for doc in chunk:
            plan.place(doc)
    return {doc.url: ref for doc, ref, _ in plan.rows.values()}


# a batch: (page, base simhash, bits flipped in it); bit 63 is the sign of the stored value
_FLIPS = st.lists(st.integers(0, 63), max_size=5, unique=True)
_BATCHES = st.lists(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 3), _FLIPS), min_size=1, max_size=12),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(bases=st.lists(st.integers(-_SIGN, _SIGN - 1), min_size=4, max_size=4), batches=_BATCHES)
def test_near_duplicates_are_the_plain_look_ups(
    new_db: NewDb, bases: list[int], batches: list[list[tuple[int, int, list[int]]]]
) -> None:
    """Pages whose simhashes are a few bits from one of four bases (0-5 bits: within the
    distance and just past it, the sign bit too), written in batches over one another: each
    page lands where the plain look-up over every resource puts it."""
    db = new_db("near")
    prefix = f"http://n{abs(hash((tuple(bases), str(batches))))}.test/"  # examples share the db

    async def write_all(tables: TableStore) -> None:
        async with open_frontier(db) as f:
            for batch in batches:
                docs = []
                for page, base, bits in batch:
                    u = bases[base] % (1 << 64)
                    for bit in bits:
                        u ^= 1 << bit
                    docs.append(_document(f"{prefix}{page}", _signed(u)))
                expected = _plain(tables, docs)
                await f.write_documents(docs)
                ids = {t: i for i, t in _rows(tables, "resources", ["id", "text_hash"])}
                stored = dict(_rows(tables, "documents", ["url", "resource_id"]))
                assert {u: stored[u] for u in expected} == {
                    u: ids[r] if isinstance(r, str) else r for u, r in expected.items()
                }

    with open_tables(db) as tables:
        asyncio.run(write_all(tables))
