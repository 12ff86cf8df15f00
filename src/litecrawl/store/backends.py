"""Opening a store: the location says the backend, a file path (SQLite) or a
``postgresql://`` URL; each opener returns the role's interface.

Every opener asks :func:`is_postgres` and imports the backend's module only then, so a SQLite
user never loads psycopg and the backends never import this module.
"""

from __future__ import annotations

from litecrawl.store.dashboard import DashboardQueries
from litecrawl.store.frontier import Frontier
from litecrawl.store.index import IndexReader
from litecrawl.store.sites import SiteStore
from litecrawl.store.tables import TableStore

__all__ = [
    "is_postgres",
    "open_frontier",
    "open_index",
    "open_queries",
    "open_sites",
    "open_tables",
]


def is_postgres(location: str) -> bool:
    """Whether ``location`` names a PostgreSQL database (else a SQLite file)."""
    return location.startswith(("postgresql://", "postgres://"))


def open_frontier(location: str, read_only: bool = False) -> Frontier:
    """The frontier of a database location. ``read_only`` (SQLite; ``stats``): opened without
    a write, even on a read-only disk; on PostgreSQL what may be written is the database
    role's to say."""
    if is_postgres(location):
        from litecrawl.store.postgres.frontier import PostgresFrontier

        return PostgresFrontier(location)
    from litecrawl.store.sqlite.frontier import SQLiteFrontier

    return SQLiteFrontier(location, read_only)


def open_index(location: str, writable: bool = False) -> IndexReader:
    """The index of a database location; a SQLite file is opened read-only (even on a
    read-only disk) unless ``writable`` (vectors written by a backfill)."""
    if is_postgres(location):
        from litecrawl.store.postgres.search import PostgresIndex

        return PostgresIndex(location)
    from litecrawl.store.sqlite.search import SQLiteIndex

    return SQLiteIndex(location, writable)


def open_sites(location: str) -> SiteStore:
    """The site store of a database location."""
    if is_postgres(location):
        from litecrawl.store.postgres.sites import PostgresSites

        return PostgresSites(location)
    from litecrawl.store.sqlite.sites import SQLiteSites

    return SQLiteSites(location)


def open_queries(location: str) -> DashboardQueries:
    """The dashboard's reads on a database location."""
    if is_postgres(location):
        from litecrawl.store.postgres.dashboard import PostgresDashboardQueries

        return PostgresDashboardQueries(location)
    from litecrawl.store.sqlite.dashboard import SQLiteDashboardQueries

    return SQLiteDashboardQueries(location)


def open_tables(location: str) -> TableStore:
    """The whole tables of a database location (``litecrawl db copy``)."""
    if is_postgres(location):
        from litecrawl.store.postgres.tables import PostgresTables

        return PostgresTables(location)
    from litecrawl.store.sqlite.tables import SQLiteTables

    return SQLiteTables(location)
