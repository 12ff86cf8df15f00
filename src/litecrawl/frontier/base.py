"""The frontier interface: a lease-based queue of pages in a database.

A *claim* stamps due rows with ``processing_time`` so no other process takes them; *finalize*
writes a processed page back (schedule, hash, outcome) together with the links it found; rows whose
claim is older than the processing timeout are *recovered*. SQLite and PostgreSQL implement the
same methods.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from litecrawl.schedule import Schedule

__all__ = ["ClaimedPage", "Frontier", "NewLink", "PageUpdate"]


@dataclass(frozen=True, slots=True)
class NewLink:
    """A URL to add to the frontier if it is not there yet (seed: "using default values")."""

    url: str
    host: str
    depth: int = 0
    source: str = "link"  # seed | sitemap | feed | link | redirect
    score: float = 0.5


@dataclass(frozen=True, slots=True)
class ClaimedPage:
    norm_url: str
    last_crawl_time: int | None
    next_crawl_time: int | None
    content_hash: str
    depth: int = 0
    source: str = "link"
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class PageUpdate:
    """Everything finalize writes for one processed page (seed section 9's UPSERT and more).

    ``content_hash=None`` keeps the stored hash (a failed fetch does not erase what we had).
    """

    norm_url: str
    host: str
    last_crawl_time: int
    next_crawl_time: int
    content_hash: str | None
    depth: int = 0
    status: int | None = None
    error: str | None = None
    content_type: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    fresh: bool = False
    links: Sequence[NewLink] = field(default_factory=tuple)


class Frontier(abc.ABC):
    """``async with frontier:`` opens and migrates the store; methods are safe across processes."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abc.abstractmethod
    async def open(self) -> None: ...

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    async def add(self, links: Iterable[NewLink]) -> int:
        """Insert pages that are not known yet; returns how many were new."""

    @abc.abstractmethod
    async def recover_stale(self, older_than: int, now: int, schedule: Schedule) -> int:
        """Reset claims stamped before ``older_than`` and reschedule those rows as stale.

        Done in one transaction so two processes recovering at once never double-handle a row.
        Returns the number of rows recovered.
        """

    @abc.abstractmethod
    async def claim(self, limit: int, now: int) -> list[ClaimedPage]:
        """Atomically claim up to ``limit`` due rows, never-crawled first, then oldest due."""

    @abc.abstractmethod
    async def claim_url(self, url: str, host: str, depth: int, now: int) -> ClaimedPage | None:
        """Claim one URL (inserting it if unknown); None if another worker holds it."""

    @abc.abstractmethod
    async def known(self, urls: Sequence[str]) -> set[str]:
        """The subset of ``urls`` already in the frontier."""

    @abc.abstractmethod
    async def finalize(self, updates: Sequence[PageUpdate]) -> None:
        """Write processed pages and their links in one transaction; clears their claims."""

    @abc.abstractmethod
    async def delete(self, urls: Sequence[str]) -> None:
        """Remove rows (invalid URLs)."""

    @abc.abstractmethod
    async def release(self, urls: Sequence[str]) -> None:
        """Give claims back unprocessed (graceful shutdown): due again at once."""
