"""Where the resources' embeddings live: the interface the index and search use.

One vector per resource (near-duplicate URLs share a resource, so they share its vector),
tagged with the model that made it. :class:`VectorStore` is what search, ``similar``, the
export and ``litecrawl index --embed`` talk to; :mod:`litecrawl.store.sqlite.vectors` is the
SQLite implementation (BLOBs beside the resources, scanned exactly with numpy: see its doc).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where vectors are computed, not by the crawler's writer
    import numpy as np
    import numpy.typing as npt

__all__ = ["DIMENSIONS", "MODEL", "Neighbour", "Passage", "VectorStore", "scan_nearest"]

MODEL = "wordllama-l2-supercat-256"  # stored beside each vector: another model never mixes in
DIMENSIONS = 256


@dataclass(frozen=True, slots=True)
class Neighbour:
    resource_id: int
    similarity: float  # cosine, 1 = same direction


@dataclass(frozen=True, slots=True)
class Passage:
    """A resource's text, waiting for its vector."""

    resource_id: int
    text_hash: str  # the vector is stored only if the text is still this one
    title: str
    text: str


class VectorStore(ABC):
    """The vectors of one index (one model's vectors; others are invisible)."""

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
    def put(self, vectors: Iterable[tuple[Passage, bytes]]) -> None:
        """Store each passage's vector, replacing what was there, unless the resource's text
        changed meanwhile (a crawl running beside the backfill); one transaction."""

    @abstractmethod
    def of_resource(self, resource_id: int) -> bytes | None:
        """The vector of one resource (None: it has none)."""

    @abstractmethod
    def of_resources(self, resource_ids: Sequence[int]) -> dict[int, bytes]:
        """The vectors of the resources that have one (the export)."""

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
    matrix = matrix.reshape(len(rows), DIMENSIONS).astype(np.float32, copy=False)
    scores = matrix @ np.asarray(query, dtype=np.float32)
    if exclude:
        scores[np.isin(ids, np.asarray(exclude, dtype=np.int64))] = -np.inf
    wanted = min(limit + len(exclude), len(ids))
    top = np.argpartition(-scores, wanted - 1)[:wanted]
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), int(ids[i])))
    found = [Neighbour(int(ids[i]), float(scores[i])) for i in order if np.isfinite(scores[i])]
    return found[:limit]
