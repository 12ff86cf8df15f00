"""RSS/Atom feeds (docs/sites.md's feed crawls): parse with feedparser, find them in HTML with lxml.

Pure parsing; the engine fetches. Neither function raises on bad input.
"""

from __future__ import annotations

import calendar
import io
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

__all__ = [
    "FEED_CONTENT_TYPES",
    "FEED_LINK_TYPES",
    "Feed",
    "FeedEntry",
    "find_feed_links",
    "is_feed_content_type",
    "is_sitemap_url",
    "parse_feed",
]

log = logging.getLogger("litecrawl")

# What <link rel="alternate" type=...> must say for find_feed_links to report it.
FEED_LINK_TYPES = frozenset({"application/rss+xml", "application/atom+xml"})
# Response Content-Types that are unambiguously feeds (text/xml and application/xml are not:
# sitemaps use them too; sniff those with parse_feed / parse_sitemap).
FEED_CONTENT_TYPES = frozenset(
    {
        "application/rss+xml",
        "application/atom+xml",
        "application/rdf+xml",
        "application/x-rss+xml",
        "application/x-atom+xml",
        "application/rss",
        "text/rss+xml",
    }
)
MAX_FEED_ENTRIES = 10_000


@dataclass(frozen=True, slots=True)
class FeedEntry:
    link: str  # absolute http(s) URL
    published: datetime | None = None  # aware UTC; falls back to the entry's "updated"
    title: str | None = None


@dataclass(frozen=True, slots=True)
class Feed:
    url: str  # where the feed was fetched from
    title: str | None
    link: str | None  # the site the feed belongs to, absolute, if given
    version: str  # feedparser's name for the format: "rss20", "atom10", "rss10", ...
    entries: tuple[FeedEntry, ...]


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_feed_content_type(content_type: str | None) -> bool:
    """``application/rss+xml; charset=utf-8`` -> True; ``text/xml`` -> False (ambiguous)."""
    return _media_type(content_type) in FEED_CONTENT_TYPES


def _absolute(link: object, base: str) -> str | None:
    if not isinstance(link, str) or not link.strip():
        return None
    try:
        full = urljoin(base, link.strip())
        scheme = urlsplit(full).scheme.lower()
    except ValueError:
        return None
    return full if scheme in ("http", "https") else None


def _utc(parsed: object) -> datetime | None:
    """feedparser's ``*_parsed`` (a UTC ``time.struct_time``) as an aware datetime."""
    if not isinstance(parsed, time.struct_time):
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _text(value: object) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _get(mapping: object, key: str) -> Any:
    """``dict.get`` that bypasses FeedParserDict's key aliasing (and its DeprecationWarning)."""
    return dict.get(mapping, key) if isinstance(mapping, dict) else None


def _entry(raw: object, base: str) -> FeedEntry | None:
    link = _absolute(_get(raw, "link"), base)
    if link is None:  # Atom entries may only carry rel="alternate" in links
        for candidate in _get(raw, "links") or ():
            if (_get(candidate, "rel") or "alternate") == "alternate":
                link = _absolute(_get(candidate, "href"), base)
                if link:
                    break
    if link is None:
        return None
    published = _utc(_get(raw, "published_parsed")) or _utc(_get(raw, "updated_parsed"))
    return FeedEntry(link=link, published=published, title=_text(_get(raw, "title")))


def parse_feed(body: bytes, url: str) -> Feed | None:
    """Parse RSS 0.9x/1.0/2.0 or Atom; None when the body is not a feed (logged, with why).
    Never raises.

    Relative links resolve against ``url`` (and any ``xml:base``); entries without a usable
    http(s) link are skipped; duplicates dropped; at most ``MAX_FEED_ENTRIES`` kept.
    """
    import feedparser  # loaded by the first feed, not by every crawl (docs/architecture.md)

    try:
        # A stream, never a str: feedparser would treat a string as a URL or a file name.
        parsed = feedparser.parse(
            io.BytesIO(body),
            response_headers={"content-location": url},
            sanitize_html=False,
        )
        version = _get(parsed, "version") or ""
        raw_entries = _get(parsed, "entries") or []
        if not version and not raw_entries:
            start = body[:40].decode("utf-8", "replace").strip()
            why = _get(parsed, "bozo_exception")  # the XML parser's words, if it gave up
            said = f"; the parser: {why}" if why else ""
            log.warning("%s: not a feed (no RSS or Atom; it starts %r%s)", url, start, said)
            return None
        info = _get(parsed, "feed") or {}
        entries: list[FeedEntry] = []
        seen: set[str] = set()
        for raw in raw_entries:
            entry = _entry(raw, url)
            if entry is None or entry.link in seen:
                continue
            seen.add(entry.link)
            entries.append(entry)
            if len(entries) >= MAX_FEED_ENTRIES:
                break
        return Feed(
            url=url,
            title=_text(_get(info, "title")),
            link=_absolute(_get(info, "link"), url),
            version=str(version),
            entries=tuple(entries),
        )
    except Exception as exc:  # feedparser is forgiving, but a parser must not take the crawl down
        log.warning("%s: the feed cannot be parsed (%s: %s)", url, type(exc).__name__, exc)
        return None


def is_sitemap_url(url: str) -> bool:
    """Does the URL look like a sitemap? Heuristic on the path: ``/sitemap.xml``,
    ``/post-sitemap2.xml.gz``, ``/sitemap_index.xml``, ``/sitemap.txt``, ``/sitemap``,
    ``/wp-sitemap.xml``, ``/sitemaps/news.xml``."""
    try:
        path = urlsplit(url).path.lower()
    except ValueError:
        return False
    segments = [s for s in path.split("/") if s]
    if not segments:
        return False
    name = segments[-1].removesuffix(".gz")
    if "sitemap" in name:
        return "." not in name or name.endswith((".xml", ".txt"))
    return any("sitemap" in parent for parent in segments[:-1]) and name.endswith(".xml")


def find_feed_links(html: str, base_url: str) -> tuple[str, ...]:
    """Absolute URLs of ``<link rel="alternate" type="application/rss+xml|atom+xml">`` feeds,
    in document order, deduplicated; ``<base href>`` is honoured."""
    if not html.strip():
        return ()
    try:
        parser = etree.HTMLParser(encoding="utf-8", no_network=True, recover=True)
        root = etree.fromstring(html.encode("utf-8", errors="replace"), parser)
    except (etree.LxmlError, ValueError):
        return ()
    if root is None:
        return ()
    base = base_url
    for element in root.iter("base"):
        href = _absolute(element.get("href"), base_url)
        if href:
            base = href
        break
    found: dict[str, None] = {}
    for element in root.iter("link"):
        rel = (element.get("rel") or "").lower().split()
        if "alternate" not in rel or _media_type(element.get("type")) not in FEED_LINK_TYPES:
            continue
        href = _absolute(element.get("href"), base)
        if href:
            found[href] = None
    return tuple(found)
