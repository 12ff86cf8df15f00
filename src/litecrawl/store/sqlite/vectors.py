"""The resources' vectors in the SQLite file: ``resource_vectors`` (migration ``resource_vectors``).

Vectors are float32 BLOBs keyed by resource id, tagged with the model's name. The
``resource_vectors_gone``/``_stale`` triggers drop a vector when its resource is deleted or its
text rewritten, so a vector always describes the text beside it; the new text's vector comes
with the document that changed it (:func:`write_document_vectors`) or from
``litecrawl index --embed``.

Search is an exact scan: every vector read into one numpy matrix and multiplied by the query
(our Python's ``sqlite3`` cannot load ``sqlite-vec``; the scan's cost at 10^4 and 10^5 vectors
is in bench/README.md).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from litecrawl.index.document import IndexDocument
from litecrawl.store.vectors import (
    MODEL,
    Neighbour,
    Passage,
    VectorStore,
    scan_nearest,
    section_rows,
)

if TYPE_CHECKING:  # imported when searching: the crawler's writer never needs numpy
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "SQLiteVectors",
    "resource_of_url",
    "resource_previews",
    "vectors_of_resources",
    "write_document_vectors",
]

# The vector goes to the resource that holds the document's own text (a new or rewritten
# resource); a near-duplicate document keeps its resource's vector. A resource's vector stays
# until its text changes (the trigger drops it then), like its title: exact duplicates under
# other titles do not rewrite it on every crawl. Another model's vector is replaced.
_PUT_BY_HASH = """
INSERT INTO resource_vectors (resource_id, model, vector)
SELECT id, :model, :vector FROM resources WHERE text_hash = :text_hash
ON CONFLICT (resource_id) DO UPDATE SET model = excluded.model, vector = excluded.vector
WHERE resource_vectors.model IS NOT excluded.model
"""
# a resource's sections stay until its text changes (the triggers drop them), as its vector does
_PUT_SECTION = """
INSERT INTO section_vectors (resource_id, ord, heading, anchor, model, vector)
SELECT id, :ord, :heading, :anchor, :model, :vector FROM resources WHERE text_hash = :text_hash
ON CONFLICT (resource_id, ord) DO UPDATE SET heading = excluded.heading,
  anchor = excluded.anchor, model = excluded.model, vector = excluded.vector
WHERE section_vectors.model IS NOT excluded.model
"""
_PUT = """
INSERT INTO resource_vectors (resource_id, model, vector)
SELECT id, ?, ? FROM resources WHERE id = ? AND text_hash = ?
ON CONFLICT (resource_id) DO UPDATE SET model = excluded.model, vector = excluded.vector
"""
_MISSING_WHERE = """
FROM resources AS r
WHERE r.id > ? AND r.text <> ''
  AND NOT EXISTS (SELECT 1 FROM resource_vectors AS v WHERE v.resource_id = r.id AND v.model = ?)
"""


def write_document_vectors(conn: sqlite3.Connection, docs: Sequence[IndexDocument]) -> None:
    """Store the vectors that came with ``docs`` (inside the caller's transaction, after the
    documents and resources were written)."""
    rows = [
        {"model": MODEL, "vector": doc.embedding, "text_hash": doc.text_hash}
        for doc in docs
        if doc.embedding is not None
    ]
    if rows:
        conn.executemany(_PUT_BY_HASH, rows)
    sections = section_rows(docs)
    if sections:
        conn.executemany(_PUT_SECTION, sections)


class SQLiteVectors(VectorStore):
    """:class:`VectorStore` on an open connection (the caller opens and closes it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def count(self) -> int:
        known = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'resource_vectors'"
        if self.conn.execute(known).fetchone() is None:
            return 0  # a database from before the migration (search does not migrate)
        sql = "SELECT count(*) FROM resource_vectors WHERE model = ?"
        return int(self.conn.execute(sql, (MODEL,)).fetchone()[0])

    def missing(self, after: int, limit: int) -> list[Passage]:
        sql = f"SELECT r.id, r.text_hash, r.title, r.text {_MISSING_WHERE} ORDER BY r.id LIMIT ?"
        rows = self.conn.execute(sql, (after, MODEL, limit))
        return [Passage(rid, text_hash, title or "", text) for rid, text_hash, title, text in rows]

    def count_missing(self) -> int:
        sql = f"SELECT count(*) {_MISSING_WHERE}"
        return int(self.conn.execute(sql, (0, MODEL)).fetchone()[0])

    def put(self, vectors: Iterable[tuple[Passage, bytes]]) -> None:
        rows = [(MODEL, blob, p.resource_id, p.text_hash) for p, blob in vectors]
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany(_PUT, rows)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def of_resource(self, resource_id: int) -> bytes | None:
        sql = "SELECT vector FROM resource_vectors WHERE resource_id = ? AND model = ?"
        row = self.conn.execute(sql, (resource_id, MODEL)).fetchone()
        return None if row is None else bytes(row[0])

    def of_resources(self, resource_ids: Sequence[int]) -> dict[int, bytes]:
        return vectors_of_resources(self.conn, resource_ids)

    def section_vectors(
        self, resource_ids: Sequence[int]
    ) -> list[tuple[int, str, str | None, bytes]]:
        known = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'section_vectors'"
        if not resource_ids or self.conn.execute(known).fetchone() is None:
            return []
        sql = (
            "SELECT resource_id, heading, anchor, vector FROM section_vectors WHERE model = ?"
            " AND resource_id IN (SELECT value FROM json_each(?)) ORDER BY resource_id, ord"
        )
        rows = self.conn.execute(sql, (MODEL, json.dumps(list(resource_ids))))
        return [(int(rid), str(h), a, bytes(v)) for rid, h, a, v in rows]

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, exclude: Sequence[int] = ()
    ) -> list[Neighbour]:
        rows = self.conn.execute(
            "SELECT resource_id, vector FROM resource_vectors WHERE model = ? ORDER BY resource_id",
            (MODEL,),
        ).fetchall()
        return scan_nearest(rows, query, limit, exclude)


def resource_of_url(conn: sqlite3.Connection, url: str) -> int | None:
    """The resource of the document at ``url`` (None: no such document, or it has no text)."""
    row = conn.execute("SELECT resource_id FROM documents WHERE url = ?", (url,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def resource_previews(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Title and start of text of each resource (a hit found by meaning has no matched words
    to show)."""
    sql = (
        "SELECT id, title, substr(text, 1, 200) FROM resources"
        " WHERE id IN (SELECT value FROM json_each(?))"
    )
    rows = conn.execute(sql, (json.dumps(list(ids)),))
    return {int(rid): (str(title or ""), str(text)) for rid, title, text in rows}


def vectors_of_resources(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, bytes]:
    """The vectors of ``ids`` that have one (for the export)."""
    sql = (
        "SELECT resource_id, vector FROM resource_vectors WHERE model = ?"
        " AND resource_id IN (SELECT value FROM json_each(?))"
    )
    return {int(rid): bytes(b) for rid, b in conn.execute(sql, (MODEL, json.dumps(list(ids))))}
