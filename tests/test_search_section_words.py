"""Hybrid's keyword list for a question scores a page by its best section as well as the whole
page: the page whose one section holds the question's words together comes before a page that
has each word many times, each in a section of its own (a real crawl of a local site)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, html_page, site_app
from test_semantic import crawl

from litecrawl.index.semantic import keyword_list
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
    tmp_path: Path, serve: Serve
) -> None:
    server = serve(lantern_site())
    db = str(tmp_path / "c.db")
    crawl(db, server)
    with open_index(db) as index:
        # the premise: by the whole page alone, the scattered page comes first
        whole = index.keyword('"polish" OR "copper" OR "lantern"', limit=10)
        assert [h.url for h in whole[:2]] == [server.url("/scattered"), server.url("/together")]
        hits, any_word = keyword_list(index, QUESTION, 10)
    assert any_word
    assert [h.url for h in hits[:2]] == [server.url("/together"), server.url("/scattered")]
    assert {h.url for h in hits} == {
        server.url(p) for p in ("/together", "/scattered", "/shop", "/roofs")
    }
