"""robots.txt policy: RFC 9309 status handling, product-token matching, caching records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.politeness import (
    DEFAULT_ERROR_TTL,
    DEFAULT_TTL,
    MAX_ROBOTS_BYTES,
    RobotsPolicy,
    RobotsRequestRate,
    product_token,
    robots_url,
)

DATA = Path(__file__).parent / "data" / "robots"
UA = "litecrawl/0.1 (+https://www.example.com/bot)"
SITE = "https://www.example.com"
T0 = 1_700_000_000.0


def policy(body: bytes | str, status: int | None = 200, user_agent: str = UA) -> RobotsPolicy:
    raw = body.encode() if isinstance(body, str) else body
    return RobotsPolicy.from_response(status, raw, T0, user_agent)


def google_like(user_agent: str = UA) -> RobotsPolicy:
    return policy((DATA / "google_like.txt").read_bytes(), user_agent=user_agent)


# --- RFC 9309 2.3.1: status handling ---------------------------------------------------------

DISALLOW_EVERYTHING = "User-agent: *\nDisallow: /\nSitemap: https://www.example.com/s.xml\n"


@pytest.mark.parametrize(
    ("status", "mode", "allowed", "lifetime"),
    [
        (200, "parsed", False, DEFAULT_TTL),  # the body disallows everything
        (203, "parsed", False, DEFAULT_TTL),
        (301, "allow_all", True, DEFAULT_TTL),  # redirects not followed -> unavailable
        (400, "allow_all", True, DEFAULT_TTL),
        (401, "allow_all", True, DEFAULT_TTL),
        (403, "allow_all", True, DEFAULT_TTL),
        (404, "allow_all", True, DEFAULT_TTL),
        (410, "allow_all", True, DEFAULT_TTL),
        (451, "allow_all", True, DEFAULT_TTL),
        (429, "disallow_all", False, DEFAULT_ERROR_TTL),  # "slow down" is not "allowed"
        (500, "disallow_all", False, DEFAULT_ERROR_TTL),
        (502, "disallow_all", False, DEFAULT_ERROR_TTL),
        (503, "disallow_all", False, DEFAULT_ERROR_TTL),
        (599, "disallow_all", False, DEFAULT_ERROR_TTL),
        (None, "disallow_all", False, DEFAULT_ERROR_TTL),  # DNS, refused, timeout, TLS
        (100, "disallow_all", False, DEFAULT_ERROR_TTL),
        (999, "disallow_all", False, DEFAULT_ERROR_TTL),
    ],
)
def test_status_handling(status: int | None, mode: str, allowed: bool, lifetime: float) -> None:
    p = policy(DISALLOW_EVERYTHING, status)
    assert p.mode == mode
    assert p.allowed(f"{SITE}/any/page.html") is allowed
    assert p.expires_at == T0 + lifetime
    assert not p.is_expired(T0 + lifetime - 1)
    assert p.is_expired(T0 + lifetime)
    if mode != "parsed":  # the body of an error page is never read as rules
        assert p.body == ""
        assert p.sitemaps() == ()
        assert p.crawl_delay() is None


def test_robots_txt_itself_is_always_allowed() -> None:
    for status in (200, 404, 503, None):
        assert policy(DISALLOW_EVERYTHING, status).allowed(f"{SITE}/robots.txt")


def test_lifetimes_are_parameters() -> None:
    ok = RobotsPolicy.from_response(200, b"", T0, UA, ttl=60.0, error_ttl=5.0)
    down = RobotsPolicy.from_response(None, b"", T0, UA, ttl=60.0, error_ttl=5.0)
    assert ok.expires_at == T0 + 60.0
    assert down.expires_at == T0 + 5.0


def test_empty_and_html_bodies_allow_everything() -> None:
    assert policy(b"").allowed(f"{SITE}/x")
    assert policy(b"").problem is None and policy("# only a comment\n").problem is None
    soft404 = policy((DATA / "soft404.html").read_bytes())
    assert soft404.mode == "parsed"
    assert soft404.allowed(f"{SITE}/x")
    assert soft404.problem is not None and soft404.problem.startswith("holds no rule")
    assert google_like().problem is None
    # rules outside a group are none (RFC 9309 2.2): the file is said to hold none
    assert policy("Disallow: /x\n").problem is not None


def test_a_body_the_parser_fails_on_disallows_all_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing can be known of its rules: as unreachable (error_ttl), never as allowing all."""

    def fails(content: str) -> None:
        raise ValueError("parser bug")

    monkeypatch.setattr("litecrawl.politeness.robots.Protego.parse", fails)
    broken = policy("User-agent: *\nDisallow: /private\n")
    assert not broken.allowed(f"{SITE}/public")
    assert broken.expires_at == T0 + DEFAULT_ERROR_TTL
    assert broken.problem == "cannot be parsed (ValueError: parser bug): nothing is fetched"


