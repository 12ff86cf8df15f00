"""``litecrawl index --embed``: vectors for the resources that have none (crawled with
``--no-embed``, or before embeddings existed), without refetching anything.

Resumable: each batch is committed on its own, and the next run starts again from whatever
still has no vector. A crawl may run beside it: a vector is stored only if its resource's text
is still the one embedded (see :meth:`~litecrawl.store.vectors.VectorStore.put`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from litecrawl.index.embed import embedder, page_text, to_blob
from litecrawl.store.backends import open_index

__all__ = ["embed_missing"]

_BATCH = 256


def embed_missing(
    db: str | Path,
    *,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Embed every resource of ``db`` (a SQLite file or a ``postgresql://`` URL) that has text
    and no vector; returns how many got one.

    ``on_start(total)`` is called once with the number to do, ``on_batch(n)`` after each
    committed batch of ``n``.
    """
    with open_index(str(db), writable=True) as index:
        index.upgrade()
        store = index.vectors
        if on_start is not None:
            on_start(store.count_missing())
        model = embedder()
        done = after = 0
        while passages := store.missing(after, _BATCH):
            after = passages[-1].resource_id
            vectors = []
            for passage in passages:
                vector = model.vector(page_text(passage.title, passage.text))
                if vector is not None:
                    vectors.append((passage, to_blob(vector)))
            store.put(vectors)
            done += len(vectors)
            if on_batch is not None:
                on_batch(len(passages))
        return done
