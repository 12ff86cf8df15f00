"""The crawl's writes keep no statement journal in a temporary file. A statement SQLite may
have to undo alone (several rows, a trigger) journals each page it changes that existed before
it, and each page the transaction had changed before that the page cache writes out while it
runs; past 64 KiB that journal goes to a temporary file, which every later statement of the
transaction writes too (store/sqlite/index.py; bench/README.md, issue 33, session 9)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from litecrawl.index.document import IndexDocument
from litecrawl.store.sqlite.connection import connect, for_writing
from litecrawl.store.sqlite.index import write_documents
from litecrawl.store.sqlite.links import write_links
from litecrawl.store.sqlite.migrations import migrate

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _temporary_files() -> list[str]:
    """SQLite's temporary files this process holds open (named etilqs_*, deleted at once)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if "etilqs_" in target:
            found.append(target)
    return found


def _database(path: Path) -> sqlite3.Connection:
    conn = connect(path)
    migrate(conn)
    assert conn.execute("PRAGMA temp_store").fetchone()[0] != 2  # journals past 64 KiB: a file
    return conn


_FOUND = (
    "SELECT d.url FROM resources_fts JOIN documents AS d ON d.resource_id = resources_fts.rowid"
    " WHERE resources_fts MATCH ?"
)


def _document(i: int, version: str = "") -> IndexDocument:
    text = f"page {i} word{i}{version} " + " ".join(
        f"filler{(i * 7 + k) % 500}" for k in range(2000)
    )
    return IndexDocument(
        url=f"http://k/{i}",
        title=f"title {i}{version}",
        keywords=(),
        text_preview="",
        text=text,
        text_hash=hashlib.sha256(text.encode()).hexdigest(),
        simhash=int.from_bytes(hashlib.sha256(f"s{i}".encode()).digest()[:7]),
    )


def test_writing_new_resources_opens_no_temporary_file(tmp_path: Path) -> None:
    """A batch of 64 new texts, as the crawl's writer writes it, among 6,000 resources (their
    indexes of text hashes and near-duplicate bands have many leaves)."""
    conn = for_writing(_database(tmp_path / "r.db"))
    conn.execute(
        "INSERT INTO resources (text_hash, simhash, band0, band1, band2, band3, text)"
        " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)"
        " SELECT hex(randomblob(32)), random(), random() % 65536, random() % 65536,"
        " random() % 65536, random() % 65536, 'old' FROM n"
    )
    held = []
    for batch in range(3):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE pages SET depth = depth")  # the transaction's first statement
        write_documents(conn, [_document(batch * 64 + i) for i in range(64)])
        held += _temporary_files()
        conn.execute("COMMIT")
    # every new text is found by the full-text index, once
    found = [[url for (url,) in conn.execute(_FOUND, (f"word{i}",))] for i in (0, 70, 191)]
    conn.close()
    assert found == [["http://k/0"], ["http://k/70"], ["http://k/191"]]
    assert held == []


def test_new_documents_open_no_temporary_file_even_in_a_small_cache(tmp_path: Path) -> None:
    """Pages written out of a small cache while a statement runs go into its journal if it
    keeps one: a new URL's document is a plain INSERT, which keeps none; a known URL's is an
    upsert, and is updated."""
    conn = _database(tmp_path / "d.db")
    conn.execute("PRAGMA cache_size = 40")  # pages
    held = []
    for batch in range(8):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE pages SET depth = depth")
        write_documents(conn, [_document(batch * 64 + i) for i in range(64)])
        held += _temporary_files()
        conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    write_documents(conn, [_document(i, "again") for i in (3, 200)])
    conn.execute("COMMIT")
    titles = conn.execute(
        "SELECT d.url, d.title, r.title FROM documents AS d JOIN resources AS r"
        " ON r.id = d.resource_id WHERE d.url IN ('http://k/3', 'http://k/200', 'http://k/4')"
        " ORDER BY d.url"
    ).fetchall()
    found = [[url for (url,) in conn.execute(_FOUND, (w,))] for w in ("word3again", "word3")]
    documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    conn.close()
    assert held == []
    assert documents == 512
    assert titles == [
        ("http://k/200", "title 200again", "title 200again"),
        ("http://k/3", "title 3again", "title 3again"),
        ("http://k/4", "title 4", "title 4"),
    ]
    assert found == [["http://k/3"], []]


def test_writing_links_opens_no_temporary_file(tmp_path: Path) -> None:
    conn = _database(tmp_path / "l.db")
    conn.execute("PRAGMA cache_size = 20")  # pages: many changed pages written out meanwhile
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE pages SET depth = depth")
    write_links(
        conn, [(f"http://k/p{p}", [f"http://k/t{p}-{i}" for i in range(1000)]) for p in range(6)]
    )
    held = _temporary_files()
    conn.execute("COMMIT")
    in_new = conn.execute("SELECT count(*) FROM page_links_in_new").fetchone()[0]
    conn.close()
    assert in_new == 6000
    assert held == []
