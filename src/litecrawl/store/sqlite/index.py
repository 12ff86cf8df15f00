"""Writing the index: one document row per URL, one resource per distinct (or nearly so) text.

Both functions run inside the caller's open write transaction (``SQLiteFrontier.finalize``):
they never ``BEGIN`` or ``COMMIT``. The full-text index (``resources_fts``) follows the
``resources`` table through the migration's triggers, so it is never written here.

For each document, the resource is, in this order:

1. the resource with the same ``text_hash`` (exact duplicate; one lookup on a UNIQUE index);
2. a near-duplicate: a resource sharing one of the four 16-bit simhash bands whose simhash is
   within :data:`~litecrawl.index.simhash.NEAR_DUPLICATE_DISTANCE` bits (only for texts of at
   least :data:`MIN_NEAR_DUPLICATE_WORDS` words: short texts are too alike to tell apart);
   the document's current resource wins a tie, so a page that changes a little stays put (and
   if no other document shares that resource, its text is refreshed in place);
3. a new resource.

A document whose text is empty gets no resource (it is listed, not full-text indexed). When a
document leaves a resource that no other document references, the resource is deleted.

Speed: the database state the decisions need is read up front with a few ``IN (...)`` queries
per 100 documents (current resources, exact hashes, band candidates); the decisions are then made
per document in memory (documents of the same batch see each other), and the writes go out in
bulk: the new resources in multi-row ``INSERT ... VALUES (...), (...)`` statements (up to 64
rows each), the documents with ``executemany``, the orphans in one ``DELETE``. Few statements for
many rows matter here: indexing through the FTS5 trigger costs about 1.5 times as much with one
``INSERT`` per row (measured on 300-word texts).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from litecrawl.index.document import IndexDocument
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, bands, hamming
from litecrawl.store.sqlite.vectors import write_document_vectors

__all__ = ["MIN_NEAR_DUPLICATE_WORDS", "remove_documents", "write_documents"]

MIN_NEAR_DUPLICATE_WORDS = 50
_CHUNK_DOCS = 100  # documents per round of look-ups
# Look-ups take their keys as one JSON array: one SQL text whatever the number of keys (the
# statement cache is not flooded), and SQLite still probes the index once per key.
_KEYS = "IN (SELECT value FROM json_each(?))"
_CURRENT_IN = f"SELECT url, resource_id FROM documents WHERE url {_KEYS}"
_BY_HASH_IN = f"SELECT text_hash, id FROM resources WHERE text_hash {_KEYS}"
_BY_BAND_IN = tuple(f"SELECT id, simhash FROM resources WHERE band{n} {_KEYS}" for n in range(4))
_SHARED = "SELECT 1 FROM documents WHERE resource_id = ? AND url <> ? LIMIT 1"
_INSERT_RESOURCES = (
    "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title, text, language)"
    " VALUES {values} RETURNING id, text_hash"
)
# rows per INSERT: powers of two (few distinct statements), 64 x 9 = 576 parameters at most
_INSERT_SIZES = (64, 32, 16, 8, 4, 2, 1)
_REWRITE_RESOURCE = (
    "UPDATE resources SET text_hash = ?, simhash = ?, band0 = ?, band1 = ?, band2 = ?,"
    " band3 = ?, title = ?, text = ?, language = ? WHERE id = ?"
)
_DELETE_ORPHANS = (
    "DELETE FROM resources WHERE id IN (SELECT value FROM json_each(?))"
    " AND NOT EXISTS (SELECT 1 FROM documents WHERE resource_id = resources.id)"
)
_CHANGED = " OR ".join(
    f"documents.{column} IS NOT excluded.{column}"
    for column in (
        "resource_id",
        "title",
        "keywords",
        "text_preview",
        "language",
        "author",
        "published",
        "content_type",
        "status",
        "extraction_mode",
        "markdown_path",
        "canonical",
    )
)
_UPSERT_DOCUMENT = f"""
INSERT INTO documents (url, resource_id, title, keywords, text_preview, language, author,
                       published, content_type, status, depth, source, extraction_mode,
                       markdown_path, canonical)
VALUES (:url, :resource_id, :title, :keywords, :text_preview, :language, :author, :published,
        :content_type, :status, :depth, :source, :extraction_mode, :markdown_path, :canonical)
ON CONFLICT (url) DO UPDATE SET
  updated_at = CASE WHEN :rewritten OR {_CHANGED}
                    THEN CURRENT_TIMESTAMP ELSE documents.updated_at END,
  resource_id = excluded.resource_id,
  title = excluded.title,
  keywords = excluded.keywords,
  text_preview = excluded.text_preview,
  language = excluded.language,
  author = excluded.author,
  published = excluded.published,
  content_type = excluded.content_type,
  status = excluded.status,
  depth = excluded.depth,
  source = excluded.source,
  extraction_mode = excluded.extraction_mode,
  markdown_path = excluded.markdown_path,
  canonical = excluded.canonical
