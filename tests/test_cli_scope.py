"""What ``litecrawl crawl`` takes as its scope and seeds: ``--domain``, registered domains,
seeds that are not URLs, a crawl without seeds, page budgets and forced re-crawls."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, NewDb, db_rows, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.urls import host_of

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def crawl(db: Path | str, *args: str) -> Any:
    return runner.invoke(
        app,
        ["crawl", "--db", str(db), "--no-cache", "--delay-ms", "0", "-q", *args],
        catch_exceptions=False,
    )


def test_domain_widens_the_seeds_scope_and_is_refused_with_any_domain(
    tmp_path: Path, serve: Serve
) -> None:
    pages: dict[str, str | tuple[int, str, str]] = {}
    site = serve(site_app(pages))
    other = site.base.replace("127.0.0.1", "localhost")
    links = f'<a href="/a">a</a> <a href="{other}/b">b</a> <a href="http://example.invalid/x">x</a>'
    pages |= {"/": html_page(links), "/a": html_page("a"), "/b": html_page("b")}
    db = tmp_path / "c.db"
    result = crawl(db, site.url("/"), "--domain", "localhost", "--ignore-robots")
    assert result.exit_code == 0, result.output
    assert set(db_rows(db)) == {site.url("/"), site.url("/a"), f"{other}/b"}
    # each link's host came from the analysis worker with the links, past the scope's filter
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT norm_url, host FROM pages").fetchall()
    assert {host for _, host in rows} == {host_of(site.base + "/"), host_of(other + "/")}
    assert all(host == host_of(url) for url, host in rows)
    site.requests.clear()
    both = crawl(tmp_path / "d.db", site.url("/"), "--any-domain", "--domain", "127.0.0.1")
    assert both.exit_code == 2
    assert "--domain" in both.output and "--any-domain" in both.output
    assert site.requests == []


def test_a_seed_that_is_not_an_http_url_exits_2_naming_it(tmp_path: Path, serve: Serve) -> None:
    site = serve(site_app({"/": html_page("home"), "/index.html": html_page("index")}))
    hostport = site.base.split("//")[1]
    bad = ["example.com", f"{hostport}/index.html", "htp://x", f"file://{tmp_path}/x", "http://./"]
    for seed in bad:
        result = crawl(tmp_path / "c.db", site.url("/"), seed)
        assert result.exit_code == 2, (seed, result.output)
        assert "seeds[1]" in result.output and repr(seed) in result.output
    toml = tmp_path / "site.toml"
    toml.write_text('seeds = ["example.com"]\n')
    from_file = crawl(tmp_path / "c.db", "--config", str(toml))
    assert from_file.exit_code == 2 and f"{toml}: seeds[0]" in from_file.output
    assert "http://example.com" in from_file.output  # what to write instead
    assert site.requests == []
    listed = tmp_path / "seeds.txt"
    listed.write_text(f"# seeds\n{site.url('/')}\nexample.com\n\nhtp://x\n")
    added = runner.invoke(app, ["seeds", "add", str(listed), "--db", str(tmp_path / "s.db")])
    assert "line 3: skipped (no scheme" in added.output
    assert "line 5: skipped (htp://" in added.output


def test_a_seed_the_crawl_will_not_fetch_is_named_and_exits_1(tmp_path: Path, serve: Serve) -> None:
    robots = (200, "text/plain", "User-agent: *\nDisallow: /private\n")
    pages = {"/robots.txt": robots, "/": html_page("home"), "/private": html_page("p")}
    pages |= {"/skip/me": html_page("s")}
    site = serve(site_app(pages))
    db = tmp_path / "c.db"
    seeds = [site.url("/"), site.url("/skip/me"), site.url("/private")]
    result = crawl(db, *seeds, "--exclude", "/skip/", "--no-follow")
    assert result.exit_code == 1, result.output
    assert "refused_seeds: 2" in result.output.replace("  ", " ")
    verdict = result.output.strip().splitlines()[-1]
    assert verdict.startswith("exit 1: 2 seeds not crawled"), result.output
    assert f"{site.url('/skip/me')} (left out by the include/exclude patterns)" in verdict
    assert f"{site.url('/private')} (disallowed by robots.txt)" in verdict
    assert "/skip/me" not in site.paths() and "/private" not in site.paths()
    assert "/" in site.paths()
    fine = crawl(tmp_path / "d.db", site.url("/"), "--exclude", "/skip/", "--no-follow")
    assert fine.exit_code == 0, fine.output


def test_a_crawl_without_seeds_resumes_the_frontier_on_its_sites(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(4))
    pages: dict[str, str | tuple[int, str, str]] = {
        "/": html_page(links + '<a href="http://example.invalid/x">x</a>')
    }
    pages |= {f"/p{i}": html_page(f"page {i}") for i in range(4)}
    site = serve(site_app(pages))
    db = new_db("c")
    first = crawl(db, site.url("/"), "--max-pages", "2", "--ignore-robots")
    assert first.exit_code == 0, first.output
    assert len(set(site.paths())) == 2  # distinct: a loaded machine may retry one
    args = ["crawl", "--db", str(db), "--no-cache", "--delay-ms", "0", "--ignore-robots"]
    resumed = runner.invoke(app, args, catch_exceptions=False)  # not -q: the INFO line is read
    assert resumed.exit_code == 0, resumed.output
    host = site.url("/").split("/")[2]
    assert f"no seeds: resuming {host} with this run's settings" in resumed.output
    assert set(site.paths()) == {"/", "/p0", "/p1", "/p2", "/p3"}
    assert "http://example.invalid/x" not in db_rows(db)  # still the seeds' site only
    nothing = crawl(tmp_path / "none.db")
    assert nothing.exit_code == 2 and "no seed URLs" in nothing.output
    assert not (tmp_path / "none.db").exists()  # not made for nothing
    empty = tmp_path / "empty.db"
    (tmp_path / "empty.txt").write_text("# nothing yet\n")
    runner.invoke(app, ["seeds", "add", str(tmp_path / "empty.txt"), "--db", str(empty)])
    assert empty.exists()
    bare = crawl(empty)
    assert bare.exit_code == 2 and "holds no pages" in bare.output


def summary(output: str) -> dict[str, str]:
    """The closing summary's ``key: value`` lines."""
    lines = (line.partition(":") for line in output.splitlines())
    return {k.strip(): v.strip() for k, sep, v in lines if sep and k and not k.startswith(" ")}


