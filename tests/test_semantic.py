"""Embeddings while crawling, ``search --mode``, ``similar``, ``index --embed``, the export's
vectors: real local sites, real workers, real SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from conftest import LocalServer, NewDb, db_execute, db_query, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE, hamming
from litecrawl.index.semantic import find, similar
from litecrawl.index.simhash import simhash

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()

LONG = (
    "The harbour office publishes the tide tables, the mooring fees and the opening hours of "
    "the fuel dock. Boats longer than twelve metres must call the harbour master before they "
    "enter, and every skipper signs the register at the office. The slipway is free for club "
    "members; visitors pay a small fee at the kiosk beside the crane. "
)
HARBOUR_MORE = (
    "In winter the pontoons are lifted out for inspection and the electricity points are "
    "switched off. Diesel and petrol are sold from eight until six, cash or card, and the "
    "weather forecast is posted each morning on the board near the chandlery. Lost keys, "
    "bicycles and fenders are kept for a month at the office; after that they go to the "
    "charity shop in the high street. The regatta takes place on the second weekend of "
    "August, when the outer basin is closed to traffic and the ferry uses the north quay. "
)
PAGES = {
    "dogs1": (
        "Puppy care",
        "Puppies need training, walks twice a day and a warm bed. A young dog learns to sit, to "
        "come when called and to walk on a leash. Feed your puppy small meals and take it to "
        "the vet for its vaccinations.",
    ),
    "dogs2": (
        "Our kennel",
        "Our kennel breeds retrievers and shepherds. Every dog is groomed, vaccinated and "
        "socialised with children before adoption. The breed standard asks for a calm temper "
        "and a thick coat.",
    ),
    "cook1": (
        "Tomato pasta",
        "Boil the pasta in salted water for nine minutes. Meanwhile fry garlic in olive oil, add "
        "chopped tomatoes and basil, and let the sauce simmer. Serve with grated parmesan.",
    ),
    "cook2": (
        "Bread",
        "This recipe for bread needs flour, water, yeast and salt. Knead the dough for ten "
        "minutes, let it rise for an hour, then bake it in a hot oven until the crust is golden.",
    ),
    "astro1": (
        "Telescopes",
        "Telescopes collect light from distant galaxies. Astronomers measure the redshift of "
        "stars to learn how fast the universe expands. The planets orbit the sun.",
    ),
    "astro2": (
        "The moon",
        "The moon has phases because it orbits the earth. Comets, asteroids and meteors cross "
        "the night sky; observatories on mountains watch them with large mirrors.",
    ),
    "phrase": (
        "Harbour notes",
        "Remember: the quick brown fox jumps over the lazy dog, as the sign painter wrote on "
        "the kiosk.",
    ),
    "scatter": (
        "Animals",
        "A brown bear is quick in the forest; a lazy cat sleeps; the fox hunts; the dog jumps. "
        "Quick brown animals, lazy afternoons, a fox and a dog.",
    ),
    "de": (
        "Deutsch",
        "Die Katze schläft auf dem Sofa. Im Winter trinken wir heißen Tee und lesen Bücher über "
        "die Geschichte Europas. Straßenbahnen fahren durch die Altstadt.",
    ),
    "ja": ("日本語", "東京の天気は晴れです。桜の花が咲いて、人々は公園で花見を楽しみます。"),
}


def _near_pair() -> tuple[str, str]:
    """A long text and a one-word edit of it that the index takes as a near-duplicate."""
    base = LONG + HARBOUR_MORE
    for i in range(len(base.split()) - 1, 0, -1):
        edited = base.split()
        edited[i] = "zanzibar"
        other = " ".join(edited)
        if 0 < hamming(simhash(base), simhash(other)) <= NEAR_DUPLICATE_DISTANCE - 1:
            return base, other
    raise AssertionError("no near pair")  # pragma: no cover


NEAR_A, NEAR_B = _near_pair()
PAGES["harbour"] = ("Harbour", NEAR_A)
PAGES["harbour-print"] = ("Harbour", NEAR_B)  # a near-duplicate: one resource, one vector


SERVED = web.AppKey("served", dict[str, str])


def topic_site(pages: dict[str, tuple[str, str]]) -> web.Application:
    """The pages under /NAME and a home page linking them; ``app[SERVED]`` is the live
    path -> HTML map (change it to change the site)."""
    links = "".join(f'<a href="/{name}">page {i}</a> ' for i, name in enumerate(pages))
    served = {"/": html_page(f"<nav>{links}</nav>", "Index")}
    for name, (title, text) in pages.items():
        served[f"/{name}"] = html_page(f"<p>{text}</p>", title)
    application = site_app(served)  # type: ignore[arg-type]
    application[SERVED] = served
    return application


def crawl(db: str, site: LocalServer, *args: str) -> None:
    result = runner.invoke(
        app,
        ["crawl", "--db", db, "--no-cache", "-q", "--delay-ms", "0", site.url("/"), *args],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output


def rows(db: str, sql: str, *params: str) -> list[Any]:
    for param in params:  # URLs of the local site: no quotes in them
        sql = sql.replace("?", f"'{param}'", 1)
    return db_query(db, sql)


def vector_of(db: str, url: str) -> bytes | None:
    found = rows(
        db,
        "SELECT v.vector FROM documents d JOIN resource_vectors v ON v.resource_id = d.resource_id"
        " WHERE d.url = ?",
        url,
    )
    return bytes(found[0][0]) if found else None


# one crawl per backend (and xdist worker) for the tests that only read it
@pytest.fixture(scope="module")
def crawled(module_db: NewDb, serve_module: Serve) -> tuple[str, LocalServer]:
    db = module_db("c")
    site = serve_module(topic_site(PAGES))
    crawl(db, site)
    return db, site


def test_vectors_written_for_pages_and_shared_by_near_duplicates(
    crawled: tuple[str, LocalServer],
) -> None:
    db, site = crawled
    resources = rows(db, "SELECT count(*) FROM resources WHERE text <> ''")[0][0]
    vectors = rows(db, "SELECT resource_id, model, length(vector) FROM resource_vectors")
    assert len(vectors) == resources
    assert {(model, size) for _, model, size in vectors} == {("wordllama-l2-supercat-256", 1024)}
    same = rows(
        db,
        "SELECT count(DISTINCT resource_id) FROM documents WHERE url IN (?, ?)",
        site.url("/harbour"),
        site.url("/harbour-print"),
    )
    assert same == [(1,)]
    shared = vector_of(db, site.url("/harbour"))
    assert shared is not None and shared == vector_of(db, site.url("/harbour-print"))
    # pages in other languages are embedded too
    assert vector_of(db, site.url("/de")) is not None
    assert vector_of(db, site.url("/ja")) is not None


def test_semantic_query_finds_a_page_sharing_no_word(crawled: tuple[str, LocalServer]) -> None:
    db, site = crawled
    # "a" is on the pages, "canine" and "companion" on none (alone they find nothing at all)
    assert find(db, "a canine companion", mode="keyword").hits == []
    assert find(db, "canine companion", mode="semantic").hits == []
    hits = find(db, "a canine companion", mode="semantic", limit=3).hits
    # the dog pages, and the one about animals (fox, bear, cat, dog)
    assert {h.url for h in hits} == {site.url(f"/{p}") for p in ("dogs1", "dogs2", "scatter")}
    top = find(db, "an italian cuisine", mode="semantic", limit=1).hits
    assert [h.url for h in top] == [site.url("/cook1")]


def test_hybrid_ranks_the_exact_phrase_first(crawled: tuple[str, LocalServer]) -> None:
    db, site = crawled
    results = find(db, '"quick brown fox jumps over the lazy dog"')
    assert results.mode == "hybrid"  # the default once the database has vectors
    assert results.hits[0].url == site.url("/phrase")
    assert "[" in results.hits[0].snippet  # the keyword snippet, matches marked


def test_similar_returns_topic_neighbours_first(crawled: tuple[str, LocalServer]) -> None:
    db, site = crawled
    for page, neighbour in (("dogs1", "dogs2"), ("cook1", "cook2"), ("astro1", "astro2")):
        hits = similar(db, site.url(f"/{page}"), limit=3)
        assert hits[0].url == site.url(f"/{neighbour}"), (page, [h.url for h in hits])
        assert site.url(f"/{page}") not in {h.url for h in hits}
    result = runner.invoke(app, ["similar", site.url("/astro2"), "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["url"] == site.url("/astro1")
    unknown = runner.invoke(app, ["similar", site.url("/nowhere"), "--db", db])
    assert unknown.exit_code == 2
    assert "not in the index" in unknown.output


def test_cli_search_modes(crawled: tuple[str, LocalServer]) -> None:
    db, site = crawled
    for mode in ("keyword", "semantic", "hybrid"):
        result = runner.invoke(app, ["search", "bread dough", "--db", db, "--mode", mode, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)[0]["url"] == site.url("/cook2"), mode
    bad = runner.invoke(app, ["search", "bread", "--db", db, "--mode", "fuzzy"])
    assert bad.exit_code == 2


def test_export_with_vectors(crawled: tuple[str, LocalServer], tmp_path: Path) -> None:
    db, site = crawled
    out = tmp_path / "e.jsonl"
    result = runner.invoke(
        app, ["export", "-f", "jsonl", "--with-vectors", "--db", db, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    records = {r["url"]: r for r in map(json.loads, out.read_text().splitlines())}
    dog = records[site.url("/dogs1")]["vector"]
    assert len(dog) == 256 and abs(sum(x * x for x in dog) - 1.0) < 1e-3
    assert records[site.url("/harbour")]["vector"] == records[site.url("/harbour-print")]["vector"]
    plain = runner.invoke(app, ["export", "-f", "jsonl", "--db", db])
    assert "vector" not in json.loads(plain.stdout.splitlines()[0])
    csv = runner.invoke(app, ["export", "-f", "csv", "--with-vectors", "--db", db])
    assert csv.exit_code == 2
    assert "jsonl only" in csv.output


def test_no_embed_then_index_embed_fills_the_database(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    db = new_db("c")
    site = serve(topic_site(PAGES))
    crawl(db, site, "--no-embed")
    assert rows(db, "SELECT count(*) FROM resource_vectors") == [(0,)]
    # without vectors: keyword, with a one-line note
    result = runner.invoke(app, ["search", "bread", "--db", db, "--mode", "hybrid"])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "keyword" in notes[0] and "index --embed" in notes[0]
    assert site.url("/cook2") in result.stdout
    assert find(db, "bread").mode == "keyword"
    no_vectors = runner.invoke(app, ["similar", site.url("/dogs1"), "--db", db])
    assert no_vectors.exit_code == 2 and "index --embed" in no_vectors.output
    nothing = runner.invoke(app, ["index", "--db", db])
    assert nothing.exit_code == 2

    filled = runner.invoke(app, ["index", "--embed", "--db", db])
    assert filled.exit_code == 0, filled.output
    resources = rows(db, "SELECT count(*) FROM resources WHERE text <> ''")[0][0]
    assert rows(db, "SELECT count(*) FROM resource_vectors") == [(resources,)]
    assert f"embedded {resources} texts" in filled.stderr
    again = runner.invoke(app, ["index", "--embed", "--db", db])  # resumable: nothing left
    assert "embedded 0 texts" in again.stderr
    assert find(db, "bread").mode == "hybrid"
    hits = find(db, "a canine companion", mode="semantic", limit=3).hits
    assert {h.url for h in hits} == {site.url(f"/{p}") for p in ("dogs1", "dogs2", "scatter")}


def test_vector_follows_a_changed_text(tmp_path: Path, new_db: NewDb, serve: Serve) -> None:
    db = new_db("c")
    app_ = topic_site(PAGES)
    site = serve(app_)
    crawl(db, site)
    before = vector_of(db, site.url("/cook2"))
    assert before is not None
    # /cook2 now tells about the moon; every page is due again
    app_[SERVED]["/cook2"] = html_page(f"<p>{PAGES['astro2'][1]} Again.</p>", "Moon")
    db_execute(db, "UPDATE pages SET next_crawl_time = 0")
    crawl(db, site)
    changed = vector_of(db, site.url("/cook2"))
    assert changed is not None and changed != before
    assert rows(db, "SELECT count(*) FROM resource_vectors") == rows(
        db, "SELECT count(*) FROM resources WHERE text <> ''"
    )
    nearest = similar(db, site.url("/cook2"), limit=1)[0].url
    assert nearest in {site.url("/astro2"), site.url("/astro1")}


def test_python_api(crawled: tuple[str, LocalServer]) -> None:
    import litecrawl

    db, site = crawled
    results = litecrawl.search(db, "bread dough", mode="semantic", limit=1)
    assert results.mode == "semantic"
    assert [h.url for h in results.hits] == [site.url("/cook2")]
    assert litecrawl.similar(db, site.url("/cook1"), limit=1)[0].url == site.url("/cook2")


def test_config_embed_false_crawls_without_vectors(
    tmp_path: Path, new_db: NewDb, serve: Serve
) -> None:
    db = new_db("c")
    config = tmp_path / "site.toml"
    config.write_text("[extract]\nembed = false\n")
    site = serve(topic_site({"dogs1": PAGES["dogs1"], "cook1": PAGES["cook1"]}))
    crawl(db, site, "--config", str(config))
    assert rows(db, "SELECT count(*) FROM documents WHERE resource_id IS NOT NULL") == [(3,)]
    assert rows(db, "SELECT count(*) FROM resource_vectors") == [(0,)]


def test_index_embed_without_a_database_exits_2(tmp_path: Path) -> None:
    """No SQLite file there, no PostgreSQL server there: one line, exit 2, password masked."""
    missing = runner.invoke(app, ["index", "--embed", "--db", str(tmp_path / "no.db")])
    assert missing.exit_code == 2 and "no database" in missing.output
    assert not (tmp_path / "no.db").exists()
    away = "postgresql://walter:hunter2@127.0.0.1:1/crawl"
    result = runner.invoke(app, ["index", "--embed", "--db", away])
    assert result.exit_code == 2 and "error:" in result.output
    assert "hunter2" not in result.output and "127.0.0.1:1" in result.output
