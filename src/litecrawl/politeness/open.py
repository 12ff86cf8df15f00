"""The gate that lets everything through (benchmarks, ``obey_robots=False`` with no pacing)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from litecrawl.fetch.base import FetchResult

__all__ = ["OpenGate"]


class OpenGate:
    async def check(self, url: str) -> str | None:
        return None

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        yield

    async def observe(self, host: str, result: FetchResult | None) -> float | None:
        return None
