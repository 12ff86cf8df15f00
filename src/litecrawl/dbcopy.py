"""``litecrawl db copy``: a whole crawl (frontier, index, link graph, sites, runs) from one
database to another, SQLite file or PostgreSQL, either way.

The source is read as one snapshot (a crawl may go on writing to it), table by table in key
order, in batches; each batch is upserted into the target in its own transaction, ids kept. So
an interrupted copy is simply run again: rows already there are replaced by the source's, and
a copy re-run later brings the target up to date with the source (rows deleted from the source
since stay in the target). After the copy each table is counted on both sides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from litecrawl.errors import ConfigError
from litecrawl.store.backends import is_postgres, open_tables
from litecrawl.store.tables import LINKS, TABLES, Table, TableStore

__all__ = ["TableCount", "copy_database"]

_LINK_PAGES_PER_ROW = 50  # a page has up to 1,000 links: page_links batches count pages


@dataclass(frozen=True, slots=True)
class TableCount:
    table: str
    source: int  # rows in the source's snapshot
    target: int  # rows in the target after the copy

    @property
    def same(self) -> bool:
        return self.source == self.target


def copy_database(
    source: str,
    target: str,
    *,
    batch: int = 5000,
    on_table: Callable[[TableCount], None] | None = None,
) -> list[TableCount]:
    """Copy every table of ``source`` into ``target`` (created and migrated as needed); returns
    each table's counts on both sides. Raises ConfigError for a missing source or a target
    that is the source."""
    if batch < 1:
        raise ConfigError("batch must be at least 1")
    if _same(source, target):
        raise ConfigError(f"source and target are the same database: {source}")
    if not is_postgres(source) and not Path(source).is_file():
        raise ConfigError(f"no database at {source}")
    counts: list[TableCount] = []
    with open_tables(source) as src, open_tables(target) as dst:
        src.begin_snapshot()
        try:
            for table in TABLES:
                columns = src.columns(table.name)
                if table.name == LINKS:  # a link's id is the target's own (its links in)
                    columns = [c for c in columns if c != "id"]
                missing = set(columns) - set(dst.columns(table.name))
                if missing:
                    raise ConfigError(
                        f"{dst.location}: table {table.name} lacks {', '.join(sorted(missing))}"
                    )
                _copy_table(src, dst, table, columns, batch)
                count = TableCount(table.name, src.count(table.name), dst.count(table.name))
                counts.append(count)
                if on_table is not None:
                    on_table(count)
        finally:
            src.end_snapshot()
        dst.finish()
    return counts


def _copy_table(
    src: TableStore, dst: TableStore, table: Table, columns: list[str], batch: int
) -> None:
    limit = max(1, batch // _LINK_PAGES_PER_ROW) if table.name == LINKS else batch
    key = [columns.index(k) for k in table.key]
    after = None
    while rows := src.read(table, columns, after, limit):
        dst.write(table, columns, rows)
        after = tuple(rows[-1][i] for i in key)


def _same(a: str, b: str) -> bool:
    if is_postgres(a):
        return a == b
    return Path(a).resolve() == Path(b).resolve()