# --- user-agent product token matching (RFC 9309 2.2.1) --------------------------------------


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("litecrawl/0.1 (+https://www.example.com/bot)", "litecrawl"),
        ("LiteCrawl/2.0", "litecrawl"),
        ("litecrawl", "litecrawl"),
        ("  my-bot_2/1.0", "my-bot_2"),
        ("Mozilla/5.0 (compatible; litecrawl/0.1)", "mozilla"),
        ("", ""),
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    assert product_token(user_agent) == token


@pytest.mark.parametrize(
    ("user_agent", "path", "allowed"),
    [
        # our own group applies, and only it (not "*", not the "lite" prefix group)
        (UA, "/", True),
        (UA, "/drafts/new-post", False),
        (UA, "/tmp", False),
        (UA, "/tmp/x", False),
        (UA, "/tmp/public/file", True),
        (UA, "/search", True),  # disallowed for "*" only
        (UA, "/private/secret", True),
        ("LITECRAWL/9.9", "/drafts/x", False),  # case-insensitive
        # a crawler named exactly "lite" gets the "lite" group
        ("lite/1.0", "/", False),
        # unknown crawlers get "*"
        ("OtherBot/1.0", "/", True),
        ("OtherBot/1.0", "/search", False),
        ("OtherBot/1.0", "/search/about", True),
        ("OtherBot/1.0", "/private/x", False),
        ("OtherBot/1.0", "/report.pdf", False),
        ("OtherBot/1.0", "/public/report.pdf", True),
        ("OtherBot/1.0", "/page?a=1&sa=2", False),
        ("OtherBot/1.0", "/drafts/x", True),
        # several user-agent lines share one group
        ("BadBot", "/", False),
        ("EvilScraper/3", "/anything", False),
        ("Mediapartners-Google", "/search", True),  # empty Disallow = allow all
        ("Googlebot/2.1", "/nogoogle/x", False),
        ("Googlebot/2.1", "/search", True),
    ],
)
def test_group_matching_on_google_like_file(user_agent: str, path: str, allowed: bool) -> None:
    assert google_like(user_agent).allowed(SITE + path) is allowed


@pytest.mark.parametrize(
    ("user_agent", "delay", "rate"),
    [
        (UA, 2.5, RobotsRequestRate(1, 5)),
        ("OtherBot/1.0", 1.0, None),
        ("Googlebot", None, None),
    ],
)
def test_crawl_delay_and_request_rate(
    user_agent: str, delay: float | None, rate: RobotsRequestRate | None
) -> None:
    p = google_like(user_agent)
    assert p.crawl_delay() == delay
    assert p.request_rate() == rate


def test_request_rate_per_second() -> None:
    assert RobotsRequestRate(1, 5).per_second == pytest.approx(0.2)
    assert RobotsRequestRate(0, 5).per_second is None
    assert RobotsRequestRate(3, 0).per_second is None


def test_token_is_not_matched_inside_the_contact_url() -> None:
    # Our UA contains "example" in its contact URL; that group must not apply to us.
    body = "User-agent: example\nDisallow: /\n\nUser-agent: www\nDisallow: /\n"
    assert policy(body).allowed(f"{SITE}/page")


def test_group_written_with_a_version_still_matches_our_token() -> None:
    body = "User-agent: *\nDisallow: /all\n\nUser-agent: LiteCrawl/1.0\nDisallow: /x\n"
    p = policy(body)
    assert not p.allowed(f"{SITE}/x/1")
    assert p.allowed(f"{SITE}/all")  # our group, not "*", applies


def test_empty_own_group_allows_everything() -> None:
    p = policy((DATA / "empty_groups.txt").read_bytes())
    assert p.allowed(f"{SITE}/anything")
    assert not policy((DATA / "empty_groups.txt").read_bytes(), user_agent="x/1").allowed(
        f"{SITE}/anything"
    )


