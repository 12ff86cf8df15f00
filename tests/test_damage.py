"""A damaged database file, or one that is not a database, stops a crawl at once with one line
naming the file and how to recover it (exit 1), and ``stats`` says the same; a full disk (a
real one: a tiny tmpfs in a mount namespace of its own) ends a crawl with one line, exit 1, and
what was written before is kept and crawled on from; PostgreSQL's disk full (SQLSTATE 53100)
ends a crawl the same way instead of being waited out."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, crawler_env, db_execute, db_query, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def pages(n: int, words: int = 0) -> web.Application:
    """/ links to /p0../p{n-1}; each page holds ``words`` distinct words."""
    links = "".join(f'<a href="/p{i}">p{i}</a>' for i in range(n))
    site: dict[str, str] = {"/": links}
    for i in range(n):
        site[f"/p{i}"] = " ".join(f"w{i}x{j}" for j in range(words)) or f"page {i}"
    return site_app(site)


def crawl(db: Path | str, *urls: str) -> tuple[int, str]:
    flags = ["--no-cache", "--delay-ms", "0", "--max-depth", "0", "-q"]
    result = runner.invoke(app, ["crawl", *urls, "--db", str(db), *flags])
    return result.exit_code, result.stderr


def test_a_damaged_database_stops_the_crawl_and_stats_says_so(tmp_path: Path, serve: Serve) -> None:
    site = serve(pages(20))
    db = tmp_path / "d.db"
    assert crawl(db, site.url("/"))[0] == 0
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = db.stat().st_size
    with db.open("r+b") as f:  # all but the schema page: every table and index is garbage
        f.seek(4096)
        f.write(os.urandom(size - 4096))
    code, err = crawl(db, site.url("/"), site.url("/new"))
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert f"{db} is damaged" in err and f"sqlite3 {db} .recover" in err
    result = runner.invoke(app, ["stats", "--db", str(db)])
    assert result.exit_code == 1 and f"{db} is damaged" in result.stderr


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path, serve: Serve) -> None:
    site = serve(pages(2))
    db = tmp_path / "notes.db"
    db.write_bytes(os.urandom(8192))
    code, err = crawl(db, site.url("/"))
    assert code == 1 and err.startswith(f"error: {db} is damaged (file is not a database)"), err
    assert "Traceback" not in err


def _namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _namespaces(), reason="needs root and mount namespaces (unshare -m)")
def test_a_full_disk_ends_the_crawl_with_one_line_and_loses_nothing(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(pages(160, words=400))
    disk, kept = tmp_path / "disk", tmp_path / "kept"
    disk.mkdir()
    kept.mkdir()
    crawl_cmd = [sys.executable, "-m", "litecrawl", "crawl", site.url("/"), "--db"]
    flags = "--no-cache --delay-ms 0 --max-depth 0 -q"
    # a 1 MiB file system of its own (a new database and its WAL take ~0.55 MiB), gone with the
    # namespace; what it held is copied out
    script = (
        f"mount -t tmpfs -o size=1024k tmpfs {disk} && "
        f"{' '.join(crawl_cmd)} {disk}/c.db {flags} 2> {tmp_path}/err; "
        f"echo $? > {tmp_path}/rc; cp -a {disk}/. {kept}/"
    )
    subprocess.run(
        ["unshare", "-m", "sh", "-c", script], check=True, timeout=240, env=crawler_env()
    )
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "1", err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "the disk is full" in err and "Traceback" not in err
    db = kept / "c.db"
    assert db_query(db, "PRAGMA integrity_check") == [("ok",)]
    assert db_query(db, "SELECT norm_url FROM pages WHERE source = 'seed'") == [(site.url("/"),)]
    # with room again, the same command goes on from there and crawls the rest
    again = subprocess.run(
        [*crawl_cmd, str(db), *flags.split()], capture_output=True, timeout=240, env=crawler_env()
    )
    assert again.returncode == 0, again.stderr.decode()
    rows = db_query(db, "SELECT count(*) FROM pages WHERE last_crawl_time IS NULL")
    assert rows == [(0,)] and len(db_query(db, "SELECT 1 FROM pages")) == 161


def test_a_full_disk_on_postgresql_ends_the_crawl_with_one_line(pg_url: str, serve: Serve) -> None:
    """The server raises disk_full (53100) on every write of pages, as it does when a table
    cannot grow (a real full disk would need a tablespace on a tiny file system, which takes
    root in the server's mount namespace): one line, exit 1; once there is room the same
    command crawls on."""
    site = serve(pages(5))
    assert crawl(pg_url, site.url("/p0"))[0] == 0  # a leaf: nothing else
    db_execute(
        pg_url,
        "CREATE FUNCTION full_disk() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'could not extend file \"base/16384/16385\": No space left on device'"
        " USING ERRCODE = 'disk_full'; END $$",
    )
    db_execute(
        pg_url,
        "CREATE TRIGGER full_disk BEFORE INSERT OR UPDATE ON pages "
        "FOR EACH STATEMENT EXECUTE FUNCTION full_disk()",
    )
    code, err = crawl(pg_url, site.url("/"))
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "the disk is full" in err and "No space left on device" in err
    db_execute(pg_url, "DROP TRIGGER full_disk ON pages")
    assert crawl(pg_url, site.url("/"))[0] == 0
    assert db_query(pg_url, "SELECT count(*) FROM pages WHERE last_crawl_time IS NOT NULL") == [
        (6,)
    ]
