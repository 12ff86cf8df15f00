"""The frontier at a glance on SQLite: the plans of ``store/summary.py`` on a connection."""

from __future__ import annotations

import sqlite3
from typing import Any

from litecrawl.store.dialect import SQLITE
from litecrawl.store.plans import Rows, run
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.summary import partitions_plan, summary_plan

__all__ = ["read_partitions", "read_summary"]


def _rows(conn: sqlite3.Connection) -> Any:
    def rows(sql: str, params: Any) -> Rows:
        return conn.execute(sql, () if params is None else params).fetchall()

    return rows


def read_summary(conn: sqlite3.Connection, now: int, hosts: int | None = 10) -> FrontierSummary:
    """The summary as of ``now`` (epoch seconds); ``hosts`` top hosts (None: all)."""
    return run(summary_plan(SQLITE, now, hosts), _rows(conn))


def read_partitions(conn: sqlite3.Connection, n: int, now: int) -> dict[int, dict[str, int]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    return run(partitions_plan(SQLITE, n, now), _rows(conn))
