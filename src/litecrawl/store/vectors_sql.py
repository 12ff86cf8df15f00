"""The vectors' store (:class:`~litecrawl.store.vectors.VectorStore`) written once for both
backends (:mod:`litecrawl.store.dialect`), on a connection the index holds. A backend says how
it writes rows in one transaction and which tables a database from before their migration
lacks (SQLite: search opens a file read-only and does not migrate it)."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from litecrawl.store.dialect import Dialect
from litecrawl.store.vectors import (
    MODEL,
    Neighbour,
    Passage,
    StoredSection,
    VectorStore,
    scan_nearest,
)

if TYPE_CHECKING:  # imported when searching: the crawler's writer never needs numpy
    import numpy as np
    import numpy.typing as npt

__all__ = ["KEEP_DATABASE_MODEL", "SQLVectors", "put_by_hash", "put_section"]

_PUT = """
INSERT INTO resource_vectors (resource_id, model, vector)
SELECT id, ?, ? FROM resources WHERE id = ? AND text_hash = ?
ON CONFLICT (resource_id) DO UPDATE SET model = excluded.model, vector = excluded.vector
"""
# a section's vector rebuilt by another model (``litecrawl index --model``), in the same
# transaction as its resource's, unless the text changed meanwhile
_PUT_SECTION_VECTOR = """
UPDATE section_vectors SET model = ?, vector = ?
WHERE resource_id = ? AND ord = ?
  AND (SELECT r.text_hash FROM resources AS r WHERE r.id = section_vectors.resource_id) = ?
"""
_SET_MODEL = """
INSERT INTO vector_model (one, name) VALUES (1, ?)
ON CONFLICT (one) DO UPDATE SET name = excluded.name
"""
# The crawl embeds with the default model; a database whose vectors another model made
# (``vector_model``) keeps them: what the crawl writes replaces only a vector of a model that
# is not the database's (an older one), never the database's own.
KEEP_DATABASE_MODEL = "NOT IN (SELECT name FROM vector_model)"
_MISSING_WHERE = """
FROM resources AS r
WHERE r.id > ? AND r.text <> ''
  AND NOT EXISTS (SELECT 1 FROM resource_vectors AS v WHERE v.resource_id = r.id AND v.model = ?)
"""


@cache
def put_by_hash(dialect: Dialect) -> str:
    """A document's vector (named parameters ``model``, ``vector``, ``text_hash``), written
    with the document: it goes to the resource holding the document's own text (a new or
    rewritten resource); a near-duplicate document keeps its resource's vector. A resource's
    vector stays until its text changes (the triggers drop it then), like its title: exact
    duplicates under other titles do not rewrite it on every crawl. Another model's is
    replaced, unless it is the database's (:data:`KEEP_DATABASE_MODEL`)."""
    return dialect.sql(f"""
INSERT INTO resource_vectors (resource_id, model, vector)
SELECT id, :model, :vector FROM resources WHERE text_hash = :text_hash
ON CONFLICT (resource_id) DO UPDATE SET model = excluded.model, vector = excluded.vector
WHERE resource_vectors.model {dialect.is_distinct} excluded.model
  AND resource_vectors.model {KEEP_DATABASE_MODEL}
""")


@cache
def put_section(dialect: Dialect) -> str:
    """A section's vector (:func:`litecrawl.store.vectors.section_rows`), kept as the
    resource's own is."""
    return dialect.sql(f"""
INSERT INTO section_vectors (resource_id, ord, heading, anchor, heading_at, places, model,
  vector)
SELECT id, :ord, :heading, :anchor, :heading_at, :places, :model, :vector FROM resources
WHERE text_hash = :text_hash
ON CONFLICT (resource_id, ord) DO UPDATE SET heading = excluded.heading,
  anchor = excluded.anchor, heading_at = excluded.heading_at, places = excluded.places,
  model = excluded.model, vector = excluded.vector
WHERE section_vectors.model {dialect.is_distinct} excluded.model
  AND section_vectors.model {KEEP_DATABASE_MODEL}
""")


def _places(stored: str | None) -> tuple[tuple[int, str, str | None], ...]:
    """The headings' places as written by the analysis worker (none: a row from before, or
    not what the worker writes)."""
    if not stored:
        return ()
    try:
        found = json.loads(stored)
        return tuple((int(at), str(heading), anchor) for at, heading, anchor in found)
    except (ValueError, TypeError):
        return ()


