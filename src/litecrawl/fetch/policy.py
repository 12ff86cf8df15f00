"""The fetch policy (docs/crawling.md, "Fetching") around any fetcher: politeness slots,
retries, conditional GET.

Network errors and timeouts are retried with exponential backoff (1 s, 2 s, 4 s ...) up to
``max_attempts`` tries in all; a 5xx is retried once; a 4xx never. A 429/503 is not retried here:
the gate slows the host down and the caller re-queues the page (:class:`Throttled`). With a disk
cache, re-fetches are conditional and a 304 is answered from the cached body.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

from litecrawl.cache import ResponseCache
from litecrawl.errors import FetchError, HostHeldBack, UnwantedType
from litecrawl.fetch.base import Fetcher, FetchRequest, FetchResult, accepts
from litecrawl.politeness.base import Gate
from litecrawl.urls import host_of

__all__ = ["FetchPolicy", "Throttled", "fetch_with_policy"]


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    max_attempts: int = 1  # tries in all for network errors and timeouts
    retry_backoff: float = 1.0  # seconds before the 2nd try; doubles each time
    cache: ResponseCache | None = None
    accept_types: tuple[str, ...] | None = None  # for pages; None: every body is read


@dataclass(frozen=True, slots=True)
class Throttled:
    """The host answered 429/503, or is held back by one told to another fetch: come back at
    ``retry_at`` (epoch seconds)."""

    retry_at: float


async def fetch_with_policy(
    fetcher: Fetcher,
    gate: Gate,
    policy: FetchPolicy,
    url: str,
    etag: str | None = None,
    last_modified: str | None = None,
    kind: str = "page",
) -> FetchResult | Throttled:
    """One page's fetch under the policy; raises the last :class:`FetchError` when giving up.
    ``kind``: the frontier's kind of the URL (``accept_types`` applies to pages only)."""
    host = host_of(url)
    accept = policy.accept_types if kind == "page" else None
    # The cache's files are read and written in a thread: 0.4-6 ms a page on a busy disk that
    # would otherwise stop every other fetch (bench/cache.py, "event loop").
    cached = None
    if policy.cache is not None and (etag or last_modified):
        cached = await asyncio.to_thread(policy.cache.load, url)
    headers: dict[str, str] = {}
    if cached is not None:
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
    attempt = server_retries = 0
    while True:
        attempt += 1
        try:
            async with gate.slot(host):
                result = await fetcher.fetch(FetchRequest(url, headers, accept))
        except HostHeldBack as exc:
            return Throttled(exc.until)
        except FetchError as exc:
            if exc.retryable and attempt < policy.max_attempts:
                await asyncio.sleep(policy.retry_backoff * 2 ** (attempt - 1))
                continue
            raise
        retry_at = await gate.observe(host, result)
        if retry_at is not None:
            return Throttled(retry_at)
        if result.status >= 500 and server_retries < 1 and policy.max_attempts > 1:
            server_retries += 1
            await asyncio.sleep(policy.retry_backoff)
            continue
        break
    if result.ok and not accepts(result.content_type, accept):
        # a fetcher that cannot stop before the body (a browser): refused all the same
        raise UnwantedType(url, result.content_type, result.status)
    if result.status == 304 and cached is not None:
        if policy.cache is not None:
            await asyncio.to_thread(policy.cache.revalidated, url, result.headers)
        return FetchResult(
            url,
            result.final_url,
            200,
            {**cached.headers, **result.headers},
            cached.body,
            result.elapsed,
            revalidated=True,
        )
    if policy.cache is not None and result.ok:
        await asyncio.to_thread(_store, policy.cache, url, result)
    return result


def _store(cache: ResponseCache, url: str, result: FetchResult) -> None:
    cache.store(url, result, hashlib.sha256(result.body).hexdigest())
