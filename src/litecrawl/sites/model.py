"""Sites (docs/sites.md): what the site queue holds and what a relevance filter is given."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, field
from typing import Any

__all__ = [
    "ANNOTATION_KINDS",
    "LISTINGS",
    "STATUSES",
    "Annotation",
    "Site",
    "SiteCrawl",
    "SiteFeed",
    "SiteSchedule",
    "StartPage",
]

STATUSES = ("queued", "relevant", "irrelevant", "unreachable")
# what `sites list --status` also takes: sites by their standing annotation
LISTINGS = ("whitelisted", "blacklisted")
ANNOTATION_KINDS = ("whitelist", "blacklist", "note")


@dataclass(frozen=True, slots=True)
class StartPage:
    """What a site's start page says, as a filter plugin sees it: ``filter(page) -> bool``."""

    base_url: str  # the site's base URL after redirects
    status: int
    content_type: str
    title: str
    text: str
    language: str | None
    links: tuple[str, ...]  # absolute http(s) links of the page
    feeds: tuple[str, ...]  # feeds it advertises (<link rel=alternate>)
    sitemaps: tuple[str, ...]  # sitemaps its robots.txt lists
    headers: Mapping[str, str] = field(default_factory=dict)  # response headers, lower-case


@dataclass(frozen=True, slots=True)
class Annotation:
    id: int
    base_url: str
    site_id: int | None
    kind: str  # one of ANNOTATION_KINDS
    text: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class Site:
    id: int
    base_url: str
    host: str
    status: str  # one of STATUSES
    reason: str | None  # why relevant or irrelevant, in words
    source: str  # seed (sites add) | link (found on another site)
    added_at: float
    checked_at: float | None
    final_url: str | None
    title: str | None
    language: str | None
    feeds: tuple[str, ...]
    sitemaps: tuple[str, ...]
    next_crawl: float | None = None  # when its next full crawl is due (None: never crawled)
    next_feed_crawl: float | None = None  # when its next feed crawl is due

    @classmethod
    def from_row(cls, r: Sequence[Any]) -> Site:
        """From the columns named as the fields, in their order (both stores select them so);
        ``feeds`` and ``sitemaps`` are JSON arrays."""
        return cls(
            id=r[0],
            base_url=r[1],
            host=r[2],
            status=r[3],
            reason=r[4],
            source=r[5],
            added_at=r[6],
            checked_at=r[7],
            final_url=r[8],
            title=r[9],
            language=r[10],
            feeds=tuple(json.loads(r[11])),
            sitemaps=tuple(json.loads(r[12])),
            next_crawl=r[13],
            next_feed_crawl=r[14],
        )


@dataclass(frozen=True, slots=True)
class SiteCrawl:
    """One crawl of a site, as recorded at checkin."""

    site_id: int
    kind: str  # full | feed
    worker: str
    started_at: float
    finished_at: float
    fetched: int
    new_pages: int
    errors: int
    interrupted: bool

    @classmethod
    def from_row(cls, r: Sequence[Any]) -> SiteCrawl:
        """From the columns named as the fields, in their order (both stores)."""
        return cls(
            site_id=r[0],
            kind=r[1],
            worker=r[2],
            started_at=r[3],
            finished_at=r[4],
            fetched=r[5],
            new_pages=r[6],
            errors=r[7],
            interrupted=bool(r[8]),
        )

    def row(self) -> tuple[Any, ...]:
        """The fields in their order, as both stores write them (``interrupted`` 0 or 1)."""
        return (*astuple(self)[:8], int(self.interrupted))


@dataclass(frozen=True, slots=True)
class SiteSchedule:
    """When a site is crawled next, written at checkin."""

    next_crawl: float
    next_feed_crawl: float


@dataclass(frozen=True, slots=True)
class SiteFeed:
    """A feed of a site; its validators are those of its frontier row (one conditional GET
    for every URL), None until it is first read."""

    url: str
    first_seen: float
    last_read: int | None = None
    status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    entries: int = 0  # entries listed at its last read (its links in the link graph)
