"""Whole tables of a PostgreSQL database (``litecrawl db copy``); see
:mod:`litecrawl.store.tables`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from litecrawl.errors import FrontierError
from litecrawl.store.dialect import POSTGRES
from litecrawl.store.link_graph import (
    MERGE_POSTGRES,
    NEW_IN_LINKS,
    STAGED,
    delete_links,
    merge_due,
)
from litecrawl.store.postgres.connection import connect, migrate_database
from litecrawl.store.tables import (
    LINKS,
    TABLES,
    Row,
    Table,
    TableStore,
    read_statement,
    write_statement,
)
from litecrawl.urls import shown_location

__all__ = ["PostgresTables"]

_DELETE_LINKS = [d.encode() for d in delete_links("= ANY(%s)")]
_NEW_IN_LINKS = NEW_IN_LINKS.format(member="= ANY(%s)").encode()


class PostgresTables(TableStore):
    def __init__(self, url: str) -> None:
        self.url = url
        self.location = shown_location(url)  # never the password
        self._conn: psycopg.Connection[Any] | None = None

    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            raise FrontierError(f"{self.location}: the database is not open")
        return self._conn

    def open(self) -> None:
        # one connection held for the copy: a snapshot spans many reads (no retry inside it)
        migrate_database(self.url)
        self._conn = connect(self.url)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def begin_snapshot(self) -> None:
        self._run("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")

    def end_snapshot(self) -> None:
        self._run("COMMIT")

    def columns(self, table: str) -> list[str]:
        # the full-text vector is left out: the target builds its own from the copied text
        # (SQLite's FTS5; here the tsv_written migration's triggers)
        rows = self._run(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER' "
            "AND column_name <> 'tsv' ORDER BY ordinal_position",
            (table,),
        )
        return [str(r[0]) for r in rows]

    def count(self, table: str) -> int:
        return int(self._run(f"SELECT count(*) FROM {table}")[0][0])

    def read(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int
    ) -> list[Row]:
        sql, params = read_statement(table, columns, after, limit)
        return self._run(POSTGRES.sql(sql), params)

    def write(self, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> None:
        try:
            with self.conn.transaction(), self.conn.cursor() as cur:
                links = table.name == LINKS and bool(rows)  # with links in (store/link_graph.py)
                srcs = sorted({r[list(columns).index("src")] for r in rows}) if links else []
                for statement in _DELETE_LINKS if links else []:
                    cur.execute(statement, (srcs,))
                cur.executemany(POSTGRES.sql(write_statement(table, columns)), rows)
                if links:
                    cur.execute(_NEW_IN_LINKS, (srcs,))
                    staged = cur.execute(STAGED.encode()).fetchone()
                    if staged is not None and merge_due(staged[0], staged[1]):
                        cur.execute(MERGE_POSTGRES.encode())
        except psycopg.Error as exc:
            raise FrontierError(f"{self.location}: {table.name}: {exc}") from exc

    def finish(self) -> None:
        for table in TABLES:
            if table.identity:
                self._run(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                    f"coalesce((SELECT max(id) FROM {table.name}), 0) + 1, false)"
                )

    def _run(self, sql: str, params: Sequence[object] | None = None) -> list[Row]:
        try:
            cur = self.conn.execute(sql.encode(), params)
            return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            raise FrontierError(f"{self.location}: {exc}") from exc
