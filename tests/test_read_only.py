"""stats, search and export read a database on a read-only file system: a read-only bind mount
in a mount namespace of its own (chmod would not do: the tests run as root, whom it does not
stop), where the same commands used to fail opening it for writing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import PATIENCE_SEC, LocalServer, site_app
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]


def _namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _namespaces(), reason="needs root and mount namespaces (unshare -m)")
def test_stats_search_and_export_read_a_database_on_a_read_only_file_system(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(site_app({"/": '<a href="/p">p</a> home', "/p": "a page about zeppelins"}))
    ro = tmp_path / "ro"
    ro.mkdir()
    db = ro / "c.db"
    flags = ["--db", str(db), "--no-cache", "--delay-ms", "0", "-q"]
    assert CliRunner().invoke(app, ["crawl", site.url("/"), *flags]).exit_code == 0
    cli = f"{sys.executable} -m litecrawl"
    out = tmp_path / "out"
    out.mkdir()
    script = (
        f"mount --bind {ro} {ro} && mount -o remount,ro,bind {ro} && "
        f"(touch {ro}/probe 2>/dev/null; echo $? > {out}/touch); "
        f"{cli} stats --db {db} --json > {out}/stats 2>&1; echo $? >> {out}/rc; "
        f"{cli} search zeppelins --db {db} > {out}/search 2>&1; echo $? >> {out}/rc; "
        f"{cli} export -f jsonl --db {db} > {out}/export 2>&1; echo $? >> {out}/rc"
    )
    subprocess.run(["unshare", "-m", "sh", "-c", script], check=True, timeout=PATIENCE_SEC)
    assert (out / "touch").read_text().strip() != "0"  # the file system really is read-only
    texts = {name: (out / name).read_text() for name in ("stats", "search", "export")}
    assert (out / "rc").read_text().split() == ["0", "0", "0"], texts
    assert json.loads(texts["stats"])["pages"]["total"] == 2
    assert site.url("/p") in texts["search"]
    assert sum(line.startswith("{") for line in texts["export"].splitlines()) == 2


def test_a_reader_brings_an_older_writable_database_up_to_date(
    tmp_path: Path, serve: Serve
) -> None:
    """A database of an older litecrawl (its migrations since ``lost_claims`` undone): stats,
    search and export read it after bringing it up to date, instead of asking for a crawl."""
    from test_lost_claims import MATE, _old_database

    from litecrawl.store.sqlite.migrations import MIGRATIONS

    db = _old_database(tmp_path, "lost_claims", "")
    before = sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0]
    assert before < len(MIGRATIONS)
    stats = CliRunner().invoke(app, ["stats", "--db", str(db), "--json"])
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.output)["pages"]["total"] == 2
    after = sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0]
    assert after == len(MIGRATIONS)
    rows = sqlite3.connect(db).execute("SELECT norm_url FROM pages").fetchall()
    assert (MATE,) in rows  # what it held is still there


def test_an_export_that_fails_keeps_the_file_it_would_have_replaced(tmp_path: Path) -> None:
    out = tmp_path / "pages.jsonl"
    out.write_text('{"url": "an earlier export"}\n')
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(b"not a database" * 100)
    for args in (["-f", "jsonl"], ["-f", "parquet"]):
        result = CliRunner().invoke(app, ["export", *args, "--db", str(damaged), "-o", str(out)])
        assert result.exit_code != 0, result.output
        assert out.read_text() == '{"url": "an earlier export"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.db", "pages.jsonl"]
