"""A vector per section of a page: a question about a section deep in a long page finds the
page, naming the section (heading, and its anchor URL), on both backends; near-duplicate pages
share their sections' vectors (real crawls of a local site)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from aiohttp import web
from conftest import LocalServer, NewDb, db_query
from test_semantic import HARBOUR_MORE, LONG, PAGES, SERVED, crawl, runner, topic_site

from litecrawl.cli import app
from litecrawl.extract.sections import MAX_SECTIONS
from litecrawl.index.located import name_sections, section_url
from litecrawl.index.semantic import find
from litecrawl.store.backends import open_index

Serve = Callable[[web.Application], LocalServer]

DEEP = (
    "Knead the sourdough for ten minutes, let the dough rise overnight in a cool kitchen, "
    "shape the loaf and bake the bread in a very hot oven with steam until the crust is dark "
    "and it sounds hollow when tapped. "
)


def long_page(extra_sections: int = 0) -> str:
    """A harbour guide of ~1,000 words; its last section (the longest, so that bounding the
    count merges the others first) is about baking bread."""
    parts = [f"<h1>Harbour guide</h1><p>{LONG * 4}</p>"]
    parts += [f"<h2>Winter {i}</h2><p>{HARBOUR_MORE}</p>" for i in range(3 + extra_sections)]
    parts.append(f'<section id="bakery"><h2>The quay bakery</h2><p>{DEEP * 6}</p></section>')
    return "".join(parts)


def guide_site(extra_sections: int = 0) -> web.Application:
    pages = {k: v for k, v in PAGES.items() if k != "cook2"}
    application = topic_site(pages)
    served = application[SERVED]
    home = served["/"].replace("</body>", '<a href="/guide">guide</a> <a href="/copy">c</a></body>')
    served["/"] = home
    guide = long_page(extra_sections)
    served["/guide"] = f"<html><head><title>Harbour guide</title></head><body>{guide}</body></html>"
    # the same text under another URL: one resource, one set of section vectors
    served["/copy"] = served["/guide"]
    return application


def test_a_question_about_a_deep_section_finds_the_page_and_names_the_section(
    new_db: NewDb, serve: Serve
) -> None:
    server = serve(guide_site())
    db = new_db("c")
    crawl(db, server)
    question = "how long should sourdough bread dough rise before baking"
    hits = find(db, question, mode="semantic").hits
    guide = {server.url("/guide"), server.url("/copy")}
    assert {hits[0].url, *hits[0].other_urls} == guide, [h.url for h in hits[:3]]
    assert hits[0].section == "The quay bakery"
    assert hits[0].section_url == f"{hits[0].url}#bakery"
    hybrid = find(db, question).hits[0]
    assert (hybrid.url, hybrid.section, hybrid.section_url) == (
        hits[0].url,
        "The quay bakery",
        f"{hits[0].url}#bakery",
    )
    shown = runner.invoke(app, ["search", question, "--db", db, "--json"])
    assert json.loads(shown.stdout)[0]["section_url"] == f"{hits[0].url}#bakery"
    shown = runner.invoke(app, ["search", question, "--db", db])
    assert f"§ The quay bakery  {hits[0].url}#bakery" in shown.stdout, shown.stdout
    # near-duplicates share one resource and its sections; a page of one section has none
    per_resource = db_query(
        db, "SELECT resource_id, count(*) FROM section_vectors GROUP BY resource_id"
    )
    assert len(per_resource) == 1 and per_resource[0][1] == 5, per_resource
    names_the_section_its_snippet_shows(db)


def test_sections_per_page_are_bounded(new_db: NewDb, serve: Serve) -> None:
    server = serve(guide_site(extra_sections=MAX_SECTIONS + 10))
    db = new_db("c")
    crawl(db, server)
    counts = db_query(db, "SELECT count(*) FROM section_vectors GROUP BY resource_id")
    assert counts == [(MAX_SECTIONS,)]
    hit = find(db, "how long should sourdough bread dough rise before baking").hits[0]
    assert hit.url in (server.url("/guide"), server.url("/copy"))
    assert hit.section == "The quay bakery"


def names_the_section_its_snippet_shows(db: str) -> None:
    """A hit names the section its snippet is from (on the crawl of guide_site())."""
    # keyword search names the section of its snippet (it named none)
    hit = find(db, "sourdough", mode="keyword").hits[0]
    assert (hit.section, hit.section_url) == ("The quay bakery", f"{hit.url}#bakery")
    assert "[sourdough]" in hit.snippet
    with open_index(db) as index:
        rid = hit.resource_id
        # a snippet quoting one section under the name of another (what hybrid showed when
        # meaning and the words picked different sections) is named by the snippet's section
        quoted = replace(hit, snippet="…the [pontoons] are lifted out…", section="The quay bakery")
        found = name_sections(index, [quoted], {rid}, ("[", "]"))[0]
        assert (found.section, found.section_url) == ("Winter 0", hit.url)
        # a snippet that is not the page's text (changed meanwhile): no section, not a guess
        lost = replace(hit, snippet="…[pontoons] in summer…")
        assert name_sections(index, [lost], {rid}, ("[", "]"))[0].section is None
        # a hit found by meaning shows the first words of the section it names
        meant = replace(hit, snippet="Harbour guide The harbour office", section="The quay bakery")
        shown = name_sections(index, [meant], (), ("[", "]"))[0]
        assert shown.snippet.startswith("The quay bakery\nKnead the sourdough"), shown.snippet
    semantic = find(db, "how long should sourdough bread dough rise", mode="semantic").hits[0]
    assert semantic.section == "The quay bakery"
    assert semantic.snippet.startswith("The quay bakery"), semantic.snippet


ISLAND = (
    "<h1>Island guide</h1><p>The island has sandy beaches, a ruined castle, walks along the "
    "cliffs and colonies of puffins and seals. Most visitors come for a day in summer, some stay "
    "at the small inn or camp behind the dunes near the old lighthouse.</p>"
    "<h2 id='there'>Getting there</h2><p>Boats cross from the mainland harbour to the island "
    "pier every day of the year, weather permitting; the crossing takes forty minutes and the "
    "sea can be rough in winter, so check before you travel with children.</p>"
    "<h3 id='tides'>Tide tables</h3><p>High and low water for the week, "
    "the spring tides and the height of the water at the harbour wall.</p>"
    "<h3 id='ferry'>Island ferry</h3><p>The catamaran to the island leaves the pier "
    "at seven and returns at five; buy tickets on board.</p>"
    "<h3><a id='parking'></a>Car parking</h3><p>Cars park on the upper lot; "
    "a day ticket costs four pounds at the machine.</p>"
)


def test_a_merged_section_names_the_heading_that_matched(new_db: NewDb, serve: Serve) -> None:
    """Short sections join the one before (their vector is the group's), yet a hit names the
    heading whose part matched, with its own anchor, not the group's first heading."""
    application = guide_site()
    served = application[SERVED]
    served["/guide"] = f"<html><head><title>Island</title></head><body>{ISLAND}</body></html>"
    served["/copy"] = served["/guide"]
    server = serve(application)
    db = new_db("c")
    crawl(db, server)
    # the second stored section holds the four headings of getting there
    assert db_query(db, "SELECT count(*) FROM section_vectors") == [(2,)]
    guide_urls = {server.url("/guide"), server.url("/copy")}
    by_words = find(db, "catamaran", mode="keyword").hits[0]
    assert by_words.url in guide_urls and "[catamaran]" in by_words.snippet
    assert (by_words.section, by_words.section_url) == ("Island ferry", f"{by_words.url}#ferry")
    parking = find(db, "machine", mode="keyword").hits[0]
    assert (parking.section, parking.section_url) == ("Car parking", f"{parking.url}#parking")
    question = "when does the catamaran boat to the island leave and where are tickets sold"
    for mode in ("semantic", "hybrid"):
        hit = find(db, question, mode=mode).hits[0]  # type: ignore[arg-type]
        assert hit.url in guide_urls, (mode, hit.url)
        assert (hit.section, hit.section_url) == ("Island ferry", f"{hit.url}#ferry"), mode
    meant = find(db, question, mode="semantic").hits[0]
    assert meant.snippet.startswith("Island ferry\nThe catamaran"), meant.snippet
    tides = find(db, "how high is the water at the island pier at spring tide", mode="semantic")
    assert tides.hits[0].url in guide_urls, [(h.url, h.section) for h in tides.hits[:3]]
    assert tides.hits[0].section == "Tide tables"


def test_a_section_url_escapes_what_a_fragment_may_not_hold() -> None:
    url = "http://h/match_spec.html"
    assert section_url(url, "Match Specifications in Erlang") == (
        "http://h/match_spec.html#Match%20Specifications%20in%20Erlang"
    )
    assert section_url(url + "#old", "foldl-3") == url + "#foldl-3"
    assert section_url(url, "sect.apt-sources.list") == url + "#sect.apt-sources.list"
    assert section_url(url, "a:b/c?d%20e") == url + "#a:b/c?d%20e"  # already escaped: kept
    assert section_url(url, None) == url
