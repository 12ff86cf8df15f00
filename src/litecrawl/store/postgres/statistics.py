"""The planner's statistics of the tables a crawl grows, taken again as they grow.

PostgreSQL plans each statement from its tables' statistics, which autovacuum takes again once a
table has changed by a tenth, looking at most once a minute (``autovacuum_naptime``). A crawl
grows its tables from nothing far faster: a 10,000-page crawl at 300 pages/s is over before the
first look, and every plan until then is made for empty tables. The claim then read every due
page of the frontier to find the few it locks (a nested loop, not their primary keys: 11 ms and
~1,000 blocks a claim, ~1.1 ms of the server's CPU a page at 10,000 pages; bench/README.md,
"Issue 29: PostgreSQL (session 10)"), and the known-text and near-duplicate look-ups scanned
`resources`. So each crawler process counts the rows it adds, and when they have doubled since its
last look it asks the server which of these tables have more than doubled in size since their
statistics were taken, and analyzes those (O(log n) times a crawl, each on a sample of 6,000
rows: with PostgreSQL's default of 30,000 a 3,000-page crawl on 16 hosts by 4 workers spent
0.07 ms of the server a page analyzing).
"""

from __future__ import annotations

from litecrawl.store.postgres.connection import Conn

__all__ = ["Growth"]

# Each table a crawl grows, with the columns its statements look rows up by, sort or join on
# (not the texts and vectors: sampling those costs the most and chooses no plan).
_ANALYZED = {
    "pages": (
        "norm_url, host, next_crawl_time, processing_time, depth, score, state, worker_id, lost,"
        " part, kind"
    ),
    "resources": "text_hash, band0, band1, band2, band3",
    "documents": "url, resource_id",
    "page_links": "src, dst, dst_key",
}
_FIRST_LOOK = 100  # rows added by this process before its first look
_LOCK = 0x6C63616E616C  # pg_try_advisory_xact_lock: one process analyzes at a time
# the tables over twice the size their statistics saw (relpages: 0 before the first), read
# from the files' sizes (the cumulative statistics' row counts may lag by a second or more)
_GROWN = """SELECT relname FROM pg_class
  WHERE oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest(%s::text[]) AS t))
    AND pg_relation_size(oid) > (2 * relpages + 2) * current_setting('block_size')::bigint
  ORDER BY relname"""


class Growth:
    """Rows this process added, and when to look at the tables' statistics next."""

    def __init__(self) -> None:
        self.added = 0
        self._next_look = _FIRST_LOOK

    def add(self, rows: int) -> bool:
        """Count ``rows`` more; True when it is time to look (:func:`analyze_grown`)."""
        self.added += rows
        if self.added < self._next_look:
            return False
        self._next_look = 2 * self.added
        return True


async def analyze_grown(conn: Conn) -> list[str]:
    """Analyze the tables that have more than doubled since their statistics (none while
    another process is analyzing); the tables analyzed."""
    cur = await conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (_LOCK,))
    row = await cur.fetchone()
    if row is None or not row[0]:
        return []
    cur = await conn.execute(_GROWN.encode(), (list(_ANALYZED),))
    grown = [str(name) for (name,) in await cur.fetchall()]
    if grown:  # a sample of 6,000 rows, not 30,000: these plans need the shape, not the detail
        await conn.execute(b"SET LOCAL default_statistics_target = 20")
    for table in grown:
        await conn.execute(f"ANALYZE {table} ({_ANALYZED[table]})".encode())
    return grown
