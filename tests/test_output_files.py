"""``--output`` files from real crawls of local sites: one file per document, the sidecar after a
304, and bodies that are not pages never downloaded past their headers."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from aiohttp import web
from conftest import (
    LocalServer,
    db_execute,
    db_query,
    db_rows,
    have_chromium,
    html_page,
    site_app,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl.cache import DiskCache
from litecrawl.cli import app
from litecrawl.errors import UnwantedType
from litecrawl.extract import markdown_path, sidecar_path
from litecrawl.fetch.base import FetchRequest
from litecrawl.fetch.browser import BrowserFetcher

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


# --- file names: one file per document ----------------------------------------------------------

OUT = Path("/srv/out")


def h8(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/", "example.com/index.md"),
        ("https://example.com", "example.com/index.md"),
        ("https://example.com/docs/", "example.com/docs/index.md"),
        ("https://example.com/docs/intro", "example.com/docs/intro.md"),
        ("https://example.com/docs/intro#section-2", "example.com/docs/intro.md"),
        ("https://example.com/a/b/c/", "example.com/a/b/c/index.md"),
        ("https://example.com/genindex.html", "example.com/genindex.html.md"),
        ("https://example.com/vector/push_back.html", "example.com/vector/push_back.html.md"),
        ("https://example.com/child_process/", "example.com/child_process/index.md"),
        ("https://example.com/a/__init__.py", f"example.com/a/init-py-{h8('__init__.py')}.md"),
        ("https://example.com/Main_Page", f"example.com/main-page-{h8('Main_Page')}.md"),
        (
            "https://example.com/genindex-_.html",
            f"example.com/genindex-html-{h8('genindex-_.html')}.md",
        ),
        ("https://example.com/3.11/library/", "example.com/3.11/library/index.md"),
        ("https://example.com/About", f"example.com/about-{h8('About')}.md"),
        (
            "https://example.com/Docs/Getting Started.html",
            f"example.com/docs-{h8('Docs')}/getting-started-html-{h8('Getting Started.html')}.md",
        ),
        ("https://example.com/docs/index", f"example.com/docs/index-{h8('index')}.md"),
        ("https://example.com/a.md/b", f"example.com/a-md-{h8('a.md')}/b.md"),
        ("https://example.com/a%2Fb", f"example.com/a-b-{h8('a/b')}.md"),
        ("https://example.com//double//slash", f"example.com/_{h8('')}/double/_{h8('')}/slash.md"),
        ("https://Example.COM:443/a", "example.com/a.md"),
        ("http://example.com/a", "example.com_80/a.md"),
        ("http://example.com:443/a", "example.com_443/a.md"),
        ("https://example.com:8443/a", "example.com_8443_https/a.md"),
        ("http://localhost:8080/a/b/", "localhost_8080/a/b/index.md"),
        ("http://127.0.0.1:8765/", "127.0.0.1_8765/index.md"),
        ("https://example.com/list?page=2", f"example.com/list_page-2-{h8('page=2')}.md"),
        ("https://example.com/?p=1", f"example.com/index_p-1-{h8('p=1')}.md"),
        ("https://example.com/blog/?page=2", f"example.com/blog/index_page-2-{h8('page=2')}.md"),
        ("https://example.com/s?q=%E2%9C%93", f"example.com/s_q-{h8('q=%E2%9C%93')}.md"),
        ("https://example.com/über/café", f"example.com/uber-{h8('über')}/cafe-{h8('café')}.md"),
        (
            "https://example.com/%C3%BCber/caf%C3%A9",
            f"example.com/uber-{h8('über')}/cafe-{h8('café')}.md",
        ),
        ("https://example.com/日本語/", f"example.com/ri-ben-yu-{h8('日本語')}/index.md"),
        ("https://bücher.de/x", "xn--bcher-kva.de/x.md"),
        ("https://example.com/a/../b", "example.com/b.md"),
        ("https://example.com/../../etc/passwd", "example.com/etc/passwd.md"),
        ("https://example.com/a/b/..", "example.com/a/index.md"),
        ("https://example.com/%F0%9F%98%80", f"example.com/_{h8('😀')}.md"),
    ],
)
def test_markdown_path_layout(url: str, expected: str) -> None:
    assert markdown_path(OUT, url) == OUT / expected


def test_markdown_path_keeps_folded_spellings_apart() -> None:
    spellings = ("", "?q=a", "?q=b", "?q=a&page=2", "?q=A", "?q-a", "?q=a%20b", "?q=a+b")
    assert len({markdown_path(OUT, f"https://example.com/search{q}") for q in spellings}) == 8
    folded = ("/about", "/About", "/ABOUT", "/about_", "/about.", "/-about", "/about%20")
    folded += ("/a_b", "/a-b", "/a.b", "/a__b", "/a?b", "/a_b-" + h8("b"))
    assert len({markdown_path(OUT, f"https://example.com{p}") for p in folded}) == len(folded)
    same_path = ("http://example.com/a", "https://example.com/a", "https://example.com:80/a")
    assert len({markdown_path(OUT, url) for url in same_path}) == 3


def test_markdown_path_bounds_long_segments() -> None:
    path = markdown_path(OUT, "https://example.com/" + "word-" * 200)
    assert len(path.name) < 120
    assert markdown_path(OUT, "https://example.com/" + "word-" * 200 + "x") != path


def test_sidecar_path() -> None:
    assert (
        sidecar_path(OUT / "example.com/docs/intro.md") == OUT / "example.com/docs/intro.meta.json"
    )
    assert sidecar_path(OUT / "example.com/index.md") == OUT / "example.com/index.meta.json"


@settings(max_examples=300, deadline=None)
@given(
    url=st.one_of(
        st.text(max_size=80),
        st.from_regex(r"https?://[a-z.]{1,12}(:[0-9]{1,5})?/[^#]{0,60}", fullmatch=True),
    )
)
def test_property_paths_stay_inside_output_dir(url: str) -> None:
    path = markdown_path(OUT, url)
    assert path.suffix == ".md"
    assert OUT in path.parents
    assert ".." not in path.parts
    assert all(part and len(part.encode()) <= 255 for part in path.relative_to(OUT).parts)


_SEGMENT = st.text(alphabet="aAbZ09-_.~ %é/?", min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    one=st.lists(_SEGMENT, min_size=1, max_size=3), other=st.lists(_SEGMENT, min_size=1, max_size=3)
)
def test_property_different_paths_get_different_files(one: list[str], other: list[str]) -> None:
    """Two URLs whose decoded path segments differ (dot segments aside) never share a file,
    however slugify folds them, and no file is another's directory or sidecar."""
    one, other = [_quoted(s) for s in one], [_quoted(s) for s in other]
    if _resolved(one) == _resolved(other):
        return
    first = markdown_path(OUT, "https://example.com/" + "/".join(one))
    second = markdown_path(OUT, "https://example.com/" + "/".join(other))
    assert first != second
    assert first not in second.parents and second not in first.parents
    assert sidecar_path(first) != second and sidecar_path(second) != first


