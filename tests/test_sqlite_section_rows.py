"""SQLite's section vectors in a table with a rowid: a row (a 1 KiB vector) fits in its leaf
page, where a WITHOUT ROWID table spilled each row to an overflow page of its own; a file from
before keeps its rows, and its triggers still drop them with their resource."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import sqlite3
from pathlib import Path

from conftest import index_document

from litecrawl.index.document import IndexDocument, SectionVector
from litecrawl.store.backends import open_frontier, open_index
from litecrawl.store.sqlite.migrations import MIGRATIONS

_OVERFLOW = "SELECT count(*) FROM dbstat WHERE name = 'section_vectors' AND pagetype = 'overflow'"
_ROWS = "SELECT * FROM section_vectors ORDER BY resource_id, ord"
# the table as the migration "section_vectors" left it, with the columns added since
_BEFORE = """
DROP TRIGGER section_vectors_gone; DROP TRIGGER section_vectors_stale;
CREATE TABLE old_sections (resource_id INTEGER NOT NULL, ord INTEGER NOT NULL,
  heading TEXT NOT NULL, anchor TEXT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
  places TEXT NULL, heading_at INTEGER NULL, PRIMARY KEY (resource_id, ord)) WITHOUT ROWID;
INSERT INTO old_sections SELECT * FROM section_vectors;
DROP TABLE section_vectors;
ALTER TABLE old_sections RENAME TO section_vectors;
CREATE TRIGGER section_vectors_gone AFTER DELETE ON resources BEGIN
  DELETE FROM section_vectors WHERE resource_id = old.id; END;
CREATE TRIGGER section_vectors_stale AFTER UPDATE OF text ON resources
WHEN old.text IS NOT new.text BEGIN DELETE FROM section_vectors WHERE resource_id = old.id; END;
"""


def _documents(n: int) -> list[IndexDocument]:
    docs = []
    for i in range(n):
        # words of its own (near-duplicate texts would share one resource)
        text = " ".join(hashlib.sha256(f"{i}/{w}".encode()).hexdigest()[:8] for w in range(200))
        vectors = [hashlib.sha512(f"{i}/{s}".encode()).digest() * 16 for s in range(6)]
        docs.append(
            dataclasses.replace(
                index_document(f"http://a.test/{i}", f"Otters {i}", text),
                embedding=vectors[0],
                sections=tuple(
                    SectionVector(f"Part {s}", f"part-{s}", v, at=10 * s, places=None)
                    for s, v in enumerate(vectors)
                ),
            )
        )
    return docs


def _write(db: Path, docs: list[IndexDocument]) -> None:
    async def write() -> None:
        async with open_frontier(str(db)) as f:
            await f.write_documents(docs)

    asyncio.run(write())


def test_section_rows_take_no_overflow_page(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _write(db, _documents(30))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM section_vectors").fetchone() == (180,)
    assert conn.execute(_OVERFLOW).fetchone() == (0,)


def test_a_file_from_before_keeps_its_section_rows(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _write(db, _documents(12))
    conn = sqlite3.connect(db)
    conn.executescript(_BEFORE + f"PRAGMA user_version = {len(MIGRATIONS) - 1};")
    rows = conn.execute(_ROWS).fetchall()
    assert len(rows) == 72 and conn.execute(_OVERFLOW).fetchone() == (72,)  # the old shape
    conn.close()
    _write(db, [])  # opened by this version: migrated
    conn = sqlite3.connect(db)
    assert conn.execute(_ROWS).fetchall() == rows
    assert conn.execute(_OVERFLOW).fetchone() == (0,)
    with open_index(str(db)) as index:
        rid = index.resource_of_url("http://a.test/3")
        assert rid is not None
        assert [h for _, h, _, _ in index.vectors.section_vectors([rid])] == [
            f"Part {s}" for s in range(6)
        ]
    conn.execute("DELETE FROM resources WHERE id = ?", (rid,))  # the trigger drops its sections
    conn.commit()
    assert conn.execute("SELECT count(*) FROM section_vectors").fetchone() == (66,)
