"""litecrawl() against a real local site, asserting on the SQLite file and the hooks' calls.

Steps refer to docs/python-api.md. The HTTP fetcher is used here for speed; the Playwright
path is covered in test_litecrawl_browser.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import LocalServer, db_rows, demo_site

from litecrawl import alitecrawl, litecrawl

EMPTY = hashlib.sha256(b"").hexdigest()
Serve = Callable[..., LocalServer]


def make_due(db: Path, url: str) -> None:
    """Move one page's schedule into the past (interval kept); push every other page out."""
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE pages SET last_crawl_time = last_crawl_time - (next_crawl_time - last_crawl_time)"
        " - 10, next_crawl_time = last_crawl_time - 10 WHERE norm_url = ?",
        (url,),
    )
    conn.execute("UPDATE pages SET next_crawl_time = 4102444800 WHERE norm_url != ?", (url,))
    conn.commit()
    conn.close()


def run(db: Path, urls: list[str], **kwargs: Any) -> None:
    kwargs.setdefault("fetcher", "http")
    kwargs.setdefault("obey_robots", False)
    litecrawl(str(db), urls, **kwargs)


@pytest.fixture
def site(serve: Serve) -> LocalServer:
    return serve(demo_site())


def test_bootstrap_inserts_normalized_valid_start_urls_once(
    tmp_path: Path, site: LocalServer
) -> None:
    db = tmp_path / "c.db"
    start = [site.url("/#top"), site.url("/"), "mailto:x@y", "not a url", site.url("/a")]
    run(db, start, n_claims=1, include_patterns=[r"127\.0\.0\.1"])
    run(db, start, n_claims=1)
    got = db_rows(db)
    assert site.url("/") in got and site.url("/a") in got
    assert not any("#" in u or "mailto" in u for u in got)
    # Idempotent: the start URLs exist once, and the seed's columns are all there.
    assert {
        "norm_url",
        "last_crawl_time",
        "next_crawl_time",
        "processing_time",
        "content_hash",
    } <= set(got[site.url("/")])


