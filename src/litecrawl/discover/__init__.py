"""Discovery sources besides links: sitemaps and RSS/Atom feeds. Pure parsing; no I/O."""

from litecrawl.discover.feeds import (
    FEED_CONTENT_TYPES,
    FEED_LINK_TYPES,
    Feed,
    FeedEntry,
    find_feed_links,
    is_feed_content_type,
    is_sitemap_url,
    parse_feed,
)
from litecrawl.discover.sitemaps import (
    MAX_SITEMAP_BYTES,
    MAX_SITEMAP_ENTRIES,
    SitemapDoc,
    SitemapEntry,
    SitemapKind,
    parse_lastmod,
    parse_sitemap,
    should_refetch,
)

__all__ = [
    "FEED_CONTENT_TYPES",
    "FEED_LINK_TYPES",
    "MAX_SITEMAP_BYTES",
    "MAX_SITEMAP_ENTRIES",
    "Feed",
    "FeedEntry",
    "SitemapDoc",
    "SitemapEntry",
    "SitemapKind",
    "find_feed_links",
    "is_feed_content_type",
    "is_sitemap_url",
    "parse_feed",
    "parse_lastmod",
    "parse_sitemap",
    "should_refetch",
]
