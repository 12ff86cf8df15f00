"""PostgreSQL's full-text vector built in the analysis worker (``index/tsvector.py``): the same
value the database builds from the same title and text, the same search results either way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from aiohttp import web
from conftest import LocalServer, db_query, html_page, site_app
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl.cli import app
from litecrawl.index.analyze import AnalyzerSettings
from litecrawl.index.document import IndexDocument
from litecrawl.index.tsvector import _binary, tsvector, tsvector_binary
from litecrawl.index.words import tokens, words
from litecrawl.index.work import analyze
from litecrawl.store.backends import open_index
from litecrawl.store.postgres.connection import migrate_database
from litecrawl.store.postgres.index import BinaryTsvector
from litecrawl.store.postgres.migrations import MIGRATIONS

Serve = Callable[[web.Application], LocalServer]

# what the database builds (the tsv_written migration's trigger, the generated column before it)
_BUILT = (
    "setweight(to_tsvector('simple', litecrawl_words({title})), 'A')"
    " || setweight(to_tsvector('simple', litecrawl_words({text})), 'B')"
)
# words of many kinds: ASCII, Latin with diacritics (composed and not), other scripts, digits
# of other scripts, marks and symbols that separate words or not, quotes, backslashes
ATOMS = [
    "abc", "Zürich", "cafe\u0301", "ÉTÉ", "naïve", "Ωμέγα", "Αθήνα", "йод", "ёж", "東京",
    "中文字", "٣٤", "3", "3.11", "x99", "snake_case", "don't", "a\\b", "²", "Ⅻ", "ǅ", "ß",
    "İstanbul", "ﬁne", "ña", "ça", "æøå", "Ꭰᏸ", "ⓐ", "ㄱ", "ｆｕｌｌ", "e\u0301\u0302", "\u0301",
    "-", ".", "'", "—", "…", "«", "»", "\u00a0", "\t", "\n", " ", "  ",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(ATOMS), max_size=30).map("".join)
# ASCII words among punctuation beyond ASCII (most pages): the words found as ASCII's
BEYOND = ["—", "…", "«", "»", "\u00a0", "“", "’", "😀", "≤", "─"]
ASCII_WORDS = st.lists(st.sampled_from([*BEYOND, *(a for a in ATOMS if a.isascii())]), max_size=30)


@pytest.fixture
def pg(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    migrate_database(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        yield conn


def built_by_database(conn: psycopg.Connection[Any], title: str, text: str) -> str:
    sql = f"SELECT ({_BUILT.format(title='%s', text='%s')})::text"
    row = conn.execute(sql.encode(), (title, text)).fetchone()
    assert row is not None
    return str(row[0])


def as_stored(conn: psycopg.Connection[Any], vector: str) -> str:
    row = conn.execute("SELECT %s::tsvector::text", (vector,)).fetchone()
    assert row is not None
    return str(row[0])


def sent_binary(conn: psycopg.Connection[Any], title: str, text: str) -> str:
    """The worker's vector as the store sends it (binary), as the server reads it."""
    vector = tsvector_binary(title, text)
    assert vector is not None
    row = conn.execute("SELECT %b::tsvector::text", (BinaryTsvector(vector),)).fetchone()
    assert row is not None
    return str(row[0])


@settings(max_examples=300)
@given(st.text())
def test_words_are_the_tokens_without_their_offsets(text: str) -> None:
    assert words(text) == [word for _, _, word in tokens(text)]


@settings(max_examples=200)
@given(st.one_of(TEXTS, ASCII_WORDS.map("".join)))
def test_words_of_mixed_scripts_are_the_tokens_without_their_offsets(text: str) -> None:
    assert words(text) == [word for _, _, word in tokens(text)]


# texts whose words come back hundreds of times: past the 255 positions a word keeps
REPEATED = st.builds(lambda text, times: text * times, TEXTS, st.integers(1, 700))


