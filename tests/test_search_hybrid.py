"""Hybrid search (the default once a database has vectors) on a real local site: a word on
exactly one page brings that page first, and so does a question with that word and others no
page has; a query whose words are on no page finds nothing in any mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer
from test_semantic import PAGES, crawl, runner, topic_site

from litecrawl.cli import app
from litecrawl.index.query import plain_words
from litecrawl.index.semantic import CONFIDENT, _fuse, find
from litecrawl.store.backends import open_index
from litecrawl.store.index import SearchHit

Serve = Callable[[web.Application], LocalServer]

SUBJECTS = ["garden", "river", "train", "market", "school", "museum", "bakery", "harbour"]
SUBJECTS += ["library", "castle", "bridge", "theatre", "stadium", "zoo", "airport", "hospital"]
THINGS = ["opening hours", "tickets", "parking", "history", "events", "prices", "staff", "map"]


def filler() -> dict[str, tuple[str, str]]:
    """128 short pages about the opening hours, tickets ... of a garden, a river ..."""
    pages = {}
    for a in SUBJECTS:
        for b in THINGS:
            text = f"The {b} of the {a}. Visitors ask about the {b} of the {a} every week."
            pages[f"{a}-{b.replace(' ', '-')}"] = (f"{a} {b}", text)
    return pages


def test_a_word_on_one_page_brings_that_page_first(tmp_path: Path, serve: Serve) -> None:
    pages = filler()
    # a long page like the others, the word once: its vector is theirs, far down the cosine
    # ranking of the word (beyond the 50 that hybrid reads), crawled last
    text = " ".join(f"The {b} of the castle. Visitors ask about it." for b in THINGS * 3)
    pages["zz-unique"] = ("castle", f"{text} The new pump is an Xk7000.")
    site = serve(topic_site(pages))
    db = str(tmp_path / "c.db")
    crawl(db, site)
    semantic = [h.url for h in find(db, "Xk7000", mode="semantic", limit=100).hits]
    assert semantic.index(site.url("/zz-unique")) >= 50  # what makes the tie
    results = find(db, "Xk7000")
    assert results.mode == "hybrid"
    assert results.hits[0].url == site.url("/zz-unique"), [h.url for h in results.hits[:3]]
    # a question whose words are not all on the page (no page says "where" or "manual"):
    # keyword search, which wants them all, finds nothing; hybrid still finds the page by
    # its rare words, and ranks it first
    question = "where is the manual of the Xk7000 pump"
    assert find(db, question, mode="keyword").hits == []
    hits = find(db, question).hits
    assert hits[0].url == site.url("/zz-unique"), [h.url for h in hits[:3]]
    assert "[Xk7000]" in hits[0].snippet  # the keyword snippet, its rare word marked
    # words on more than half the pages are the ones that question's keyword list leaves out
    with open_index(db) as index:
        assert index.common(["the", "visitors", "castle", "xk7000", "manual"]) == {
            *("the", "visitors")
        }


def test_plain_words_are_the_queries_without_syntax() -> None:
    assert plain_words("how do I back up a database") == [
        *("how", "do", "i", "back", "up", "a", "database")
    ]
    assert plain_words("the cat and the hat") == ["the", "cat", "and", "hat"]
    # words FTS5's grammar rejects are still words
    assert plain_words("csv.DictReader rows") == ["csv", "dictreader", "rows"]
    # what the user asked for exactly stays as it is
    for query in ('"tide tables"', "tide*", "title:tide", "tide OR fee", "tide NOT fee", '"x'):
        assert plain_words(query) is None, query
    assert not plain_words(" ")


def test_words_on_no_page_find_nothing_in_any_mode(tmp_path: Path, serve: Serve) -> None:
    site = serve(topic_site(PAGES))
    db = str(tmp_path / "c.db")
    crawl(db, site)
    for query in ("xqzvbnm", "glorbnax frobnicate"):
        for mode in ("keyword", "semantic", "hybrid"):
            assert find(db, query, mode=mode).hits == [], (query, mode)
            result = runner.invoke(app, ["search", query, "--db", db, "--mode", mode, "--json"])
            assert result.exit_code == 0, result.output
            assert json.loads(result.stdout) == []
    # one word of the query on some page: meaning decides as before
    assert find(db, "xqzvbnm dough", mode="semantic").hits


def hit(rid: int, score: float) -> SearchHit:
    return SearchHit(f"http://h/{rid}", "", "", score, (), rid)


def test_a_tie_goes_to_the_page_with_the_words_unless_the_meaning_is_sure() -> None:
    # the page with the word (resource 99) is first by keyword and not among the semantic
    # list's; the semantic list's first (resource 1) has only the same fused score
    words = [hit(99, 3.2)]
    meaning = [hit(i, 0.4 - i / 1000) for i in range(1, 51)]
    fused = _fuse(words, meaning)
    assert [h.resource_id for h in fused[:2]] == [99, 1]
    assert fused[0].score == fused[1].score
    # a semantic match it is sure of (cosine >= CONFIDENT) keeps the first place
    sure = [hit(1, CONFIDENT + 0.05), *meaning[1:]]
    assert [h.resource_id for h in _fuse(words, sure)[:2]] == [1, 99]
