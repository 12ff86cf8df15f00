"""Where the resources' embeddings live: the interface the index and search use.

One vector per resource (near-duplicate URLs share a resource, so they share its vector),
tagged with the model that made it, and one per section of a page that has several
(:mod:`litecrawl.extract.sections`), kept the same way: search scores a page by the best of
its own vector and its sections' (:mod:`litecrawl.index.semantic`). :class:`VectorStore` is
what search, ``similar``, the export and ``litecrawl index --embed`` talk to;
:mod:`litecrawl.store.sqlite.vectors` (BLOBs beside the resources) and
:mod:`litecrawl.store.postgres.vectors` (``bytea``) implement it, both scanned exactly with numpy
(:func:`scan_nearest`); a vector is written with its document (:mod:`.index_writes`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where vectors are computed, not by the crawler's writer
    import numpy as np
    import numpy.typing as npt

    from litecrawl.index.document import IndexDocument

__all__ = [
    "DIMENSIONS",
    "MODEL",
    "BestSection",
    "Neighbour",
    "Passage",
    "StoredSection",
    "VectorStore",
    "best_sections",
    "scan_nearest",
    "section_rows",
]

MODEL = "wordllama-l2-supercat-256"  # stored beside each vector: another model never mixes in
DIMENSIONS = 256  # the default model's; a vector's length is its model's (scans take the query's)


@dataclass(frozen=True, slots=True)
class Neighbour:
    resource_id: int
    similarity: float  # cosine, 1 = same direction


@dataclass(frozen=True, slots=True)
class BestSection:
    """The section of a resource closest to a query."""

    similarity: float
    heading: str
    anchor: str | None


@dataclass(frozen=True, slots=True)
class StoredSection:
    """A stored section of a resource (its vector aside), in page order."""

    resource_id: int
    heading: str
    anchor: str | None
    at: int | None  # where its heading's line starts in the resource's text (None: unknown)
    # (where its line starts, heading, anchor) of every heading it holds when short sections
    # were merged into it; empty when it holds one (or they were not asked for)
    places: tuple[tuple[int, str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Passage:
    """A resource's text, waiting for its vector."""

    resource_id: int
    text_hash: str  # the vector is stored only if the text is still this one
    title: str
    text: str


class VectorStore(ABC):
    """The vectors of one index: the database's model's (:attr:`model`); others are
    invisible."""

    @property
    @abstractmethod
    def model(self) -> str:
        """The stored name of the model whose vectors search reads: the one
        ``litecrawl index --model`` chose, else :data:`MODEL`."""

    @abstractmethod
    def set_model(self, name: str) -> None:
        """Make ``name`` the database's model (its vectors are then rebuilt by :meth:`put`)."""

    @abstractmethod
    def count(self) -> int:
        """Resources that have a vector (and at least one document)."""

    @abstractmethod
    def missing(self, after: int, limit: int) -> list[Passage]:
        """Up to ``limit`` resources with text but no vector, ids above ``after``, by id."""

    @abstractmethod
    def count_missing(self) -> int:
        """How many resources with text have no vector."""

    @abstractmethod
    def put(
        self,
        vectors: Iterable[tuple[Passage, bytes]],
        sections: Iterable[tuple[Passage, int, bytes]] = (),
    ) -> None:
        """Store each passage's vector and each (passage, section ord, vector) as the
        database's model's, replacing what was there, unless the resource's text changed
        meanwhile (a crawl running beside the backfill); one transaction."""

    @abstractmethod
    def of_resource(self, resource_id: int) -> bytes | None:
        """The vector of one resource (None: it has none)."""

    @abstractmethod
    def of_resources(self, resource_ids: Sequence[int]) -> dict[int, bytes]:
        """The vectors of the resources that have one (the export)."""

    @abstractmethod
    def section_vectors(
        self, resource_ids: Sequence[int]
    ) -> list[tuple[int, str, str | None, bytes]]:
        """(resource id, heading, anchor, vector) of every section of ``resource_ids``."""

    @abstractmethod
    def headings(
        self, resource_ids: Sequence[int], merged: bool = True, any_model: bool = False
    ) -> list[StoredSection]:
        """Every section of ``resource_ids``, in page order (:meth:`section_vectors` without
        the vectors); with ``merged``, the headings merged into each too; with ``any_model``,
        the sections whose vectors another model made too (a rebuild's)."""

    def best_sections(
        self, query: npt.NDArray[np.float32], resource_ids: Sequence[int]
    ) -> dict[int, BestSection]:
        """Each of ``resource_ids`` that has sections: its section closest to ``query``."""
        return best_sections(self.section_vectors(resource_ids), query)

    @abstractmethod
    def nearest(
        self, query: npt.NDArray[np.float32], limit: int, exclude: Sequence[int] = ()
    ) -> list[Neighbour]:
        """The ``limit`` resources closest to the unit vector ``query``, closest first (ties by
        id), leaving out ``exclude``."""


def scan_nearest(
    rows: Sequence[tuple[int, bytes]],
    query: npt.NDArray[np.float32],
    limit: int,
    exclude: Sequence[int] = (),
) -> list[Neighbour]:
    """The exact scan both stores use: every (resource id, float32 vector) of ``rows`` scored
    against the unit vector ``query``; the ``limit`` best, ties by id, ``exclude`` left out."""
    import numpy as np

    if not rows or limit <= 0:
        return []
    ids = np.fromiter((rid for rid, _ in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(bytes(v) for _, v in rows), dtype="<f4")
    matrix = matrix.reshape(len(rows), len(query)).astype(np.float32, copy=False)
    scores = matrix @ np.asarray(query, dtype=np.float32)
    if exclude:
        scores[np.isin(ids, np.asarray(exclude, dtype=np.int64))] = -np.inf
    wanted = min(limit + len(exclude), len(ids))
    top = np.argpartition(-scores, wanted - 1)[:wanted]
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), int(ids[i])))
    found = [Neighbour(int(ids[i]), float(scores[i])) for i in order if np.isfinite(scores[i])]
    return found[:limit]


def best_sections(
    rows: Sequence[tuple[int, str, str | None, bytes]], query: npt.NDArray[np.float32]
) -> dict[int, BestSection]:
    """The best section of each resource among ``rows`` (resource id, heading, anchor, float32
    vector) for the unit vector ``query``."""
    import numpy as np

    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(bytes(r[3]) for r in rows), dtype="<f4")
    scores = matrix.reshape(len(rows), len(query)) @ np.asarray(query, dtype=np.float32)
    best: dict[int, BestSection] = {}
    for (rid, heading, anchor, _), score in zip(rows, scores.tolist(), strict=True):
        if rid not in best or score > best[rid].similarity:
            best[rid] = BestSection(float(score), heading, anchor)
    return best


def section_rows(docs: Iterable[IndexDocument], model: str = MODEL) -> list[dict[str, object]]:
    """The rows both stores write for the section vectors that came with ``docs`` (keyed by
    the document's text hash: they go to the resource holding that text)."""
    return [
        {
            "text_hash": doc.text_hash,
            "ord": i,
            "heading": section.heading,
            "anchor": section.anchor,
            "heading_at": section.at,
            "places": section.places,
            "model": model,
            "vector": section.vector,
        }
        for doc in docs
        for i, section in enumerate(doc.sections)
    ]
