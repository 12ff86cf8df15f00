"""The schema's migrations (store/schema.py) as the SQLite store runs them, tracked in
``PRAGMA user_version``: SQLite's types, and full text in an FTS5 table.

Each migration runs inside one ``BEGIN IMMEDIATE`` transaction together with the version bump, so
two processes starting on a fresh file at once apply each step exactly once.
"""

from __future__ import annotations

import sqlite3

from litecrawl.store.schema import Types, render

__all__ = ["MIGRATIONS", "migrate"]

_TYPES = Types(
    BIGINT="INTEGER",
    REAL="REAL",
    BLOB="BLOB",
    ID="INTEGER PRIMARY KEY",
    SERIAL="INTEGER PRIMARY KEY AUTOINCREMENT",
    IF_NEW=" IF NOT EXISTS",
    NOW="CURRENT_TIMESTAMP",
    NULLS_FIRST="",  # SQLite sorts NULL first by itself
    ON_RESOURCE="",  # the triggers below drop a resource's vectors
    WITHOUT_ROWID=" WITHOUT ROWID",
)

# Full text: an FTS5 table over resources' title and text, kept by triggers (since
# fts_insert_written, a new resource's text is written beside it: below).
_FTS5 = """
CREATE VIRTUAL TABLE resources_fts USING fts5(
  title, text, content='resources', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER resources_ai AFTER INSERT ON resources BEGIN
  INSERT INTO resources_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER resources_ad AFTER DELETE ON resources BEGIN
  INSERT INTO resources_fts(resources_fts, rowid, title, text)
  VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER resources_au AFTER UPDATE OF title, text ON resources BEGIN
  INSERT INTO resources_fts(resources_fts, rowid, title, text)
  VALUES ('delete', old.id, old.title, old.text);
  INSERT INTO resources_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
"""

# FTS5 merges its index segments as they pile up; merging only when 16 of a level exist (not 4)
# costs ~25% less per indexed page during a crawl, and queries stay fast (measured in bench/).
_FTS_TUNING = """
INSERT INTO resources_fts(resources_fts, rank) VALUES ('automerge', 16);
"""


def _vector_triggers(table: str) -> str:
    """A vector goes with its resource and with its resource's old text."""
    return f"""
CREATE TRIGGER {table}_gone AFTER DELETE ON resources BEGIN
  DELETE FROM {table} WHERE resource_id = old.id;
END;
CREATE TRIGGER {table}_stale AFTER UPDATE OF text ON resources
WHEN old.text IS NOT new.text BEGIN
  DELETE FROM {table} WHERE resource_id = old.id;
END;
"""


# A new resource's full text is written beside it (store/sqlite/index.py index_texts): a
# trigger made each insert of resources one SQLite may have to undo alone, and it kept a
# statement journal that outgrew memory into a temporary file (bench/README.md, issue 33,
# session 9). Updates and deletes keep their triggers (rare: a rewritten or orphaned text).
_FTS_INSERT_WRITTEN = """
DROP TRIGGER resources_ai;
"""

# section_vectors as a rowid table. A row holds a 1 KiB vector, more than a WITHOUT ROWID
# table's cell keeps in a 4 KiB page (~1,000 bytes; a rowid table's leaf keeps ~4,000), so every
# row spilled its last ~0.6 KiB to an overflow page of its own: 4 KiB written a section, three
# quarters of the file's section pages empty, twice the writer's CPU for these rows
# (bench/README.md, issue 29, session 13). Same columns, same key (its index now beside it).
_SECTION_VECTORS_ROWID = """
DROP TRIGGER section_vectors_gone;
DROP TRIGGER section_vectors_stale;
CREATE TABLE section_vectors_rows (
  resource_id INTEGER NOT NULL,
  ord         INTEGER NOT NULL,
  heading     TEXT NOT NULL,
  anchor      TEXT NULL,
  model       TEXT NOT NULL,
  vector      BLOB NOT NULL,
  places      TEXT NULL,
  heading_at  INTEGER NULL,
  PRIMARY KEY (resource_id, ord)
);
INSERT INTO section_vectors_rows
  SELECT resource_id, ord, heading, anchor, model, vector, places, heading_at
  FROM section_vectors ORDER BY resource_id, ord;
DROP TABLE section_vectors;
ALTER TABLE section_vectors_rows RENAME TO section_vectors;
""" + _vector_triggers("section_vectors")

MIGRATIONS: list[tuple[str, str]] = render(
    _TYPES,
    {
        "index": _FTS5,
        "fts_tuning": _FTS_TUNING,
        "resource_vectors": _vector_triggers("resource_vectors"),
        "section_vectors": _vector_triggers("section_vectors"),
        "fts_insert_written": _FTS_INSERT_WRITTEN,
        "section_vectors_rowid": _SECTION_VECTORS_ROWID,
    },
)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations; returns the schema version now in force."""
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= len(MIGRATIONS):
                conn.execute("COMMIT")
                return int(version)
            _name, script = MIGRATIONS[version]
            for statement in _statements(script):
                conn.execute(statement)
            if _name == "partition_hash":
                _fill_partition_hashes(conn)
            if _name == "private_suffixes":
                _rehash_private_suffixes(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; split into complete statements instead
    # (sqlite3.complete_statement understands trigger bodies with inner semicolons).
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _fill_partition_hashes(conn: sqlite3.Connection) -> None:
    from litecrawl.strategy.domain import partition_hash

    last = 0
    while batch := conn.execute(  # in rowid ranges: no read open while the rows change
        "SELECT rowid, norm_url, meta FROM pages WHERE rowid > ? ORDER BY rowid LIMIT 10000",
        (last,),
    ).fetchall():
        conn.executemany(
            "UPDATE pages SET part = ? WHERE rowid = ?",
            [(partition_hash(url, meta), rowid) for rowid, url, meta in batch],
        )
        last = batch[-1][0]


def _rehash_private_suffixes(conn: sqlite3.Connection) -> None:
    from litecrawl.strategy.domain import partition_hash, rehashed_hosts

    hosts = [h for (h,) in conn.execute("SELECT DISTINCT host FROM pages").fetchall()]
    for host in rehashed_hosts(hosts):
        rows = conn.execute(
            "SELECT rowid, norm_url, meta FROM pages WHERE host = ?", (host,)
        ).fetchall()
        conn.executemany(
            "UPDATE pages SET part = ? WHERE rowid = ?",
            [(partition_hash(url, meta, host), rowid) for rowid, url, meta in rows],
        )
