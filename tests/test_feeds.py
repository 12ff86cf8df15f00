"""RSS/Atom parsing, feed discovery in HTML, and the content-type / URL helpers."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.discover import (
    Feed,
    FeedEntry,
    find_feed_links,
    is_feed_content_type,
    is_sitemap_url,
    parse_feed,
)

DATA = Path(__file__).parent / "data"
SITE = "https://www.example.com"


def load(name: str, url: str = f"{SITE}/feed/") -> Feed | None:
    return parse_feed((DATA / "feeds" / name).read_bytes(), url)


def test_rss2_feed() -> None:
    feed = load("rss2.xml")
    assert feed is not None
    assert feed.version == "rss20"
    assert feed.title == "Example Blog"
    assert feed.link == f"{SITE}/"
    assert feed.url == f"{SITE}/feed/"
    assert feed.entries == (
        FeedEntry(
            f"{SITE}/2024/03/hello-world/",
            datetime(2024, 3, 5, 9, 15, 30, tzinfo=UTC),  # +0100 normalized to UTC
            "Hello world",
        ),
        FeedEntry(  # relative <link> resolved against the feed URL
            f"{SITE}/2024/02/second-post/", datetime(2024, 2, 10, 8, 0, tzinfo=UTC), "Relative link"
        ),
        FeedEntry(f"{SITE}/2024/01/guid-only/", None, "Permalink guid only"),
        FeedEntry(f"{SITE}/2023/12/bad-date/", None, "Bad date"),
    )  # the item without any link is skipped


def test_atom_feed() -> None:
    feed = load("atom.xml", "https://blog.example.org/atom.xml")
    assert feed is not None
    assert feed.version == "atom10"
    assert feed.title == "Example Atom"
    assert feed.link == "https://blog.example.org/"
    assert [(e.link, e.published) for e in feed.entries] == [
        ("https://blog.example.org/posts/one", datetime(2024, 3, 1, 7, 0, tzinfo=UTC)),
        # xml:base resolution; "updated" stands in for a missing "published"
        ("https://blog.example.org/posts/two", datetime(2024, 2, 20, 12, 0, tzinfo=UTC)),
        ("https://blog.example.org/posts/three", None),
    ]


def test_duplicate_and_non_http_links_are_dropped() -> None:
    body = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
    <item><link>https://a.example/1</link></item>
    <item><link>https://a.example/1</link></item>
    <item><link>mailto:x@a.example</link></item>
    <item><link>javascript:alert(1)</link></item>
    </channel></rss>"""
    feed = parse_feed(body, "https://a.example/feed")
    assert feed is not None
    assert [e.link for e in feed.entries] == ["https://a.example/1"]


def test_empty_feed_is_still_a_feed() -> None:
    feed = parse_feed(b'<rss version="2.0"><channel><title>x</title></channel></rss>', SITE)
    assert feed is not None
    assert feed.entries == ()


@pytest.mark.parametrize(
    "path",
    ["html/page_with_feeds.html", "sitemaps/sitemap_index.xml", "robots/google_like.txt"],
)
def test_non_feeds_are_none(path: str) -> None:
    assert parse_feed((DATA / path).read_bytes(), SITE) is None


@pytest.mark.parametrize("body", [b"", b"   ", b"\x00\xff\xfe", b"<foo><bar/></foo>", b"{}"])
def test_garbage_is_none(body: bytes) -> None:
    assert parse_feed(body, SITE) is None


def test_a_string_body_is_never_treated_as_a_url_or_path() -> None:
    # feedparser would fetch or open a *string* argument; parse_feed must treat bytes as data.
    assert parse_feed(b"https://www.example.com/feed.xml", SITE) is None
    assert parse_feed(str(DATA / "feeds" / "rss2.xml").encode(), SITE) is None


# --- discovery in HTML -----------------------------------------------------------------------


