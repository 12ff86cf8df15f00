"""The resources' vectors in PostgreSQL: ``resource_vectors`` (bytea, float32), read and
written by the statements both backends share (``store/vectors_sql.py``): one vector per
resource tagged with its model, dropped with its resource (ON DELETE CASCADE) or when its text
is rewritten (a trigger); likewise the vectors of its sections (``section_vectors``).

Search is the same exact numpy scan over every vector of the model (no ANN index: the scan's
cost at 10^4 and 10^5 vectors is in bench/README.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from litecrawl.store.dialect import POSTGRES
from litecrawl.store.vectors_sql import SQLVectors

__all__ = ["PostgresVectors"]


class PostgresVectors(SQLVectors):
    """The vectors on an open synchronous connection of the index (the caller opens and closes
    it: autocommit connections commit each statement)."""

    dialect = POSTGRES
    conn: psycopg.Connection[Any]

    def _put_many(self, *statements: tuple[str, Sequence[tuple[Any, ...]]]) -> None:
        with self.conn.transaction(), self.conn.cursor() as cur:
            for sql, rows in statements:
                if rows:
                    cur.executemany(sql, rows)
