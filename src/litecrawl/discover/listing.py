"""Entries of a sitemap or feed as frontier links (the engine's view of discovery)."""

from __future__ import annotations

from datetime import datetime

from litecrawl.discover.feeds import parse_feed
from litecrawl.discover.sitemaps import parse_sitemap
from litecrawl.frontier.base import NewLink
from litecrawl.urls import host_of

__all__ = ["listing_links"]


def _epoch(when: datetime | None) -> int | None:
    return int(when.timestamp()) if when is not None else None


def listing_links(kind: str, body: bytes, url: str, content_type: str) -> list[NewLink]:
    """Sub-sitemaps, pages listed in a sitemap, or a feed's entries (raw, not yet normalized)."""
    if kind == "sitemap":
        doc = parse_sitemap(body, url)
        if doc.kind == "index":
            return [
                NewLink(e.loc, host_of(e.loc), 0, "sitemap", 0.8, "sitemap", _epoch(e.lastmod))
                for e in doc.entries
            ]
        return [
            NewLink(e.loc, host_of(e.loc), 0, "sitemap", 0.8, "page", _epoch(e.lastmod))
            for e in doc.entries
        ]
    if kind == "feed":
        feed = parse_feed(body, url)
        if feed is None:
            return []
        return [
            NewLink(e.link, host_of(e.link), 0, "feed", 0.9, "page", _epoch(e.published))
            for e in feed.entries
        ]
    return []
