"""Writing the index: the documents of fetched pages and the resources that hold their text.

A document is one row per URL (title, keywords, preview, language, canonical...); its text goes
to a *resource*, shared by the URLs whose text is the same or nearly so, as
:class:`litecrawl.index.placement.Placement` decides (the same decisions on both backends); the
text's vectors are kept beside its resource (:mod:`litecrawl.store.vectors`), and a resource
no document references any more is deleted. The full-text index follows the resources: FTS5's
triggers on SQLite; on PostgreSQL the ``tsvector`` the analysis worker built, or the
database's trigger when it built none.

A finalize (:meth:`litecrawl.store.queue.PageQueue.finalize`) writes its pages' documents, and
removes those of pages gone (404/410), this way inside its own transaction; the methods below
do the same in a transaction of their own. SQLite (``store/sqlite/index.py``) and PostgreSQL
(``store/postgres/index.py``) implement it; what a reader sees of it is
:class:`litecrawl.store.index.IndexReader`.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from litecrawl.index.document import IndexDocument

__all__ = ["IndexWrites"]


class IndexWrites(abc.ABC):
    """The index's writes (both backends' frontiers)."""

    @abc.abstractmethod
    async def write_documents(self, docs: Sequence[IndexDocument]) -> None:
        """Insert or update the documents of ``docs`` (in order: a URL given twice ends as its
        last version), each on its resource, with its vectors."""

    @abc.abstractmethod
    async def remove_documents(self, urls: Sequence[str]) -> None:
        """Delete the documents of ``urls`` (unknown URLs are ignored) and the resources they
        leave without a document; the pages' rows in the frontier stay."""
