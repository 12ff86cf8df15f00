"""URL normalization, then validation (docs/python-api.md, step 7)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litecrawl import ConfigError, normalize_and_validate_url
from litecrawl.hrefs import strip
from litecrawl.urls import MAX_URL_LENGTH, UrlRules, host_of


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        ("HTTP://Example.COM/a", None, "http://example.com/a"),
        ("https://example.com:443/a", None, "https://example.com/a"),
        ("http://example.com:80/a", None, "http://example.com/a"),
        ("http://example.com:8080/a", None, "http://example.com:8080/a"),
        ("https://example.com:80/a", None, "https://example.com:80/a"),
        ("http://example.com/a#frag", None, "http://example.com/a"),
        ("http://example.com", None, "http://example.com/"),
        ("/b?x=1#f", "http://example.com/a/", "http://example.com/b?x=1"),
        ("c", "http://example.com/a/", "http://example.com/a/c"),
        ("../c", "http://example.com/a/b/", "http://example.com/a/c"),
        ("//other.org/x", "https://example.com/", "https://other.org/x"),
        ("  http://example.com/a  ", None, "http://example.com/a"),
        ("javascript:alert(1)", "http://example.com/", None),
        ("mailto:a@b.c", "http://example.com/", None),
        ("data:text/html,hi", None, None),
        ("file:///etc/passwd", None, None),
        ("ftp://example.com/", None, None),
        ("http://", None, None),
        ("http://example.com:99999/", None, None),
        ("http://[::1]:8080/x", None, "http://[::1]:8080/x"),
    ],
)
def test_normalization_table(url: str, base: str | None, expected: str | None) -> None:
    assert normalize_and_validate_url(url, base, None, None, None) == expected


def test_patterns_with_groups_then_include_exclude() -> None:
    normalize = [
        {"pattern": r"\?utm_[^&]*$", "replace": ""},
        {"pattern": r"^(https?://)www\.", "replace": r"\1"},
    ]
    assert (
        normalize_and_validate_url("https://www.ex.com/a?utm_source=x", None, normalize, None, None)
        == "https://ex.com/a"
    )
    include = [r"^https://ex\.com/"]
    exclude = [r"/private/"]
    check = lambda u: normalize_and_validate_url(u, None, normalize, include, exclude)  # noqa: E731
    assert check("https://www.ex.com/docs") == "https://ex.com/docs"
    assert check("https://other.com/docs") is None  # no include matches
    assert check("https://ex.com/private/x") is None  # an exclude matches
    assert normalize_and_validate_url("https://a.com/x", None, None, [r"nomatch", r"a\.com"], None)


def test_overlong_urls_are_invalid() -> None:
    url = "https://ex.com/" + "a" * MAX_URL_LENGTH
    assert normalize_and_validate_url(url, None, None, None, None) is None


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"include_patterns": ["("]}, "include_patterns"),
        ({"exclude_patterns": ["[a-"]}, "exclude_patterns"),
        ({"normalize_patterns": [{"pattern": "(", "replace": ""}]}, "normalize_patterns"),
        ({"normalize_patterns": [{"pattern": "a"}]}, "normalize_patterns"),
    ],
)
def test_bad_patterns_name_the_parameter(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        UrlRules(**kwargs)  # type: ignore[arg-type]


_segments = st.text(alphabet="abcXYZ09-._~%/", max_size=12)
_urls = st.builds(
    lambda scheme, host, port, path, query, frag: (
        f"{scheme}://{host}{port}/{path}{'?' + query if query else ''}{'#' + frag if frag else ''}"
    ),
    st.sampled_from(["http", "https", "HTTP", "HtTpS"]),
    st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,10}(\.[A-Za-z]{2,5}){1,2}", fullmatch=True),
    st.sampled_from(["", ":80", ":443", ":8080"]),
    _segments,
    st.text(alphabet="a=&b1", max_size=8),
    st.text(max_size=5),
)


@given(_urls)
def test_normalizing_twice_equals_once(url: str) -> None:
    rules = UrlRules()
    once = rules(url)
    assert once is not None
    assert rules(once) == once
    assert "#" not in once
    assert once.startswith(("http://", "https://"))


@given(_urls, st.sampled_from(["a", "../b", "/c?d=1", "#x", "?q"]))
def test_relative_links_become_absolute_and_stable(base: str, link: str) -> None:
    rules = UrlRules()
    out = rules(link, rules(base))
    assert out is not None and rules(out) == out


_hosts = st.sampled_from(
    [
        "a.com",
        "A.com",
        "127.0.0.1",
        "[::1]",
        "a.com.",
        "xn--bcher-kva.de",
        "b\u00fccher.de",
        "u@a.com",
    ]
)
_ports = st.sampled_from(["", ":80", ":443", ":8080", ":08", ":", ":65536", ":1"])
_segments = st.lists(
    st.sampled_from(["x", ".", "..", "%41", "%4a", "\u00fc", "a b", "", "p;q", "a\\b"]), max_size=4
)
_tails = st.sampled_from(["", "?", "?q=1", "?q=1#f", "#f", "?a?b", "?x=/../y"])


@given(
    st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "/", "//", "", "./"]),
    _hosts,
    _ports,
    _segments,
    _tails,
    st.sampled_from([None, "http://a.com/d/e.html", "https://b.org:8443/", "http://a.com"]),
)
def test_the_fast_path_agrees_with_the_full_normalization(
    prefix: str,
    host: str,
    port: str,
    segments: list[str],
    tail: str,
    base: str | None,
) -> None:
    path = "/".join(segments)
    if prefix in ("http://", "https://", "HTTP://", "ftp://", "//"):
        href = f"{prefix}{host}{port}/{path}{tail}"
    else:
        href = f"{prefix}{path}{tail}"
    rules = UrlRules()
    assert rules.normalize(href, base) == rules._normalize_slowly(href.strip(), base)


_relative_segments = st.lists(
    st.sampled_from(["x", ".", "..", "", "p;q", "a b", "%2e", "\u00fc", "a:b", "a\\b", "\t"]),
    min_size=1,
    max_size=5,
)


@given(
    st.sampled_from(["", "./", "../", "../../", "/", "//h/", "?", "#", "mailto:", "javascript:",
                     "tel:", "page.html:", "HTTP:", "Http://A.com/", "java\tscript:", "1a:"]),
    _relative_segments,
    _tails,
    st.sampled_from([
        "http://a.com/d/e.html", "http://a.com/d/", "http://a.com", "https://b.org:8443/x/y/z",
        "http://a.com/d/e.html?q=1#f", "http://a.com/x//y/z", "http://A.com/d/", "http://a.com/;p/e",
        "http://a.com?q", "http://a.com/d/../e", "mailto:x@a.com",
    ]),
)  # fmt: skip
def test_relative_links_resolve_as_urljoin_does(
    prefix: str, segments: list[str], tail: str, base: str
) -> None:
    href = prefix + "/".join(segments) + tail
    rules = UrlRules(exclude_patterns=[r"/x(/|$)"])
    slow = rules._normalize_slowly(href.strip(), base)
    assert rules.normalize(href, base) == slow
    assert rules(href, base) == (slow if slow is None or rules.validate(slow) else None)


_edges = st.text(
    alphabet=st.sampled_from([" ", "\t", "\x00", "\x7f", "\xa0", "\u2003", "\x85", "a", "/"])
)


@given(_edges, st.text(max_size=8), _edges)
def test_a_links_ends_are_stripped_as_the_regex_strips_them(
    head: str, middle: str, tail: str
) -> None:
    # strip's str-method test of the two ends against the plain regex route it replaced
    url = head + middle + tail
    assert strip(url) == re.sub(r"^[\s\x00-\x20\x7f]+|[\s\x00-\x20\x7f]+$", "", url)


@given(st.text(alphabet=st.sampled_from(["a", ":", "@", "/", "?", "#", "1"]), max_size=12))
def test_host_of_takes_the_netloc_up_to_the_first_slash_query_or_fragment(rest: str) -> None:
    # the partition form against the find loop it replaced
    end = len(rest)
    for stop in "/?#":
        i = rest.find(stop)
        if 0 <= i < end:
            end = i
    assert host_of("http://" + rest) == rest[:end].rpartition("@")[2]
