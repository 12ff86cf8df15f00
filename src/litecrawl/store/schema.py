"""The schema's named, ordered migrations, written once for both backends.

One storage shape, two backends: each step leaves the same tables and columns on SQLite and on
PostgreSQL (``tests/test_store_postgres.py`` compares them), so ``db copy`` moves rows between
the two as they are. A step is written once (``store/ddl.py``) with a few type words in braces
that each backend spells its own way (:class:`Types`); what only one database has (SQLite's
FTS5 table and its triggers, PostgreSQL's ``tsvector`` and its trigger functions) each
backend's ``migrations.py`` adds after the shared part (:func:`render`). The version number
of a step is its place in :data:`~litecrawl.store.ddl.STEPS`: never reorder or edit a step
that has shipped, add a new one at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

from litecrawl.store.ddl import STEPS

__all__ = ["STEPS", "Types", "render"]


@dataclass(frozen=True, slots=True)
class Types:
    """How a backend spells the words the shared steps leave open."""

    BIGINT: str  # a 64-bit integer: epoch seconds, ids, hashes
    REAL: str  # a double
    BLOB: str  # bytes
    ID: str  # an integer primary key the database numbers
    SERIAL: str  # the same, never handing out a number twice (worker and run ids)
    IF_NEW: str  # SQLite: the first table may be older than the migrations (litecrawl()'s own)
    NOW: str  # the current UTC time as text, 'YYYY-MM-DD HH:MM:SS'
    NULLS_FIRST: str  # what puts NULL first in an ascending index (SQLite does by itself)
    ON_RESOURCE: str  # what ties a vector to its resource (PostgreSQL: the foreign key)
    WITHOUT_ROWID: str  # SQLite's table without a rowid (a composite primary key only)


def render(types: Types, own: Mapping[str, str]) -> list[tuple[str, str]]:
    """Every step as one backend runs it: the shared part in its types, then its ``own`` part
    of that step (a step with nothing to do is ``SELECT 1;``, so both count the same
    versions)."""
    unknown = set(own) - {name for name, _ in STEPS}
    if unknown:
        raise ValueError(f"no migration step named {sorted(unknown)}")
    words = asdict(types)
    steps = []
    for name, shared in STEPS:
        script = shared.format_map(words) + own.get(name, "")
        steps.append((name, script if script.strip() else "\nSELECT 1;\n"))
    return steps
