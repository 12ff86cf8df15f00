"""The frontier at a glance on PostgreSQL: the plans of ``store/summary.py`` on the async
pool's connections."""

from __future__ import annotations

from typing import Any

import psycopg

from litecrawl.store.dialect import POSTGRES
from litecrawl.store.plans import Rows, arun
from litecrawl.store.runs import FrontierSummary
from litecrawl.store.summary import partitions_plan, summary_plan

__all__ = ["read_partitions", "read_summary"]


def _rows(conn: psycopg.AsyncConnection[Any]) -> Any:
    async def rows(sql: str, params: Any) -> Rows:
        cur = await conn.execute(sql.encode(), params)
        return await cur.fetchall()

    return rows


async def read_summary(
    conn: psycopg.AsyncConnection[Any], now: int, hosts: int | None = 10
) -> FrontierSummary:
    """The summary as of ``now`` (epoch seconds); ``hosts`` top hosts (None: all)."""
    return await arun(summary_plan(POSTGRES, now, hosts), _rows(conn))


async def read_partitions(
    conn: psycopg.AsyncConnection[Any], n: int, now: int
) -> dict[int, dict[str, int]]:
    """Pages, crawled and due now per partition K of ``n`` (``crawl --partition K/N``)."""
    return await arun(partitions_plan(POSTGRES, n, now), _rows(conn))