def _quoted(segment: str) -> str:
    return quote(segment, safe="")


def _resolved(segments: list[str]) -> list[str]:
    out: list[str] = []
    for segment in (unquote(s) for s in segments):
        if segment == "..":
            out = out[:-1]
        elif segment != ".":
            out.append(segment)
    return out


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


def test_a_page_written_again_leaves_the_name_an_earlier_litecrawl_gave_it(
    tmp_path: Path, serve: Serve
) -> None:
    """Before session 14 a path segment with "_" was slugged and hashed: the page's files move to
    the readable name, and the earlier ones go, only when their sidecar names this URL."""
    links = '<a href="/push_back.html">push_back</a> <a href="/pop_back.html">pop_back</a>'
    links += ' <a href="/forward_list/sort.html">sort</a>'
    site = serve(
        site_app({
            "/": html_page(f"<p>Containers.</p>{links}", "Home"),
            "/push_back.html": html_page("<p>Appends an element to the end.</p>", "push_back"),
            "/pop_back.html": html_page("<p>Removes the last element.</p>", "pop_back"),
            "/forward_list/sort.html": html_page("<p>Sorts the elements.</p>", "sort"),
        })
    )  # fmt: skip
    out = markdown_path(tmp_path / "out", site.url("/")).parent

    def earlier(name: str, owner: str) -> tuple[Path, Path]:
        md = out / f"{name.replace('_', '-').replace('.', '-')}-{h8(name)}.md"  # as 000c255
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text("the earlier file\n")
        sidecar_path(md).write_text(json.dumps({"url": owner}))
        return md, sidecar_path(md)

    ours = earlier("push_back.html", site.url("/push_back.html"))
    in_directory = out / f"forward-list-{h8('forward_list')}" / "sort.html.md"
    in_directory.parent.mkdir()
    in_directory.write_text("the earlier file\n")
    sidecar_path(in_directory).write_text(json.dumps({"url": site.url("/forward_list/sort.html")}))
    not_ours = earlier("pop_back.html", "https://elsewhere.example/pop_back.html")
    assert crawl(tmp_path, str(tmp_path / "c.db"), site.url("/")).exit_code == 0
    found = sidecars(tmp_path)
    assert found[site.url("/push_back.html")]["_path"] == out / "push_back.html.meta.json"
    assert found[site.url("/pop_back.html")]["_path"] == out / "pop_back.html.meta.json"
    assert "Appends an element" in (out / "push_back.html.md").read_text("utf-8")
    assert not any(path.exists() for path in ours)
    assert (out / "forward_list" / "sort.html.md").exists()
    assert not in_directory.parent.exists()  # the earlier name's directory, left empty: gone
    assert all(path.exists() for path in not_ours)


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
    assert row["error"] == "content_type" and row["content_type"] == "application/pdf"
    assert row["status"] == 200  # what the server answered, before its body was refused
    assert "content_type" in result.output and "application/pdf" in result.output
    # a skip, logged at INFO: no warning about it at --quiet
    assert not [ln for ln in result.output.splitlines() if "WARNING" in ln and ".pdf" in ln]
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