def test_bom_and_crlf() -> None:
    p = policy((DATA / "bom_crlf.txt").read_bytes())
    assert not p.allowed(f"{SITE}/bom-private/x")
    assert p.allowed(f"{SITE}/public")
    assert p.crawl_delay() == 3.0


def test_sitemaps_absolute_deduplicated_in_order() -> None:
    assert google_like().sitemaps() == (
        "https://www.example.com/sitemap_index.xml",
        "https://www.example.com/news-sitemap.xml",
    )


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    p = policy(b"User-agent: *\nDisallow: /caf\xe9\xff/\nDisallow: /x\n")
    assert not p.allowed(f"{SITE}/x/y")
    assert "\ufffd" in p.body


def test_bodies_over_500_kib_are_truncated_at_a_line() -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * 98 + b"\n"
    body = head + filler * ((MAX_ROBOTS_BYTES - len(head)) // len(filler))
    body += b"Disallow: /straddling-the-limit\n" + b"Disallow: /late\n"
    assert len(body) > MAX_ROBOTS_BYTES
    p = policy(body)
    assert len(p.body.encode()) <= MAX_ROBOTS_BYTES
    assert not p.allowed(f"{SITE}/early")
    assert p.allowed(f"{SITE}/late")
    assert p.allowed(f"{SITE}/s")  # a half-read "Disallow: /s..." line would block this


# --- caching ---------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [200, 404, 503, None])
def test_record_round_trip_through_json(status: int | None) -> None:
    original = google_like() if status == 200 else policy(b"whatever", status)
    record = json.loads(json.dumps(original.to_record()))
    assert set(record) == {"status", "body", "fetched_at", "expires_at"}
    rebuilt = RobotsPolicy.from_record(record, UA)
    assert rebuilt == original
    for path in ("/", "/drafts/x", "/tmp/public/a", "/search"):
        assert rebuilt.allowed(SITE + path) == original.allowed(SITE + path)
    assert rebuilt.crawl_delay() == original.crawl_delay()
    assert rebuilt.sitemaps() == original.sitemaps()


@pytest.mark.parametrize(
    "record",
    [
        {"status": "200", "body": "", "fetched_at": 1.0, "expires_at": 2.0},
        {"status": 200, "body": None, "fetched_at": 1.0, "expires_at": 2.0},
        {"status": 200, "body": "", "fetched_at": None, "expires_at": 2.0},
        {"status": True, "body": "", "fetched_at": 1.0, "expires_at": 2.0},
        {},
    ],
)
def test_bad_records_raise_value_error(record: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RobotsPolicy.from_record(record, UA)


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("https://Www.Example.com/a/b?q=1#f", "https://www.example.com/robots.txt"),
        ("http://example.com:8080/x", "http://example.com:8080/robots.txt"),
        ("https://user:pw@example.com/private", "https://example.com/robots.txt"),
        ("https://example.com", "https://example.com/robots.txt"),
    ],
)
def test_robots_url(page: str, expected: str) -> None:
    assert robots_url(page) == expected


# --- never raises ----------------------------------------------------------------------------

statuses = st.none() | st.integers(min_value=0, max_value=999)
robots_like = st.lists(
    st.sampled_from(
        [
            b"User-agent: *",
            b"User-agent: litecrawl",
            b"User-agent: lite*",
            b"Disallow: /",
            b"Disallow: /a*b$",
            b"Allow: /%E2%82%AC",
            b"Crawl-delay: nan",
            b"Crawl-delay: -1",
            b"Crawl-delay: 1e400",
            b"Request-rate: 0/0s",
            b"Request-rate: x",
            b"Sitemap: ",
            b"Sitemap: /rel.xml",
            b"Visit-time: 2500-9999",
            b"# comment",
            b"",
        ]
    )
).map(b"\n".join)


@settings(deadline=None)
@given(
    status=statuses,
    body=st.binary(max_size=2000) | robots_like,
    path=st.text(max_size=40),
    user_agent=st.text(max_size=30),
)
def test_policy_never_raises(status: int | None, body: bytes, path: str, user_agent: str) -> None:
    p = RobotsPolicy.from_response(status, body, T0, user_agent)
    assert isinstance(p.allowed(SITE + "/" + path), bool)
    assert isinstance(p.allowed(path), bool)
    delay = p.crawl_delay()
    assert delay is None or delay >= 0
    p.request_rate()
    assert all(s.startswith(("http://", "https://")) for s in p.sitemaps())
    assert RobotsPolicy.from_record(p.to_record(), user_agent) == p
