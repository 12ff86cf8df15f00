"""What either layout of the raw-response cache keeps of a response
(:mod:`litecrawl.cache` writes files; :mod:`litecrawl.store.sqlite.cache` one SQLite file)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from litecrawl.fetch.base import FetchResult

__all__ = ["CachedResponse", "cache_meta"]


@dataclass(frozen=True, slots=True)
class CachedResponse:
    body: bytes
    headers: dict[str, str]
    status: int
    fetched_at: float
    path: Path


def cache_meta(url: str, result: FetchResult, content_hash: str) -> dict[str, object]:
    """What is kept beside a cached body (``.headers.json``), in either layout."""
    return {
        "url": url,
        "final_url": result.final_url,
        "status": result.status,
        "headers": dict(result.headers),
        "fetched_at": time.time(),
        "size_bytes": len(result.body),
        "content_hash": content_hash,
    }