def test_max_pages_counts_pages_not_sitemaps(tmp_path: Path, serve: Serve) -> None:
    pages: dict[str, str | tuple[int, str, str]] = {
        f"/p{i}": html_page(f"page {i}") for i in range(5)
    }
    site = serve(site_app(pages))
    entries = "".join(f"<url><loc>{site.url(path)}</loc></url>" for path in list(pages))
    xml = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    pages["/sitemap.xml"] = (200, "application/xml", xml)
    db = tmp_path / "c.db"
    result = crawl(db, "--sitemap", site.url("/sitemap.xml"), "--max-pages", "2", "--ignore-robots")
    assert result.exit_code == 0, result.output
    assert summary(result.output)["indexed"] == "2"
    assert len({path for path in site.paths() if path.startswith("/p")}) == 2


def test_recrawl_makes_known_pages_due_and_nothing_due_says_when(
    tmp_path: Path, serve: Serve, new_db: NewDb
) -> None:
    pages: dict[str, str | tuple[int, str, str]] = {
        "/": html_page('<a href="/a">a</a> <a href="/b">b</a>'),
        "/a": html_page("page a"),
        "/b": html_page("page b"),
    }
    site = serve(site_app(pages))
    db = new_db("c")
    assert crawl(db, site.url("/"), "--ignore-robots").exit_code == 0
    assert set(site.paths()) == {"/", "/a", "/b"}  # a set: a loaded machine may retry one
    site.requests.clear()
    again = crawl(db, site.url("/"), "--ignore-robots")
    assert site.requests == []
    next_due = summary(again.output)["next_due"]
    assert "--recrawl" in next_due and next_due[:2] == "20"  # a date, then how long till then
    site.requests.clear()
    one = crawl(db, site.url("/"), "--ignore-robots", "--recrawl-match", "/a$")
    assert one.exit_code == 0, one.output
    assert set(site.paths()) == {"/a"}
    site.requests.clear()
    out = tmp_path / "out"
    every = crawl(db, "--ignore-robots", "--recrawl", "--output", str(out))
    assert every.exit_code == 0, every.output
    assert set(site.paths()) == {"/", "/a", "/b"}
    assert len(list(out.rglob("*.md"))) == 3
    bad = crawl(db, "--recrawl-match", "(")
    assert bad.exit_code == 2 and "--recrawl-match" in bad.output


def test_recrawl_reads_known_sitemaps_again(tmp_path: Path, serve: Serve) -> None:
    pages: dict[str, str | tuple[int, str, str]] = {"/p0": html_page("zero")}
    site = serve(site_app(pages))

    def listing(paths: list[str]) -> tuple[int, str, str]:
        entries = "".join(f"<url><loc>{site.url(path)}</loc></url>" for path in paths)
        xml = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        return 200, "application/xml", xml

    pages["/sitemap.xml"] = listing(["/p0"])
    db = tmp_path / "c.db"
    assert crawl(db, "--sitemap", site.url("/sitemap.xml"), "--ignore-robots").exit_code == 0
    pages |= {"/p1": html_page("one"), "/sitemap.xml": listing(["/p0", "/p1"])}
    site.requests.clear()
    result = crawl(db, "--sitemap", site.url("/sitemap.xml"), "--ignore-robots", "--recrawl")
    assert result.exit_code == 0, result.output
    assert set(site.paths()) == {"/p0", "/p1", "/sitemap.xml"}


def test_nothing_claimed_in_another_partition_says_so(new_db: NewDb, serve: Serve) -> None:
    site = serve(site_app({"/": html_page("the only page")}))
    runs = [crawl(new_db(f"p{k}"), site.url("/"), "--partition", f"{k}/2") for k in (0, 1)]
    assert all(run.exit_code == 0 for run in runs), [run.output for run in runs]
    # the site's one domain hashes to one partition: the other run claims nothing, and its
    # summary says why instead of advising --recrawl for a page already due
    idle = [summary(run.output) for run in runs if summary(run.output)["claimed"] == "0"]
    assert len(idle) == 1
    k = 1 - [summary(run.output)["claimed"] for run in runs].index("1")
    assert f"(now, in other partitions than {k}/2: stats --partitions 2)" in idle[0]["next_due"]
