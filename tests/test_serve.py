"""``litecrawl serve``: the real command on a database filled by a real crawl (SQLite and
PostgreSQL), seen in Chromium."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import pytest
from aiohttp import web
from conftest import (
    LocalServer,
    NewDb,
    db_execute,
    db_query,
    have_chromium,
    html_page,
    site_app,
)
from playwright.sync_api import Page, sync_playwright
from typer.testing import CliRunner

from litecrawl import litecrawl
from litecrawl.cli import app
from litecrawl.fetch.browser import LAUNCH_ARGS, find_chromium
from litecrawl.lease import current_identity
from litecrawl.store.backends import open_frontier

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TOKEN = "test-token-0123456789"
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">Hostile'
ARTIFACTS = Path(__file__).parent / "artifacts" / "serve"

# the hostile page's link to a URL full of markup, as the crawl stores it (RFC 3986's spelling)
EVIL = "http://127.0.0.2:9/evil?q=%22%3E%3Cscript%3Ewindow.__pwned%20=%205%3C/script%3E&x='y"


def _site() -> web.Application:
    body = (
        '<a href="/zebra">zebra</a> <a href="/about">about</a> <a href="/hostile">h</a> '
        '<a href="/gone">gone</a>'
    )
    zebra = "Zebrafish tanks, zebrafish food and zebrafish breeding for the home aquarium."
    return site_app(
        {
            "/": html_page(body, "Home of the fish shop"),
            "/zebra": html_page(f"<p>{zebra}</p>", "Zebrafish care"),
            "/about": html_page("<p>We sell guppies, tetras and one zebrafish.</p>", "About"),
            "/hostile": html_page(
                "<p>evil page &lt;script&gt;window.__pwned = 3&lt;/script&gt; "
                '<a href="/zebra">z</a> <a href="javascript:window.__pwned = 4">js</a> '
                "<a href='http://127.0.0.2:9/evil?q=\"><script>window.__pwned = 5</script>"
                "&amp;x=&#39;y'>x</a>"
                "</p>",
                HOSTILE,
            ),
        }
    )


def _crawl(db: str, serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    site = serve(_site())
    monkeypatch.chdir(tmp_path)  # the crawl's disk cache: tmp_path/.cache/litecrawl
    result = runner.invoke(app, ["crawl", site.url("/"), "--db", db, "--delay-ms", "0", "-q"])
    assert result.exit_code == 0, result.output
    return site.base


@pytest.fixture
def crawled(
    new_db: NewDb, tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """A database (either backend; a disk cache under tmp_path) from a real crawl of the local
    fish site."""
    db = new_db("fish")
    return db, _crawl(db, serve, tmp_path, monkeypatch)


@pytest.fixture
def crawled_sqlite(
    tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """As ``crawled``, in a SQLite file only (the browser tests: what they look at is the
    same on both backends, and Chromium is the slow part)."""
    db = str(tmp_path / "fish.db")
    return db, _crawl(db, serve, tmp_path, monkeypatch)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start ``litecrawl serve`` on a free port; returns its base URL."""
    procs: list[subprocess.Popen[str]] = []

    def run(db: str | Path, *args: str) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-m", "litecrawl", "serve", "--db", db, "--port", "0", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("litecrawl serve: http://127.0.0.1:"), line + proc.stderr.read()
        return line.split()[2].rstrip("/")

    yield run
    for proc in procs:
        proc.terminate()
        assert proc.wait(30) == 0  # a clean exit; the time is generous (workers share the CPU)


