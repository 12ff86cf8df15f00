"""Reads written once for a synchronous and an asynchronous connection.

A *plan* is a generator that yields ``(sql, params)`` and is sent back each statement's rows;
what it returns is the result. :func:`run` drives it on a blocking connection, :func:`arun` on
an asynchronous one: the PostgreSQL frontier (async) and the dashboard (sync, in a thread) read
``litecrawl stats``' summary through the same statements.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

__all__ = ["Plan", "Rows", "arun", "run"]

T = TypeVar("T")
Rows = list[tuple[Any, ...]]
Plan = Generator[tuple[str, Any], Rows, T]


def run(plan: Plan[T], rows: Callable[[str, Any], Rows]) -> T:
    """The plan's result, each statement run by ``rows`` (sql, params) -> rows."""
    try:
        sql, params = next(plan)
        while True:
            sql, params = plan.send(rows(sql, params))
    except StopIteration as done:
        result: T = done.value
        return result


async def arun(plan: Plan[T], rows: Callable[[str, Any], Awaitable[Rows]]) -> T:
    """The same with an asynchronous ``rows``."""
    try:
        sql, params = next(plan)
        while True:
            sql, params = plan.send(await rows(sql, params))
    except StopIteration as done:
        result: T = done.value
        return result
