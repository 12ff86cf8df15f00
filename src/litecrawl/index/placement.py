"""Which resource each indexed document belongs to: the decisions, without the database.

For each document, the resource is, in this order:

1. the resource with the same ``text_hash`` (exact duplicate);
2. a near-duplicate: the resource whose simhash is closest, within
   :data:`~litecrawl.index.hamming.NEAR_DUPLICATE_DISTANCE` bits (only for texts of at
   least :data:`MIN_NEAR_DUPLICATE_WORDS` words: short texts are too alike to tell apart);
   the document's current resource wins a tie, so a page that changes a little stays put (and
   if no other document shares that resource, its text is refreshed in place), then the
   oldest resource (the lowest id; this batch's new ones after the stored ones);
3. a new resource.

A document whose text is empty gets no resource (it is listed, not full-text indexed). A
resource a document leaves is deleted by the store when no document references it any more.

Both stores (``store/sqlite/index.py``, ``store/postgres/index.py``) drive a
:class:`Placement` the same way, per chunk of documents: :meth:`Placement.wants` says what to
read, the store reads it in a few ``IN``/``ANY`` queries and hands it to :meth:`Placement.know`,
then :meth:`Placement.place` decides each document in memory (documents of the same batch see
each other); at the end the store writes :attr:`rewrites`, :meth:`new_resources`,
:meth:`documents` and deletes the orphans among :attr:`left`. Few statements for many rows:
one query per document cost about 1.5 times as much when indexing (measured on SQLite).

The near-duplicates of a simhash are asked of the database as they are
(:func:`litecrawl.store.sql.near_resources`: the resources within the distance, found through
the bands and checked there), never as every resource sharing a band: on a site whose pages
are alike, a band value is shared by more and more resources as the crawl grows, and reading
them all made each page's placement cost grow with the index (bench/README.md, issue 33).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from litecrawl.index.document import IndexDocument
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, bands, hamming

__all__ = [
    "CHUNK_DOCS",
    "MIN_NEAR_DUPLICATE_WORDS",
    "Known",
    "Placement",
    "Wanted",
    "chunks",
    "document_row",
    "is_long",
    "resource_row",
]

MIN_NEAR_DUPLICATE_WORDS = 50
CHUNK_DOCS = 100  # documents per round of look-ups

# A resource is an id (in the database) or, until the batch is written, its text_hash (new).
Ref = int | str
_Band = tuple[int, int]  # (band number, band value)


@dataclass(frozen=True, slots=True)
class Wanted:
    """What the decisions for a chunk need from the database."""

    urls: set[str]  # their documents' current resource
    hashes: set[str]  # resources with these text hashes
    simhashes: set[int]  # the resources within the near-duplicate distance of these


@dataclass(frozen=True, slots=True)
class Known:
    """The database's answer to :class:`Wanted` (state before the batch)."""

    current: dict[str, int | None]  # url -> resource id (urls without a document: absent)
    by_hash: dict[str, int]  # text_hash -> resource id
    near: dict[int, dict[int, int]]  # simhash -> {resource id: its simhash} within the distance
    # documents referencing each resource of ``current``, ``by_hash`` and ``near``
    references: dict[int, int]


def is_long(doc: IndexDocument) -> bool:
    return len(doc.text.split(maxsplit=MIN_NEAR_DUPLICATE_WORDS)) >= MIN_NEAR_DUPLICATE_WORDS


