"""Markdown, indexed text and sidecar metadata of real-shaped pages, through a real crawl.

Each page is served by a local aiohttp server and crawled with ``--output`` (full page) and with
``--output --main-article`` (each engine); the Markdown is parsed back with markdown-it-py
(CommonMark + GFM tables), so its structure is checked as a reader would see it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer, html_page, site_app
from markdown_it import MarkdownIt
from markdown_it.token import Token
from typer.testing import CliRunner

from litecrawl.cli import app

Serve = Callable[[web.Application], LocalServer]
DATA = Path(__file__).parent / "data" / "html"
PAGES = {
    "/library/functions.html": "sphinx_api.html",
    "/2024/06/dates.html": "blog_byline.html",
    "/whatsnew/3.11.html": "release_notes.html",
}
MODES = {
    "fullpage": (),
    "trafilatura": ("--main-article", "trafilatura"),
    "resiliparse": ("--main-article", "resiliparse"),
}
md_parser = MarkdownIt("commonmark").enable("table")


def crawl_site(tmp_path: Path, serve: Serve, mode: str) -> tuple[LocalServer, Path, Path]:
    pages = {path: (DATA / name).read_text("utf-8") for path, name in PAGES.items()}
    pages["/"] = html_page("".join(f'<a href="{path}">page</a>' for path in PAGES))
    site = serve(site_app(pages))
    db, out = tmp_path / "c.db", tmp_path / "out"
    args = ["crawl", site.url("/"), "--db", str(db), "--no-cache", "--quiet", "--delay-ms", "0"]
    args += ["--max-depth", "1", "--output", str(out)]
    if MODES[mode]:
        cfg = tmp_path / "engine.toml"
        cfg.write_text(f'[extract]\nengine = "{MODES[mode][1]}"\n')
        args += ["--main-article", "--config", str(cfg)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return site, db, out


def outputs(out: Path, site: LocalServer, path: str) -> tuple[str, dict[str, object]]:
    """(Markdown, sidecar) of the page at ``path``, found by the URL its sidecar names."""
    for meta_file in out.rglob("*.meta.json"):
        meta = json.loads(meta_file.read_text("utf-8"))
        if meta["url"] == site.url(path):
            md_file = meta_file.with_name(meta_file.name.replace(".meta.json", ".md"))
            return md_file.read_text("utf-8"), meta
    raise AssertionError(f"no output for {path}")


def tokens(md: str) -> list[Token]:
    flat: list[Token] = []
    for tok in md_parser.parse(md):
        flat.append(tok)
        flat.extend(tok.children or [])
    return flat


def link_targets(md: str) -> list[str]:
    out = []
    for tok in tokens(md):
        if tok.type == "link_open":
            out.append(str(tok.attrGet("href")))
        elif tok.type == "image":
            out.append(str(tok.attrGet("src")))
    return out


def plain(inline: Token) -> str:
    """The text a reader sees in an inline token (link and code markup left out)."""
    return "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))


def headings(md: str) -> list[tuple[str, str]]:
    toks = md_parser.parse(md)
    return [(t.tag, plain(toks[i + 1])) for i, t in enumerate(toks) if t.type == "heading_open"]


def list_items(md: str) -> list[tuple[int, str]]:
    """(list depth, text of the item's first paragraph) of every list item."""
    depth, items = 0, []
    toks = md_parser.parse(md)
    for i, tok in enumerate(toks):
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open":
            inline = next(t for t in toks[i:] if t.type == "inline")
            items.append((depth, plain(inline)))
    return items


def table_rows(md: str) -> list[list[str]]:
    rows, toks = [], md_parser.parse(md)
    for i, tok in enumerate(toks):
        if tok.type == "tr_open":
            row = []
            for inner in toks[i + 1 :]:
                if inner.type == "tr_close":
                    break
                if inner.type == "inline":
                    row.append(plain(inner))
            rows.append(row)
    return rows


def fences(md: str) -> list[tuple[str, str]]:
    return [(t.info, t.content) for t in md_parser.parse(md) if t.type == "fence"]


def indexed_text(db: Path, url: str) -> str:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute(
            "SELECT r.text FROM documents d JOIN resources r ON r.id = d.resource_id"
            " WHERE d.url = ?",
            (url,),
        ).fetchone()
    finally:
        conn.close()
    return str(row[0])


@pytest.mark.parametrize("mode", list(MODES))
def test_markdown_text_and_metadata_of_real_shaped_pages(
    tmp_path: Path, serve: Serve, mode: str
) -> None:
    """One crawl per mode (a crawl costs seconds); each page checked by its own function."""
    site, db, out = crawl_site(tmp_path, serve, mode)
    check_sphinx_api_page(site, db, out, mode)
    check_blog_article(site, db, out, mode)
    check_release_notes(site, out)


def check_sphinx_api_page(site: LocalServer, db: Path, out: Path, mode: str) -> None:
    md, meta = outputs(out, site, "/library/functions.html")
    page = site.url("/library/functions.html")
    assert ("h1", "Built-in Functions") in headings(md)  # Sphinx's permalink marks left out
    assert ("h2", "The iterator protocol") in headings(md) and "¶" not in md
    assert fences(md) == [
        (
            "python3",
            "def all(iterable):\n    for element in iterable:\n        if not element:\n"
            "            return False\n    return True\n",
        )
    ]
    items = list_items(md)
    assert (1, "the iterable itself") in items and (1, "nothing else") in items
    assert (2, "each element in turn") in items  # nested, not flattened
    assert ["Function", "Returns"] in table_rows(md)
    assert ["abs()", "the absolute value of a number"] in table_rows(md)
    targets = link_targets(md)
    assert all(t.startswith(("http://", "https://")) for t in targets), targets
    assert f"{page}#abs" in targets and f"{page}#iter-protocol" in targets
    assert site.url("/glossary.html#term-iterable") in targets
    assert site.url("/reference/datamodel.html#object.__abs__") in targets
    assert site.url("/_images/all-truth.png") in targets
    assert "https://peps.python.org/pep-0234/" in targets
    assert meta["date"] == "2023-02-08" and meta["author"] == "Raymond Hettinger"
    text = indexed_text(db, page)
    assert "def all(iterable):" in text and "each element in turn" in text
    assert "](" not in text and "http" not in text and "```" not in text
    if mode != "fullpage":
        assert meta["extraction_mode"] == "article"
        for boilerplate in (
            "Previous topic",
            "Report a Bug",
            "Found a bug",
            "3.11.2 Documentation",
        ):
            assert boilerplate not in md and boilerplate not in text


def check_blog_article(site: LocalServer, db: Path, out: Path, mode: str) -> None:
    md, meta = outputs(out, site, "/2024/06/dates.html")
    assert meta["author"] == "Ada Quill"
    assert meta["date"] == "2024-06-03"  # JSON-LD's datePublished, not a related post's <time>
    (info, code), *rest = fences(md)
    assert info == "rust" and not rest
    assert code.startswith("fn parse(input: &str) -> Option<DateTime<Utc>> {\n")
    assert ["Format", "Example", "Accepted"] in table_rows(md)
    assert (2, "RFC 3339 first") in list_items(md) and (1, "Refuse everything else") in list_items(
        md
    )
    targets = link_targets(md)
    assert site.url("/2024/06/dates.html#formats") in targets
    assert site.url("/2023/strict-parsers.html") in targets
    text = indexed_text(db, site.url("/2024/06/dates.html"))
    assert "parse_from_rfc3339" in text and "](" not in text and "http" not in text
    if mode != "fullpage":
        assert meta["extraction_mode"] == "article"
        assert "Time zones are hard" not in md and "Archive" not in md


def check_release_notes(site: LocalServer, out: Path) -> None:
    """A version number in the title, a date in a code sample and in prose, an element id
    with "author" in it: no date, no author."""
    md, meta = outputs(out, site, "/whatsnew/3.11.html")
    assert "date" not in meta and "author" not in meta
    info, code = fences(md)[0]
    assert info == "pycon" and code.startswith(">>> from datetime import date\n")
    assert "¶" not in md  # the heading's permalink mark
    if "the summary" in md:  # trafilatura's article leaves that paragraph out
        assert site.url("/whatsnew/3.11.html#what-s-new-in-widget-3-11-2") in link_targets(md)
