"""Sitemap parsing (index, urlset, gzip, text, broken), lastmod formats and the refetch rule."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.discover import (
    MAX_SITEMAP_BYTES,
    MAX_SITEMAP_ENTRIES,
    SitemapDoc,
    find_feed_links,
    parse_feed,
    parse_lastmod,
    parse_sitemap,
    should_refetch,
)
from litecrawl.discover.sitemaps import _AmpersandRepair
from litecrawl.politeness import RobotsPolicy

DATA = Path(__file__).parent / "data"
SITE = "https://www.example.com"


def load(name: str) -> SitemapDoc:
    return parse_sitemap((DATA / "sitemaps" / name).read_bytes(), f"{SITE}/{name}")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


def urlset(*locs: str) -> bytes:
    body = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"{body}</urlset>"
    ).encode()


# --- real-world-shaped files -----------------------------------------------------------------


def test_sitemap_index_with_varied_lastmod() -> None:
    doc = load("sitemap_index.xml")
    assert doc.kind == "index"
    assert not doc.truncated and not doc.malformed
    assert [(e.loc, e.lastmod) for e in doc.entries] == [
        (f"{SITE}/post-sitemap.xml.gz", utc(2024, 3, 5, 10, 15, 30)),
        (f"{SITE}/page-sitemap.xml.gz", utc(2024, 2, 29)),  # whitespace around loc stripped
        (f"{SITE}/news-sitemap.xml", utc(2024, 3, 5, 12, 0, 0, 123456)),
        (f"{SITE}/archive-sitemap.xml", None),
        (f"{SITE}/category-sitemap.xml", None),  # "not a date"
    ]


def test_gzipped_sub_sitemap_is_detected_by_magic_bytes() -> None:
    raw = (DATA / "sitemaps" / "post-sitemap.xml.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    by_name = load("post-sitemap.xml.gz")
    misnamed = parse_sitemap(raw, f"{SITE}/sitemap.xml")  # no .gz, no header: still gzip
    assert by_name.entries == misnamed.entries
    assert by_name.kind == "urlset"
    assert [(e.loc, e.lastmod) for e in by_name.entries] == [
        (f"{SITE}/2024/03/hello-world/", utc(2024, 3, 5, 9, 15, 30)),
        (f"{SITE}/2024/02/second-post/", utc(2024, 2, 10, 8, 0)),
        (f"{SITE}/2024/01/third-post/?utm=a&b=c", utc(2024, 1, 16, 4, 59, 59, 999000)),
        (f"{SITE}/2023/12/no-lastmod/", None),
        (f"{SITE}/2023/11/cdata-post/", utc(2023, 11, 1)),
        (f"{SITE}/2023/10/naive-time/", utc(2023, 10, 1, 12, 30)),
    ]  # image:loc is not a page; the duplicate hello-world entry is dropped


def test_relative_locs_resolve_and_non_http_is_dropped() -> None:
    doc = load("page-sitemap.xml.gz")
    assert [e.loc for e in doc.entries] == [
        f"{SITE}/",
        f"{SITE}/about/",
        f"{SITE}/contact/",
        f"{SITE}/relative/page/",
    ]
    assert doc.entries[2].lastmod == utc(2024, 2, 28, 12, 15, 0, 500000)  # +0530
    assert doc.entries[3].lastmod == utc(2024, 2, 29, 10, 0)  # RFC 2822


def test_broken_sitemap_yields_what_it_can() -> None:
    doc = load("broken.xml")
    assert doc.kind == "urlset"
    assert doc.malformed
    locs = {e.loc for e in doc.entries}
    assert {f"{SITE}/ok-1", f"{SITE}/ok-2", f"{SITE}/ok-3"} <= locs
    assert f"{SITE}/bad&entity" in locs  # a bare "&" is kept, not mangled


def test_no_namespace_and_news_sitemaps() -> None:
    legacy = load("no_namespace.xml")
    assert legacy.kind == "urlset"
    assert [e.loc for e in legacy.entries] == [
        "https://old.example.org/a",
        "https://old.example.org/b",
    ]
    news = load("news-sitemap.xml")
    assert [e.loc for e in news.entries] == [f"{SITE}/news/2024/03/05/launch"]


def test_plain_text_sitemap() -> None:
    doc = load("sitemap.txt")
    assert doc.kind == "urlset"
    assert [e.loc for e in doc.entries] == [
        f"{SITE}/",
        f"{SITE}/about/",
        f"{SITE}/products/widget?id=42",
        f"{SITE}/indented/",
    ]
    assert all(e.lastmod is None for e in doc.entries)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   \n\t ",
        b"<!DOCTYPE html><html><body><a href='/x'>x</a></body></html>",
        (DATA / "feeds" / "rss2.xml").read_bytes(),
        b"\x00\x01\x02 binary",
        b"just some words\nand more",
        b"<urlset",
    ],
)
def test_not_a_sitemap_is_unknown_and_empty(body: bytes) -> None:
    doc = parse_sitemap(body, f"{SITE}/sitemap.xml")
    assert doc.entries == ()
    assert doc.kind in ("unknown", "urlset")  # "<urlset" alone: a sitemap with nothing in it


def test_bare_ampersands_survive_chunk_boundaries() -> None:
    locs = [f"{SITE}/search?q={i}&page={i % 7}&x=&amp;y" for i in range(12_000)]
    locs += [f"{SITE}/cdata?a={i}&b=2" for i in range(3)]
    body = urlset(*locs[:-3]).replace(b"</urlset>", b"")
    body += b"".join(f"<url><loc><![CDATA[{loc}]]></loc></url>".encode() for loc in locs[-3:])
    body += b"</urlset>"
    assert len(body) > 3 * 256 * 1024
    doc = parse_sitemap(gzip.compress(body), f"{SITE}/s.xml.gz")
    expected = [loc.replace("&amp;", "&") for loc in locs]
    assert [e.loc for e in doc.entries] == expected
    assert doc.malformed  # it was repaired


def test_xml_entities_are_not_expanded() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">'
        b'<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<urlset><url><loc>https://x.example/&xxe;</loc></url>"
        b"<url><loc>https://x.example/&b;</loc></url></urlset>"
    )
    doc = parse_sitemap(body, "https://x.example/s.xml")
    assert all("root:" not in e.loc and "aaaa" not in e.loc for e in doc.entries)


def test_entry_limit() -> None:
    body = urlset(*(f"{SITE}/p/{i}" for i in range(MAX_SITEMAP_ENTRIES + 5)))
    doc = parse_sitemap(body, f"{SITE}/big.xml")
    assert len(doc.entries) == MAX_SITEMAP_ENTRIES
    assert doc.truncated
    exact = parse_sitemap(
        urlset(*(f"{SITE}/p/{i}" for i in range(MAX_SITEMAP_ENTRIES))), f"{SITE}/b.xml"
    )
    assert len(exact.entries) == MAX_SITEMAP_ENTRIES and not exact.truncated


def test_decompressed_size_limit() -> None:
    head = urlset(f"{SITE}/first").replace(b"</urlset>", b"")
    body = (
        head + b" " * (MAX_SITEMAP_BYTES + 1024) + b"<url><loc>https://late/</loc></url></urlset>"
    )
    doc = parse_sitemap(gzip.compress(body, compresslevel=1), f"{SITE}/bomb.xml.gz")
    assert doc.truncated
    assert [e.loc for e in doc.entries] == [f"{SITE}/first"]


def test_truncated_gzip_keeps_what_was_inflated() -> None:
    raw = gzip.compress(urlset(*(f"{SITE}/p/{i}" for i in range(2000))))
    doc = parse_sitemap(raw[: len(raw) // 2], f"{SITE}/cut.xml.gz")
    assert doc.malformed
    assert 0 < len(doc.entries) < 2000
    assert doc.entries[0].loc == f"{SITE}/p/0"


def test_concatenated_gzip_members() -> None:
    xml = urlset(f"{SITE}/a", f"{SITE}/b")
    raw = gzip.compress(xml[:40]) + gzip.compress(xml[40:])
    assert [e.loc for e in parse_sitemap(raw, f"{SITE}/s.gz").entries] == [f"{SITE}/a", f"{SITE}/b"]


# --- lastmod ---------------------------------------------------------------------------------

PLUS2 = timezone(timedelta(hours=2))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024", utc(2024, 1, 1)),
        ("2024-03", utc(2024, 3, 1)),
        ("2024-03-05", utc(2024, 3, 5)),
        ("2024-3-5", utc(2024, 3, 5)),
        ("20240305", utc(2024, 3, 5)),
        ("2024-03-05T10:15Z", utc(2024, 3, 5, 10, 15)),
        ("2024-03-05T10:15:30Z", utc(2024, 3, 5, 10, 15, 30)),
        ("2024-03-05t10:15:30z", utc(2024, 3, 5, 10, 15, 30)),
        ("2024-03-05T10:15:30+02:00", utc(2024, 3, 5, 8, 15, 30)),
        ("2024-03-05T10:15:30+0200", utc(2024, 3, 5, 8, 15, 30)),
        ("2024-03-05T10:15:30-05:00", utc(2024, 3, 5, 15, 15, 30)),
        ("2024-03-05T10:15:30.5Z", utc(2024, 3, 5, 10, 15, 30, 500000)),
        ("2024-03-05T10:15:30.123Z", utc(2024, 3, 5, 10, 15, 30, 123000)),
        ("2024-03-05T10:15:30.123456789+00:00", utc(2024, 3, 5, 10, 15, 30, 123456)),
        ("2024-03-05T10:15:30", utc(2024, 3, 5, 10, 15, 30)),  # no zone: UTC
        ("2024-03-05 10:15:30", utc(2024, 3, 5, 10, 15, 30)),
        ("  2024-03-05T10:15:30Z\n", utc(2024, 3, 5, 10, 15, 30)),
        ("Tue, 05 Mar 2024 10:15:30 GMT", utc(2024, 3, 5, 10, 15, 30)),
        ("Tue, 05 Mar 2024 10:15:30 +0200", utc(2024, 3, 5, 8, 15, 30)),
        ("", None),
        ("   ", None),
        (None, None),
        ("yesterday", None),
        ("2024-13-45", None),
        ("2024-02-30", None),
        ("0000-01-01", None),
        ("9999-12-31T23:59:59-14:00", None),  # beyond datetime's range once in UTC
        ("2024-03-05T25:00:00Z", None),
        ("x" * 1000, None),
    ],
)
def test_lastmod_formats(text: str | None, expected: datetime | None) -> None:
    parsed = parse_lastmod(text)
    assert parsed == expected
    if parsed is not None:
        assert parsed.utcoffset() == timedelta(0)


FETCHED = utc(2024, 3, 5, 12, 0).timestamp()


@pytest.mark.parametrize(
    ("lastmod", "fetched_at", "refetch"),
    [
        (None, None, True),  # never fetched
        (utc(2020, 1, 1, 10, 0), None, True),
        (None, FETCHED, True),  # unknown lastmod: cannot skip
        (utc(2024, 3, 5, 13, 0), FETCHED, True),  # changed after our fetch
        (utc(2024, 3, 5, 11, 0), FETCHED, False),  # unchanged since
        (utc(2024, 3, 5, 12, 0), FETCHED, False),  # equal: unchanged
        (datetime(2024, 3, 5, 13, 0), FETCHED, True),  # naive: read as UTC
        (datetime(2024, 3, 5, 14, 0, tzinfo=PLUS2), FETCHED, False),  # 12:00 UTC
        (utc(2024, 3, 5), FETCHED, True),  # date-only, same day: may have changed later on
        (utc(2024, 3, 4), FETCHED, False),  # date-only, day before
        (utc(2024, 3, 6), FETCHED, True),
    ],
)
def test_should_refetch(lastmod: datetime | None, fetched_at: float | None, refetch: bool) -> None:
    assert should_refetch(lastmod, fetched_at) is refetch


def test_lastmod_drives_sub_sitemap_skipping() -> None:
    """The engine's loop: skip sub-sitemaps unchanged since they were last parsed."""
    index = load("sitemap_index.xml")
    parsed_at = {
        f"{SITE}/post-sitemap.xml.gz": utc(2024, 3, 5, 10, 0).timestamp(),  # before lastmod
        f"{SITE}/page-sitemap.xml.gz": utc(2024, 3, 1).timestamp(),  # after lastmod's day
        f"{SITE}/news-sitemap.xml": None,  # never parsed
    }
    todo = [e.loc for e in index.entries if should_refetch(e.lastmod, parsed_at.get(e.loc))]
    assert todo == [
        f"{SITE}/post-sitemap.xml.gz",
        f"{SITE}/news-sitemap.xml",
        f"{SITE}/archive-sitemap.xml",
        f"{SITE}/category-sitemap.xml",
    ]


