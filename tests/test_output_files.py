"""``--output`` files from real crawls of local sites: one file per document, the sidecar after a
304, and bodies that are not pages never downloaded past their headers."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, db_execute, db_rows, html_page
from typer.testing import CliRunner

from litecrawl.cache import DiskCache
from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()


def crawl(tmp_path: Path, db: str, *args: str) -> Any:
    """``litecrawl crawl`` with a disk cache and Markdown output under ``tmp_path``."""
    config = tmp_path / "cache.toml"
    config.write_text(f'[cache]\ndir = "{tmp_path / "cache"}"\n')
    base = ["crawl", "--db", db, "--config", str(config), "--quiet", "--delay-ms", "0"]
    base += ["--output", str(tmp_path / "out"), "--no-embed"]
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


# --- bodies that are not pages: not downloaded past their headers --------------------------------

PDF_SIZE = 9 * 2**20  # under the 10 MB limit: before the rule, it was read whole
CHUNK = 2**16


def pdf_site(sent: dict[str, object]) -> web.Application:
    """``/`` links to ``/report.pdf``, streamed slowly; ``sent`` says how much of it was written
    and whether the whole of it went out."""

    async def home(request: web.Request) -> web.Response:
        body = '<p>The yearly report.</p><a href="/report.pdf">report</a>'
        return web.Response(text=html_page(body, "Home"), content_type="text/html")

    async def report(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/pdf"})
        await response.prepare(request)
        sent.update(bytes=0, complete=False)
        chunk = b"%PDF-1.7 " + b"x" * (CHUNK - 9)
        try:
            for _ in range(PDF_SIZE // CHUNK):
                await response.write(chunk)
                sent["bytes"] = int(str(sent["bytes"])) + CHUNK
                await asyncio.sleep(0.001)  # the client has time to hang up
            await response.write_eof()
            sent["complete"] = True
        except (ConnectionError, RuntimeError):
            pass  # the client closed the connection: what the test wants to see
        return response

    web_app = web.Application()
    web_app.router.add_get("/", home)
    web_app.router.add_get("/report.pdf", report)
    return web_app


def test_a_pdf_is_skipped_after_its_headers(tmp_path: Path, serve: Serve) -> None:
    sent: dict[str, object] = {}
    site = serve(pdf_site(sent))
    db = str(tmp_path / "c.db")
    result = crawl(tmp_path, db, site.url("/"), "--max-depth", "1")
    assert result.exit_code == 0, result.output  # a skipped PDF is no failure of the crawl
    assert site.count("/report.pdf") == 1 and sent["complete"] is False
    assert int(str(sent["bytes"])) < PDF_SIZE / 2
    row = db_rows(db)[site.url("/report.pdf")]
    assert row["error"] == "content_type" and row["content_type"] is None
    assert "content_type" in result.output and "application/pdf" in result.output
    cached = [p.name for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert len(cached) == 2 and all(not n.startswith(_sha(site.url("/report.pdf"))) for n in cached)
    assert sorted(sidecars(tmp_path)) == [site.url("/")]


def test_accept_type_downloads_the_pdf_and_caches_it_as_pdf(tmp_path: Path, serve: Serve) -> None:
    sent: dict[str, object] = {}
    site = serve(pdf_site(sent))
    db = str(tmp_path / "c.db")
    args = (site.url("/"), "--max-depth", "1", "--accept-type", "application/pdf")
    result = crawl(tmp_path, db, *args)
    assert result.exit_code == 0, result.output
    assert sent["complete"] is True
    row = db_rows(db)[site.url("/report.pdf")]
    assert row["error"] is None and row["status"] == 200
    assert row["content_type"] == "application/pdf"
    sha = _sha(site.url("/report.pdf"))
    bodies = [p for p in (tmp_path / "cache").rglob(f"{sha}.*") if p.suffix != ".json"]
    assert [p.name for p in bodies] == [f"{sha}.pdf"]  # never under a .html name
    assert bodies[0].stat().st_size == PDF_SIZE
    cached = DiskCache(tmp_path / "cache").load(site.url("/report.pdf"))
    assert cached is not None and cached.body[:8] == b"%PDF-1.7"


def test_accept_type_refuses_what_is_not_a_media_type(tmp_path: Path) -> None:
    result = crawl(tmp_path, str(tmp_path / "c.db"), "http://127.0.0.1:9/", "--accept-type", "pdf")
    assert result.exit_code == 2
    assert "fetch.accept_types" in result.output and "pdf" in result.output


def _sha(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()