def test_find_feed_links_in_page() -> None:
    html = (DATA / "html" / "page_with_feeds.html").read_text()
    assert find_feed_links(html, f"{SITE}/blog/post-1") == (
        f"{SITE}/feed/",
        f"{SITE}/blog/comments/feed/",  # relative to <base href>
        f"{SITE}/atom.xml",  # upper-case markup, type parameters
    )  # duplicates, non-feed alternates and javascript: dropped


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("", ()),
        ("   ", ()),
        ("<p>no head</p>", ()),
        (
            '<?xml version="1.0" encoding="utf-8"?><html><head>'
            '<link rel="alternate" type="application/atom+xml" href="a.xml"></head></html>',
            (f"{SITE}/dir/a.xml",),
        ),
        (
            '<link rel="feed alternate" type="application/rss+xml" href="/r">',
            (f"{SITE}/r",),
        ),
        ('<link rel="alternate" type="application/rss+xml">', ()),
        ('<link rel="stylesheet" type="application/rss+xml" href="/r">', ()),
    ],
)
def test_find_feed_links_edge_cases(html: str, expected: tuple[str, ...]) -> None:
    assert find_feed_links(html, f"{SITE}/dir/page") == expected


# --- helpers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "is_feed"),
    [
        ("application/rss+xml", True),
        ("application/atom+xml; charset=utf-8", True),
        ("  Application/RSS+XML ", True),
        ("application/rdf+xml", True),
        ("application/x-rss+xml", True),
        ("text/xml", False),  # ambiguous: sniff with parse_feed/parse_sitemap
        ("application/xml", False),
        ("text/html", False),
        ("", False),
        (None, False),
    ],
)
def test_is_feed_content_type(content_type: str | None, is_feed: bool) -> None:
    assert is_feed_content_type(content_type) is is_feed


@pytest.mark.parametrize(
    ("url", "is_sitemap"),
    [
        ("https://a.example/sitemap.xml", True),
        ("https://a.example/sitemap_index.xml", True),
        ("https://a.example/post-sitemap2.xml.gz", True),
        ("https://a.example/wp-sitemap.xml", True),
        ("https://a.example/SITEMAP.XML", True),
        ("https://a.example/sitemap.txt", True),
        ("https://a.example/sitemap", True),
        ("https://a.example/sitemaps/news.xml", True),
        ("https://a.example/sitemap.xml?page=2", True),
        ("https://a.example/feed.xml", False),
        ("https://a.example/sitemap.html", False),
        ("https://a.example/blog/sitemap-tips.html", False),
        ("https://a.example/", False),
        ("https://a.example/sitemaps/about.html", False),
        ("http://[::1", False),
    ],
)
def test_is_sitemap_url(url: str, is_sitemap: bool) -> None:
    assert is_sitemap_url(url) is is_sitemap


# --- never raises ----------------------------------------------------------------------------

FEED_FRAGMENTS = [
    b'<?xml version="1.0"?>',
    b'<rss version="2.0">',
    b"<channel>",
    b"<item>",
    b"</item>",
    b"<link>",
    b"</link>",
    b'<feed xmlns="http://www.w3.org/2005/Atom">',
    b"<entry>",
    b'<link href="/x"/>',
    b"</entry>",
    b"<pubDate>Tue, 05 Mar 2024 10:15:30 +0100</pubDate>",
    b"<updated>2024-99-99</updated>",
    b"https://a.example/x",
    b"&",
    b"<![CDATA[",
    b"]]>",
    b"\xff",
]


@settings(deadline=None, max_examples=200)
@given(
    body=st.binary(max_size=2000)
    | st.lists(st.sampled_from(FEED_FRAGMENTS), max_size=40).map(b"".join)
)
def test_parse_feed_never_raises(body: bytes) -> None:
    feed = parse_feed(body, f"{SITE}/feed")
    if feed is not None:
        for entry in feed.entries:
            assert entry.link.startswith(("http://", "https://"))
            assert entry.published is None or entry.published.tzinfo is not None


@settings(deadline=None)
@given(html=st.text(max_size=500), base=st.sampled_from([SITE, "", "not a url", "http://[::1"]))
def test_find_feed_links_never_raises(html: str, base: str) -> None:
    for link in find_feed_links(html, base):
        assert link.startswith(("http://", "https://"))


def test_a_body_that_is_no_feed_is_none_and_logged_with_why(
    caplog: pytest.LogCaptureFixture,
) -> None:
    html = b"<!doctype html><html><body><p>Moved</p></body></html>"
    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        assert parse_feed(html, f"{SITE}/feed/") is None
        assert load("rss2.xml") is not None  # a feed: nothing said
    [said] = [r.getMessage() for r in caplog.records]
    start = "'<!doctype html><html><body><p>Moved</p"
    assert said.startswith(f"{SITE}/feed/: not a feed (no RSS or Atom; it starts {start}")
