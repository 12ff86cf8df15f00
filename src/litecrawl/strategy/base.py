"""The crawling strategy API (Frontera's, docs/strategies.md): a strategy decides what is crawled.

A strategy written for Frontera runs here with only its imports changed to
``from litecrawl.strategy import BaseCrawlingStrategy, States``. The engine sets ``meta[b'state']``
before every hook and writes back what the hook changed (state, score, meta) with the page's own
batched write; links a strategy does not ``schedule`` are not crawled.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, MutableMapping
from typing import IO, Any, Protocol

from litecrawl.store.states import PageState

__all__ = [
    "BaseCrawlingStrategy",
    "DomainMetadata",
    "Request",
    "Response",
    "ScheduledStream",
    "States",
    "StatesContext",
]


# Link states, stored in the frontier's ``state`` column: the store's one definition, under
# Frontera's name.
States = PageState


class Request:
    """A URL to crawl with its ``meta`` (bytes keys, as in Frontera)."""

    __slots__ = ("body", "cookies", "headers", "meta", "method", "url")

    def __init__(
        self,
        url: str,
        method: bytes = b"GET",
        headers: dict[Any, Any] | None = None,
        cookies: dict[Any, Any] | None = None,
        meta: dict[bytes, Any] | None = None,
        body: bytes = b"",
    ) -> None:
        self.url = url
        self.method = method
        self.headers = headers or {}
        self.cookies = cookies or {}
        self.meta: dict[bytes, Any] = meta if meta is not None else {}
        self.body = body

    def __repr__(self) -> str:
        return f"<Request {self.method!r} {self.url}>"


class Response:
    """A fetched page; its ``meta`` is its request's (setting a state on one sets it on both)."""

    __slots__ = ("body", "headers", "request", "status_code", "url")

    def __init__(
        self, url: str, status_code: int, headers: dict[str, str], body: bytes, request: Request
    ) -> None:
        self.url = url
        self.status_code = status_code
        self.headers = headers
        self.body = body
        self.request = request

    @property
    def meta(self) -> dict[bytes, Any]:
        return self.request.meta

    def __repr__(self) -> str:
        return f"<Response {self.status_code} {self.url}>"


class DomainMetadata(abc.ABC):
    """Frontera's interface of a domain metadata store (``manager.backend.domain_metadata`` is
    one); a strategy may subclass it to wrap that store, as Frontera's ``Discovery`` does."""

    @abc.abstractmethod
    def __setitem__(self, key: str, value: Any) -> None: ...

    @abc.abstractmethod
    def __getitem__(self, key: str) -> Any: ...

    @abc.abstractmethod
    def __delitem__(self, key: str) -> None: ...

    def __contains__(self, key: object) -> bool:
        raise NotImplementedError

    def frontier_start(self) -> None:
        return None

    def frontier_stop(self) -> None:
        return None


class ScheduledStream(Protocol):
    def send(self, request: Request, score: float = 1.0, dont_queue: bool = False) -> None: ...

    def flush(self) -> None: ...


class StatesContext(Protocol):
    def refresh_and_keep(self, requests: Request | Iterable[Request]) -> None: ...

    def release(self) -> None: ...


class BaseCrawlingStrategy(abc.ABC):
    """Interface of a crawling strategy (docs/strategies.md). Hooks run in the crawl's event
    loop: keep them quick; what they change is written after they return."""

    #: True: each extracted link's anchor text is in ``link.meta[b'link_text']`` (str; not
    #: stored) for ``filter_extracted_links``/``links_extracted``, at the cost of a second
    #: parse of each page.
    uses_link_text = False

    def __init__(
        self,
        manager: Any,
        args: dict[str, Any],
        scheduled_stream: ScheduledStream,
        states_context: StatesContext,
    ) -> None:
        self._manager = manager
        self._scheduled_stream = scheduled_stream
        self._states_context = states_context
        self.args = args

    @classmethod
    def from_worker(
        cls,
        manager: Any,
        args: dict[str, Any],
        scheduled_stream: ScheduledStream,
        states_context: StatesContext,
    ) -> BaseCrawlingStrategy:
        return cls(manager, args, scheduled_stream, states_context)

    @property
    def domain_metadata(self) -> MutableMapping[str, dict[str, Any]]:
        """Per registered domain, JSON-serializable dicts; persisted with the batched write."""
        metadata: MutableMapping[str, dict[str, Any]] = self._manager.domain_metadata
        return metadata

    @abc.abstractmethod
    def read_seeds(self, stream: IO[str]) -> None:
        """Seed injection: one URL per line."""

    @abc.abstractmethod
    def page_crawled(self, response: Response) -> None:
        """A page was fetched successfully."""

    def request_error(self, request: Request, error: str) -> None:
        """A fetch failed; ``error`` is the crawl's category (``timeout``, ``http_404`` ...)."""
        page_error = getattr(self, "page_error", None)  # older Frontera strategies' name
        if callable(page_error):
            page_error(request, error)

    @abc.abstractmethod
    def filter_extracted_links(self, request: Request, links: list[Request]) -> list[Request]:
        """The subset of links whose states ``links_extracted`` needs."""

    @abc.abstractmethod
    def links_extracted(self, request: Request, links: list[Request]) -> None:
        """Links of a crawled page, states loaded; schedule the ones to crawl."""

    def finished(self) -> bool:
        """Checked after each written batch: True ends the crawl (exit 0)."""
        return False

    def close(self) -> None:
        """Always called at the end of a crawl (also on Ctrl+C)."""
        self._scheduled_stream.flush()
        self._states_context.release()

    def schedule(self, request: Request, score: float = 1.0, dont_queue: bool = False) -> None:
        """Queue ``request`` with ``score`` (0..1, higher first); ``dont_queue`` only sets the
        score of a known URL."""
        self._scheduled_stream.send(request, score, dont_queue)

    def create_request(
        self,
        url: str,
        method: bytes = b"GET",
        headers: dict[Any, Any] | None = None,
        cookies: dict[Any, Any] | None = None,
        meta: dict[bytes, Any] | None = None,
        body: bytes = b"",
    ) -> Request:
        """A request without a state: call :meth:`refresh_states` on a batch of them."""
        request: Request = self._manager.create_request(url, method, headers, cookies, meta, body)
        return request

    def refresh_states(self, requests: Request | Iterable[Request]) -> None:
        """Load the stored state (and meta) of one request or a batch of them."""
        self._states_context.refresh_and_keep(requests)

    def frontier_start(self) -> None:
        return None

    def frontier_stop(self) -> None:
        return None
