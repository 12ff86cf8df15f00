"""Runs a strategy's hooks for the engine and turns what they changed into frontier writes.

The runner is Frontera's manager, scheduled stream and states context in one: it loads states
(one read per batch of requests), remembers what each request looked like when loaded, and after
a hook returns it yields :class:`~litecrawl.store.strategies.StrategyWrites` — only the requests
whose state, meta or score changed, and the ones scheduled — for the page's own batched write.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from litecrawl.parse.links import anchor_texts
from litecrawl.store.strategies import LinkWrite, StrategyState, StrategyWrites
from litecrawl.strategy.base import BaseCrawlingStrategy, Request, Response, States
from litecrawl.strategy.codec import NotJSON, dumps_meta, loads_meta
from litecrawl.strategy.domain import domain_meta
from litecrawl.strategy.manager import Backend, frontera_settings
from litecrawl.strategy.manager import States as BackendStates
from litecrawl.strategy.metadata import StoredDomainMetadata
from litecrawl.urls import host_of

__all__ = ["LoadedPage", "StateReader", "StrategyRunner", "close_strategy"]

log = logging.getLogger("litecrawl.strategy")


class StateReader(Protocol):
    """Synchronous reads a hook may need in the middle of its work (``refresh_states``)."""

    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]: ...

    def read_domain(self, domain: str) -> str | None: ...


@dataclass(frozen=True, slots=True)
class LoadedPage:
    """What the engine knows of the page a hook is about."""

    url: str
    depth: int
    state: int
    meta: str | None
    # the change statistics after this fetch (docs/freshness.md): checks, changes, change rate
    change: tuple[int, int, float | None] | None = None


class _Seen:
    __slots__ = ("depth", "meta", "request", "score", "state")

    def __init__(self, request: Request, state: int | None, meta: str | None, depth: int) -> None:
        self.request, self.state, self.meta, self.depth = request, state, meta, depth
        self.score: float | None = None


class StrategyRunner:
    """One strategy instance for one crawl process."""

    def __init__(
        self,
        factory: type[BaseCrawlingStrategy],
        args: dict[str, Any],
        reader: StateReader,
        normalize: Callable[[str], str | None],
        user_agent: str | None = None,
    ) -> None:
        self._reader = reader
        self._normalize = normalize
        self._seen: dict[int, _Seen] = {}
        self._scheduled: dict[int, bool] = {}  # id(request) -> queue
        self.domain_metadata = StoredDomainMetadata(reader)
        # Frontera's manager attributes (see litecrawl.strategy.manager)
        self.backend = Backend(self.domain_metadata, BackendStates(self))
        self.settings: Mapping[str, Any] = frontera_settings(args, user_agent)
        self.request_model = Request
        self.response_model = Response
        self.errors = 0
        self.strategy = factory.from_worker(self, args, self, self)
        self.name = f"{factory.__module__}:{factory.__qualname__}"

    # -- Frontera's manager / scheduled stream / states context -------------------------------

    def create_request(
        self,
        url: str,
        method: bytes = b"GET",
        headers: dict[Any, Any] | None = None,
        cookies: dict[Any, Any] | None = None,
        meta: dict[bytes, Any] | None = None,
        body: bytes = b"",
    ) -> Request:
        if isinstance(url, bytes):
            url = url.decode("utf-8", "replace")
        request = Request(url, method, headers, cookies, dict(meta or {}), body)
        request.meta.setdefault(b"domain", domain_meta(url))
        return request

    def send(self, request: Request, score: float = 1.0, dont_queue: bool = False) -> None:
        seen = self._track(request, None, None, -1)
        seen.score = float(score)
        self._scheduled[id(request)] = self._scheduled.get(id(request), False) or not dont_queue

    def flush(self) -> None:
        return None

    def refresh_and_keep(self, requests: Request | Iterable[Request]) -> None:
        batch = [requests] if isinstance(requests, Request) else list(requests)
        stored = self._reader.read_states([r.url for r in batch])
        for request in batch:
            state, _score, meta_text = stored.get(request.url, (States.NOT_CRAWLED, 0.0, None))
            for key, value in loads_meta(meta_text).items():
                request.meta.setdefault(key, value)  # what the strategy just set is newer
            request.meta[b"state"] = state
            request.meta.setdefault(b"domain", domain_meta(request.url))
            # compared with what is stored, so meta given to create_request is written
            seen = self._track(request, state, meta_text, -1)
            seen.state, seen.meta = state, meta_text

    def release(self) -> None:
        return None

    # -- events from the engine ----------------------------------------------------------------

    def read_seeds(self, urls: list[str]) -> StrategyWrites:
        stream = io.StringIO("".join(f"{u}\n" for u in urls))
        self._call("read_seeds", None, stream)
        return self._collect(0)

    def page_done(
        self,
        page: LoadedPage,
        status: int,
        headers: dict[str, str],
        body: bytes,
        links: list[str],
        error: str | None,
    ) -> StrategyWrites:
        """The hooks for one processed page: ``page_crawled`` + link hooks, or ``request_error``."""
        request = self._page_request(page)
        if error is not None:
            self._call("request_error", request, request, error)
            return self._collect(page.depth + 1)
        charset = _charset(headers.get("content-type") or headers.get("Content-Type") or "")
        if charset:
            request.meta[b"encoding"] = charset.encode()
        self._call("page_crawled", request, Response(page.url, status, headers, body, request))
        if links:
            link_requests = [self.create_request(u) for u in links]
            if getattr(self.strategy, "uses_link_text", False):
                texts = self._link_texts(page.url, headers, body)
                for link in link_requests:
                    if link.url in texts:
                        link.meta[b"link_text"] = texts[link.url]
            for link in link_requests:
                self._track(link, None, None, page.depth + 1)
            wanted = self._call("filter_extracted_links", request, request, link_requests)
            if wanted is None:
                wanted = []
            wanted = list(wanted)
            if wanted:
                self.refresh_and_keep(wanted)
                self._call("links_extracted", request, request, wanted)
        return self._collect(page.depth + 1)

    def finished(self) -> bool:
        return bool(self._call("finished", None))

    def close(self) -> StrategyWrites:
        """``close()``; what it changed (domain metadata, states) is returned for writing."""
        self._call("close", None)
        return self._collect(0)

    # -- internals -----------------------------------------------------------------------------

    def _page_request(self, page: LoadedPage) -> Request:
        request = self.create_request(page.url, meta=loads_meta(page.meta))
        request.meta[b"state"] = page.state
        # URLs queued without the strategy (sitemaps, feeds, plain seeds) have the frontier's
        # depth, so a Frontera-style request.meta[b'depth'] + 1 works on them too
        request.meta.setdefault(b"depth", page.depth)
        if page.change is not None:  # derived from the page's columns, never stored in meta
            checks, changes, rate = page.change
            request.meta[b"checks"], request.meta[b"changes"] = checks, changes
            request.meta[b"change_rate"] = rate
        self._track(request, page.state, dumps_meta(request.meta), page.depth)
        return request

    def _link_texts(self, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """Normalized link URL -> its anchor text."""
        content_type = headers.get("content-type") or headers.get("Content-Type") or ""
        texts: dict[str, str] = {}
        for raw, text in anchor_texts(body, url, content_type or "text/html").items():
            normalized = self._normalize(raw)
            if normalized is not None:
                texts[normalized] = f"{texts[normalized]} {text}" if normalized in texts else text
        return texts

    def _track(self, request: Request, state: int | None, meta: str | None, depth: int) -> _Seen:
        seen = self._seen.get(id(request))
        if seen is None:
            seen = self._seen[id(request)] = _Seen(request, state, meta, depth)
        return seen

    def _call(self, hook: str, request: Request | None, *args: Any) -> Any:
        try:
            return getattr(self.strategy, hook)(*args)
        except Exception:
            self.errors += 1
            log.exception(
                "strategy %s.%s failed%s",
                self.name,
                hook,
                f" for {request.url}" if request is not None else "",
                extra={"url": request.url if request is not None else None, "hook": hook},
            )
            return None

    def _collect(self, default_depth: int) -> StrategyWrites:
        writes: list[LinkWrite] = []
        for key, seen in self._seen.items():
            request = seen.request
            url = self._normalize(request.url)
            if url is None:
                log.debug("strategy: %s is not a valid URL; not written", request.url)
                continue
            state = request.meta.get(b"state")
            new_state = state if isinstance(state, int) and state != seen.state else None
            try:
                meta = dumps_meta(request.meta)
            except NotJSON as exc:
                self._error("meta of %s: %s", url, exc)
                meta = None
            new_meta = meta if meta != seen.meta and meta is not None else None
            queue = self._scheduled.get(key)
            if new_state is None and new_meta is None and queue is None:
                continue
            depth = request.meta.get(b"depth")
            write = LinkWrite(
                url=url,
                host=host_of(url),
                depth=depth
                if isinstance(depth, int)
                else (seen.depth if seen.depth >= 0 else default_depth),
                state=new_state,
                meta=new_meta,
                score=seen.score if queue is not None else None,
                queue=bool(queue),
            )
            writes.append(write)
            log.debug(
                "strategy: %s state %s -> %s score %s%s",
                url,
                seen.state,
                state,
                write.score,
                " queued" if write.queue else "",
                extra={
                    "url": url,
                    "state_before": seen.state,
                    "state_after": state,
                    "score": write.score,
                    "queued": write.queue,
                },
            )
        self._seen.clear()
        self._scheduled.clear()
        domains, errors = self.domain_metadata.changed()
        for error in errors:  # changed in place (not through a checked dict): not kept
            self._error("%s; the key is dropped", error)
        return StrategyWrites(tuple(writes), tuple(domains))

    def _error(self, message: str, *args: object) -> None:
        self.errors += 1
        log.error("strategy %s: " + message, self.name, *args)


async def close_strategy(runner: StrategyRunner, frontier: StrategyState) -> None:
    """End of a crawl (also on Ctrl+C): ``close()``, and its last writes."""
    writes = runner.close()
    if writes.links or writes.domains:
        await frontier.write_strategy(writes)


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"').lower()
    return None
