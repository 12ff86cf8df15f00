"""One statement for both backends: written in SQLite's spelling, with ``?`` or ``:name``
parameters, and translated for psycopg (``%s``, ``%(name)s``, a literal ``%`` doubled).

Only what the two databases spell alike goes through here; where they really differ (claims
with ``SKIP LOCKED``, FTS5 and ``tsvector``, the upserts) each backend keeps its own SQL.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

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

    @property
    def nulls_first(self) -> str:
        """What puts NULL first in an ascending order (SQLite does by itself, and so keeps
        using its index)."""
        return " NULLS FIRST" if self.postgres else ""

    @property
    def least(self) -> str:
        """The function of the least of its arguments (SQLite's min() of several)."""
        return "least" if self.postgres else "min"

    @property
    def greatest(self) -> str:
        """The function of the greatest of its arguments (SQLite's max() of several)."""
        return "greatest" if self.postgres else "max"

    @property
    def is_distinct(self) -> str:
        """The comparison true when two values differ, NULL being a value (SQLite's ``IS NOT``
        is older than its ``IS DISTINCT FROM``)."""
        return "IS DISTINCT FROM" if self.postgres else "IS NOT"

    @property
    def now_text(self) -> str:
        """The current UTC time as text, ``YYYY-MM-DD HH:MM:SS`` (the documents' times)."""
        return (
            "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
            if self.postgres
            else ("CURRENT_TIMESTAMP")
        )

    @property
    def skip_locked(self) -> str:
        """What a claim's SELECT ends with so that workers pass over each other's rows
        (SQLite: one writer at a time, nothing to pass over)."""
        return " FOR UPDATE SKIP LOCKED" if self.postgres else ""

    def one_of(self, values: list[Any]) -> tuple[str, object]:
        """A membership test against a list bound as one parameter: the text after the column,
        and the parameter (a JSON array for SQLite's json_each, an array for PostgreSQL)."""
        if self.postgres:
            return "= ANY(?)", values
        return "IN (SELECT value FROM json_each(?))", json.dumps(values)

    def hamming(self, a: str, b: str) -> str:
        """How many of the 64 bits differ between two simhashes (SQLite: the ``hamming``
        function every litecrawl connection has, ``store/sqlite/connection.py``)."""
        if self.postgres:
            return f"bit_count(({a} # {b})::bit(64))"
        return f"hamming({a}, {b})"

    def json_string(self, column: str) -> str:
        """``column``'s text as a JSON string, escaped as Python's ``json.dumps(text,
        ensure_ascii=False)`` escapes it (the quote, the backslash and control characters
        only; tests/test_export.py holds them equal), NULL as the empty string."""
        if self.postgres:
            return f"to_json(coalesce({column}, ''))::text"
        return f"json_quote(coalesce({column}, ''))"

    def no_limit(self, limit: int | None) -> int | None:
        """A LIMIT parameter: None (no limit) is -1 for SQLite, NULL for PostgreSQL."""
        return -1 if limit is None and not self.postgres else limit


@lru_cache(maxsize=256)
def _psycopg(statement: str) -> str:
    escaped = statement.replace("%", "%%")
    return _NAMED.sub(r"%(\1)s", escaped).replace("?", "%s")


SQLITE = Dialect(postgres=False)
POSTGRES = Dialect(postgres=True)
