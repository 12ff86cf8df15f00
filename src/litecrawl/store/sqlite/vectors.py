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
from collections.abc import Sequence
from typing import Any

from litecrawl.index.document import IndexDocument
from litecrawl.store.dialect import SQLITE
from litecrawl.store.vectors import MODEL, section_rows
from litecrawl.store.vectors_sql import SQLVectors, put_by_hash, put_section

__all__ = [
    "SQLiteVectors",
    "resource_of_url",
    "resource_previews",
    "write_document_vectors",
]

_PUT_BY_HASH = put_by_hash(SQLITE)
_PUT_SECTION = put_section(SQLITE)


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


class SQLiteVectors(SQLVectors):
    """The vectors on an open connection of the index (the caller opens and closes it)."""

    dialect = SQLITE
    conn: sqlite3.Connection

    def _put_many(self, *statements: tuple[str, Sequence[tuple[Any, ...]]]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for sql, rows in statements:
                if rows:
                    self.conn.executemany(sql, rows)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _has(self, table: str) -> bool:
        known = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return self.conn.execute(known, (table,)).fetchone() is not None


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
