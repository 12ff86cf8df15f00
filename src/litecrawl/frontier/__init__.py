"""Frontier stores behind one interface (SQLite embedded; PostgreSQL for scale-out)."""

from litecrawl.frontier.base import ClaimedPage, Frontier, NewLink, PageUpdate

__all__ = ["ClaimedPage", "Frontier", "NewLink", "PageUpdate", "open_frontier"]


def open_frontier(location: str, read_only: bool = False) -> Frontier:
    """The frontier for a database location: a file path (SQLite) or ``postgresql://`` URL.
    ``read_only`` (SQLite; ``stats``): opened without a write, even on a read-only disk; on
    PostgreSQL what may be written is the database role's to say."""
    # Imported here: the backends import this package's base module.
    if location.startswith(("postgresql://", "postgres://")):
        from litecrawl.store.postgres.frontier import PostgresFrontier

        return PostgresFrontier(location)
    from litecrawl.store.sqlite.frontier import SQLiteFrontier

    return SQLiteFrontier(location, read_only)
