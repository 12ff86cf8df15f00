"""Entries of a sitemap or feed as frontier links (the engine's view of discovery), and the
bounds that keep a sitemap tree finite.

A sitemap index lists sitemaps, not other indexes (sitemaps.org); litecrawl tolerates one level
more (``MAX_INDEX_NESTING``: an index in an index, never deeper). A sub-sitemap is one level
deeper than the index that lists it, so ``--max-depth`` counts through index levels; the pages a
sitemap lists are at the sitemap's own depth. At most ``per_host`` sub-sitemaps of one host are
queued in a run. Each cut is logged once, with its reason, and counted for the summary.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from litecrawl.discover.feeds import parse_feed
from litecrawl.discover.sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAP_ENTRIES, parse_sitemap
from litecrawl.store.queue import NewLink
from litecrawl.urls import host_of

__all__ = [
    "DEFAULT_SITEMAPS_PER_HOST",
    "MAX_INDEX_NESTING",
    "Listing",
    "SitemapBounds",
    "listing_links",
]

log = logging.getLogger("litecrawl")

MAX_INDEX_NESTING = 2  # depth of a sitemap index whose entries are no longer fetched
DEFAULT_SITEMAPS_PER_HOST = 1000  # sub-sitemaps of one host queued in one run


@dataclass(frozen=True, slots=True)
class Listing:
    """What a sitemap or feed lists; ``index``: the links are sub-sitemaps."""

    links: list[NewLink] = field(default_factory=list)
    index: bool = False
    too_many: bool = False  # a sitemap listing more than MAX_SITEMAP_ENTRIES URLs
    too_big: bool = False  # ... or over MAX_SITEMAP_BYTES uncompressed


def _epoch(when: datetime | None) -> int | None:
    return int(when.timestamp()) if when is not None else None


def listing_links(kind: str, body: bytes, url: str, content_type: str, depth: int = 0) -> Listing:
    """Sub-sitemaps (at ``depth + 1``), pages listed in a sitemap (at ``depth``), or a feed's
    entries (raw URLs, not yet normalized)."""
    if kind == "sitemap":
        doc = parse_sitemap(body, url)
        index = doc.kind == "index"
        links = [
            NewLink(
                e.loc,
                host_of(e.loc),
                depth + 1 if index else depth,
                "sitemap",
                0.8,
                "sitemap" if index else "page",
                _epoch(e.lastmod),
            )
            for e in doc.entries
        ]
        too_big = doc.truncated and not doc.too_many
        return Listing(links, index, doc.too_many, too_big)
    if kind == "feed":
        feed = parse_feed(body, url)
        if feed is None:
            return Listing()
        return Listing(
            [
                NewLink(e.link, host_of(e.link), 0, "feed", 0.9, "page", _epoch(e.published))
                for e in feed.entries
            ]
        )
    return Listing()


class SitemapBounds:
    """Cuts what a sitemap lists to the bounds above; ``cuts`` counts the sitemaps cut or not
    fetched by reason (``over_50000_urls``, ``over_50_mb``, ``nested_index``, ``max_depth``,
    ``host_cap``)."""

    def __init__(self, max_depth: int, per_host: int, cuts: Counter[str]) -> None:
        self.max_depth = max_depth  # 0 = unlimited
        self.per_host = per_host
        self.cuts = cuts
        self._queued: dict[str, set[str]] = {}  # host -> sub-sitemaps queued this run
        self._capped: set[str] = set()  # hosts whose cap was logged

    def admit(self, url: str, depth: int, listing: Listing) -> list[NewLink]:
        """The links of ``listing`` (of the sitemap ``url`` at ``depth``) to queue."""
        if listing.too_many:
            self._cut(
                "over_50000_urls",
                1,
                "sitemap %s lists more than %d URLs: only the first %d are crawled "
                "(the sitemaps.org limit)",
                url,
                MAX_SITEMAP_ENTRIES,
                MAX_SITEMAP_ENTRIES,
            )
        elif listing.too_big:
            self._cut(
                "over_50_mb",
                1,
                "sitemap %s is over %d bytes uncompressed: only the URLs in its first %d bytes "
                "are crawled (the sitemaps.org limit)",
                url,
                MAX_SITEMAP_BYTES,
                MAX_SITEMAP_BYTES,
            )
        if not listing.index or not listing.links:
            return listing.links
        if depth >= MAX_INDEX_NESTING:
            self._cut(
                "nested_index",
                len(listing.links),
                "sitemap index %s is nested %d levels deep: its %d sitemaps are not fetched "
                "(an index lists sitemaps, not other indexes; one level more is tolerated)",
                url,
                depth,
                len(listing.links),
            )
            return []
        if 0 < self.max_depth <= depth:
            self._cut(
                "max_depth",
                len(listing.links),
                "sitemap index %s is at depth %d (max depth %d): its %d sitemaps are not fetched",
                url,
                depth,
                self.max_depth,
                len(listing.links),
            )
            return []
        return [link for link in listing.links if self._room_for(link)]

    def _room_for(self, link: NewLink) -> bool:
        queued = self._queued.setdefault(link.host, set())
        if link.url in queued or len(queued) < self.per_host:
            queued.add(link.url)
            return True
        self.cuts["host_cap"] += 1
        if link.host not in self._capped:
            self._capped.add(link.host)
            log.warning(
                "%s: more than %d sitemaps; the others are not fetched (sitemap.max_per_host)",
                link.host,
                self.per_host,
            )
        return False

    def _cut(self, reason: str, sitemaps: int, message: str, *args: object) -> None:
        self.cuts[reason] += sitemaps
        log.warning(message, *args)
