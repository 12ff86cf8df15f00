"""One statement for both backends: written in SQLite's spelling, with ``?`` or ``:name``
parameters, and translated for psycopg (``%s``, ``%(name)s``, a literal ``%`` doubled).

Only what the two databases spell alike goes through here; where they really differ (claims
with ``SKIP LOCKED``, FTS5 and ``tsvector``, the upserts) each backend keeps its own SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["POSTGRES", "SQLITE", "Dialect"]

# a named parameter: a colon not part of a ``::`` cast, then a name
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class Dialect:
    postgres: bool

    def sql(self, statement: str) -> str:
        """``statement`` as this backend's driver takes it."""
        return _psycopg(statement) if self.postgres else statement

    @property
    def like_nocase(self) -> str:
        """LIKE without regard to (ASCII) case: SQLite's LIKE is, PostgreSQL's is not."""
        return "ILIKE" if self.postgres else "LIKE"

    def before_semicolon(self, column: str) -> str:
        """The part of ``column`` before a ``;`` (a Content-Type's media type)."""
        if self.postgres:
            return f"split_part({column}, ';', 1)"
        return (
            f"CASE WHEN instr({column}, ';') THEN substr({column}, 1, instr({column}, ';') - 1) "
            f"ELSE {column} END"
        )

    def no_limit(self, limit: int | None) -> int | None:
        """A LIMIT parameter: None (no limit) is -1 for SQLite, NULL for PostgreSQL."""
        return -1 if limit is None and not self.postgres else limit


@lru_cache(maxsize=256)
def _psycopg(statement: str) -> str:
    escaped = statement.replace("%", "%%")
    return _NAMED.sub(r"%(\1)s", escaped).replace("?", "%s")


SQLITE = Dialect(postgres=False)
POSTGRES = Dialect(postgres=True)