def _stats(db: str | Path) -> dict[str, Any]:
    result = runner.invoke(app, ["stats", "--db", db, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _get(url: str) -> Any:
    with urllib.request.urlopen(url) as response:
        return json.loads(response.read())


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _seeds(db: str) -> set[str]:
    return {r[0] for r in db_query(db, "SELECT norm_url FROM pages WHERE source = 'seed'")}


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.skipif(
    not have_chromium() and not os.environ.get("CI"), reason="no Chromium on this machine"
)
def test_dashboard_in_chromium(crawled_sqlite: tuple[str, str], start: Callable[..., str]) -> None:
    db, site = crawled_sqlite
    base = start(db, "--token", TOKEN)
    stats = _stats(db)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []  # CSP violations, script errors, requests gone wrong
        page.on("console", lambda m: problems.append(m.text) if "Policy" in m.text else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("response", lambda r: problems.append(r.url) if r.status >= 400 else None)

        # overview: the counts of `litecrawl stats`, a drawn chart
        page.goto(base + "/")
        assert page.text_content("#total") == str(stats["pages"]["total"]) == "5"
        for state, n in stats["pages"]["by_state"].items():
            assert page.text_content(f"#state-{state}") == str(n)
        assert page.text_content("#due-now") == str(stats["due_now"])
        assert page.locator("#fetch-chart rect.ok").count() >= 1
        assert page.locator("#fetch-chart rect.err").count() >= 1  # the 404
        assert "http_404" in (page.text_content("#errors") or "")
        assert page.locator("#errors-over-time tbody tr").count() == 1
        cells = page.locator("#errors-over-time tbody td").all_text_contents()
        assert cells[-1] == "1"  # the 404's minute
        page.click("#windows a")  # 24h
        assert "last 24 hours" in (page.text_content("h2") or "")
        page.goto(base + "/")
        assert page.locator("#runs tbody tr").count() == len(stats["runs"]) == 1
        _shot(page, "overview")

        page.goto(base + "/hosts?sort=errors&order=desc")
        assert page.locator("#hosts tbody tr").count() == 1
        assert page.text_content("#hosts tbody td:nth-child(7)").endswith(" ms")  # avg response
        _shot(page, "hosts")

        page.goto(base + "/pages?state=error")
        assert page.locator("#pages tbody tr").count() == 1
        assert f"{site}/gone" in (page.text_content("#pages") or "")
        page.goto(base + "/pages")
        _shot(page, "pages")

        # search: the page about zebrafish first, the matches marked
        page.goto(base + "/search?q=zebrafish")
        assert page.locator("#hits .title").first.text_content() == "Zebrafish care"
        assert page.locator("#hits li").first.locator("mark").first.text_content() == "Zebrafish"
        _shot(page, "search")

        # a page's detail: its links out and in (the link graph), each to its own detail
        page.goto(base + "/page?url=" + quote(site + "/", safe=""))
        links = page.locator("#links-out li").all_text_contents()
        assert [t.split()[0] for t in links] == [
            f"{site}/about",
            f"{site}/gone",
            f"{site}/hostile",
            f"{site}/zebra",
        ]
        assert "error" in links[1] and "404" in links[1]
        page.click(f"#links-out a[href='/page?url={quote(site + '/zebra', safe='')}']")
        assert page.text_content("#doc-title") == "Zebrafish care"
        inbound = page.locator("#links-in li").all_text_contents()
        assert [t.split()[0] for t in inbound] == [f"{site}/", f"{site}/hostile"]
        _shot(page, "page")

        # the hostile title is text, and nothing of it ran
        page.goto(base + "/page?url=" + quote(site + "/hostile", safe=""))
        assert page.text_content("#doc-title") == HOSTILE
        hostile_links = page.locator("#links-out li").all_text_contents()
        # no javascript:; a URL full of markup is text
        assert hostile_links[0].split()[0] == f"{site}/zebra"
        # stored in its one spelling (markup percent-encoded, ' and & as they are), shown as text
        assert hostile_links[1].split()[0] == EVIL
        assert page.locator("#links-out script").count() == 0
        assert page.evaluate("typeof window.__pwned") == "undefined"
        page.goto(base + "/search?q=evil")
        assert page.locator("#hits .title").first.text_content() == HOSTILE
        snippet = page.locator("#hits .snippet").first
        assert "<script>window.__pwned = 3</script>" in (snippet.text_content() or "")
        assert snippet.locator("mark").all_text_contents() == ["evil"]
        assert page.evaluate("typeof window.__pwned") == "undefined"
        _shot(page, "hostile")

        # a write without the token is refused; with it the URL is stored
        page.goto(base + "/seeds")
        page.fill("textarea[name=urls]", f"{site}/new-seed")
        with page.expect_response(lambda r: r.request.method == "POST") as refused:
            page.click("button[type=submit]")
        assert refused.value.status == 403
        assert problems == [base + "/seeds"]
        problems.clear()
        assert "wrong token" in (page.text_content("#refused") or "")
        assert f"{site}/new-seed" not in _seeds(db)
        assert page.input_value("textarea[name=urls]") == f"{site}/new-seed"
        page.fill("textarea[name=urls]", f"{site}/new-seed\nnot a url")
        page.fill("input[name=token]", TOKEN)
        page.click("button[type=submit]")
        assert "1 new seeds, 0 already known, 1 skipped" in (page.text_content("#outcome") or "")
        assert f"{site}/new-seed" in _seeds(db)
        _shot(page, "seeds")
        browser.close()
    assert not problems, problems


def test_a_litecrawl_batch_is_a_run_of_the_dashboard(
    tmp_path: Path, serve: Serve, start: Callable[..., str]
) -> None:
    """A cron job's litecrawl() batch is recorded by the driver the CLI uses: shown here too."""
    site = serve(site_app({"/": html_page("<p>hello</p>")}))
    db = tmp_path / "cron.db"
    litecrawl(str(db), [site.url("/")], fetcher="http", obey_robots=False)
    [run] = _get(start(db) + "/api/overview")["runs"]
    assert (run["command"], run["fetched"], run["outcome"]) == ("litecrawl()", 1, "done")
    assert run["worker"] == f"{socket.gethostname()}:{os.getpid()}"


def test_api_answers_what_stats_says(crawled: tuple[str, str], start: Callable[..., str]) -> None:
    db, site = crawled
    base = start(db)
    overview = _get(base + "/api/overview")
    stats = _stats(db)
    for key in ("db", "pages", "due_now", "claimed", "next_due", "hosts", "errors", "runs"):
        assert overview[key] == stats[key], key
    assert overview["activity"]["window"] == "1h"
    assert overview["activity"]["fetched"] == 5
    assert overview["activity"]["errors"] == {"http_404": 1}
    day = _get(base + "/api/overview?window=24h")["activity"]
    assert (day["bucket_sec"], day["fetched"], day["errors"]) == (1800, 5, {"http_404": 1})
    assert sum(b["errors"].get("http_404", 0) for b in day["buckets"]) == 1
    with pytest.raises(urllib.error.HTTPError) as window:
        urllib.request.urlopen(base + "/api/overview?window=7d")
    assert window.value.code == 400

    hosts = _get(base + "/api/hosts?sort=host&order=asc")
    assert [h["host"] for h in hosts["hosts"]] == [h["host"] for h in stats["hosts"]["shown"]]
    assert isinstance(hosts["hosts"][0]["avg_response_ms"], float)

    pages = _get(base + "/api/pages?error=http_404")
    assert pages["total"] == 1
    assert pages["pages"][0]["url"] == f"{site}/gone"
    assert pages["pages"][0]["status"] == 404
    html = _get(base + "/api/pages?content_type=text/html&text=zebra")
    assert [p["url"] for p in html["pages"]] == [f"{site}/zebra"]

    detail = _get(base + "/api/page?url=" + quote(site + "/zebra", safe=""))
    assert detail["frontier"]["state"] == "crawled"
    assert detail["document"]["title"] == "Zebrafish care"
    assert detail["links_out"] == {"total": 0, "offset": 0, "limit": 100, "links": []}
    inbound = detail["links_in"]["links"]
    assert [(x["url"], x["state"]) for x in inbound] == [
        (f"{site}/", "crawled"),
        (f"{site}/hostile", "crawled"),
    ]

    # the ranking of `litecrawl search`: its default (hybrid, the crawl stored vectors) and
    # each mode asked for
    for mode in ("", "keyword", "semantic", "hybrid"):
        hits = _get(base + f"/api/search?q=zebrafish&mode={mode}")
        flags = ["--mode", mode] if mode else []
        cli = runner.invoke(app, ["search", "zebrafish", "--db", db, "--json", *flags])
        assert hits == json.loads(cli.output), mode
        assert hits[0]["url"] == f"{site}/zebra"
    assert _get(base + "/api/search?q=zebrafish&mode=keyword") != hits  # bm25 vs fused scores
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(base + "/api/search?q=zebrafish&mode=psychic")
    assert unknown.value.code == 400

    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(base + "/api/page?url=" + quote(site + "/nowhere", safe=""))
    assert missing.value.code == 404
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(base + "/api/pages?state=sleeping")
    assert bad.value.code == 400


def test_html_shows_what_the_crawl_stored_as_text(
    crawled: tuple[str, str], start: Callable[..., str]
) -> None:
    """A hostile title, text and link reach the HTML pages escaped, under a CSP that runs no
    script (Chromium runs them in test_dashboard_in_chromium, on SQLite)."""
    db, site = crawled
    base = start(db)
    title = (
        "&lt;script&gt;window.__pwned = 1&lt;/script&gt;"
        "&lt;img src=x onerror=&#34;window.__pwned = 2&#34;&gt;Hostile"
    )
    hostile = quote(site + "/hostile", safe="")
    for path in (f"/page?url={hostile}", "/pages?text=hostile", "/search?q=evil"):
        with urllib.request.urlopen(base + path) as response:
            csp = response.headers["Content-Security-Policy"]
            html = response.read().decode()
        assert csp.startswith("default-src 'none';") and "script-src" not in csp, path
        assert title in html, path
        assert "<script>window" not in html and "javascript:" not in html, path
        assert "<img src=x" not in html, path
    with urllib.request.urlopen(base + f"/page?url={hostile}") as response:
        html = response.read().decode()
    assert "evil page &lt;script&gt;window.__pwned = 3&lt;/script&gt;" in html  # the preview
    # not in the frontier: text, no link; the characters HTML gives meaning to escaped
    shown = EVIL.replace("&", "&amp;").replace("'", "&#39;")
    assert f'<span class="url">{shown}</span>' in html
    with urllib.request.urlopen(base + "/search?q=evil") as response:
        assert '<div class="snippet"><mark>evil</mark> page' in response.read().decode()


def test_writes_need_token_and_csrf(crawled: tuple[str, str], start: Callable[..., str]) -> None:
    db, site = crawled
    base = start(db, "--token", TOKEN)
    body = json.dumps({"urls": [f"{site}/api-seed"]}).encode()
    json_type = {"Content-Type": "application/json"}
    assert _post(base + "/api/seeds", body, json_type)[0] == 403
    assert _post(base + "/api/seeds", body, {**json_type, "X-Litecrawl-Token": "wrong"})[0] == 403
    assert f"{site}/api-seed" not in _seeds(db)
    status, answer = _post(base + "/api/seeds", body, {**json_type, "X-Litecrawl-Token": TOKEN})
    assert status == 200
    assert json.loads(answer)["added"] == 1
    assert f"{site}/api-seed" in _seeds(db)

    # the form: the right token but no matching CSRF cookie is refused
    form = f"urls={quote(site + '/form-seed')}&token={TOKEN}&csrf={'x' * 43}".encode()
    form_type = {"Content-Type": "application/x-www-form-urlencoded"}
    assert _post(base + "/seeds", form, form_type)[0] == 403
    cookie = {**form_type, "Cookie": f"litecrawl_csrf={'y' * 43}"}
    assert _post(base + "/seeds", form, cookie)[0] == 403
    assert f"{site}/form-seed" not in _seeds(db)
    matching = {**form_type, "Cookie": f"litecrawl_csrf={'x' * 43}"}
    assert _post(base + "/seeds", form, matching)[0] == 200
    assert f"{site}/form-seed" in _seeds(db)

    # another Host (DNS rebinding) gets nothing
    request = urllib.request.Request(base + "/api/overview", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as rebound:
        urllib.request.urlopen(request)
    assert rebound.value.code == 421


def test_read_only_refuses_every_write(crawled: tuple[str, str], start: Callable[..., str]) -> None:
    db, site = crawled
    base = start(db, "--read-only", "--token", TOKEN)
    body = json.dumps({"urls": [f"{site}/ro-seed"]}).encode()
    headers = {"Content-Type": "application/json", "X-Litecrawl-Token": TOKEN}
    status, answer = _post(base + "/api/seeds", body, headers)
    assert status == 403
    assert "read-only" in json.loads(answer)["error"]
    assert f"{site}/ro-seed" not in _seeds(db)
    with urllib.request.urlopen(base + "/seeds") as response:
        assert '<form method="post"' not in response.read().decode()


def test_serve_refuses_bad_usage(tmp_path: Path) -> None:
    result = runner.invoke(app, ["serve", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2
    assert "no database at" in result.output
    (tmp_path / "other.db").write_bytes(b"")
    result = runner.invoke(app, ["serve", "--db", str(tmp_path / "other.db")])
    assert result.exit_code == 2
    assert "no such table: pages" in result.output
    result = runner.invoke(app, ["serve", "--db", str(tmp_path / "other.db"), "--token", "short"])
    assert result.exit_code == 2
    assert "--token must be at least 8 characters" in result.output


def test_serve_refuses_a_postgres_database_it_cannot_read(pg_url: str) -> None:
    result = runner.invoke(app, ["serve", "--db", pg_url])  # no tables: never crawled
    assert result.exit_code == 2
    assert result.output.strip().endswith('relation "pages" does not exist')
    parts = urlsplit(pg_url)
    secret = f"{parts.username}:s3cret-pw@{parts.hostname}:{parts.port}"
    missing = urlunsplit(parts._replace(netloc=secret, path=parts.path + "_gone"))
    result = runner.invoke(app, ["serve", "--db", missing])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert "s3cret-pw" not in result.output and ":***@" in result.output


def test_reads_while_a_crawl_holds_the_write_lock(
    crawled: tuple[str, str], start: Callable[..., str]
) -> None:
    """The dashboard reads while a writer holds its transaction open (SQLite's WAL,
    PostgreSQL's MVCC), and shows the live worker."""
    db, site = crawled
    base = start(db)
    frontier = open_frontier(db)

    async def register() -> None:
        await frontier.open()
        await frontier.register_worker(current_identity(), time.time())

    loop = asyncio.new_event_loop()  # one loop for the frontier's life (its pool lives in it)
    loop.run_until_complete(register())
    writer: Any
    if db.startswith("postgresql://"):
        writer = psycopg.connect(db)  # a transaction begins with the first statement
    else:
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
    try:
        writer.execute(f"INSERT INTO pages (norm_url, host) VALUES ('{site}/uncommitted', 'x')")
        overview = _get(base + "/api/overview")  # does not wait for the writer
        assert overview["pages"]["total"] == 5  # nor sees what it has not committed
        assert [w["status"] for w in overview["workers"]] == ["alive"]
        assert overview["workers"][0]["pid"] == os.getpid()
        pages = _get(base + "/api/pages?text=uncommitted")
        assert pages["total"] == 0
        writer.commit() if db.startswith("postgresql://") else writer.execute("COMMIT")
    finally:
        writer.close()
        loop.run_until_complete(frontier.close())
        loop.close()
    assert _get(base + "/api/overview")["pages"]["total"] == 6


def _sites(db: str, serve: Serve) -> tuple[str, str]:
    """A site queue (docs/sites.md) checked against two local sites: a relevant blog with a
    hostile title and a parked page; their base URLs."""
    words = " ".join(["Zebrafish and guppies live in our planted aquarium."] * 8)
    blog = serve(site_app({"/": html_page(f"<p>{words}</p>", HOSTILE)})).url("/")
    parked = serve(site_app({"/": html_page("<p>soon</p>", "Parked")})).url("/")
    assert runner.invoke(app, ["sites", "add", blog, parked, "--db", db]).exit_code == 0
    assert runner.invoke(app, ["sites", "check", "--db", db]).exit_code == 0
    return blog, parked


def test_sites_api_and_annotations(new_db: NewDb, serve: Serve, start: Callable[..., str]) -> None:
    db = new_db("sites")
    blog, parked = _sites(db, serve)
    base = start(db, "--token", TOKEN)

    listed = _get(base + "/api/sites")
    assert listed["counts"] == {"relevant": 1, "irrelevant": 1, "whitelisted": 0, "blacklisted": 0}
    assert [s["base_url"] for s in listed["sites"]] == sorted([blog, parked])
    assert [s["base_url"] for s in _get(base + "/api/sites?status=irrelevant")["sites"]] == [parked]
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(base + "/api/sites?status=sleeping")
    assert bad.value.code == 400
    shown = _get(base + "/api/site?url=" + quote(parked, safe=""))
    assert (shown["site"]["status"], shown["annotations"]) == ("irrelevant", [])
    assert "1 word," in shown["site"]["reason"]
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(base + "/api/site?url=" + quote("http://nowhere.test/", safe=""))
    assert unknown.value.code == 404

    # writes: the token required, bad kinds named
    def annotate(body: dict[str, str], token: str | None = TOKEN) -> tuple[int, str]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["X-Litecrawl-Token"] = token
        return _post(base + "/api/site/annotate", json.dumps(body).encode(), headers)

    assert annotate({"url": parked, "kind": "whitelist"}, token=None)[0] == 403
    assert _get(base + "/api/site?url=" + quote(parked, safe=""))["annotations"] == []
    status, text = annotate({"url": parked, "kind": "note", "text": "<b>a friend's</b> shop"})
    assert status == 200 and json.loads(text) == {"site": parked, "added": "note"}
    assert annotate({"url": parked, "kind": "whitelist"})[0] == 200
    status, text = annotate({"url": parked, "kind": "gold"})
    assert status == 400 and "kind must be one of" in text
    notes = _get(base + "/api/site?url=" + quote(parked, safe=""))["annotations"]
    assert [(n["kind"], n["text"]) for n in notes] == [
        ("note", "<b>a friend's</b> shop"),
        ("whitelist", None),
    ]

    # the next check makes the whitelisted site relevant; a crawl of the sites is recorded
    assert runner.invoke(app, ["sites", "check", "--db", db]).exit_code == 0
    shown = _get(base + "/api/site?url=" + quote(parked, safe=""))
    assert (shown["site"]["status"], shown["site"]["reason"]) == ("relevant", "whitelisted")
    assert shown["crawls"] == []
    whitelisted = _get(base + "/api/sites?status=whitelisted")
    assert [s["base_url"] for s in whitelisted["sites"]] == [parked]
    assert whitelisted["counts"]["whitelisted"] == 1
    assert runner.invoke(app, ["sites", "run", "--once", "--db", db]).exit_code == 0
    shown = _get(base + "/api/site?url=" + quote(parked, safe=""))
    assert [(c["kind"], c["fetched"], c["interrupted"]) for c in shown["crawls"]] == [
        ("full", 1, False)
    ]
    assert shown["site"]["next_crawl"] is not None


@pytest.mark.skipif(
    not have_chromium() and not os.environ.get("CI"), reason="no Chromium on this machine"
)
def test_sites_pages_in_chromium(tmp_path: Path, serve: Serve, start: Callable[..., str]) -> None:
    db = str(tmp_path / "sites.db")
    blog, parked = _sites(db, serve)
    base = start(db, "--token", TOKEN)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if "Policy" in m.text else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.goto(base + "/sites")
        assert page.locator("#sites tbody tr").count() == 2
        assert HOSTILE in (page.text_content("#sites") or "")  # the title, as text
        _shot(page, "sites")
        page.click(f"#sites a[href='/site?url={quote(parked, safe='')}']")
        assert page.text_content("#site-status") == "irrelevant"
        assert "1 word," in (page.text_content("#site-reason") or "")
        # without the token: refused, nothing stored
        with page.expect_response(lambda r: r.request.method == "POST") as refused:
            page.click("button[value=whitelist]")
        assert refused.value.status == 403
        assert "wrong token" in (page.text_content("#refused") or "")
        assert _get(base + "/api/site?url=" + quote(parked, safe=""))["annotations"] == []
        # with it: stored and shown
        page.fill("input[name=token]", TOKEN)
        page.fill("input[name=text]", "<b>a friend's</b> shop")
        page.click("button[value=note]")
        page.fill("input[name=token]", TOKEN)
        page.click("button[value=whitelist]")
        notes = page.locator("#annotations li").all_text_contents()
        assert [n.split()[0].rstrip(":") for n in notes] == ["note", "whitelist"]
        assert "<b>a friend's</b> shop" in notes[0]  # text, not markup
        _shot(page, "site")
        page.goto(base + "/site?url=" + quote(blog, safe=""))
        assert page.evaluate("typeof window.__pwned") == "undefined"
        browser.close()
    assert not problems, problems
    notes = _get(base + "/api/site?url=" + quote(parked, safe=""))["annotations"]
    assert [n["kind"] for n in notes] == ["note", "whitelist"]


def test_a_change_rate_is_shown_only_once_measured(
    tmp_path: Path, serve: Serve, start: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page fetched once has no measured change rate: null in the export and the dashboard's
    page (not the estimator's prior, which says nothing of the page); after a re-fetch, a rate."""
    served = {"n": 0}

    async def news(request: web.Request) -> web.Response:
        served["n"] += 1
        return web.Response(text=html_page(f"<p>item {served['n']}</p>"), content_type="text/html")

    web_app = web.Application()
    web_app.router.add_get("/news", news)
    site = serve(web_app)
    db = str(tmp_path / "news.db")
    url = site.url("/news")

    def shown(base: str) -> tuple[Any, Any, str]:
        export = runner.invoke(app, ["export", "--db", db, "--format", "jsonl", "--no-text"])
        [record] = [json.loads(x) for x in export.output.splitlines() if x.startswith("{")]
        detail = _get(base + "/api/page?url=" + quote(url, safe=""))["frontier"]
        with urllib.request.urlopen(base + "/page?url=" + quote(url, safe="")) as response:
            html = response.read().decode()
        cell = html.split('id="change-rate">', 1)[1].split("</td>", 1)[0]
        assert record["checks"] == detail["checks"]
        return record["change_rate"], detail["change_rate"], cell

    monkeypatch.chdir(tmp_path)  # the crawl's disk cache: tmp_path/.cache/litecrawl
    crawl = ["crawl", url, "--db", db, "-q", "--delay-ms", "0", "--no-embed"]

    def crawl_it() -> None:
        result = runner.invoke(app, crawl, catch_exceptions=False)
        assert result.exit_code == 0, result.output

    crawl_it()
    base = start(db)
    assert shown(base) == (None, None, "not measured: no re-fetch yet")
    assert _stats(db)["changes"] == {}
    db_execute(
        db,
        "UPDATE pages SET last_crawl_time = last_crawl_time - 172800, "
        "next_crawl_time = next_crawl_time - 172800",
    )  # two days pass
    crawl_it()
    exported, detailed, cell = shown(base)
    assert exported == detailed and exported > 0 and cell.startswith("every ")
    assert _stats(db)["changes"]["pages re-fetched"] == 1
    # the re-crawl interval shown is the one the schedule gave, kept with the page (the
    # multiplicative rule: a changed page's interval before, the new page's day, times 0.2)
    page = _get(base + "/api/page?url=" + quote(url, safe=""))
    assert page["interval_sec"] == page["frontier"]["recrawl_interval"] == round(0.2 * 86400)
