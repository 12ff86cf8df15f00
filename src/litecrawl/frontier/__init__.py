"""Frontier stores behind one interface (SQLite embedded; PostgreSQL for scale-out)."""

from litecrawl.frontier.base import ClaimedPage, Frontier, NewLink, PageUpdate

__all__ = ["ClaimedPage", "Frontier", "NewLink", "PageUpdate", "open_frontier"]


def open_frontier(location: str) -> Frontier:
    """The frontier for a database location: a file path (SQLite) or ``postgresql://`` URL."""
    # Imported here: the backends import this package's base module.
    if location.startswith(("postgresql://", "postgres://")):
        from litecrawl.store.postgres.frontier import PostgresFrontier

        return PostgresFrontier(location)
    from litecrawl.store.sqlite.frontier import SQLiteFrontier

    return SQLiteFrontier(location)
