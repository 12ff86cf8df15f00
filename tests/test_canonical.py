"""One spelling per resource (RFC 3986 6.2.2), and normalizing twice gives what once gave."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, db_rows, html_page, site_app
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl.canonical import canonical_url
from litecrawl.cli import app
from litecrawl.hrefs import is_canonical
from litecrawl.urls import UrlRules


@pytest.mark.parametrize(
    ("spellings", "expected"),
    [
        (["http://h/l/ü", "http://h/l/%c3%bc", "http://h/l/%C3%BC", "http://h/l/%C3%bc"],
         "http://h/l/%C3%BC"),
        (["http://h/l/~tilde", "http://h/l/%7Etilde", "http://h/l/%7etilde"], "http://h/l/~tilde"),
        (["http://h/%41%2d%5F.", "http://h/A-_."], "http://h/A-_."),
        (["http://Bücher.DE/", "http://xn--bcher-kva.de/", "http://BÜCHER.de./",
          "http://b%C3%BCcher.de/"], "http://xn--bcher-kva.de/"),
        (["http://h/a/%2e%2E/b", "http://h/a/../b", "http://h/./b", "http://h/b"], "http://h/b"),
        (["http://h/a b", "http://h/a%20b", "http://h/a\t%20b"], "http://h/a%20b"),
        (["http://[0:0::1]:8080/", "http://[::1]:8080/"], "http://[::1]:8080/"),
        (["http://h/x?q=%7e&r=%c3%a9", "http://h/x?q=~&r=é"], "http://h/x?q=~&r=%C3%A9"),
        (["http://h/x\u00a0", "\u00a0http://h/x", "http://h/x\x00", " http://h/x\r\n"],
         "http://h/x"),
    ],
)  # fmt: skip
def test_equivalent_spellings_are_one_url(spellings: list[str], expected: str) -> None:
    rules = UrlRules()
    assert {rules(u) for u in spellings} == {expected}


@pytest.mark.parametrize(
    "url",
    ["http://./", "http:///", "http://.", "http://../x", "http://a..b/", "http://a b/",
     "http://%2F/", "http://[::1%25eth0]/", "http://[zz]/", "http://h:99999/", "http://\x00/"],
)  # fmt: skip
def test_urls_naming_no_host_are_rejected(url: str) -> None:
    assert UrlRules()(url) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h/a\x01b", "http://h/a%01b"),  # controls inside are escaped, not kept raw
        ("http://h/a\x7fb", "http://h/a%7Fb"),
        ("http://h/%zz%", "http://h/%25zz%25"),  # a % that starts no escape is itself escaped
        ('http://h/<a>"{b}|^`[c]\\', "http://h/%3Ca%3E%22%7Bb%7D%7C%5E%60%5Bc%5D%5C"),
        ("http://h/a%2Fb%3F?x=%26%3D", "http://h/a%2Fb%3F?x=%26%3D"),  # reserved stay escaped
        ("http://h/:@!$&'()*+,;=", "http://h/:@!$&'()*+,;="),
    ],
)
def test_characters_a_url_may_not_hold_are_escaped(url: str, expected: str) -> None:
    assert UrlRules()(url) == expected


# Characters met in real and hostile hrefs: reserved and unreserved ASCII, the ones that must be
# escaped, controls, non-ASCII (Latin, CJK, a non-character, a lone surrogate), and escapes in
# both cases, stray ones included.
_ODD = st.one_of(
    st.sampled_from(list("aZ09-._~!$&'()*+,;=:@/?#[]% \"<>\\^`{|}\t\n\x00\x01\x7f")),
    st.sampled_from(["\u00a0", "\u00fc", "\u00e9", "\u4e2d", "\ufffe", "\ud800", "\U0001f600"]),
    st.from_regex(r"%[0-9a-fA-F]{2}", fullmatch=True),
    st.from_regex(r"%[0-9a-fA-F]?[g-z]", fullmatch=True),
)
_text = st.lists(_ODD, max_size=8).map("".join)
_hosts = st.one_of(
    st.sampled_from(["a.com", "A.COM", "a.com.", "127.0.0.1", "[::1]", "[0:0::1]", "b\u00fccher.de",
                     "xn--bcher-kva.de", "%61.com", "a_b.c-d.org", ".", "", "a..b", "\u2603.net"]),
    st.from_regex(r"[A-Za-z0-9\u00e0-\u00ff-]{1,8}(\.[A-Za-z]{2,4}){1,2}\.?", fullmatch=True),
)  # fmt: skip
_urls = st.builds(
    lambda space, scheme, userinfo, host, port, path, query, fragment, tail: (
        f"{space}{scheme}://{userinfo}{host}{port}/{path}{query}{fragment}{tail}"
    ),
    st.sampled_from(["", " ", "\u00a0", "\t", "\x00"]),
    st.sampled_from(["http", "https", "HTTP", "hTTpS"]),
    st.sampled_from(["", "u@", "u:p%41@", "\u00fc@"]),
    _hosts,
    st.sampled_from(["", ":80", ":443", ":8080", ":", ":0080"]),
    _text,
    st.one_of(st.just(""), _text.map(lambda q: "?" + q)),
    st.one_of(st.just(""), _text.map(lambda f: "#" + f)),
    st.sampled_from(["", " ", "\u00a0", "\x01", "\u00a0\x00 ", "\r\n"]),
)
_CANONICAL = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]|%[0-9A-F]{2})*")
_ESCAPED_UNRESERVED = re.compile(r"%(?:2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])")


@given(_urls, st.sampled_from([None, "http://a.com/d/e", "https://B\u00fccher.de/x/%7Ey/"]))
def test_normalizing_twice_gives_what_once_gave(url: str, base: str | None) -> None:
    rules = UrlRules()
    once = rules(url, base)
    if once is None:
        return
    assert rules(once) == once
    assert rules(once, base) == once
    # the canonical spelling: printable ASCII only, escapes in upper case, none of unreserved
    assert _CANONICAL.fullmatch(once), once
    assert not _ESCAPED_UNRESERVED.search(once), once
    assert "#" not in once and "/./" not in once and "/../" not in once


@st.composite
def _two_spellings(draw: st.DrawFn) -> tuple[str, str]:
    """One path + query written two ways that RFC 3986 calls equivalent: each character that
    is unreserved, non-ASCII or not allowed in a URL is written as it is, or escaped in lower
    or upper case; reserved characters are kept as they are in both."""
    single = _ODD.filter(lambda c: len(c) == 1 and c not in "%#\t\n\x00")
    chars = draw(st.lists(single, max_size=10))

    def spell(char: str, how: int) -> str:
        if how == 0 or (char.isascii() and char in "!$&'()*+,;=:@/?"):
            return char
        escaped = "".join(f"%{b:02X}" for b in char.encode("utf-8", "surrogatepass"))
        return escaped.lower() if how == 1 else escaped

    ways = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)),
                         min_size=len(chars), max_size=len(chars)))  # fmt: skip
    first = "".join(spell(c, a) for c, (a, _) in zip(chars, ways, strict=True))
    second = "".join(spell(c, b) for c, (_, b) in zip(chars, ways, strict=True))
    return first, second


@given(
    _two_spellings(),
    st.sampled_from([("http://A.com", "http://a.com:80"), ("https://b\u00fccher.de.",
                     "HTTPS://xn--bcher-kva.de:443"), ("http://[::0:1]", "http://[0::1]")]),
)  # fmt: skip
def test_equivalent_spellings_normalize_alike(
    spellings: tuple[str, str], origins: tuple[str, str]
) -> None:
    rules = UrlRules()
    # (an "e" at the end: whitespace there is stripped, not a spelling of a character)
    first = rules(f"{origins[0]}/{spellings[0]}e")
    assert first is not None
    assert first == rules(f"{origins[1]}/{spellings[1]}e")


def test_a_crawl_stores_and_fetches_each_spelling_once(
    tmp_path: Path, serve: Callable[[web.Application], LocalServer]
) -> None:
    spellings = ["/l/ü", "/l/%c3%bc", "/l/%C3%BC", "/l/~tilde", "/l/%7Etilde", "/l/%7etilde"]
    links = "".join(f'<a href="{href}">{i}</a> ' for i, href in enumerate(spellings))
    site = serve(site_app({
        "/": html_page(links, "home"),
        "/l/ü": html_page("u umlaut", "u"),
        "/l/~tilde": html_page("tilde", "t"),
    }))  # fmt: skip
    db = tmp_path / "c.db"
    result = CliRunner().invoke(
        app,
        ["crawl", "--db", str(db), "--no-cache", "--no-embed", "--delay-ms", "0", site.url("/")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert set(db_rows(db)) == {site.url("/"), site.url("/l/%C3%BC"), site.url("/l/~tilde")}
    assert sorted(site.paths()) == ["/", "/l/%C3%BC", "/l/~tilde", "/robots.txt"]
    assert "redirects" not in result.output  # the summary shows it only when there were some
    assert re.search(r"^ok:\s+3$", result.output, re.M), result.output


@given(_urls, st.sampled_from([None, "http://a.com/d/e", "https://B\u00fccher.de/x/%7Ey/"]))
def test_property_is_canonical_says_what_canonical_url_says(url: str, base: str | None) -> None:
    # the fetcher's fast test (a regex and a memo of the origin) against the plain one, on
    # generated URLs as written and as normalized (most of these pass the fast test)
    for candidate in (url, url.strip(), UrlRules()(url, base)):
        if candidate is not None:
            assert is_canonical(candidate) == (canonical_url(candidate) == candidate), candidate
