"""What the index stores for one fetched URL (built off the event loop, written by finalize)."""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import TypeVar

from litecrawl.parse.links import PageLinks
from litecrawl.parse.resolve import ResolvedLinks

__all__ = ["IndexDocument", "PageAnalysis", "SectionVector"]

_T = TypeVar("_T")


def _pickled_as_call(cls: type[_T]) -> type[_T]:
    """``cls`` (a dataclass) pickled as a call of itself with its fields in order. A frozen
    dataclass with slots is otherwise pickled through Python-level ``__getstate__`` and
    ``__setstate__`` (``fields()`` and a ``setattr`` a field): every page's document crosses
    the worker pipe, and unpickling a kit page's result took the event loop 262k
    instructions that way, 187k this way (callgrind; bench/README.md, issue 29, session 9)."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    assert len(fields) > 1 and all(f.init for f in fields)  # a tuple of all, in order
    values = operator.attrgetter(*(f.name for f in fields))

    def reduce(self: _T) -> tuple[type[_T], tuple[object, ...]]:
        return cls, values(self)

    setattr(cls, "__reduce__", reduce)  # noqa: B010 (mypy: no assignment to a method)
    return cls


@_pickled_as_call
@dataclass(frozen=True, slots=True)
class SectionVector:
    """The vector of one section of a page (:mod:`litecrawl.extract.sections`)."""

    heading: str  # "" for the text before the first heading
    anchor: str | None  # the fragment that leads to it on the page
    vector: bytes
    # where its heading's line starts in the page's text (0 for the text before the first)
    at: int | None = None
    # every heading it holds when short sections were merged into it, as JSON
    # ``[[at, heading, anchor], ...]`` (encoded here, in the analysis worker: not on the
    # crawl's event loop); None when it holds one
    places: str | None = None


@_pickled_as_call
@dataclass(frozen=True, slots=True)
class IndexDocument:
    url: str
    title: str
    keywords: tuple[str, ...]  # top 10 non-stop-words
    text_preview: str  # first 500 characters
    text: str  # full extracted text, for the full-text index
    text_hash: str  # sha256 of ``text``: exact duplicates in O(1)
    simhash: int  # 64-bit simhash of word shingles, signed to fit SQLite INTEGER
    language: str | None = None
    author: str | None = None
    published: str | None = None
    content_type: str | None = None
    status: int | None = None
    depth: int = 0
    source: str = "link"
    extraction_mode: str = "fullpage"
    markdown_path: str | None = None
    canonical: str | None = None  # the page's rel=canonical, normalized (search prefers it)
    embedding: bytes | None = None  # the text's vector (index/embed.py), None: not embedded
    sections: tuple[SectionVector, ...] = ()  # a vector per section, when embedded
    # PostgreSQL's full-text vector of title and text in its binary format (index/tsvector.py),
    # built in the analysis worker when the database is PostgreSQL; None: the database builds it
    tsvector: bytes | None = None


@dataclass(frozen=True, slots=True)
class PageAnalysis:
    """What the analyzer returns for an HTML page: the index document and, when it parsed the
    page anyway, its links (so the event loop does not parse the page a second time): resolved
    by the URL rules when the engine sent them (then ``document.canonical`` is set too), else as
    written."""

    document: IndexDocument | None
    links: PageLinks | None = None
    resolved: ResolvedLinks | None = None
    content_hash: str | None = None  # the body's SHA-256, hashed by the worker