@settings(max_examples=300)
@given(st.one_of(TEXTS, REPEATED), st.one_of(TEXTS, REPEATED, st.text()))
def test_the_vector_is_the_one_built_word_by_word(title: str, text: str) -> None:
    """The vector built in C-level passes is, byte for byte, the one built word by word."""
    assert tsvector_binary(title, text) == _binary(title, text)


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("x y", "x " * 400 + "y " * 20_000 + "x z"),  # runs cut, then the last position
        ("a " * 255, "a " * 300),  # the title's 255 and one of the text's
        ("a " * 200, "b " * 16_300 + "a " * 100 + "c"),  # past the last position
        ("q a b", "a " * 300 + "b " * 400 + "c " * 500 + "q"),  # three runs cut
        ("long " + "w" * 600, "w" * 600 + " x"),  # a word that may be too long
    ],
)
def test_the_vector_at_the_limits_is_the_one_built_word_by_word(title: str, text: str) -> None:
    assert tsvector_binary(title, text) == _binary(title, text)


def test_the_worker_builds_the_database_s_vector(pg: psycopg.Connection[Any]) -> None:
    @settings(max_examples=400)
    @given(TEXTS, TEXTS)
    def same(title: str, text: str) -> None:
        built = built_by_database(pg, title, text)
        assert as_stored(pg, tsvector(title, text)) == built
        assert sent_binary(pg, title, text) == built

    same()


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("x " * 300, "x y " * 300),  # over 255 positions in a part, 256 in all
        ("", "y " * 17_000),  # positions past 16,383 all stand on the last
        ("t " * 17_000, "t u " * 10),  # the title ends on the last position
        ("a" * 3000 + " b", "c " + "é" * 1100 + " d " + "д" * 1023 + " e"),  # 2,048 bytes
        ("", "z " * 150_000 + "late word"),  # a text's words after 200,000 characters
        ("", ""),
    ],
    ids=["positions", "last-position", "title-at-the-end", "long-words", "long-text", "empty"],
)
def test_the_database_s_limits_are_kept(pg: psycopg.Connection[Any], title: str, text: str) -> None:
    built = built_by_database(pg, title, text)
    assert as_stored(pg, tsvector(title, text)) == built
    assert sent_binary(pg, title, text) == built


