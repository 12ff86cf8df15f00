"""Whole tables of a SQLite file (``litecrawl db copy``); see :mod:`litecrawl.store.tables`."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from litecrawl.errors import ConfigError, FrontierError
from litecrawl.store.sqlite.connection import connect
from litecrawl.store.sqlite.failures import translate
from litecrawl.store.sqlite.index import copy_resources
from litecrawl.store.sqlite.links import replace_links
from litecrawl.store.sqlite.migrations import migrate
from litecrawl.store.tables import LINKS, Row, Table, TableStore, read_statement, write_statement

__all__ = ["SQLiteTables"]


class SQLiteTables(TableStore):
    def __init__(self, path: str | Path, create: bool = True) -> None:
        self.location = str(path)
        self._create = create
        self._conn: sqlite3.Connection | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise FrontierError(f"{self.location}: the database is not open")
        return self._conn

    def open(self) -> None:
        if not self._create and not Path(self.location).is_file():
            raise ConfigError(f"no database at {self.location}")
        self._conn = connect(self.location)
        try:
            migrate(self._conn)
        except sqlite3.Error as exc:
            raise translate(self.location, exc) from exc

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def begin_snapshot(self) -> None:
        # in WAL mode one read transaction sees the file as it was at its first read
        self.conn.execute("BEGIN")
        self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()

    def end_snapshot(self) -> None:
        self.conn.execute("COMMIT")

    def columns(self, table: str) -> list[str]:
        return [row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")]

    def count(self, table: str) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def read(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int
    ) -> list[Row]:
        sql, params = read_statement(table, columns, after, limit)
        return self.conn.execute(sql, params).fetchall()

    def write(self, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            if table.name == LINKS:  # the links in too (store/link_graph.py)
                src = list(columns).index("src")
                replace_links(conn, sorted({r[src] for r in rows}), rows, columns=columns)
            elif table.name == "resources":  # their full text too (store/sqlite/index.py)
                copy_resources(conn, write_statement(table, columns), columns, rows)
            else:
                conn.executemany(write_statement(table, columns), rows)
            conn.execute("COMMIT")
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise FrontierError(f"{self.location}: {table.name}: {exc}") from exc
            raise

    def finish(self) -> None:
        """Nothing to do: SQLite numbers after the largest id (AUTOINCREMENT keeps its counter
        up to date on explicit ids)."""
