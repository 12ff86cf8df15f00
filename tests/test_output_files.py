"""``--output`` files from real crawls of local sites: one file per document, the sidecar after a
304, and bodies that are not pages never downloaded past their headers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, db_execute, html_page
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def crawl(tmp_path: Path, db: str, *args: str) -> Any:
    """``litecrawl crawl`` with a disk cache and Markdown output under ``tmp_path``."""
    config = tmp_path / "cache.toml"
    config.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    base = ["crawl", "--db", db, "--config", str(config), "--quiet", "--delay-ms", "0"]
    base += ["--output", str(tmp_path / "out")]
    return runner.invoke(app, [*base, *args], catch_exceptions=False)


def sidecars(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Every sidecar under the output directory, by the URL it names."""
    found: dict[str, dict[str, Any]] = {}
    for path in (tmp_path / "out").rglob("*.meta.json"):
        meta = json.loads(path.read_text("utf-8"))
        assert meta["url"] not in found, meta["url"]
        found[meta["url"]] = {**meta, "_path": path}
    return found


# --- a 304 rewrites the sidecar's fetch fields ---------------------------------------------------


def test_304_rewrites_the_sidecar_fetch_fields(tmp_path: Path, serve: Serve) -> None:
    async def doc(request: web.Request) -> web.Response:
        if request.headers.get("If-None-Match") == '"v1"':
            return web.Response(status=304, headers={"ETag": '"v1"'})
        return web.Response(
            text=html_page("<p>A body that stays the same.</p>", "Doc"),
            content_type="text/html",
            headers={"ETag": '"v1"'},
        )

    web_app = web.Application()
    web_app.router.add_get("/doc", doc)
    site = serve(web_app)
    db = str(tmp_path / "c.db")
    assert crawl(tmp_path, db, site.url("/doc")).exit_code == 0
    meta_path = sidecars(tmp_path)[site.url("/doc")]["_path"]
    first = json.loads(meta_path.read_text("utf-8"))
    assert first["status"] == 200 and first["etag"] == '"v1"'
    markdown = meta_path.with_name("doc.md").read_text("utf-8")
    # an old fetch time, so the test sees the rewrite whatever the clock says
    meta_path.write_text(json.dumps({**first, "fetched_at": "2001-01-01T00:00:00Z"}))
    db_execute(db, "UPDATE pages SET next_crawl_time = 1")
    result = crawl(tmp_path, db, site.url("/doc"))
    assert result.exit_code == 0, result.output
    assert site.requests[-1].headers.get("If-None-Match") == '"v1"'  # answered 304
    second = json.loads(meta_path.read_text("utf-8"))
    assert second["fetched_at"] > "2020" and second["status"] == 304
    assert {k: v for k, v in second.items() if k not in ("fetched_at", "status")} == {
        k: v for k, v in first.items() if k not in ("fetched_at", "status")
    }
    assert meta_path.with_name("doc.md").read_text("utf-8") == markdown
