"""``litecrawl index --model NAME``: a database's vectors rebuilt with the optional MiniLM model
(the real model, from the ``minilm`` extra the dev group installs), search embedding queries
with the database's model, the crawl leaving that model's vectors alone, and a clear exit when
the extra is missing: real local sites, real SQLite and PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web
from conftest import LocalServer, NewDb, db_execute, db_query, html_page, site_app
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.index.semantic import find, similar

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()

MINILM = "all-minilm-l6-v2-int8"
WORDLLAMA = "wordllama-l2-supercat-256"


def _section(heading: str, text: str) -> str:
    return f'<h2 id="{heading.lower().replace(" ", "-")}">{heading}</h2><p>{text}</p>'


# pages of two sections or more (each over 25 words: shorter ones join the one before)
PAGES = {
    "dogs": (
        "Puppy care",
        _section(
            "Feeding",
            "Feed your puppy three small meals a day of food made for young dogs, keep fresh "
            "water in its bowl and never give it chocolate, grapes or cooked bones to chew.",
        )
        + _section(
            "Walks",
            "A young dog needs two walks a day on a leash. Let it sniff the grass, meet other "
            "dogs in the park and learn to come back when you call its name.",
        ),
    ),
    "bread": (
        "Bread",
        _section(
            "Dough",
            "Mix flour, water, yeast and salt, then knead the dough for ten minutes until it is "
            "smooth and springs back when you press it with a finger, and cover the bowl.",
        )
        + _section(
            "Baking",
            "Let the dough rise for an hour, shape the loaf, then bake it in a hot oven for forty "
            "minutes until the crust is golden and the bottom sounds hollow when tapped.",
        ),
    ),
    "stars": (
        "Telescopes",
        _section(
            "Mirrors",
            "Telescopes collect the faint light of distant galaxies with large curved mirrors; "
            "astronomers measure the redshift of stars to learn how fast the universe expands.",
        )
        + _section(
            "Observatories",
            "Observatories are built on high mountains where the air is thin and dry, far from "
            "the lights of cities, so that the night sky is dark and the stars are sharp.",
        ),
    ),
}


def _site(pages: dict[str, tuple[str, str]]) -> web.Application:
    links = "".join(f'<a href="/{name}">page {i}</a> ' for i, name in enumerate(pages))
    served = {"/": html_page(f"<nav>{links}</nav>", "Index")}
    for name, (title, body) in pages.items():
        served[f"/{name}"] = html_page(body, title)
    return site_app(served)  # type: ignore[arg-type]


def _crawl(db: str, site: LocalServer) -> str:
    result = runner.invoke(
        app,
        ["crawl", "--db", db, "--no-cache", "-q", "--delay-ms", "0", site.url("/")],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result.output


def _vectors(db: str, table: str) -> list[tuple[Any, ...]]:
    key = "resource_id" if table == "resource_vectors" else "resource_id, ord"
    return [
        (*row[:-1], bytes(row[-1]))
        for row in db_query(db, f"SELECT {key}, model, vector FROM {table} ORDER BY {key}")
    ]


def _models(db: str, table: str) -> dict[tuple[str, int], int]:
    """(model, vector bytes) -> how many vectors of ``table``."""
    rows = db_query(db, f"SELECT model, length(vector), count(*) FROM {table} GROUP BY 1, 2")
    return {(str(m), int(n)): int(c) for m, n, c in rows}


def _index(*args: str) -> Any:
    return runner.invoke(app, ["index", *args])


def test_index_model_rebuilds_with_minilm_and_search_uses_it(new_db: NewDb, serve: Serve) -> None:
    db = new_db("m")
    pages = dict(PAGES)
    site_app_ = _site(pages)
    site = serve(site_app_)
    _crawl(db, site)
    texts = db_query(db, "SELECT count(*) FROM resources WHERE text <> ''")[0][0]
    sections = db_query(db, "SELECT count(*) FROM section_vectors")[0][0]
    headings = db_query(
        db, "SELECT resource_id, ord, heading, anchor FROM section_vectors ORDER BY 1, 2"
    )
    assert sections >= 6 and _models(db, "section_vectors") == {(WORDLLAMA, 1024): sections}

    rebuilt = _index("--model", "minilm", "--db", db)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"embedded {texts} texts" in rebuilt.stderr
    assert f"embedded {texts}/{texts}" in rebuilt.stderr  # progress, one line a batch
    assert _models(db, "resource_vectors") == {(MINILM, 384 * 4): texts}
    assert _models(db, "section_vectors") == {(MINILM, 384 * 4): sections}
    assert db_query(
        db, "SELECT resource_id, ord, heading, anchor FROM section_vectors ORDER BY 1, 2"
    ) == (headings)
    assert db_query(db, "SELECT name FROM vector_model") == [(MINILM,)]

    # queries are embedded with MiniLM (a WordLlama query vector could not even be scored
    # against 384-dimension vectors); words no page has, answered by meaning
    hits = find(db, "how often should my pet go outside", mode="semantic", limit=1).hits
    assert hits[0].url == site.url("/dogs") and hits[0].section == "Walks"
    assert find(db, "where do astronomers put their instruments", limit=1).hits[0].url == (
        site.url("/stars")
    )
    assert similar(db, site.url("/dogs"), limit=1)[0].url != site.url("/dogs")
    again = _index("--embed", "--db", db)  # resumable: nothing left of the database's model
    assert again.exit_code == 0 and "embedded 0 texts" in again.stderr

    # a crawl embeds with WordLlama: it leaves the database's MiniLM vectors alone and gives
    # a new page a WordLlama vector, which search does not read until index --embed
    minilm_vectors = _vectors(db, "resource_vectors")
    minilm_sections = _vectors(db, "section_vectors")
    pages["soup"] = (
        "Soup",
        _section(
            "Stock",
            "Simmer onions, carrots, celery and a bay leaf in water for an hour to make a clear "
            "stock, then strain it through a fine sieve and season it with salt and pepper.",
        ),
    )
    site_app_2 = _site(pages)
    site_2 = serve(site_app_2)
    db_execute(db, "UPDATE pages SET next_crawl_time = 0")
    said = _crawl(db, site_2)
    missing = db_query(
        db,
        "SELECT count(*) FROM resources r WHERE r.text <> '' AND NOT EXISTS (SELECT 1 FROM"
        f" resource_vectors v WHERE v.resource_id = r.id AND v.model = '{MINILM}')",
    )[0][0]
    assert missing >= 1
    assert re.search(rf"^without_model_vectors:\s+{missing}$", said, re.M), said
    assert f"note: {missing} pages have no vector of the database's model ({MINILM})" in said
    assert "'litecrawl index --embed'" in said
    after = {row[0]: row for row in _vectors(db, "resource_vectors")}
    for row in minilm_vectors:
        assert after[row[0]] == row
    assert [r for r in _vectors(db, "section_vectors") if r[2] == MINILM] == minilm_sections
    assert _models(db, "resource_vectors")[(WORDLLAMA, 1024)] >= 1
    filled = _index("--embed", "--db", db)
    assert filled.exit_code == 0, filled.output
    assert set(_models(db, "resource_vectors")) == {(MINILM, 384 * 4)}
    assert find(db, "a broth of vegetables", mode="semantic", limit=1).hits[0].url == (
        site_2.url("/soup")
    )

    back = _index("--model", "wordllama", "--db", db)
    assert back.exit_code == 0, back.output
    assert set(_models(db, "resource_vectors")) == {(WORDLLAMA, 1024)}
    assert set(_models(db, "section_vectors")) == {(WORDLLAMA, 1024)}
    assert find(db, "bake a loaf", mode="semantic", limit=1).hits[0].url == site.url("/bread")


def test_index_model_bad_name_and_missing_extra_exit_2(tmp_path: Path, serve: Serve) -> None:
    db = str(tmp_path / "x.db")
    site = serve(_site(PAGES))
    _crawl(db, site)
    before = _vectors(db, "resource_vectors")
    unknown = _index("--model", "bert", "--db", db)
    assert unknown.exit_code == 2 and "wordllama, minilm" in unknown.stderr
    # the same CLI in a Python where the extra's packages cannot be imported
    hide = (
        "import sys; sys.modules['onnxruntime'] = None; sys.argv = ['litecrawl', *sys.argv[1:]];"
        " from litecrawl.cli import main; main()"
    )
    for args in (["index", "--model", "minilm"], ["search", "bread"]):
        if args[0] == "search":  # a database made for MiniLM, searched without the extra
            assert _index("--model", "minilm", "--db", db).exit_code == 0
        done = subprocess.run(
            [sys.executable, "-c", hide, *args, "--db", db], capture_output=True, text=True
        )
        assert done.returncode == 2, done.stderr
        assert "litecrawl[minilm]" in done.stderr and "onnxruntime" in done.stderr
        if args[0] == "index":
            assert _vectors(db, "resource_vectors") == before  # nothing changed
