"""Hybrid's keyword list for a question takes any of its words, weighted by their rarity, and
scores a page by its best section as well as the whole page: the page whose one section holds
the question's words together comes before a page that has each word more often, each in a
section of its own; both backends rank alike (real crawls of a local site)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, NewDb, html_page, site_app
from test_semantic import crawl

from litecrawl.index.section_words import rarity
from litecrawl.index.semantic import find, keyword_list
from litecrawl.store.backends import open_index

Serve = Callable[[web.Application], LocalServer]

QUESTION = "how to polish a copper lantern"
OTHER = (
    "The harbour ferry leaves at dawn and returns at dusk, calling at the islands on the way; "
    "timetables change in winter, when storms keep the boats in port for days at a time. "
)
TOPICS = ("garden", "river", "train", "market", "school", "museum", "castle", "bridge")


def _section(heading: str, text: str) -> str:
    return f"<h2>{heading}</h2><p>{text}</p>"


def lantern_site() -> web.Application:
    # each question word twice, each in a section of its own: bm25 over the whole page
    # ranks this page first
    scattered = "".join(
        _section(f"Notes {i}", f"{OTHER} {(word + ' work. ') * 2}")
        for i, word in enumerate(("polish", "copper", "lantern"))
    )
    # the words twice each, together in one section of a longer page
    lamps = f"Polish a copper lantern with a soft cloth. {OTHER} A copper lantern shines again."
    together = _section("Ferries", OTHER * 3) + _section("Looking after old lamps", lamps)
    together += _section("Islands", OTHER * 3)
    pages = {
        "/scattered": html_page(f"<h1>Workshop notes</h1>{scattered}", "Workshop notes"),
        "/together": html_page(f"<h1>Harbour life</h1>{together}", "Harbour life"),
        # one word once each: the rest of the list
        "/shop": html_page(f"<p>{OTHER} The shop sells a lantern.</p>", "Shop"),
        "/roofs": html_page(f"<p>{OTHER} Old roofs are copper.</p>", "Roofs"),
    }
    for topic in TOPICS:  # pages without the words, so that none of them is common
        text = f"The {topic} opens early. Ask at the {topic} about its history and prices."
        pages[f"/{topic}"] = html_page(f"<p>{text}</p>", topic)
    links = "".join(f'<a href="{path}">{path}</a> ' for path in pages)
    pages["/"] = html_page(f"<p>{links}</p>", "Index")
    return site_app(pages)


def test_the_section_holding_the_question_words_together_ranks_its_page_first(
    new_db: NewDb, serve: Serve
) -> None:
    server = serve(lantern_site())
    db = new_db("c")
    crawl(db, server)
    with open_index(db) as index:
        # the premise: by the whole page alone, the scattered page comes first
        total, counts = index.page_counts(["polish", "copper", "lantern", "how"])
        assert (total, counts) == (13, {"polish": 2, "copper": 3, "lantern": 3, "how": 0})
        whole = index.any_word(rarity(total, counts), limit=10)
        assert [h.url for h in whole[:2]] == [server.url("/scattered"), server.url("/together")]
        hits, kept = keyword_list(index, QUESTION, 10)
    assert {"polish", "copper", "lantern"} <= set(kept)
    assert [h.url for h in hits[:2]] == [server.url("/together"), server.url("/scattered")]
    assert {h.url for h in hits} == {
        server.url(p) for p in ("/together", "/scattered", "/shop", "/roofs")
    }


def test_both_backends_rank_a_question_alike(tmp_path: Path, pg_url: str, serve: Serve) -> None:
    """The same crawl in SQLite and PostgreSQL: hybrid's keyword list and hybrid itself give
    the same pages in the same order, with the same snippets and sections (PostgreSQL weighs
    each word by its rarity as bm25 does)."""
    server = serve(lantern_site())
    lists, found = [], []
    for db in (str(tmp_path / "c.db"), pg_url):
        crawl(db, server)
        with open_index(db) as index:
            hits, kept = keyword_list(index, QUESTION, 10)
        assert {"polish", "copper", "lantern"} <= set(kept)
        lists.append([h.url for h in hits])
        found.append([(h.url, h.snippet, h.section) for h in find(db, QUESTION).hits])
    assert lists[0] == lists[1]
    assert found[0] == found[1]
    # the snippet of the top hit quotes its words (PostgreSQL makes it for the hits shown)
    assert found[0][0] == (
        server.url("/together"),
        "…Looking after old lamps\n[Polish] [a] [copper] [lantern] with [a] soft cloth. The harbour"
        " ferry leaves…",
        "Looking after old lamps",
    )