def test_two_urls_that_fold_to_one_slug_write_two_files(tmp_path: Path, serve: Serve) -> None:
    """Sphinx's genindex.html and genindex-_.html: two documents, two files, the same names on
    the next run."""
    pages = {
        "/": '<a href="/genindex.html">index</a> <a href="/genindex-_.html">index of _</a>',
        "/genindex.html": html_page("<p>All the names from A to Z.</p>", "Index"),
        "/genindex-_.html": html_page("<p>The names that start with an underscore.</p>", "_"),
    }
    site = serve(site_app(pages))
    db = str(tmp_path / "c.db")
    assert crawl(tmp_path, db, site.url("/"), "--max-depth", "1").exit_code == 0
    found = sidecars(tmp_path)
    assert sorted(found) == sorted(site.url(p) for p in pages)
    files = {url: _markdown_of(meta["_path"]) for url, meta in found.items()}
    assert len(set(files.values())) == 3
    assert "from A to Z" in files[site.url("/genindex.html")].read_text("utf-8")
    assert "underscore" in files[site.url("/genindex-_.html")].read_text("utf-8")
    stored = dict(db_query(db, "SELECT url, markdown_path FROM documents"))
    assert stored == {url: str(path) for url, path in files.items()}
    # a new run in another order, the database and the files gone: the same names
    for path in files.values():
        path.unlink()
    second = [site.url("/genindex-_.html"), site.url("/genindex.html")]
    assert crawl(tmp_path, str(tmp_path / "d.db"), *second, "--no-follow").exit_code == 0
    assert all(files[url].is_file() for url in second)


def _markdown_of(sidecar: Path) -> Path:
    return sidecar.with_name(sidecar.name.removesuffix(".meta.json") + ".md")


@pytest.mark.skipif(not have_chromium(), reason="no Chromium to render with")
def test_the_browser_fetcher_refuses_an_unwanted_type_after_the_headers(serve: Serve) -> None:
    """With --render too: the PDF Chromium navigated to is refused, not fetched again whole.
    Again and again in one browser: closing a page whose PDF viewer was loading hung for good
    one time in two on Chromium 156 (CI), until the fetch's own timeout 46 s later."""
    site = serve(site_app({"/doc.pdf": (200, "application/pdf", "%PDF-1.4 ...")}))

    async def go() -> list[str]:
        outcomes = []
        async with BrowserFetcher() as fetcher:
            for _ in range(6):
                request = FetchRequest(site.url("/doc.pdf"), accept_types=("text/html",))
                try:
                    await fetcher.fetch(request)
                except UnwantedType as exc:
                    outcomes.append(str(exc))
            accepted = FetchRequest(site.url("/doc.pdf"), accept_types=("application/pdf",))
            outcomes.append((await fetcher.fetch(accepted)).body.decode())
        return outcomes

    outcomes = asyncio.run(go())
    assert all("application/pdf not accepted" in outcome for outcome in outcomes[:6])
    assert outcomes[6] == "%PDF-1.4 ..."
    # each refusal is the navigation alone, no second request for the bytes; the accepted PDF
    # is read again whole (the viewer's DOM is not the file)
    assert site.count("/doc.pdf") == 8
