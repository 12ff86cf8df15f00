"""The resources' vectors in PostgreSQL: ``resource_vectors`` (bytea, float32), as the SQLite
store's (``store/sqlite/vectors.py``): one vector per resource tagged with its model, dropped
with its resource (ON DELETE CASCADE) or when its text is rewritten (a trigger); likewise the
vectors of its sections (``section_vectors``).

Search is the same exact numpy scan over every vector of the model (no ANN index: the scan's
cost at 10^4 and 10^5 vectors is in bench/README.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import psycopg

from litecrawl.store.vectors import MODEL, Neighbour, Passage, VectorStore, scan_nearest

if TYPE_CHECKING:  # imported when searching
    import numpy as np
    import numpy.typing as npt

__all__ = ["PostgresVectors"]

_PUT = """
INSERT INTO resource_vectors (resource_id, model, vector)
SELECT id, %s, %s FROM resources WHERE id = %s AND text_hash = %s
ON CONFLICT (resource_id) DO UPDATE SET model = excluded.model, vector = excluded.vector
"""
_MISSING_WHERE = """
FROM resources AS r
WHERE r.id > %s AND r.text <> ''
  AND NOT EXISTS (SELECT 1 FROM resource_vectors AS v WHERE v.resource_id = r.id AND v.model = %s)
"""


class PostgresVectors(VectorStore):
    """:class:`VectorStore` on an open synchronous connection (the caller opens, closes and
    commits: autocommit connections commit each statement)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def count(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM resource_vectors WHERE model = %s", (MODEL,)
        ).fetchone()
        return int(row[0]) if row else 0

    def missing(self, after: int, limit: int) -> list[Passage]:
        rows = self.conn.execute(
            f"SELECT r.id, r.text_hash, r.title, r.text {_MISSING_WHERE} ORDER BY r.id LIMIT %s",
            (after, MODEL, limit),
        ).fetchall()
        return [Passage(rid, text_hash, title or "", text) for rid, text_hash, title, text in rows]

    def count_missing(self) -> int:
        row = self.conn.execute(f"SELECT count(*) {_MISSING_WHERE}", (0, MODEL)).fetchone()
        return int(row[0]) if row else 0

    def put(self, vectors: Iterable[tuple[Passage, bytes]]) -> None:
        rows = [(MODEL, blob, p.resource_id, p.text_hash) for p, blob in vectors]
        if rows:
            with self.conn.transaction(), self.conn.cursor() as cur:
                cur.executemany(_PUT, rows)

    def of_resource(self, resource_id: int) -> bytes | None:
        row = self.conn.execute(
            "SELECT vector FROM resource_vectors WHERE resource_id = %s AND model = %s",
            (resource_id, MODEL),
        ).fetchone()
        return None if row is None else bytes(row[0])

    def of_resources(self, resource_ids: Sequence[int]) -> dict[int, bytes]:
        rows = self.conn.execute(
            "SELECT resource_id, vector FROM resource_vectors "
            "WHERE model = %s AND resource_id = ANY(%s)",
            (MODEL, list(resource_ids)),
        ).fetchall()
        return {int(rid): bytes(v) for rid, v in rows}

    def section_vectors(
        self, resource_ids: Sequence[int]
    ) -> list[tuple[int, str, str | None, bytes]]:
        if not resource_ids:
            return []
        rows = self.conn.execute(
            "SELECT resource_id, heading, anchor, vector FROM section_vectors "
            "WHERE model = %s AND resource_id = ANY(%s) ORDER BY resource_id, ord",
            (MODEL, list(resource_ids)),
        ).fetchall()
        return [(int(rid), str(h), a, bytes(v)) for rid, h, a, v in rows]

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, exclude: Sequence[int] = ()
    ) -> list[Neighbour]:
        rows = self.conn.execute(
            "SELECT resource_id, vector FROM resource_vectors WHERE model = %s "
            "ORDER BY resource_id",
            (MODEL,),
        ).fetchall()
        return scan_nearest(rows, query, limit, exclude)
