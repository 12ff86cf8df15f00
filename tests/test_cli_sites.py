"""``litecrawl sites``: the site queue, relevance checks and annotations, on real local sites."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, NewDb, db_query, html_page, redirect_to, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()
TEXT = "<p>" + " ".join(["Our aquarium keeps zebrafish, guppies and tetras in clean water."] * 6)
TEXT_DE = "<p>" + " ".join(
    ["Das Aquarium ist gross und die Fische sind sehr schön und gesund."] * 6
)


def _run(db: str | Path, *args: str) -> Any:
    result = runner.invoke(app, ["sites", *args, "--db", str(db)])
    return result


def _sites(db: str | Path) -> dict[str, dict[str, Any]]:
    result = _run(db, "list", "--json")
    assert result.exit_code == 0, result.output
    return {s["base_url"]: s for s in map(json.loads, result.stdout.splitlines())}


def _blog(title: str = "Fish blog", text: str = TEXT) -> web.Application:
    """A site with real text, a feed link and a sitemap in its robots.txt."""
    head = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
    app = web.Application()

    async def home(request: web.Request) -> web.Response:
        body = html_page(f"{text}</p><a href='/about'>about</a>", title, head)
        return web.Response(text=body, content_type="text/html")

    async def robots(request: web.Request) -> web.Response:
        sitemap = f"http://{request.host}/sitemap.xml"
        return web.Response(text=f"User-agent: *\nAllow: /\nSitemap: {sitemap}\n")

    app.router.add_get("/", home)
    app.router.add_get("/robots.txt", robots)
    return app


def _moved() -> web.Application:
    """A site whose start page redirects to its real base URL."""
    app = web.Application()

    async def new(request: web.Request) -> web.Response:
        return web.Response(text=html_page(TEXT, "Moved blog"), content_type="text/html")

    app.router.add_get("/", redirect_to("/new/"))
    app.router.add_get("/new/", new)
    return app


def test_add_from_a_file_with_annotations(tmp_path: Path, serve: Serve, new_db: NewDb) -> None:
    db = new_db("s")
    listing = tmp_path / "sites.txt"
    listing.write_text(
        "# fish sites\nhttps://fish.example/\n+https://good.example/blog/index.html\n"
        "-https://spam.example\n\nnot a url\nhttps://fish.example/\n"
    )
    result = _run(db, "add", str(listing))
    assert result.exit_code == 0, result.output
    assert "3 new sites, 1 already known, 2 annotated, 1 skipped" in result.stdout
    assert "not a url" in result.stderr
    sites = _sites(db)
    assert set(sites) == {
        "https://fish.example/",
        "https://good.example/blog/",
        "https://spam.example/",
    }
    assert {s["status"] for s in sites.values()} == {"queued"}
    shown = _run(db, "show", "https://good.example/blog/")
    assert "annotation: whitelist" in shown.stdout
    # URLs as arguments; known ones are not added twice
    again = _run(db, "add", "https://fish.example/", "https://new.example/")
    assert "1 new sites, 1 already known" in again.stdout


def test_check_decides_relevance_by_start_page_and_annotations(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    blog = serve(_blog())
    tiny = serve(site_app({"/": html_page("<p>Coming soon</p>", "Parked")}))
    gone = serve(site_app({}))  # 404 everywhere
    pdf = serve(site_app({"/": (200, "application/pdf", "%PDF-1.4")}))
    shut = serve(site_app({"/robots.txt": (200, "text/plain", "User-agent: *\nDisallow: /\n")}))
    banned = serve(_blog())
    liked = serve(site_app({"/": html_page("<p>short</p>", "Small but good")}))
    moved = serve(_moved())
    db = new_db("s")
    urls = [s.url("/") for s in (blog, tiny, gone, pdf, shut, moved)]
    assert _run(db, "add", *urls).exit_code == 0
    assert _run(db, "annotate", banned.url("/"), "--blacklist").exit_code == 0
    assert _run(db, "annotate", liked.url("/"), "--whitelist").exit_code == 0
    assert _run(db, "add", banned.url("/"), liked.url("/")).exit_code == 0

    result = _run(db, "check")
    assert result.exit_code == 0, result.output
    assert "checked 8 sites: 5 irrelevant, 3 relevant" in result.stdout, result.stdout
    sites = _sites(db)
    status = {u: (s["status"], s["reason"]) for u, s in sites.items()}
    assert status[blog.url("/")] == ("relevant", "filter: relevant")
    assert status[tiny.url("/")][0] == "irrelevant" and "2 words" in status[tiny.url("/")][1]
    assert status[gone.url("/")] == ("irrelevant", "start page answered HTTP 404")
    assert status[pdf.url("/")][0] == "irrelevant" and "application/pdf" in status[pdf.url("/")][1]
    assert status[shut.url("/")][0] == "irrelevant" and "robots" in status[shut.url("/")][1]
    assert shut.count("/") == 0  # robots.txt obeyed
    assert status[banned.url("/")] == ("irrelevant", "blacklisted")
    assert banned.paths() == []  # a blacklisted site is not fetched at all
    assert status[liked.url("/")] == ("relevant", "whitelisted")  # whatever the filter says
    assert sites[moved.url("/")]["final_url"] == moved.url("/new/")  # the real base URL
    assert sites[moved.url("/")]["status"] == "relevant"
    info = sites[blog.url("/")]
    assert (info["title"], info["language"]) == ("Fish blog", "en")
    assert info["feeds"] == [blog.url("/feed.xml")]
    assert info["sitemaps"] == [blog.url("/sitemap.xml")]
    shown = _run(db, "show", blog.url("/")).stdout
    assert f"feed: {blog.url('/feed.xml')}" in shown and "status: relevant" in shown
    for listing, site in (("blacklisted", banned), ("whitelisted", liked)):
        listed = _run(db, "list", "--status", listing).stdout.splitlines()
        assert [line.split()[1] for line in listed] == [site.url("/")]


def test_revisit_delay_and_annotations_change_the_verdict(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    blog = serve(_blog())
    db = new_db("s")
    _run(db, "add", blog.url("/"))
    assert "1 relevant" in _run(db, "check").stdout
    assert "checked 0 sites: none due" in _run(db, "check").stdout  # within site_revisit_delay
    assert blog.count("/") == 1
    # a blacklisting makes the site due again, and wins over the filter
    assert _run(db, "annotate", blog.url("/"), "--blacklist").exit_code == 0
    assert "1 irrelevant" in _run(db, "check").stdout
    assert _sites(db)[blog.url("/")]["reason"] == "blacklisted"
    assert _run(db, "annotate", blog.url("/"), "--remove", "blacklist").exit_code == 0
    assert "1 relevant" in _run(db, "check").stdout
    assert blog.count("/") == 2  # not fetched while blacklisted
    # with no revisit delay every pass checks again
    conf = tmp_path / "c.toml"
    conf.write_text("[sites]\nsite_revisit_delay = 0\n")
    result = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert "checked 1 sites: 1 relevant" in result.stdout
    assert blog.count("/") == 3


def test_filter_plugin_and_languages(
    tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch, new_db: NewDb
) -> None:
    (tmp_path / "fishfilter.py").write_text(
        "def only_blogs(page):\n"
        "    return 'blog' in page.title.lower() and bool(page.feeds)\n"
        "def broken(page):\n"
        "    raise RuntimeError('oops')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    blog = serve(_blog())
    shop = serve(_blog(title="Fish shop"))
    german = serve(_blog(title="Fischblog", text=TEXT_DE))
    db = new_db("s")
    _run(db, "add", blog.url("/"), shop.url("/"), german.url("/"))
    conf = tmp_path / "c.toml"
    conf.write_text('[sites]\nfilter = "fishfilter:only_blogs"\nsite_revisit_delay = 0\n')
    result = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert result.exit_code == 0, result.output
    status = {u: s["status"] for u, s in _sites(db).items()}
    assert status == {
        blog.url("/"): "relevant",
        shop.url("/"): "irrelevant",
        german.url("/"): "relevant",
    }
    # the default filter limited to German
    conf.write_text('[sites]\nlanguages = ["de"]\nsite_revisit_delay = 0\n')
    runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    status = {u: s["status"] for u, s in _sites(db).items()}
    assert status == {
        blog.url("/"): "irrelevant",
        shop.url("/"): "irrelevant",
        german.url("/"): "relevant",
    }
    # a filter that raises: the site is irrelevant, with why; the run goes on
    conf.write_text('[sites]\nfilter = "fishfilter:broken"\nsite_revisit_delay = 0\n')
    result = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert result.exit_code == 0
    assert _sites(db)[blog.url("/")]["reason"] == "filter raised RuntimeError: oops"


def test_bad_usage_exits_2(tmp_path: Path, new_db: NewDb) -> None:
    db = new_db("s")
    conf = tmp_path / "c.toml"
    conf.write_text('[sites]\nfilter = "nomodule_here:f"\n')
    _run(db, "add", "https://a.example/")
    result = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert result.exit_code == 2 and "cannot import nomodule_here" in result.output
    conf.write_text('[sites]\nfilter = "not a spec"\n')
    result = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert result.exit_code == 2 and "sites.filter" in result.output
    assert _run(db, "list", "--status", "sleeping").exit_code == 2
    assert _run(db, "annotate", "https://a.example/").exit_code == 2  # no kind
    assert _run(db, "annotate", "https://a.example/", "--whitelist", "--note", "x").exit_code == 2
    assert _run(db, "annotate", "https://a.example/", "--remove", "gold").exit_code == 2
    assert _run(db, "add", str(tmp_path / "missing.txt")).exit_code == 2
    pg = runner.invoke(app, ["sites", "list", "--db", "postgresql://u:secret@127.0.0.1:1/x"])
    assert pg.exit_code == 2 and "127.0.0.1:1" in pg.output and "secret" not in pg.output
    assert _run(db, "show", "https://nowhere.example/").exit_code == 1


def test_annotations_before_the_site_exists_are_tied_to_it(tmp_path: Path, new_db: NewDb) -> None:
    db = new_db("s")
    _run(db, "annotate", "https://later.example/", "--note", "a friend's blog")
    _run(db, "add", "https://later.example/")
    rows = db_query(
        db,
        "SELECT a.kind, a.text, s.base_url FROM site_annotations a "
        "JOIN sites s ON s.id = a.site_id",
    )
    assert rows == [("note", "a friend's blog", "https://later.example/")]


def test_ctrl_c_stops_the_check_and_the_next_one_resumes(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    app = web.Application()

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(0.5)
        return web.Response(text=html_page(TEXT, "Slow blog"), content_type="text/html")

    app.router.add_get("/{site}/", slow)
    server = serve(app)
    db = new_db("s")
    urls = [server.url(f"/s{i}/") for i in range(12)]
    _run(db, "add", *urls)
    proc = subprocess.Popen(
        [sys.executable, "-m", "litecrawl", "sites", "check", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(server.paths()) < 3:  # robots.txt + 2 sites
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130, out
    assert "(interrupted)" in out
    first = {u for u, s in _sites(db).items() if s["status"] != "queued"}
    assert 0 < len(first) < 12
    result = _run(db, "check")
    assert result.exit_code == 0
    assert f"checked {12 - len(first)} sites" in result.stdout
    assert {s["status"] for s in _sites(db).values()} == {"relevant"}


def test_an_unreachable_site_is_not_irrelevant_and_is_checked_again_sooner(
    tmp_path: Path, serve: Serve, new_db: NewDb, refused_base: str
) -> None:
    blog = serve(_blog())
    down = serve(site_app({"/": (503, "text/html", "maintenance")}))
    db = new_db("s")
    _run(db, "add", blog.url("/"), down.url("/"), f"{refused_base}/")
    result = _run(db, "check")
    assert "checked 3 sites: 1 relevant, 2 unreachable" in result.stdout, result.stdout
    sites = _sites(db)
    assert sites[f"{refused_base}/"]["status"] == "unreachable"
    assert "connect" in sites[f"{refused_base}/"]["reason"]
    assert sites[down.url("/")]["reason"] == "start page answered HTTP 503"
    listed = _run(db, "list", "--status", "unreachable").stdout.splitlines()
    assert sorted(line.split()[1] for line in listed) == sorted([down.url("/"), f"{refused_base}/"])
    assert "none due" in _run(db, "check").stdout  # within unreachable_recheck_delay too
    conf = tmp_path / "c.toml"
    conf.write_text("[sites]\nunreachable_recheck_delay = 0\n")
    again = runner.invoke(app, ["sites", "check", "--db", str(db), "--config", str(conf)])
    assert "checked 2 sites: 2 unreachable" in again.stdout, again.output
    assert blog.count("/") == 1  # the relevant site waits for site_revisit_delay
