"""``litecrawl index --embed`` and ``--model NAME``: the database's model's vectors for the
resources that have none (crawled with ``--no-embed``, before embeddings existed, or since
``--model`` chose a model the crawl does not run), without refetching anything.

``--model NAME`` first makes NAME the database's model (search then embeds queries with it and
reads only its vectors), then rebuilds every page's vector and its sections' with it: a
section's text is the resource's text from its heading's place to the next one's, embedded as
the crawl embeds a section (the page's title and the section's first words).

Resumable: each batch (a resource's page and section vectors together) is committed on its own,
and the next run starts again from whatever still has no vector of the database's model: kill
it at any moment and nothing stored is lost. A crawl may run beside it: a vector is stored only
if its resource's text is still the one embedded (see
:meth:`~litecrawl.store.vectors.VectorStore.put`), and the crawl leaves the database's model's
vectors alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from litecrawl.index.embed import page_text, section_words, to_blob
from litecrawl.index.models import load, stored_name, vectors_of
from litecrawl.store.backends import open_index
from litecrawl.store.vectors import MODEL, Passage, StoredSection

__all__ = ["embed_missing"]

# resources a batch: a commit every few seconds with either model (minilm: ~0.1 s a page
# vector and ~0.03 s a section, 15 sections a page on Python's documentation)
_BATCH = {MODEL: 256}
_SLOW_BATCH = 8


def embed_missing(
    db: str | Path,
    *,
    model: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Embed every resource of ``db`` (a SQLite file or a ``postgresql://`` URL) that has text
    and no vector of the database's model, with its sections; returns how many got one.
    ``model`` (a name of :data:`~litecrawl.index.models.NAMES`) first makes that the
    database's model; :class:`~litecrawl.errors.ConfigError` if it is unknown or cannot load.

    ``on_start(total)`` is called once with the number to do, ``on_batch(n)`` after each
    committed batch of ``n``.
    """
    wanted = None if model is None else stored_name(model)
    with open_index(str(db), writable=True) as index:
        index.upgrade()
        store = index.vectors
        embedder = load(wanted or store.model)  # before changing anything: the extra is there
        if wanted is not None and wanted != store.model:
            store.set_model(wanted)
        if on_start is not None:
            on_start(store.count_missing())
        batch = _BATCH.get(store.model, _SLOW_BATCH)
        done = after = 0
        while passages := store.missing(after, batch):
            after = passages[-1].resource_id
            pages = vectors_of(embedder, [page_text(p.title, p.text) for p in passages])
            vectors = [
                (p, to_blob(v)) for p, v in zip(passages, pages, strict=True) if v is not None
            ]
            embedded = [p for p, _ in vectors]
            ids = [p.resource_id for p in embedded]
            parts = _section_texts(embedded, store.headings(ids, merged=False, any_model=True))
            found = vectors_of(embedder, [text for _, _, text in parts])
            sections = [
                (p, o, to_blob(v))
                for (p, o, _), v in zip(parts, found, strict=True)
                if v is not None
            ]
            store.put(vectors, sections)
            done += len(vectors)
            if on_batch is not None:
                on_batch(len(passages))
        return done


def _section_texts(
    passages: Sequence[Passage], stored: Sequence[StoredSection]
) -> list[tuple[Passage, int, str]]:
    """(passage, section ord, what is embedded) of each stored section of ``passages``: the
    section's text runs from its heading's place to the next section's (a section without a
    place: its heading alone)."""
    by_id = {p.resource_id: p for p in passages}
    found = []
    ords: dict[int, int] = {}  # the stored ords are each resource's sections counted from 0
    for i, section in enumerate(stored):
        passage = by_id[section.resource_id]
        ord_ = ords[section.resource_id] = ords.get(section.resource_id, -1) + 1
        following = stored[i + 1] if i + 1 < len(stored) else None
        end = None
        if following is not None and following.resource_id == section.resource_id:
            end = following.at
        text = section.heading if section.at is None else passage.text[section.at : end]
        found.append((passage, ord_, " ".join(section_words(passage.title, text))))
    return found