@dataclass
class Placement:
    """The decisions for one batch: database state learnt per chunk, this batch's own changes
    kept in memory."""

    stored: dict[str, int | None] = field(default_factory=dict)  # url -> resource_id
    documented: set[str] = field(default_factory=set)  # urls with a document before the batch
    by_hash: dict[str, int] = field(default_factory=dict)  # text_hash -> id
    near: dict[int, dict[int, int]] = field(default_factory=dict)  # simhash -> {id: simhash}
    references: dict[int, int] = field(default_factory=dict)  # id -> documents (before)
    long: set[str] = field(default_factory=set)  # text_hash of texts worth a near-dup search
    rows: dict[str, tuple[IndexDocument, Ref | None, bool]] = field(default_factory=dict)
    new: dict[str, IndexDocument] = field(default_factory=dict)  # text_hash -> document
    new_rank: dict[str, int] = field(default_factory=dict)  # text_hash -> place in ``new``
    # this batch's new resources and rewritten ones, by band (a stored resource rewritten with
    # another simhash is near other texts than the database says)
    batch_by_band: dict[_Band, list[Ref]] = field(default_factory=dict)
    rewrites: dict[int, IndexDocument] = field(default_factory=dict)  # id -> new text
    rewritten_hash: dict[str, int] = field(default_factory=dict)
    claimed: dict[int, set[str]] = field(default_factory=dict)  # id -> URLs of this batch
    left: set[int] = field(default_factory=set)  # resources some document may have left

    def wants(self, docs: Sequence[IndexDocument]) -> Wanted:
        urls = {d.url for d in docs} - self.stored.keys()
        texts = [d for d in docs if d.text.strip()]
        hashes = {d.text_hash for d in texts} - self.by_hash.keys()
        simhashes: set[int] = set()
        for doc in texts:
            if doc.text_hash not in self.by_hash and is_long(doc):
                self.long.add(doc.text_hash)
                if doc.simhash not in self.near:
                    simhashes.add(doc.simhash)
        return Wanted(urls, hashes, simhashes)

    def know(self, wanted: Wanted, known: Known) -> None:
        self.stored.update((url, known.current.get(url)) for url in wanted.urls)
        self.documented.update(url for url in wanted.urls if url in known.current)
        self.by_hash.update(known.by_hash)
        self.near.update((h, known.near.get(h, {})) for h in wanted.simhashes)
        self.references.update(known.references)

    def _in_batch(self, ref: Ref, h: int) -> None:
        for band in enumerate(bands(h)):
            self.batch_by_band.setdefault(band, []).append(ref)

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

    def _resource_for(self, doc: IndexDocument, current: Ref | None) -> tuple[Ref | None, bool]:
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
            self.new_rank[h] = len(self.new)
            self.new[h] = doc
            self._in_batch(h, doc.simhash)
            return h, False
        if near == current and isinstance(near, int) and self._sole(near, doc.url):
            self.rewrites[near] = doc  # the page changed a little: refresh its text
            self.rewritten_hash[h] = near
            self._in_batch(near, doc.simhash)
            return near, True
        return near, False

    def _near_duplicate(self, doc: IndexDocument, prefer: Ref | None) -> Ref | None:
        """The closest resource within the threshold (``prefer`` on a tie, then the oldest),
        or None."""
        if doc.text_hash not in self.long:  # see wants
            return None
        candidates: set[Ref] = set(self.near.get(doc.simhash, ()))
        for band in enumerate(bands(doc.simhash)):
            candidates.update(self.batch_by_band.get(band, ()))
        best: tuple[int, bool, tuple[int, int], Ref] | None = None
        for ref in candidates:
            distance = hamming(self._simhash(ref, doc.simhash), doc.simhash)
            if distance <= NEAR_DUPLICATE_DISTANCE:
                rank = (1, self.new_rank[ref]) if isinstance(ref, str) else (0, ref)
                key = (distance, ref != prefer, rank, ref)
                if best is None or key[:3] < best[:3]:
                    best = key
        return best[3] if best is not None else None

    def _simhash(self, ref: Ref, asked: int) -> int:
        """The simhash of a candidate for a text of simhash ``asked``, as of now in the
        batch."""
        if isinstance(ref, str):
            return self.new[ref].simhash
        rewrite = self.rewrites.get(ref)
        return rewrite.simhash if rewrite is not None else self.near[asked][ref]

    def _sole(self, rid: int, url: str) -> bool:
        """No other document (stored before the batch, or placed in it) references ``rid``."""
        if self.claimed.get(rid, set()) - {url}:
            return False
        own = 1 if self.stored.get(url) == rid else 0
        return self.references.get(rid, 0) - own <= 0

    def new_resources(self) -> list[IndexDocument]:
        """New resources some document still uses, in the order they were found."""
        used = {ref for _, ref, _ in self.rows.values() if isinstance(ref, str)}
        return [doc for key, doc in self.new.items() if key in used]

    def documents(self, ids: dict[str, int]) -> list[tuple[IndexDocument, int | None, bool]]:
        """Each document with its resource id (``ids``: text_hash -> id of the new resources)
        and whether that resource's text was rewritten."""
        return [
            (doc, ids[ref] if isinstance(ref, str) else ref, rewritten)
            for doc, ref, rewritten in self.rows.values()
        ]


def chunks(docs: Sequence[IndexDocument]) -> list[Sequence[IndexDocument]]:
    return [docs[i : i + CHUNK_DOCS] for i in range(0, len(docs), CHUNK_DOCS)]


def resource_row(doc: IndexDocument) -> tuple[Any, ...]:
    """A resource's columns: text_hash, simhash, band0..3, title, text, language."""
    return (doc.text_hash, doc.simhash, *bands(doc.simhash), doc.title, doc.text, doc.language)


def document_row(doc: IndexDocument, resource_id: int | None, rewritten: bool) -> dict[str, Any]:
    """A document's columns by name (and ``rewritten``: its resource's text was refreshed)."""
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