# --- never raises ----------------------------------------------------------------------------


def test_every_data_file_parses_without_raising() -> None:
    files = sorted(p for p in DATA.rglob("*") if p.is_file())
    assert len(files) >= 12
    for path in files:
        body = path.read_bytes()
        url = f"{SITE}/{path.name}"
        assert isinstance(parse_sitemap(body, url), SitemapDoc)
        parse_feed(body, url)
        find_feed_links(body.decode("utf-8", errors="replace"), url)
        for status in (200, 404, 503, None):
            RobotsPolicy.from_response(status, body, 0.0, "litecrawl/0.1").allowed(url)


FRAGMENTS = [
    b'<?xml version="1.0"?>',
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    b"<sitemapindex>",
    b"<url>",
    b"</url>",
    b"<sitemap>",
    b"</sitemap>",
    b"<loc>",
    b"</loc>",
    b"<lastmod>",
    b"</lastmod>",
    b"https://a.example/x?y=1&z=2",
    b"/relative",
    b"2024-01-01T00:00:00Z",
    b"<![CDATA[",
    b"]]>",
    b"&amp;",
    b"&",
    b"<!-- c -->",
    b"\n",
    b"\x1f\x8b",
    b"</urlset>",
]


@settings(deadline=None, max_examples=300)
@given(
    body=st.binary(max_size=3000) | st.lists(st.sampled_from(FRAGMENTS), max_size=60).map(b"".join),
    compress=st.booleans(),
)
def test_parse_sitemap_never_raises(body: bytes, compress: bool) -> None:
    doc = parse_sitemap(gzip.compress(body) if compress else body, f"{SITE}/s.xml")
    assert doc.kind in ("index", "urlset", "unknown")
    assert len(doc.entries) <= MAX_SITEMAP_ENTRIES
    for entry in doc.entries:
        assert entry.loc.startswith(("http://", "https://"))
        assert entry.lastmod is None or entry.lastmod.utcoffset() == timedelta(0)


