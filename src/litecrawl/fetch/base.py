"""What every fetcher takes and gives: one request in, one result out.

A fetcher returns a :class:`FetchResult` for any HTTP response (any status) and raises a
:class:`~litecrawl.errors.FetchError` subclass when no response was obtained.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol, Self

__all__ = ["MAX_BYTES", "FetchRequest", "FetchResult", "Fetcher", "accepts", "media_type"]

#: The largest body a fetcher takes (after decompression; rendered: the DOM it serialises);
#: ``[fetch] max_bytes`` (docs/crawling.md, "Fetching"). A larger one is refused as ``too_large``.
MAX_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str
    # Extra headers for this request only (conditional GET: If-None-Match, If-Modified-Since).
    headers: Mapping[str, str] = field(default_factory=dict)
    # Media types whose 2xx bodies are wanted (``type/subtype``, ``type/*``, ``*/*``); another
    # is not read past its headers (UnwantedType). None: every body is read.
    accept_types: tuple[str, ...] | None = None


def media_type(content_type: str) -> str:
    """``Text/HTML; charset=utf-8`` -> ``text/html``."""
    return content_type.split(";", 1)[0].strip().lower()


def accepts(content_type: str, patterns: tuple[str, ...] | None) -> bool:
    """Does a response of ``content_type`` match one of ``patterns``? A response without a
    content type is taken (the body tells what it is)."""
    if patterns is None:
        return True
    kind = media_type(content_type)
    if not kind:
        return True
    family = kind.split("/", 1)[0] + "/*"
    return any(p in ("*/*", "*", kind, family) for p in patterns)


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str  # the URL asked for
    final_url: str  # the URL after redirects (page.url for the browser)
    status: int
    headers: Mapping[str, str]  # response headers, keys lower-case
    body: bytes  # decompressed body; for the browser, the rendered DOM as UTF-8
    elapsed: float = 0.0  # seconds
    revalidated: bool = False  # a 304 answered from the disk cache (body is the cached one)
    # The browser's render ran out of time after the page's HTML arrived: the body is that HTML
    # as served, not the rendered DOM, and it is not rendered again (docs/crawling.md, "A render
    # that runs out of time").
    render_timed_out: bool = False

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Fetcher(Protocol):
    """``async with fetcher: result = await fetcher.fetch(request)``."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def fetch(self, request: FetchRequest) -> FetchResult: ...
