"""Failure causes in words, and the counters behind the closing summary."""

from __future__ import annotations

import json
import logging

import pytest

from litecrawl.cli.output import JsonLinesFormatter, KeyValueFormatter
from litecrawl.errors import error_for, is_retry_worthy
from litecrawl.outcomes import CrawlStats, PageOutcomes, describe
from litecrawl.store.queue import ClaimedPage


@pytest.mark.parametrize(
    ("category", "detail", "words"),
    [
        ("dns", "DNS lookup failed: name or service not known", "h unreachable: DNS lookup failed"),
        ("connect", "connection refused", "h unreachable: connection refused"),
        ("timeout", "timed out", "h: timed out"),
        ("tls", "TLS error: certificate verify failed", "h: TLS error: certificate verify failed"),
        ("robots", "", "h: disallowed by robots.txt"),
        ("robots_http_503", "", "h: robots.txt answered 503, pages held back for a while"),
        ("http_404", "HTTP 404", "h: HTTP 404 Not Found"),
        ("http_599", "HTTP 599", "h: HTTP 599"),
        ("too_large", "", "h: body over the size limit"),
        ("redirect_loop", "", "h: too many redirects"),
        ("bad_redirect", "redirect to ftp:, not to an http(s) URL", "h: redirect to ftp:, not"),
        ("bad_response", "not valid HTTP: Bad status line", "h: not valid HTTP: Bad status"),
        ("internal", "", "h: internal error (see the log)"),
        ("something_new", "its own words", "h: its own words"),
    ],
)
def test_every_category_reads_as_words(category: str, detail: str, words: str) -> None:
    assert describe("h", category, detail).startswith(words)


def test_stats_count_causes_by_host_and_keep_001s_names() -> None:
    stats = CrawlStats(fetched=3, indexed=2)
    for n in range(12):
        stats.fail(f"http://a.example/{n}", "a.example", "connect", "connection refused")
    stats.fail("http://b.example/x", "b.example", "http_404", "HTTP 404")
    assert [str(c) for c in stats.top_causes(5)] == [
        "a.example unreachable: connection refused (12 pages, e.g. http://a.example/0)",
        "b.example: HTTP 404 Not Found (1 page, e.g. http://b.example/x)",
    ]
    assert stats.errors == {"connect": 12, "http_404": 1}
    assert (stats.pages_fetched, stats.pages_failed, stats.pages_indexed) == (3, 13, 2)
    assert stats.elapsed_time >= 0


def test_causes_are_told_apart_by_their_words_not_their_numbers() -> None:
    stats = CrawlStats()
    for n, detail in enumerate(["ServerDisconnectedError: Server disconnected"] * 3 + [
        "connection closed before the end of the body",
        "ClientOSError: [Errno 104] Connection reset by peer",
    ]):  # fmt: skip
        stats.fail(f"http://a.example/{n}", "a.example", "network", detail)
    for size in (20_000_000, 30_000_000):
        stats.fail(f"http://a.example/{size}", "a.example", "too_large", f"Content-Length {size}")
    assert [str(c) for c in stats.top_causes(5)] == [
        "a.example: network error: ServerDisconnectedError: Server disconnected (3 pages, "
        "e.g. http://a.example/0)",
        "a.example: body over the size limit (2 pages, e.g. http://a.example/20000000)",
        "a.example: network error: connection closed before the end of the body (1 page, "
        "e.g. http://a.example/3)",
        "a.example: network error: ClientOSError: [Errno 104] Connection reset by peer (1 page, "
        "e.g. http://a.example/4)",
    ]


def test_error_for_keeps_any_category_and_retry_worth() -> None:
    assert error_for("connect", "http://x/").unreachable
    assert error_for("http_503", "http://x/").category == "http_503"
    assert [
        c
        for c in (
            "robots",
            "http_404",
            "http_408",
            "bad_redirect",
            "bad_response",
            "http_500",
            "dns",
        )
        if is_retry_worthy(c)
    ] == [
        "http_408",
        "http_500",
        "dns",
    ]


def test_a_failed_fetch_warns_with_its_url_under_any_formatter(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = "http://a.example/x"
    page = ClaimedPage(url, None, None, "", depth=2, source="seed")
    with caplog.at_level(logging.INFO, logger="litecrawl"):
        PageOutcomes(CrawlStats()).failed(page, url, error_for("connect", url, "refused"), "fetch")
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.getMessage() == f"{url}: refused"
    assert (record.url, record.depth, record.source, record.action, record.error) == (  # type: ignore[attr-defined]
        url,
        2,
        "seed",
        "fetch",
        "connect",
    )
    # ours print the url once, as a field
    line = KeyValueFormatter().format(record)
    assert line.count(url) == 1 and "error=connect" in line and line.endswith(" msg=refused")
    assert json.loads(JsonLinesFormatter().format(record))["msg"] == "refused"