"""


def write_documents(conn: sqlite3.Connection, docs: Sequence[IndexDocument]) -> None:
    """Insert or update the documents of ``docs`` (in order; a URL given twice ends up as its
    last version) and link them to resources."""
    if not docs:
        return
    batch = _Batch(conn)
    for i in range(0, len(docs), _CHUNK_DOCS):
        chunk = docs[i : i + _CHUNK_DOCS]
        batch.prefetch(chunk)
        for doc in chunk:
            batch.place(doc)
    batch.write()
    write_document_vectors(conn, docs)


def remove_documents(conn: sqlite3.Connection, urls: Iterable[str]) -> None:
    """Delete the documents of ``urls`` (unknown URLs are ignored) and the resources they
    leave without any document."""
    unique = list(dict.fromkeys(urls))
    resource_ids = {rid for rid in _lookup(conn, _CURRENT_IN, unique).values() if rid is not None}
    conn.executemany("DELETE FROM documents WHERE url = ?", [(url,) for url in unique])
    if resource_ids:
        conn.execute(_DELETE_ORPHANS, (json.dumps(sorted(resource_ids)),))


def _lookup(conn: sqlite3.Connection, sql: str, keys: Iterable[object]) -> dict[Any, Any]:
    """``dict(rows)`` of a two-column ``sql`` taking ``keys`` as a JSON array."""
    return dict(conn.execute(sql, (json.dumps(list(keys), ensure_ascii=False),)))


def _chunks(rows: list[tuple[object, ...]]) -> Iterable[list[tuple[object, ...]]]:
    """``rows`` cut into pieces whose sizes are in :data:`_INSERT_SIZES` (largest first)."""
    start = 0
    for size in _INSERT_SIZES:
        while len(rows) - start >= size:
            yield rows[start : start + size]
            start += size


def _is_long(doc: IndexDocument) -> bool:
    return len(doc.text.split(maxsplit=MIN_NEAR_DUPLICATE_WORDS)) >= MIN_NEAR_DUPLICATE_WORDS


# A resource is an id (in the database) or, until the batch is written, its text_hash (new).
_Ref = int | str
_Band = tuple[int, int]  # (band number, band value)


@dataclass
class _Batch:
    """The decisions for one batch: database state read up front (per chunk of documents),
    this batch's own changes kept in memory, all writes at the end."""

    conn: sqlite3.Connection
    # read from the database (state before the batch)
    stored: dict[str, int | None] = field(default_factory=dict)  # url -> resource_id
    by_hash: dict[str, int] = field(default_factory=dict)  # text_hash -> id
    by_band: dict[_Band, dict[int, int]] = field(default_factory=dict)  # -> {id: simhash}
    long: set[str] = field(default_factory=set)  # text_hash of texts worth a near-dup search
    # decided in this batch
    rows: dict[str, tuple[IndexDocument, _Ref | None, bool]] = field(default_factory=dict)
    new: dict[str, IndexDocument] = field(default_factory=dict)  # text_hash -> document
    new_by_band: dict[_Band, list[str]] = field(default_factory=dict)
    rewrites: dict[int, IndexDocument] = field(default_factory=dict)  # id -> new text
    rewritten_hash: dict[str, int] = field(default_factory=dict)
    claimed: dict[int, set[str]] = field(default_factory=dict)  # id -> URLs of this batch
    left: set[int] = field(default_factory=set)  # resources some document may have left

    def prefetch(self, docs: Sequence[IndexDocument]) -> None:
        conn = self.conn
        urls = {d.url for d in docs} - self.stored.keys()
        found = _lookup(conn, _CURRENT_IN, urls)
        self.stored.update((url, found.get(url)) for url in urls)
        texts = [d for d in docs if d.text.strip()]
        self.by_hash.update(
            _lookup(conn, _BY_HASH_IN, {d.text_hash for d in texts} - self.by_hash.keys())
        )
        wanted: list[set[int]] = [set(), set(), set(), set()]
        for doc in texts:
            if doc.text_hash not in self.by_hash and _is_long(doc):
                self.long.add(doc.text_hash)
                for number, value in enumerate(bands(doc.simhash)):
                    if (number, value) not in self.by_band:
                        wanted[number].add(value)
        for number, values in enumerate(wanted):
            for value in values:
                self.by_band[(number, value)] = {}
            if values:
                for rid, h in _lookup(conn, _BY_BAND_IN[number], values).items():
                    self._index(rid, h)

    def _index(self, rid: int, h: int) -> None:
        for band in enumerate(bands(h)):
            self.by_band.setdefault(band, {})[rid] = h

    def place(self, doc: IndexDocument) -> None:
        """Decide the resource of ``doc`` (no writes)."""
        stored = self.stored.get(doc.url)
        earlier = self.rows.get(doc.url)
        current = earlier[1] if earlier is not None else stored
        if stored is not None:
            self.left.add(stored)
        ref, rewritten = self._resource_for(doc, current)
        if isinstance(ref, int):
            self.claimed.setdefault(ref, set()).add(doc.url)
        self.rows[doc.url] = (doc, ref, rewritten)

    def _resource_for(self, doc: IndexDocument, current: _Ref | None) -> tuple[_Ref | None, bool]:
        if not doc.text.strip():
            return None, False
        h = doc.text_hash
        if h in self.new:
            return h, False
        found = self.rewritten_hash.get(h, self.by_hash.get(h))
        if found is not None:
            return found, False
        near = self._near_duplicate(doc, current)
        if near is None:
            self.new[h] = doc
            for band in enumerate(bands(doc.simhash)):
                self.new_by_band.setdefault(band, []).append(h)
            return h, False
        if near == current and isinstance(near, int) and self._sole(near, doc.url):
            self.rewrites[near] = doc  # the page changed a little: refresh its text
            self.rewritten_hash[h] = near
            self._index(near, doc.simhash)
            return near, True
        return near, False

    def _near_duplicate(self, doc: IndexDocument, prefer: _Ref | None) -> _Ref | None:
        """The closest resource within the threshold (``prefer`` on a tie), or None."""
        if doc.text_hash not in self.long:  # see prefetch
            return None
        candidates: dict[_Ref, int] = {}
        for band in enumerate(bands(doc.simhash)):
            for rid, h in self.by_band.get(band, {}).items():
                rewrite = self.rewrites.get(rid)
                candidates[rid] = rewrite.simhash if rewrite is not None else h
            for text_hash in self.new_by_band.get(band, ()):
                candidates[text_hash] = self.new[text_hash].simhash
        best: tuple[int, bool, int, _Ref] | None = None
        for order, (ref, h) in enumerate(candidates.items()):
            distance = hamming(h, doc.simhash)
            if distance <= NEAR_DUPLICATE_DISTANCE:
                key = (distance, ref != prefer, order, ref)
                if best is None or key[:3] < best[:3]:
                    best = key
        return best[3] if best is not None else None

    def _sole(self, rid: int, url: str) -> bool:
        """No other document (stored, or placed in this batch) references ``rid``."""
        if self.claimed.get(rid, set()) - {url}:
            return False
        return self.conn.execute(_SHARED, (rid, url)).fetchone() is None

    def write(self) -> None:
        """Rewrites, new resources (bulk), documents, then orphans (one statement)."""
        conn = self.conn
        if self.rewrites:
            conn.executemany(
                _REWRITE_RESOURCE,
                [(*_resource_row(doc), rid) for rid, doc in self.rewrites.items()],
            )
        used = {ref for _, ref, _ in self.rows.values() if isinstance(ref, str)}
        inserts = [_resource_row(doc) for key, doc in self.new.items() if key in used]
        ids: dict[str, int] = {}
        for chunk in _chunks(inserts):
            sql = _INSERT_RESOURCES.format(values=",".join(["(?,?,?,?,?,?,?,?,?)"] * len(chunk)))
            ids.update((h, rid) for rid, h in conn.execute(sql, [v for row in chunk for v in row]))
        conn.executemany(
            _UPSERT_DOCUMENT,
            [
                _document_row(doc, ids[ref] if isinstance(ref, str) else ref, rewritten)
                for doc, ref, rewritten in self.rows.values()
            ],
        )
        if self.left:
            conn.execute(_DELETE_ORPHANS, (json.dumps(sorted(self.left)),))


def _resource_row(doc: IndexDocument) -> tuple[object, ...]:
    return (doc.text_hash, doc.simhash, *bands(doc.simhash), doc.title, doc.text, doc.language)


def _document_row(
    doc: IndexDocument, resource_id: int | None, rewritten: bool
) -> dict[str, object]:
    return {
        "url": doc.url,
        "resource_id": resource_id,
        "title": doc.title,
        "keywords": json.dumps(list(doc.keywords), ensure_ascii=False),
        "text_preview": doc.text_preview,
        "language": doc.language,
        "author": doc.author,
        "published": doc.published,
        "content_type": doc.content_type,
        "status": doc.status,
        "depth": doc.depth,
        "source": doc.source,
        "extraction_mode": doc.extraction_mode,
        "markdown_path": doc.markdown_path,
        "canonical": doc.canonical,
        "rewritten": rewritten,
    }
