"""Whole tables, read and written backend-neutrally: what ``litecrawl db copy`` moves.

:class:`TableStore` is the small interface both backends implement
(``store/sqlite/tables.py``, ``store/postgres/tables.py``); :data:`TABLES` lists every table of
the schema in an order that respects the foreign keys, with the key each is read and upserted by.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from litecrawl.store.lifecycle import SyncStore

__all__ = ["LINKS", "TABLES", "Row", "Table", "TableStore", "read_statement", "write_statement"]

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    key: tuple[str, ...]  # read in this order (keyset pages) and upserted on it
    identity: bool = False  # an ``id`` the database generates: its counter follows the copy


# Parents before children (foreign keys). page_links has no key: it is copied a page's links at
# a time (``key`` = the source page), replacing that page's links in the target.
TABLES: tuple[Table, ...] = (
    Table("pages", ("norm_url",)),
    Table("hosts", ("host",)),
    Table("robots", ("origin",)),
    Table("runs", ("id",), identity=True),
    Table("workers", ("id",), identity=True),
    Table("domain_metadata", ("domain",)),
    Table("resources", ("id",), identity=True),
    Table("documents", ("id",), identity=True),
    Table("resource_vectors", ("resource_id",)),
    Table("section_vectors", ("resource_id", "ord")),
    Table("vector_model", ("one",)),
    Table("page_links", ("src",)),
    Table("sites", ("id",), identity=True),
    Table("site_annotations", ("id",), identity=True),
    Table("site_crawls", ("id",), identity=True),
    Table("site_links", ("from_site", "to_site")),
    Table("site_feeds", ("site_id", "url")),
)
LINKS = "page_links"


class TableStore(SyncStore):
    """Synchronous; ``with store:`` connects and brings the schema up to date."""

    location: str  # for messages: never with a password

    @abstractmethod
    def begin_snapshot(self) -> None:
        """Every read until :meth:`end_snapshot` sees one moment of the database (a crawl may
        go on writing meanwhile)."""

    @abstractmethod
    def end_snapshot(self) -> None: ...

    @abstractmethod
    def columns(self, table: str) -> list[str]:
        """The table's stored columns (not the computed ones, such as the full-text vector)."""

    @abstractmethod
    def count(self, table: str) -> int: ...

    @abstractmethod
    def read(
        self, table: Table, columns: Sequence[str], after: Row | None, limit: int
    ) -> list[Row]:
        """Up to ``limit`` rows with a key above ``after`` (None: from the start), by key.
        For page_links: the links of up to ``limit`` source pages above ``after``."""

    @abstractmethod
    def write(self, table: Table, columns: Sequence[str], rows: Sequence[Row]) -> None:
        """Insert the rows, replacing those with the same key, in one transaction. For
        page_links: the rows' source pages lose their other links."""

    @abstractmethod
    def finish(self) -> None:
        """After a copy: generated ids continue after the copied ones."""


def read_statement(
    table: Table, columns: Sequence[str], after: Row | None, limit: int
) -> tuple[str, tuple[object, ...]]:
    """:meth:`TableStore.read`'s statement in SQLite's spelling (:mod:`litecrawl.store.dialect`)
    and its parameters."""
    cols = ", ".join(columns)
    key = ", ".join(table.key)
    if table.name == LINKS:
        # whole pages' links: the next ``limit`` source pages, each page's by target (the
        # order every reader shows them in; SQLite's rowid order has no PostgreSQL twin)
        srcs = "SELECT DISTINCT src FROM page_links WHERE src > ? ORDER BY src LIMIT ?"
        return (
            f"SELECT {cols} FROM page_links WHERE src IN ({srcs}) ORDER BY src, dst",
            (after[0] if after else "", limit),
        )
    if after is None:
        return f"SELECT {cols} FROM {table.name} ORDER BY {key} LIMIT ?", (limit,)
    marks = ", ".join("?" for _ in table.key)
    return (
        f"SELECT {cols} FROM {table.name} WHERE ({key}) > ({marks}) ORDER BY {key} LIMIT ?",
        (*after, limit),
    )


def write_statement(table: Table, columns: Sequence[str]) -> str:
    """:meth:`TableStore.write`'s statement for one row (SQLite's spelling): an insert, an
    upsert on the table's key but for page_links (whose source pages' rows go first)."""
    cols = ", ".join(columns)
    marks = ", ".join("?" for _ in columns)
    insert = f"INSERT INTO {table.name} ({cols}) VALUES ({marks})"
    if table.name == LINKS:
        return insert
    update = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in table.key)
    upsert = f"DO UPDATE SET {update}" if update else "DO NOTHING"
    return f"{insert} ON CONFLICT ({', '.join(table.key)}) {upsert}"