@settings(deadline=None)
@given(st.text(max_size=80))
def test_parse_lastmod_never_raises(text: str) -> None:
    parsed = parse_lastmod(text)
    assert parsed is None or parsed.tzinfo is not None
    assert isinstance(should_refetch(parsed, 0.0), bool)


@settings(deadline=None, max_examples=200)
@given(
    parts=st.lists(
        st.sampled_from([*FRAGMENTS, b"&#38;", b"&lt;", b"&x", b"]]", b"<![CDATA"]), max_size=80
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
)
def test_ampersand_repair_does_not_depend_on_chunking(parts: list[bytes], cuts: list[int]) -> None:
    """Internal invariant of the streaming repair: the same bytes out however the input is cut
    (the public tests can only reach the parser's fixed 256 KiB chunking)."""
    body = b"".join(parts)
    whole = _AmpersandRepair()
    expected = whole.feed(body) + whole.feed(b"", final=True)
    pieces = sorted({c for c in cuts if c < len(body)} | {0, len(body)})
    split = _AmpersandRepair()
    got = b"".join(split.feed(body[a:b]) for a, b in pairwise(pieces))
    got += split.feed(b"", final=True)
    assert got == expected
    assert got.replace(b"&amp;", b"&") == body.replace(b"&amp;", b"&")
