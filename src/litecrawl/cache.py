"""The raw-response disk cache (docs/crawling.md), file layout:
``{dir}/{host}/{sha[:2]}/{sha}.html``
(``[cache] layout = "files"``, the default; ``"sqlite"`` keeps it all in one file instead:
:mod:`litecrawl.store.sqlite.cache`).

``sha`` is the SHA-256 of the URL; the sibling ``{sha}.headers.json`` holds status, headers,
fetched_at, size_bytes, content_hash and ``body_file``, the body's name. A body that is not HTML
(a sitemap, a feed, a PDF asked for with ``--accept-type``) is named for its type instead:
``{sha}.xml``, ``{sha}.pdf``, ``{sha}.bin`` when the type is unknown. A 304 answer is served
from here and refreshes the ``.headers.json`` (fetch time, headers).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mimetypes
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

from litecrawl.fetch.base import FetchResult, media_type
from litecrawl.store.responses import CachedResponse, cache_meta

__all__ = [
    "CacheLayout",
    "CachedResponse",
    "DiskCache",
    "ResponseCache",
    "cache_in",
    "cache_meta",
    "open_cache",
]

CacheLayout = Literal["files", "sqlite"]


class ResponseCache(Protocol):
    """What the fetch policy, the analyzer and the WARC export need of a cache."""

    def path_for(self, url: str, content_type: str = "text/html") -> Path: ...

    def store(self, url: str, result: FetchResult, content_hash: str) -> Path: ...

    def revalidated(self, url: str, headers: Mapping[str, str]) -> None: ...

    def load(self, url: str) -> CachedResponse | None: ...


def open_cache(directory: str | Path, layout: CacheLayout = "files") -> ResponseCache:
    """The cache in ``directory``, written in ``layout``."""
    if layout == "sqlite":
        from litecrawl.store.sqlite.cache import SQLiteCache

        return SQLiteCache(directory)
    return DiskCache(directory)


def cache_in(directory: str | Path) -> ResponseCache:
    """The cache in ``directory`` in the layout found there (for readers: export)."""
    from litecrawl.store.sqlite.cache import CACHE_FILE

    return open_cache(directory, "sqlite" if (Path(directory) / CACHE_FILE).is_file() else "files")


class DiskCache:
    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def path_for(self, url: str, content_type: str = "text/html") -> Path:
        """Where the body of ``url`` goes when it is of ``content_type``."""
        sha = hashlib.sha256(url.encode("utf-8")).hexdigest()
        host = urlsplit(url).netloc.replace(":", "_") or "_"
        return self.directory / host / sha[:2] / f"{sha}{_suffix(content_type)}"

    def _meta_path(self, url: str) -> Path:
        return self.path_for(url).with_suffix(".headers.json")

    def store(self, url: str, result: FetchResult, content_hash: str) -> Path:
        """Write body and headers atomically (a crash never leaves half a file)."""
        path = self.path_for(url, result.content_type)
        old = self.load(url)
        meta = {**cache_meta(url, result, content_hash), "body_file": path.name}
        _write_atomic(path, result.body)
        _write_atomic(self._meta_path(url), json.dumps(meta, indent=1).encode())
        if old is not None and old.path != path:  # another type than before: no stale body
            with contextlib.suppress(OSError):
                old.path.unlink()
        return path

    def revalidated(self, url: str, headers: Mapping[str, str]) -> None:
        """A 304 confirmed the cached body: its ``.headers.json`` gets the new fetch
        time and the headers the 304 carried (a new ETag, Date, Cache-Control...)."""
        meta_path = self._meta_path(url)
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(meta, dict):
            return
        meta["headers"] = {**dict(meta.get("headers", {})), **headers}
        meta["fetched_at"] = time.time()
        _write_atomic(meta_path, json.dumps(meta, indent=1).encode())

    def load(self, url: str) -> CachedResponse | None:
        meta_path = self._meta_path(url)
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
            # entries written before body_file was recorded are HTML bodies
            name = str(meta.get("body_file") or self.path_for(url).name)
            path = meta_path.with_name(Path(name).name)
            body = path.read_bytes()
        except (OSError, ValueError, AttributeError):
            return None
        return CachedResponse(
            body=body,
            headers={str(k): str(v) for k, v in dict(meta.get("headers", {})).items()},
            status=int(meta.get("status", 200)),
            fetched_at=float(meta.get("fetched_at", 0.0)),
            path=path,
        )


def _suffix(content_type: str) -> str:
    kind = media_type(content_type)
    if kind in ("", "text/html", "application/xhtml+xml"):
        return ".html"
    if kind.endswith("+xml"):  # feeds: rss+xml, atom+xml
        return ".xml"
    return mimetypes.guess_extension(kind, strict=False) or ".bin"


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
