"""The raw-response cache in one SQLite file, ``{dir}/cache.db`` (``[cache] layout = "sqlite"``).

Two files per page (the file layout) cost a file system block each: ~8.5 KB of disk for a 200-byte
page, and two atomic file writes per store. Here a page is one row (its metadata as the JSON
``.headers.json`` holds, and its body), ~0.8 KB for the same page; see docs/crawling.md.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from litecrawl.fetch.base import FetchResult
from litecrawl.store.responses import CachedResponse, cache_meta
from litecrawl.store.sqlite.connection import connect

__all__ = ["CACHE_FILE", "SQLiteCache"]

CACHE_FILE = "cache.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
  sha   TEXT PRIMARY KEY,  -- SHA-256 of the URL, as the file layout names its files
  meta  TEXT NOT NULL,     -- url, final_url, status, headers, fetched_at, size_bytes, content_hash
  body  BLOB NOT NULL
) WITHOUT ROWID
"""


class SQLiteCache:
    """The same interface as :class:`litecrawl.cache.DiskCache`; ``path_for`` is the file."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used from the loop and the workers

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._conn = connect(self.path)
            self._conn.execute(_SCHEMA)
        return self._conn

    def path_for(self, url: str, content_type: str = "text/html") -> Path:
        return self.path

    def store(self, url: str, result: FetchResult, content_hash: str) -> Path:
        meta = cache_meta(url, result, content_hash)
        with self._lock:
            self._db().execute(
                "INSERT OR REPLACE INTO responses (sha, meta, body) VALUES (?, ?, ?)",
                (_sha(url), json.dumps(meta), result.body),
            )
        return self.path

    def revalidated(self, url: str, headers: Mapping[str, str]) -> None:
        """A 304 confirmed the cached body: new fetch time and the headers the 304 carried."""
        loaded = self._meta_and_body(url)
        if loaded is None:
            return
        meta, _ = loaded
        meta["headers"] = {**dict(meta.get("headers", {})), **headers}
        meta["fetched_at"] = time.time()
        with self._lock:
            self._db().execute(
                "UPDATE responses SET meta = ? WHERE sha = ?", (json.dumps(meta), _sha(url))
            )

    def load(self, url: str) -> CachedResponse | None:
        loaded = self._meta_and_body(url)
        if loaded is None:
            return None
        meta, body = loaded
        try:
            return CachedResponse(
                body=body,
                headers={str(k): str(v) for k, v in dict(meta.get("headers", {})).items()},
                status=int(meta.get("status", 200)),
                fetched_at=float(meta.get("fetched_at", 0.0)),
                path=self.path,
            )
        except (TypeError, ValueError, AttributeError):
            return None

    def _meta_and_body(self, url: str) -> tuple[dict[str, Any], bytes] | None:
        if self._conn is None and not self.path.is_file():
            return None
        with self._lock:
            row = (
                self._db()
                .execute("SELECT meta, body FROM responses WHERE sha = ?", (_sha(url),))
                .fetchone()
            )
        if row is None:
            return None
        try:
            meta = json.loads(row[0])
        except ValueError:
            return None
        return (meta, bytes(row[1])) if isinstance(meta, dict) else None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _sha(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8")).hexdigest()