def test_a_vector_over_a_megabyte_is_left_to_the_database(pg: psycopg.Connection[Any]) -> None:
    """Over PostgreSQL's 1 MB of words and positions the worker sends nothing: the database
    builds it and fails as it did (the page is kept, ``not_indexed``: tests/test_search.py)."""

    def distinct(n: int, first: int) -> str:  # three-letter CJK words, 9 bytes each
        return " ".join(chr(first + i // 160_000) + chr(first + i // 400 % 400)
                        + chr(first + i % 400) for i in range(n))  # fmt: skip

    title, text = distinct(50_000, 0x4E00), distinct(50_000, 0x6000)
    assert tsvector_binary("", text) is not None  # ~0.65 MB alone
    assert tsvector_binary(title, text) is None  # ~1.3 MB together
    with pytest.raises(psycopg.errors.ProgramLimitExceeded):
        built_by_database(pg, title, text)


def test_the_worker_sends_the_vector_only_for_postgresql() -> None:
    body = b"<html><head><title>Caf\xc3\xa9 Z\xc3\xbcrich</title></head><body><p>Snake_case "
    body += b"words, www.example.com and 3.11.</p></body></html>"
    headers = {"content-type": "text/html; charset=utf-8"}

    def document(**options: Any) -> IndexDocument:
        settings = AnalyzerSettings(embed=False, **options)
        doc, _, _ = analyze("http://a.test/", body, headers, 200, 0, "seed", settings, 0.0)
        assert isinstance(doc, IndexDocument)
        return doc

    doc = document(tsvector=True)
    assert doc.tsvector == tsvector_binary(doc.title, doc.text)
    assert b"zurich\0" in (doc.tsvector or b"") and b"snake\0" in (doc.tsvector or b"")
    assert document().tsvector is None  # SQLite: FTS5 indexes the text itself


PAGES = {
    "/a": ("Solar panels in Zürich", "Solar panels turn sunlight into power. Café naïve 3.11"),
    "/b": ("Ωμέγα and 東京", "Snake_case words: www.example.com, don't stop. " * 40),
    "/c": ("Roses", "Roses need sunlight and water; prune in spring. " * 300),
}
QUERIES = [
    "solar", "sunlight", "zurich", "Zürich", "cafe", "naive", "3.11", "11", "Ωμέγα", "東京",
    "snake", "case", "example.com", "don't", "roses NOT solar", '"prune in spring"', "sun*",
    "title:roses", "title:solar", "words OR water", "stop",
]  # fmt: skip


def test_search_finds_the_same_either_way_on_a_crawl(pg_url: str, serve: Serve) -> None:
    """A crawl's vectors (built by its analysis workers) are the ones the database builds
    from the stored text, and every query finds the same pages, in the same order, with both."""
    served = {"/": html_page("".join(f'<a href="{p}">{p}</a> ' for p in PAGES), "Home")}
    served |= {path: html_page(f"<p>{text}</p>", title) for path, (title, text) in PAGES.items()}
    site = serve(site_app(served))
    result = CliRunner().invoke(
        app, ["crawl", site.url("/"), "--db", pg_url, "--delay-ms", "0", "--no-cache", "-q"]
    )
    assert result.exit_code == 0, result.output

    def results() -> dict[str, list[tuple[str, float]]]:
        with open_index(pg_url) as index:
            return {q: [(h.url, round(h.score, 6)) for h in index.keyword(q)] for q in QUERIES}

    by_worker = results()
    assert [q for q in QUERIES if not by_worker[q]] == [], by_worker
    stored = db_query(pg_url, "SELECT id, tsv::text FROM resources ORDER BY id")
    assert len(stored) == 4
    # the database builds them again (the triggers build a vector set to NULL)
    db_query(pg_url, "UPDATE resources SET tsv = NULL RETURNING id")
    assert db_query(pg_url, "SELECT id, tsv::text FROM resources ORDER BY id") == stored
    assert results() == by_worker


def test_an_older_database_keeps_its_vectors_and_takes_new_ones(pg_url: str) -> None:
    """A database from before the tsv_written migration: its generated vectors are kept as
    they are; afterwards a resource written with a vector keeps that one, one written
    without gets the database's."""
    names = [name for name, _ in MIGRATIONS]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE litecrawl_schema ("
            " version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
        )
        for version, (name, script) in enumerate(MIGRATIONS[: names.index("tsv_written")]):
            conn.execute(script.encode())
            conn.execute("INSERT INTO litecrawl_schema VALUES (%s, %s, now())", (version + 1, name))
        insert = (
            "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title,"
            " text) VALUES (%s, 0, 0, 0, 0, 0, %s, %s)"
        )
        conn.execute(insert, ("old", "Old page", "Written by the database"))
    migrate_database(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(insert, ("plain", "New page", "Written without a vector"))
        conn.execute(
            insert.replace("text)", "text, tsv)").replace("%s)", "%s, %s::tsvector)"),
            ("given", "Given", "Words", "'given':1A 'words':2B 'extra':3B"),
        )
        conn.execute("UPDATE resources SET text = 'Changed words' WHERE text_hash = 'plain'")
        rows = dict(conn.execute("SELECT text_hash, tsv::text FROM resources").fetchall())
    assert rows == {
        "old": "'by':4B 'database':6B 'old':1A 'page':2A 'the':5B 'written':3B",
        "plain": "'changed':3B 'new':1A 'page':2A 'words':4B",
        "given": "'extra':3B 'given':1A 'words':2B",
    }


def test_long_texts_are_stored_with_lz4(pg_url: str) -> None:
    """The resource's text and vector are compressed with lz4 (cheaper for the database than
    pglz, its default), on a server that has it (Debian's and PostgreSQL's own packages)."""
    migrate_database(pg_url)
    text = " ".join(f"word{i}" for i in range(5000))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, title, text,"
            " tsv) VALUES ('h', 0, 0, 0, 0, 0, 'Title', %s, %s::tsvector)",
            (text, tsvector("Title", text)),
        )
        row = conn.execute(
            "SELECT pg_column_compression(text), pg_column_compression(tsv) FROM resources"
        ).fetchone()
    assert row == ("lz4", "lz4")
