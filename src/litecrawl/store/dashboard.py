"""What the dashboard reads from a crawl database, behind one small interface.

The dashboard never writes through this interface (writes go through the frontier), and an
implementation must read without blocking a crawl that writes the same database.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from litecrawl.sites.model import Annotation, Site, SiteCrawl, SiteFeed
from litecrawl.store.runs import FrontierSummary

__all__ = [
    "ActivityBucket",
    "DashboardQueries",
    "LinkList",
    "LinkRow",
    "PageDetail",
    "PageFilter",
    "PageList",
    "PageRow",
    "SiteActivity",
]


@dataclass(frozen=True, slots=True)
class SiteActivity:
    crawls: list[SiteCrawl]  # newest first
    links_to: list[tuple[str, int]]  # (base URL, links), most first
    links_from: list[tuple[str, int]]
    feeds: list[SiteFeed]


@dataclass(frozen=True, slots=True)
class ActivityBucket:
    """Pages whose last fetch fell in [start, start + width): by error category (None = ok)."""

    start: int
    by_error: dict[str | None, int]

    @property
    def fetched(self) -> int:
        return sum(self.by_error.values())

    @property
    def errors(self) -> int:
        return sum(n for category, n in self.by_error.items() if category is not None)


@dataclass(frozen=True, slots=True)
class PageFilter:
    host: str = ""
    state: str = ""  # a key of litecrawl.store.states.STATES, or "" for any
    error: str = ""  # an error category, "any" for every error, "" for no filter
    content_type: str = ""  # prefix, e.g. "text/html"
    text: str = ""  # substring of the URL or the title


@dataclass(frozen=True, slots=True)
class PageRow:
    url: str
    host: str
    state: str
    status: int | None
    error: str | None
    content_type: str | None
    last_crawl_time: int | None
    next_crawl_time: int | None
    depth: int
    title: str | None

    @classmethod
    def from_row(cls, r: Sequence[Any], state_names: Mapping[int, str]) -> PageRow:
        """From a row of the stores' page columns (url, host, state, ..., title)."""
        return cls(
            url=r[0],
            host=r[1],
            state=state_names.get(r[2], str(r[2])),
            status=r[3],
            error=r[4],
            content_type=r[5],
            last_crawl_time=r[6],
            next_crawl_time=r[7],
            depth=r[8],
            title=r[9],
        )


@dataclass(frozen=True, slots=True)
class PageList:
    total: int
    rows: list[PageRow]


@dataclass(frozen=True, slots=True)
class LinkRow:
    url: str
    state: str | None  # None: the other end is not in the frontier (out of scope, not added)
    status: int | None


@dataclass(frozen=True, slots=True)
class LinkList:
    total: int
    rows: list[LinkRow]


@dataclass(frozen=True, slots=True)
class PageDetail:
    record: dict[str, Any]  # the frontier row, every column
    document: dict[str, Any] | None  # the index row, when the page was indexed
    language: str | None  # of the stored resource
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (url, title) same resource


class DashboardQueries(ABC):
    """Reads for the dashboard; every method is synchronous (the app runs them in threads)."""

    @abstractmethod
    def summary(self, now: int, hosts: int | None) -> FrontierSummary:
        """What ``litecrawl stats`` reads (``hosts`` top hosts, None for all)."""

    @abstractmethod
    def robots_records(self, origins: list[str]) -> dict[str, tuple[str, float]]:
        """Cached robots.txt records: origin -> (record JSON, expires_at)."""

    @abstractmethod
    def activity(self, since: int, width: int) -> list[ActivityBucket]:
        """Fetches since ``since`` in buckets of ``width`` seconds (buckets with none left out)."""

    @abstractmethod
    def pages(self, where: PageFilter, limit: int, offset: int) -> PageList:
        """Frontier pages matching ``where``, most recently fetched first."""

    @abstractmethod
    def facets(self) -> dict[str, list[str]]:
        """Values to filter pages by: hosts, error categories, content types (main types)."""

    @abstractmethod
    def page(self, url: str) -> PageDetail | None:
        """One page's frontier record and document, or None when the URL is unknown."""

    @abstractmethod
    def links(self, url: str, inbound: bool, limit: int, offset: int) -> LinkList | None:
        """Links into (``inbound``) or out of ``url``, in URL order; None when the database
        keeps no link graph (made before it existed and not crawled since)."""

    @abstractmethod
    def sites(self, status: str | None) -> list[Site] | None:
        """The site queue (docs/sites.md), by base URL; None when the database has none."""

    @abstractmethod
    def site(self, base_url: str) -> tuple[Site | None, list[Annotation]] | None:
        """One site and its annotations; None when the database has no site queue."""

    @abstractmethod
    def site_activity(self, site_id: int, limit: int) -> SiteActivity:
        """A site's last crawls, the sites it links to and those linking to it, its feeds."""