def test_links_from_anchors_forms_iframes_become_pages(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    before = int(time.time())
    run(db, [site.url("/")], n_claims=1)
    got = db_rows(db)
    home = got[site.url("/")]
    assert home["last_crawl_time"] >= before
    assert home["next_crawl_time"] - home["last_crawl_time"] == 60 * 60 * 24  # new_interval_sec
    assert home["processing_time"] is None
    assert home["content_hash"] != EMPTY and len(home["content_hash"]) == 64
    for path in ("/a", "/b", "/form-target", "/frame", "/doc.pdf"):
        row = got[site.url(path)]
        assert row["last_crawl_time"] is None and row["next_crawl_time"] is None  # defaults
        assert row["content_hash"] == ""
    assert "http://127.0.0.1:1/offsite" in got  # no scope limit in litecrawl()
    assert not any(u.startswith(("mailto", "javascript")) for u in got)


def test_claim_limit_and_never_crawled_first(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    run(db, [site.url("/")], n_claims=1, exclude_patterns=["offsite"])
    # Make the home page due again: it must come after never-crawled pages.
    conn = sqlite3.connect(db)
    conn.execute("UPDATE pages SET next_crawl_time = 1 WHERE norm_url = ?", (site.url("/"),))
    conn.commit()
    conn.close()
    site.requests.clear()
    run(db, [site.url("/")], n_claims=3, exclude_patterns=["offsite"])
    assert len(site.requests) == 3
    assert "/" not in site.paths()


def test_non_html_is_not_parsed_for_links_but_goes_to_hooks(
    tmp_path: Path, site: LocalServer
) -> None:
    db = tmp_path / "c.db"
    seen: list[tuple[str, str]] = []

    def transform(content: bytes, ctype: str, url: str) -> str:
        seen.append((ctype, url))
        return content.decode("latin-1").upper()

    downstream: list[tuple[bytes, str, str, bool]] = []
    run(
        db,
        [site.url("/doc.pdf")],
        transform_hook=transform,
        downstream_hook=lambda c, t, u, f: downstream.append((c, t, u, f)),
    )
    assert seen == [("application/pdf", site.url("/doc.pdf"))]
    assert site.url("/never") not in db_rows(db)
    content, _ctype, url, fresh = downstream[0]
    assert content.startswith(b"%PDF-1.4 <A HREF") and fresh  # str converted to UTF-8 bytes
    assert db_rows(db)[url]["content_hash"] == hashlib.sha256(content).hexdigest()


def test_freshness_new_link_or_changed_hash(tmp_path: Path, serve: Serve) -> None:
    state: dict[str, object] = {}
    site = serve(demo_site(state))
    db = tmp_path / "c.db"
    calls: list[bool] = []
    hook = lambda c, t, u, fresh: calls.append(fresh)  # noqa: E731

    def again() -> dict[str, Any]:
        make_due(db, site.url("/"))
        run(db, [site.url("/")], n_claims=1, downstream_hook=hook)
        return db_rows(db)[site.url("/")]

    run(db, [site.url("/")], n_claims=1, downstream_hook=hook)
    first = db_rows(db)[site.url("/")]
    assert calls == [True]
    # Same content, no new links: stale, the interval doubles (stale_factor 2).
    r = again()
    assert calls[-1] is False
    assert r["next_crawl_time"] - r["last_crawl_time"] == 2 * (
        first["next_crawl_time"] - first["last_crawl_time"]
    )
    # A new link: fresh, the interval shrinks by fresh_factor (clamped to min 3600).
    state["home_extra"] = '<a href="/brand-new">new</a>'
    r2 = again()
    assert calls[-1] is True
    assert r2["next_crawl_time"] - r2["last_crawl_time"] == int(0.2 * 2 * 86400)
    # Changed content but no new link: fresh through the hash.
    state["home_extra"] = '<a href="/brand-new">new</a> changed text'
    again()
    assert calls[-1] is True


def test_redirect_rules(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    downstream: list[tuple[str, bytes]] = []
    run(
        db,
        [site.url("/old"), site.url("/chain1"), site.url("/to-excluded")],
        exclude_patterns=["/excluded/"],
        downstream_hook=lambda c, t, u, f: downstream.append((u, c)),
    )
    got = db_rows(db)
    # The redirecting URL is finalized with empty content; its only link is the target.
    assert got[site.url("/old")]["content_hash"] == EMPTY
    assert got[site.url("/old")]["processing_time"] is None
    # Processing continued with the target: crawled, and its own links found.
    assert got[site.url("/new")]["last_crawl_time"] is not None
    assert got[site.url("/new")]["content_hash"] not in ("", EMPTY)
    assert site.url("/new-child") in got
    # A chain ends at its final URL.
    assert got[site.url("/c")]["last_crawl_time"] is not None
    # A target that does not validate is not stored.
    assert site.url("/excluded/x") not in got
    assert got[site.url("/to-excluded")]["content_hash"] == EMPTY
    assert (site.url("/old"), b"") in downstream


def test_redirect_loop_and_http_errors_are_recorded(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    run(db, [site.url("/loop1"), site.url("/status/404"), site.url("/status/500")])
    got = db_rows(db)
    assert got[site.url("/loop1")]["error"] == "redirect_loop"
    assert got[site.url("/loop1")]["processing_time"] is None
    assert got[site.url("/status/404")]["status"] == 404
    assert got[site.url("/status/404")]["content_hash"] == EMPTY  # not OK: empty content
    assert got[site.url("/status/500")]["error"] == "http_500"


def test_stored_url_is_renormalized_or_deleted(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    run(db, [site.url("/c")], n_claims=1)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO pages (norm_url) VALUES (?)", (site.url("/b") + "#x",))
    conn.execute("INSERT INTO pages (norm_url) VALUES (?)", (site.url("/private"),))
    conn.commit()
    conn.close()
    run(db, [site.url("/c")], exclude_patterns=["/private"])
    got = db_rows(db)
    assert site.url("/b") + "#x" not in got
    assert got[site.url("/b")]["last_crawl_time"] is not None  # processed under its normal form
    assert site.url("/private") not in got
    assert "/private" not in site.paths()


def test_stale_claims_are_recovered_with_stale_factor(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"
    run(db, [site.url("/c")], n_claims=1)
    now = int(time.time())
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE pages SET processing_time = ?, last_crawl_time = ?, next_crawl_time = ? "
        "WHERE norm_url = ?",
        (now - 700, now - 10_000, now - 10_000 + 7200, site.url("/c")),
    )
    conn.commit()
    conn.close()
    site.requests.clear()
    run(db, [site.url("/c")], n_claims=0 + 1, processing_timeout_sec=600, exclude_patterns=["/c"])
    row = db_rows(db).get(site.url("/c"))
    # Excluded now, so it is not fetched again: only the recovery touched it. (Excluded rows
    # are deleted when claimed; here the recovery scheduled it into the future first.)
    assert row is not None
    assert row["processing_time"] is None
    assert row["next_crawl_time"] - row["last_crawl_time"] == 7200 * 2
    assert site.requests == []


def test_unreachable_and_timeout_pages_are_finalized_stale(
    tmp_path: Path, site: LocalServer
) -> None:
    db = tmp_path / "c.db"
    run(
        db,
        ["http://127.0.0.1:1/nothing-listens", site.url("/slow?s=6"), site.url("/c")],
        pw_timeout_ms=3000,  # /c must fit in it on a loaded machine; /slow never can
    )
    got = db_rows(db)
    dead = got["http://127.0.0.1:1/nothing-listens"]
    slow = got[site.url("/slow?s=6")]
    assert dead["error"] == "connect" and dead["processing_time"] is None
    assert slow["error"] == "timeout" and slow["processing_time"] is None
    assert dead["next_crawl_time"] - dead["last_crawl_time"] == 86400
    assert got[site.url("/c")]["error"] is None  # the batch went on


def test_failing_hooks_finalize_stale_and_batch_goes_on(tmp_path: Path, site: LocalServer) -> None:
    db = tmp_path / "c.db"

    def transform(content: bytes, ctype: str, url: str) -> bytes:
        if url.endswith("/a"):
            raise RuntimeError("boom")
        return content

    async def downstream(content: bytes, ctype: str, url: str, fresh: bool) -> None:
        if url.endswith("/b"):
            raise RuntimeError("bang")

    run(
        db,
        [site.url("/a"), site.url("/b"), site.url("/c")],
        transform_hook=transform,
        downstream_hook=downstream,
    )
    got = db_rows(db)
    assert got[site.url("/a")]["error"] == "hook" and got[site.url("/a")]["content_hash"] == ""
    assert got[site.url("/b")]["error"] == "hook" and got[site.url("/b")]["content_hash"] == ""
    assert got[site.url("/c")]["error"] is None and got[site.url("/c")]["content_hash"] != ""
    assert all(r["processing_time"] is None for r in got.values())


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"min_interval_sec": 0}, "min_interval_sec"),
        ({"min_interval_sec": 100, "max_interval_sec": 10}, "max_interval_sec"),
        ({"fresh_factor": 1.01}, "fresh_factor"),
        ({"stale_factor": 0.9}, "stale_factor"),
        ({"include_patterns": ["(unclosed"]}, "include_patterns"),
        ({"n_claims": 0}, "n_claims"),
        ({"n_concurrent": -1}, "n_concurrent"),
        ({"fetcher": "curl"}, "fetcher"),
        # the engine's own path reads no arguments: they would be accepted and do nothing
        ({"strategy_args": {"terms": ["pie"]}}, "strategy_args"),
        ({"strategy": "bfs", "strategy_args": {"budget": 3}}, "strategy_args"),
    ],
)
def test_invalid_parameters_fail_before_any_work(
    tmp_path: Path, kwargs: dict[str, Any], name: str
) -> None:
    db = tmp_path / "never.db"
    with pytest.raises(ValueError, match=name):
        litecrawl(str(db), ["http://127.0.0.1:1/"], **kwargs)
    assert not db.exists()


def test_robots_txt_is_obeyed_by_default(tmp_path: Path, serve: Serve) -> None:
    from conftest import site_app

    site = serve(
        site_app(
            {
                "/robots.txt": (200, "text/plain", "User-agent: *\nDisallow: /private\n"),
                "/": '<a href="/private/x">p</a> <a href="/public">q</a>',
                "/public": "ok",
                "/private/x": "secret",
            }
        )
    )
    db = tmp_path / "c.db"
    for _ in range(2):
        litecrawl(str(db), [site.url("/")], fetcher="http")
    got = db_rows(db)
    assert "/private/x" not in site.paths()
    assert got[site.url("/private/x")]["error"] == "robots"
    assert got[site.url("/public")]["error"] is None and "/public" in site.paths()
    assert site.count("/robots.txt") == 1  # cached in the database across runs
    litecrawl(str(tmp_path / "d.db"), [site.url("/private/x")], fetcher="http", obey_robots=False)
    assert "/private/x" in site.paths()


def test_huge_body_and_tls_mismatch_are_recorded(tmp_path: Path, serve: Serve) -> None:
    from aiohttp import web

    app = web.Application()

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        chunk = b"<p>" + b"x" * 65530 + b"</p>"
        for _ in range(11 * 1024 * 1024 // len(chunk) + 1):  # 11 MB, no Content-Length
            await response.write(chunk)
        return response

    async def fine(request: web.Request) -> web.Response:
        return web.Response(text="ok", content_type="text/html")

    app.router.add_get("/huge", huge)
    app.router.add_get("/fine", fine)
    site = serve(app)
    db = tmp_path / "c.db"
    tls_url = site.url("/fine").replace("http://", "https://")  # TLS to a plain-HTTP port
    run(db, [site.url("/huge"), tls_url, site.url("/fine")])
    got = db_rows(db)
    assert got[site.url("/huge")]["error"] == "too_large"
    assert got[tls_url]["error"] == "tls"
    assert got[site.url("/fine")]["error"] is None
    assert all(r["processing_time"] is None for r in got.values())


def test_freshness_without_hooks_is_decided_in_the_write(tmp_path: Path, serve: Serve) -> None:
    state: dict[str, object] = {}
    site = serve(demo_site(state))
    db = tmp_path / "c.db"

    def interval_after_run() -> int:
        run(db, [site.url("/")], n_claims=1)
        row = db_rows(db)[site.url("/")]
        make_due(db, site.url("/"))
        return int(row["next_crawl_time"] - row["last_crawl_time"])

    assert interval_after_run() == 86400  # new page: new_interval_sec
    assert interval_after_run() == 2 * 86400  # same content, no new link: stale
    state["home_extra"] = '<a href="/another-new-one">n</a>'
    assert interval_after_run() == int(0.2 * 2 * 86400)  # a new link: fresh
    assert site.url("/another-new-one") in db_rows(db)


def test_a_misspelled_argument_is_a_type_error_before_any_work(tmp_path: Path) -> None:
    db = tmp_path / "never.db"
    with pytest.raises(TypeError, match="n_clams"):
        litecrawl(str(db), ["http://127.0.0.1:1/"], n_clams=5)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"alitecrawl\(\) got an unexpected keyword .*'n_clams'"):
        asyncio.run(alitecrawl(str(db), ["http://127.0.0.1:1/"], n_clams=5))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="start_urls"):
        asyncio.run(alitecrawl(sqlite_path=str(db)))  # type: ignore[call-arg]
    assert not db.exists()
    assert list(inspect.signature(alitecrawl).parameters) == list(
        inspect.signature(litecrawl).parameters
    )


def test_browser_options_under_the_http_fetcher_are_said_to_have_no_effect(
    tmp_path: Path, site: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "c.db"

    def warnings() -> list[str]:
        said = [r.getMessage() for r in caplog.records if "no effect" in r.getMessage()]
        caplog.clear()
        return said

    with caplog.at_level(logging.WARNING, logger="litecrawl"):
        run(db, [site.url("/")], n_claims=1, page_hook=lambda page: None, pw_scroll_rounds=3)
        assert warnings() == [
            "fetcher='http' renders nothing: pw_scroll_rounds, page_hook have no effect "
            "(browser options of fetcher='playwright')"
        ]
        run(db, [site.url("/")], n_claims=1, pw_block_media=False)
        assert warnings() == [
            "fetcher='http' renders nothing: pw_block_media has no effect "
            "(browser options of fetcher='playwright')"
        ]
        run(db, [site.url("/")], n_claims=1, pw_timeout_ms=5000, pw_headers={"X-A": "1"})
        assert warnings() == []  # the HTTP fetcher sends these headers and keeps this timeout
