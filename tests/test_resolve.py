"""The analysis worker resolves a page's links exactly as the event loop did (bench/README.md,
"Issue 29"): same links, same order, same feeds, same canonical, whatever the page and base."""

from __future__ import annotations

import asyncio
import hashlib
import pickle
from html import escape

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litecrawl.fetch.base import FetchResult
from litecrawl.index.analyze import AnalysisPool, AnalyzerSettings, PageAnalyzer
from litecrawl.index.document import IndexDocument
from litecrawl.index.work import analyze
from litecrawl.parse.links import PageLinks, extract_links
from litecrawl.parse.resolve import LinkRules, ResolvedLinks
from litecrawl.urls import UrlRules, host_of

_NO_VECTORS = AnalyzerSettings(embed=False)

_hrefs = st.builds(
    lambda prefix, segments, tail: prefix + "/".join(segments) + tail,
    st.sampled_from(["", "./", "../", "/", "//b.org/", "http://a.com/", "HTTPS://A.com:443/",
                     "mailto:", "javascript:", "?", "#", " ", "http://a.com:8080/", "x:"]),
    st.lists(st.sampled_from(["x", "..", ".", "", "p;q", "a b", "%41", "\u00fc", "docs", "y.html"]),
             max_size=4),
    st.sampled_from(["", "?q=1", "#f", "?q=1#f", "?utm_source=z"]),
)  # fmt: skip
_page_urls = st.sampled_from(
    ["http://a.com/d/e.html", "http://a.com/", "https://b.org:8443/x/y/z", "http://a.com/d/?q=1"]
)
_rules = st.builds(
    lambda normalize, include, exclude: UrlRules(normalize, include, exclude),
    st.sampled_from([None, [{"pattern": r"\?utm_[^&]*$", "replace": ""}]]),
    st.sampled_from([None, [r"^https?://a\.com/"], [r"docs", r"b\.org"]]),
    st.sampled_from([None, [r"/x(/|$)"], [r"\.html$"]]),
)


def _page(links: list[str], base: str | None, canonical: str | None, feeds: list[str]) -> bytes:
    head = [f'<base href="{escape(base)}">'] if base is not None else []
    if canonical is not None:
        head.append(f'<link rel="canonical" href="{escape(canonical)}">')
    head += [f'<link rel="alternate" type="application/rss+xml" href="{escape(f)}">' for f in feeds]
    tags = [("a", "href"), ("form", "action"), ("iframe", "src")]
    body = [
        f'<{tag} {attribute}="{escape(href)}">t</{tag}>'
        for (tag, attribute), href in ((tags[i % 3], href) for i, href in enumerate(links))
    ]
    return (
        f"<html><head><title>t</title>{''.join(head)}</head>"
        f"<body><p>Some words of text here.</p>{''.join(body)}</body></html>"
    ).encode()


def _event_loop_way(body: bytes, url: str, how: LinkRules) -> ResolvedLinks:
    """What the engine's event loop computed from the links the worker sent as written, before
    the worker resolved them (LinkScope.page_links in link_scope.py), with a fresh UrlRules, so
    no memo is shared with the worker's."""
    rules = UrlRules(*_patterns(how.rules))
    _, found, _ = analyze(
        url, body, {"content-type": "text/html"}, 200, 1, "link", _NO_VECTORS, 0.0
    )
    assert isinstance(found, PageLinks)
    raw = list(found.links)
    if how.canonical and found.canonical:
        raw.append(found.canonical)
    feeds = rules.many(found.feeds, found.base) if how.feeds and found.feeds else []
    canonical = rules.normalize(found.canonical, found.base) if found.canonical else None
    resolved = tuple(rules.many(raw, found.base))
    # the hosts the frontier rows and the scope take, as the event loop found them
    return ResolvedLinks(resolved, tuple(feeds), canonical, tuple(map(host_of, resolved)))


def _patterns(
    rules: UrlRules,
) -> tuple[list[dict[str, str]], list[str], list[str]]:
    _, (normalize, include, exclude) = rules.__reduce__()
    assert isinstance(normalize, tuple) and isinstance(include, tuple)
    assert isinstance(exclude, tuple)
    return [{"pattern": p, "replace": r} for p, r in normalize], list(include), list(exclude)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_hrefs, max_size=12),
    _page_urls,
    st.one_of(st.none(), _hrefs),
    st.one_of(st.none(), _hrefs),
    st.lists(_hrefs, max_size=2),
    _rules,
    st.booleans(),
    st.booleans(),
)
def test_the_worker_resolves_links_as_the_event_loop_did(
    links: list[str],
    url: str,
    base: str | None,
    canonical: str | None,
    feeds: list[str],
    rules: UrlRules,
    follow_canonical: bool,
    resolve_feeds: bool,
) -> None:
    body = _page(links, base, canonical, feeds)
    how = LinkRules(rules, follow_canonical, resolve_feeds)
    # as the worker gets them: through a pickle (UrlRules travels as its patterns)
    document, resolved, _ = analyze(
        url, body, {"content-type": "text/html"}, 200, 1, "link", _NO_VECTORS, 0.0, False,
        pickle.loads(pickle.dumps(how)),
    )  # fmt: skip
    expected = _event_loop_way(body, url, how)
    assert resolved == expected
    assert isinstance(document, IndexDocument)
    assert document.canonical == expected.canonical


def test_url_rules_travel_as_their_patterns_and_keep_one_memo_per_process() -> None:
    rules = UrlRules(
        [{"pattern": r"\?utm_[^&]*$", "replace": ""}], [r"^https?://a\.com/"], [r"/x(/|$)"]
    )
    one, two = (pickle.loads(pickle.dumps(rules)) for _ in range(2))
    assert one is two  # the worker's memo lasts across pages
    assert one is not rules
    for href in ["y?utm_source=z", "x/", "../z?q=1", "http://b.org/", "//a.com/p;q"]:
        assert one(href, "http://a.com/d/e.html") == rules(href, "http://a.com/d/e.html")


def test_without_rules_the_worker_sends_the_links_as_written() -> None:
    body = _page(["../a", "mailto:x"], None, "/c", [])
    _, links, _ = analyze(
        "http://a.com/d/e.html", body, {"content-type": "text/html"}, 200, 1, "link",
        _NO_VECTORS, 0.0,
    )  # fmt: skip
    assert links == extract_links(body, "http://a.com/d/e.html")


def test_a_worker_process_returns_resolved_links() -> None:
    asyncio.run(_through_a_worker())


async def _through_a_worker() -> None:
    url = "http://a.com/d/e.html"
    body = _page(["../a", "b.html#x", "mailto:x", "/x/", "http://b.org/y"], None, "e.html", [])
    how = LinkRules(UrlRules(exclude_patterns=[r"/x/"]), canonical=True)
    result = FetchResult(url, url, 200, {"content-type": "text/html"}, body)
    async with AnalysisPool(1) as pool:
        analysis = await PageAnalyzer(_NO_VECTORS, pool)(url, result, 1, "link", how)
    assert analysis.links is None  # the raw values stay in the worker
    assert analysis.resolved == ResolvedLinks(
        ("http://a.com/a", "http://a.com/d/b.html", "http://b.org/y", "http://a.com/d/e.html"),
        (),
        "http://a.com/d/e.html",
        ("a.com", "a.com", "b.org", "a.com"),
    )
    assert analysis.document is not None
    assert analysis.document.canonical == "http://a.com/d/e.html"
    assert analysis.content_hash == hashlib.sha256(body).hexdigest()  # not hashed again