class SQLVectors(VectorStore):
    """:class:`VectorStore` on an open connection (the caller opens and closes it)."""

    dialect: Dialect

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._model: str | None = None

    @property
    def model(self) -> str:
        if self._model is None:
            found = self._rows("SELECT name FROM vector_model") if self._has("vector_model") else []
            self._model = str(found[0][0]) if found else MODEL
        return self._model

    def set_model(self, name: str) -> None:
        self._put_many((self.dialect.sql(_SET_MODEL), [(name,)]))
        self._model = name

    @abstractmethod
    def _put_many(self, *statements: tuple[str, Sequence[tuple[Any, ...]]]) -> None:
        """Each (sql, rows) of ``statements``, rows written by its sql, in one write
        transaction."""

    def _has(self, table: str) -> bool:
        """Whether the database has ``table`` yet."""
        return True

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.conn.execute(self.dialect.sql(sql), params).fetchall())

    def count(self) -> int:
        if not self._has("resource_vectors"):
            return 0
        rows = self._rows("SELECT count(*) FROM resource_vectors WHERE model = ?", (self.model,))
        return int(rows[0][0]) if rows else 0

    def missing(self, after: int, limit: int) -> list[Passage]:
        sql = f"SELECT r.id, r.text_hash, r.title, r.text {_MISSING_WHERE} ORDER BY r.id LIMIT ?"
        rows = self._rows(sql, (after, self.model, limit))
        return [Passage(rid, text_hash, title or "", text) for rid, text_hash, title, text in rows]

    def count_missing(self) -> int:
        rows = self._rows(f"SELECT count(*) {_MISSING_WHERE}", (0, self.model))
        return int(rows[0][0]) if rows else 0

    def put(
        self,
        vectors: Iterable[tuple[Passage, bytes]],
        sections: Iterable[tuple[Passage, int, bytes]] = (),
    ) -> None:
        model = self.model
        rows = [(model, blob, p.resource_id, p.text_hash) for p, blob in vectors]
        section_rows = [(model, blob, p.resource_id, o, p.text_hash) for p, o, blob in sections]
        if rows:
            self._put_many(
                (self.dialect.sql(_PUT), rows),
                (self.dialect.sql(_PUT_SECTION_VECTOR), section_rows),
            )

    def of_resource(self, resource_id: int) -> bytes | None:
        sql = "SELECT vector FROM resource_vectors WHERE resource_id = ? AND model = ?"
        rows = self._rows(sql, (resource_id, self.model))
        return bytes(rows[0][0]) if rows else None

    def of_resources(self, resource_ids: Sequence[int]) -> dict[int, bytes]:
        among, ids = self.dialect.one_of(list(resource_ids))
        sql = (
            "SELECT resource_id, vector FROM resource_vectors WHERE model = ?"
            f" AND resource_id {among}"
        )
        return {int(rid): bytes(v) for rid, v in self._rows(sql, (self.model, ids))}

    def section_vectors(
        self, resource_ids: Sequence[int]
    ) -> list[tuple[int, str, str | None, bytes]]:
        rows = self._sections("heading, anchor, vector", resource_ids, self.model)
        return [(int(rid), str(h), a, bytes(v)) for rid, h, a, v in rows]

    def headings(
        self, resource_ids: Sequence[int], merged: bool = True, any_model: bool = False
    ) -> list[StoredSection]:
        # the merged headings' JSON only when asked: the section-level keyword score reads
        # the sections of 100 pages a question, parsing it cost ~8% of a hybrid query
        places = "places" if merged else "NULL"
        columns = f"heading, anchor, heading_at, {places}"
        rows = self._sections(columns, resource_ids, None if any_model else self.model)
        return [
            StoredSection(int(rid), str(h), a, None if at is None else int(at), _places(p))
            for rid, h, a, at, p in rows
        ]

    def _sections(
        self, columns: str, resource_ids: Sequence[int], model: str | None
    ) -> list[tuple[Any, ...]]:
        if not resource_ids or not self._has("section_vectors"):
            return []
        among, ids = self.dialect.one_of(list(resource_ids))
        of_model = "" if model is None else " AND model = ?"
        sql = (
            f"SELECT resource_id, {columns} FROM section_vectors WHERE resource_id {among}"
            f"{of_model} ORDER BY resource_id, ord"
        )
        return self._rows(sql, (ids,) if model is None else (ids, model))

    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, exclude: Sequence[int] = ()
    ) -> list[Neighbour]:
        rows = self._rows(
            "SELECT resource_id, vector FROM resource_vectors WHERE model = ? ORDER BY resource_id",
            (self.model,),
        )
        return scan_nearest(rows, query, limit, exclude)
