"""User hooks (docs/python-api.md, "Parameters"): sync or async callables, both accepted."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["DownstreamHook", "PageHook", "TransformHook", "await_me_maybe"]

T = TypeVar("T")

PageHook = Callable[[Any], Awaitable[None] | None]
TransformHook = Callable[[bytes, str, str], "str | bytes | Awaitable[str | bytes]"]
DownstreamHook = Callable[[bytes, str, str, bool], "Awaitable[None] | None"]


async def await_me_maybe(value: T | Awaitable[T]) -> T:
    """Await ``value`` if a hook returned an awaitable, else return it as is."""
    if inspect.isawaitable(value):
        return await value
    return value
