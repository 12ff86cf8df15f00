"""The politeness interface the engine talks to, and the gate that lets everything through."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from litecrawl.errors import FetchError
from litecrawl.fetch.base import FetchResult

__all__ = ["Gate", "OpenGate"]


class Gate(Protocol):
    """May a URL be fetched (robots.txt), and when (per-host slots and pacing)?

    See :class:`litecrawl.politeness.gate.PoliteGate` for the real one.
    """

    async def check(self, url: str) -> FetchError | None:
        """None if ``url`` may be fetched, else why not (a ``RobotsDenied``, or the error that
        kept robots.txt from being fetched); its ``category`` is recorded on the page."""

    def slot(self, host: str) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold one of the host's request slots, entered no sooner than its pacing allows."""

    async def observe(self, host: str, result: FetchResult | None) -> float | None:
        """Learn from a response; the epoch time to retry after when the host said 429/503."""


class OpenGate:
    """No robots.txt, no pacing: benchmarks and ``obey_robots=False`` in ``litecrawl()``."""

    async def check(self, url: str) -> FetchError | None:
        return None

    @contextlib.asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        yield

    async def observe(self, host: str, result: FetchResult | None) -> float | None:
        return None
