"""Reading the index: the interface search talks to, whichever database holds it.

:class:`IndexReader` is implemented by ``store/sqlite/search.py`` (FTS5) and
``store/postgres/search.py`` (``tsvector``); :func:`litecrawl.store.backends.open_index` picks
one by location. Both take the same query syntax: words (all must match), ``"exact phrase"``,
``prefix*``, ``OR``, ``NOT``, ``title:word``; a query a backend cannot parse is retried with
every word quoted, so user input never raises a syntax error.

Near-duplicate URLs share one resource, so each resource is returned once, under the best of its
URLs (:func:`best_url`) with the others in ``other_urls``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

from litecrawl.errors import FrontierError
from litecrawl.store.documents import DocumentFilter
from litecrawl.store.lifecycle import SyncStore
from litecrawl.store.vectors import VectorStore
from litecrawl.urls import without_passwords

__all__ = [
    "TITLE_WEIGHT",
    "IndexReader",
    "SearchHit",
    "best_url",
    "make_hit",
    "reason",
]

TITLE_WEIGHT = 10.0  # a match in the title counts this many times a match in the text


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One resource that matched: its canonical URL, title and a snippet of its text."""

    url: str  # the best URL of the resource (see best_url)
    title: str
    snippet: str  # matches wrapped in the open/close markers
    score: float  # relevance, higher is better (bm25 on SQLite, ts_rank_cd on PostgreSQL)
    other_urls: tuple[str, ...]  # the other URLs with the same (or nearly the same) text
    resource_id: int
    # the section of the page that matched best by meaning (its heading), and the URL that
    # leads to it (``url#anchor``; the page's URL when the heading has no anchor)
    section: str | None = None
    section_url: str | None = None


class IndexReader(SyncStore):
    """Synchronous; ``with reader:`` connects (and raises ConfigError when there is no
    database there)."""

    location: str  # for messages: never with a password
    # are any_word()'s scores bm25 (SQLite's FTS5)? Else hybrid scores the pages itself
    # (litecrawl.index.section_words)
    scores_by_bm25 = False
    # the driver's errors, raised as FrontierError when they leave a ``with`` block
    driver_errors: tuple[type[Exception], ...] = ()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        if isinstance(exc, self.driver_errors):
            raise FrontierError(f"{self.location}: {reason(exc)}") from exc

    @abstractmethod
    def upgrade(self) -> None:
        """Bring the schema up to date (before writing: ``index --embed``); reading never
        changes the database."""

    @property
    @abstractmethod
    def vectors(self) -> VectorStore:
        """The index's vectors (on the same connection)."""

    @abstractmethod
    def keyword(
        self,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        open_mark: str = "[",
        close_mark: str = "]",
        ellipsis: str = "…",
        snippet_tokens: int = 16,
    ) -> list[SearchHit]:
        """Ranked hits for the words of ``query`` (best first); each matched term of the
        snippet (about ``snippet_tokens`` words) wrapped in the marks."""

    @abstractmethod
    def any_word(
        self,
        weights: Mapping[str, float],
        *,
        limit: int = 10,
        open_mark: str = "[",
        close_mark: str = "]",
    ) -> list[SearchHit]:
        """The pages holding any of the words ``weights`` names (folded words), best first:
        a page scored by the words it holds, each counted (bm25's saturating count on
        SQLite, ts_rank_cd's on PostgreSQL) times its weight
        (:func:`litecrawl.index.section_words.rarity` of it; SQLite's bm25 computes the same
        weight itself, PostgreSQL is given it), title
        matches :data:`TITLE_WEIGHT` times text matches. Hybrid search's list for a
        question (:func:`litecrawl.index.semantic.keyword_list`). A hit's snippet may be left
        empty: :meth:`quote` makes those of the hits shown."""

    def quote(
        self, hits: Sequence[SearchHit], words: Sequence[str], marks: tuple[str, str]
    ) -> list[SearchHit]:
        """``hits`` of :meth:`any_word` for ``words``, each empty snippet made (the words
        wrapped in ``marks``)."""
        return list(hits)

    @abstractmethod
    def page_counts(self, words: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many pages are indexed, and how many of them hold each of ``words`` (folded,
        as :func:`litecrawl.index.words.words` gives them), counted no further than one past
        half of them: a word on more than half the pages is common (bm25 gives it no weight),
        and counting on would read most of a large index."""

    def common(self, words: Sequence[str]) -> set[str]:
        """Those of ``words`` on more than half the indexed pages (:meth:`page_counts`): a
        ranking by rarity can leave them out."""
        total, counts = self.page_counts(words)
        return {word for word, n in counts.items() if n > total // 2}

    @abstractmethod
    def resource_of_url(self, url: str) -> int | None:
        """The resource of the document at ``url`` (None: no such document)."""

    @abstractmethod
    def previews(self, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """Title and the first 200 characters of text of each resource (a hit found by meaning
        has no matched words to show)."""

    @abstractmethod
    def texts(self, ids: Sequence[int]) -> dict[int, str]:
        """The whole text of each resource (to tell which section a hit's snippet is from)."""

    @abstractmethod
    def hit(self, resource_id: int, score: float, snippet: str, title: str) -> SearchHit:
        """The hit for a resource: its URLs read, the best one chosen."""

    @abstractmethod
    def documents(
        self,
        columns: Sequence[str],
        flt: DocumentFilter,
        with_text: bool,
        text_as_json: bool = False,
    ) -> Iterator[tuple[object, ...]]:
        """The ``columns`` (names of the documents table) of every document ``flt`` keeps,
        and its resource's text last when ``with_text``, by id; with ``text_as_json``, that
        text as a JSON string, as ``json.dumps(text, ensure_ascii=False)`` writes it (``""``
        for a document without text). Streamed: memory holds one batch, whatever the index
        size."""

    @abstractmethod
    def fetched_urls(self, since: int | None, flt: DocumentFilter) -> Iterator[str]:
        """The URLs fetched with a 2xx answer (at or after the epoch ``since``) whose host,
        state and content type ``flt`` keeps, streamed."""


def best_url(urls: Sequence[str], canonicals: Sequence[str | None] = ()) -> str:
    """The address to show for URLs with the same text (``urls`` in crawl order, non-empty).

    The ``rel=canonical`` its pages name, when it is one of ``urls`` (the one most of them name,
    the earliest on a tie); else the shortest URL without a query string; else the shortest.
    Ties go to the earliest crawled.
    """
    known = set(urls)
    named = Counter(c for c in canonicals if c is not None and c in known)
    if named:
        most = max(named.values())
        return next(u for u in urls if named.get(u) == most)
    plain = [u for u in urls if not urlsplit(u).query]
    return min(plain or urls, key=len)


def make_hit(
    resource_id: int, score: float, snippet: str, title: str, rows: Sequence[tuple[str, str, str]]
) -> SearchHit:
    """A hit from its resource's documents ``rows`` (url, title, canonical; crawl order)."""
    urls = [url for url, _, _ in rows]
    if not urls:  # the resource lost its documents meanwhile
        return SearchHit("", title, snippet or "", float(score), (), resource_id)
    best = best_url(urls, [canonical for _, _, canonical in rows])
    titles = {url: t for url, t, _ in rows}
    return SearchHit(
        url=best,
        title=titles[best] or title,
        snippet=snippet or "",
        score=float(score),
        other_urls=tuple(url for url in urls if url != best),
        resource_id=resource_id,
    )


def reason(exc: BaseException) -> str:
    """A driver's error in one line (PostgreSQL adds the statement and a caret below), with
    any password in it masked."""
    text = without_passwords(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
