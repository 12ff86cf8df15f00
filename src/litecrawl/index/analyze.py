"""Page analysis off the event loop: extraction, hashes, Markdown + sidecar, the index document.

:class:`PageAnalyzer` is the engine's ``analyzer`` (``EngineOptions.analyzer``)::

    async with PageAnalyzer(AnalyzerSettings(output_dir=Path("output"))) as analyzer:
        ...  # EngineOptions(..., analyzer=analyzer)

It returns a :class:`~litecrawl.index.document.PageAnalysis`: the index document and the page's
links, both made in a worker. It owns a ``ProcessPoolExecutor`` (one worker per usable CPU by
default; ``workers=0`` runs inline in the event loop thread, for tests and tiny crawls). Workers
come from a ``forkserver`` (``spawn`` where there is none), never from forking the crawler
itself with its threads; a worker that dies (killed, out of memory) costs its page, and the pool
is replaced.

The work for one page never raises: a page that cannot be analyzed yields None and a warning
naming its URL, and the crawl goes on. :func:`analyze_page` does the same work in the calling
thread, for direct use.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from litecrawl.cache import DiskCache
from litecrawl.errors import ConfigError
from litecrawl.extract import extract_page, markdown_path, sidecar_path, to_markdown, write_atomic
from litecrawl.extract.page import Extracted
from litecrawl.fetch.base import FetchResult
from litecrawl.index.document import IndexDocument, PageAnalysis
from litecrawl.index.simhash import simhash
from litecrawl.parse.links import PageLinks, extract_links

__all__ = ["AnalyzerSettings", "PageAnalyzer", "analyze_page", "sidecar"]

log = logging.getLogger("litecrawl.index")


@dataclass(frozen=True, slots=True)
class AnalyzerSettings:
    """What the analysis of every page needs (plain data: it travels to the worker processes).

    ``extra_remove``: CSS selectors dropped before extraction (003 ``filter.extra_remove``).
    ``main_article``: trafilatura's main text instead of the full page (003
    ``extract.main_article``). ``output_dir``: where Markdown + ``.meta.json`` go (None: no
    files). ``cache_dir``: the disk cache directory, for the sidecar's ``cache_path`` (None: the
    sidecar says null).
    """

    extra_remove: tuple[str, ...] = ()
    main_article: bool = False
    output_dir: Path | None = None
    cache_dir: Path | None = None


def sidecar(
    url: str,
    extracted: Extracted,
    *,
    fetched_at: float,
    headers: Mapping[str, str],
    source: str,
    depth: int,
    status: int,
    content_hash: str,
    cache_path: str | None,
) -> dict[str, object]:
    """The ``.meta.json`` record: exactly 003's fields, in 003's order, plus trafilatura's
    ``date`` and ``author`` only when it found them."""
    record: dict[str, object] = {
        "url": url,
        "title": extracted.title,
        "fetched_at": _iso_utc(fetched_at),
        "last_modified": headers.get("last-modified"),
        "etag": headers.get("etag"),
        "source": source,
        "depth": depth,
        "status": status,
        "content_hash": content_hash,
        "cache_path": cache_path,
        "extraction_mode": extracted.extraction_mode,
    }
    if extracted.date:
        record["date"] = extracted.date
    if extracted.author:
        record["author"] = extracted.author
    return record


def analyze_page(
    url: str,
    result: FetchResult,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    *,
    fetched_at: float | None = None,
) -> IndexDocument | None:
    """Analyze one fetched page (in the calling thread); None, with a warning, if that fails."""
    when = time.time() if fetched_at is None else fetched_at
    outcome, _links = _analyze(*_worker_args(url, result, depth, source, settings, when))
    if isinstance(outcome, str):
        log.warning("analysis failed for %s: %s", url, outcome)
        return None
    return outcome


class PageAnalyzer:
    """The engine's analyzer: ``await analyzer(url, result, depth, source)``."""

    def __init__(self, settings: AnalyzerSettings | None = None, *, workers: int | None = None):
        if workers is not None and workers < 0:
            raise ConfigError(f"analyzer workers must be >= 0 (0 = inline), not {workers}")
        self.settings = settings or AnalyzerSettings()
        self.workers = _usable_cpus() if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None

    async def __aenter__(self) -> Self:
        if self.workers > 0 and self._pool is None:
            self._pool = _new_pool(self.workers)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)

    async def __call__(
        self, url: str, result: FetchResult, depth: int, source: str
    ) -> PageAnalysis:
        """The page's index document (None if it could not be made) and its links, both
        made in a worker so the event loop parses nothing."""
        args = _worker_args(url, result, depth, source, self.settings, time.time())
        links: PageLinks | None = None
        if self.workers == 0:
            outcome, links = _analyze(*args)
        else:
            if self._pool is None:
                raise RuntimeError("use 'async with PageAnalyzer(...)' before calling it")
            pool: Executor = self._pool
            try:
                loop = asyncio.get_running_loop()
                outcome, links = await loop.run_in_executor(pool, _analyze, *args)
            except BrokenProcessPool:
                # a worker died (killed, out of memory, a crash in C code): replace the pool
                log.warning("analysis worker died on %s; restarting the worker pool", url)
                if self._pool is pool:
                    self._pool = _new_pool(self.workers)
                    pool.shutdown(wait=False, cancel_futures=True)
                return PageAnalysis(None)
            except Exception as exc:  # e.g. a result that cannot be sent back
                log.warning("analysis failed for %s: %s: %s", url, type(exc).__name__, exc)
                return PageAnalysis(None)
        if isinstance(outcome, str):
            log.warning("analysis failed for %s: %s", url, outcome)
            return PageAnalysis(None, links)
        return PageAnalysis(outcome, links)


def _worker_args(
    url: str,
    result: FetchResult,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    fetched_at: float,
) -> tuple[str, bytes, dict[str, str], int, int, str, AnalyzerSettings, float]:
    """:func:`_analyze`'s arguments: plain data that pickles to a worker process."""
    return (
        url,
        result.body,
        dict(result.headers),
        result.status,
        depth,
        source,
        settings,
        fetched_at,
    )


def _usable_cpus() -> int:
    """CPUs this process may run on (a container's CPU set, not the whole machine)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _new_pool(workers: int) -> ProcessPoolExecutor:
    # forkserver: workers are forked from a clean single-threaded server process, not from this
    # one (which runs an event loop and database threads); the server imports this module once.
    watch = (os.getpid(),)
    context: multiprocessing.context.BaseContext
    if "forkserver" not in multiprocessing.get_all_start_methods():  # Windows
        context = multiprocessing.get_context("spawn")
    else:
        forkserver = multiprocessing.get_context("forkserver")
        forkserver.set_forkserver_preload([__name__])
        context = forkserver
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_exit_with_crawler, initargs=watch
    )


def _exit_with_crawler(crawler_pid: int) -> None:
    """Worker start-up: leave when the crawler is gone (kill -9 leaves no orphans behind)."""

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(crawler_pid, 0)
            except ProcessLookupError:
                os._exit(0)
            except PermissionError:  # alive, owned by someone else
                pass

    threading.Thread(target=watch, name="litecrawl-watch-crawler", daemon=True).start()


def _analyze(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    status: int,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    fetched_at: float,
) -> tuple[IndexDocument | str, PageLinks | None]:
    """The worker: an :class:`IndexDocument` (or the reason it could not be made) and the
    page's links (None if they could not be had)."""
    content_type = headers.get("content-type", "")
    links: PageLinks | None = None
    try:
        extracted = extract_page(
            body,
            url,
            content_type,
            extra_remove=settings.extra_remove,
            main_article=settings.main_article,
            want_markdown=settings.output_dir is not None,
            want_links=True,
        )
        links = extracted.links
        if links is None:  # lxml could not parse the page: the links the hard way
            links = _links_or_none(body, url, content_type)
        md_path = None
        if settings.output_dir is not None:
            md_path = _write_outputs(
                url, body, headers, status, depth, source, settings, fetched_at, extracted
            )
        text = extracted.text
        document = IndexDocument(
            url=url,
            title=extracted.title,
            keywords=extracted.keywords,
            text_preview=extracted.preview,
            text=text,
            text_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
            simhash=simhash(text),
            language=extracted.language,
            author=extracted.author,
            published=extracted.date,
            content_type=content_type or None,
            status=status,
            depth=depth,
            source=source,
            extraction_mode=extracted.extraction_mode,
            markdown_path=str(md_path) if md_path is not None else None,
        )
    except Exception as exc:  # never let one page take the worker (or the crawl) down
        return f"{type(exc).__name__}: {exc}", links
    return document, links


def _links_or_none(body: bytes, url: str, content_type: str) -> PageLinks | None:
    try:
        return extract_links(body, url, content_type)
    except Exception:
        return None  # the engine extracts them itself


def _write_outputs(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    status: int,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    fetched_at: float,
    extracted: Extracted,
) -> Path | None:
    """Markdown file + sidecar; each is rewritten only when its content changed."""
    assert settings.output_dir is not None
    markdown = to_markdown(extracted)
    if not markdown:
        return None  # nothing to show: no empty files
    md_path = markdown_path(settings.output_dir, url)
    write_atomic(md_path, markdown)
    cache_path = (
        str(DiskCache(settings.cache_dir).path_for(url)) if settings.cache_dir is not None else None
    )
    record = sidecar(
        url,
        extracted,
        fetched_at=fetched_at,
        headers=headers,
        source=source,
        depth=depth,
        status=status,
        content_hash=hashlib.sha256(body).hexdigest(),
        cache_path=cache_path,
    )
    meta_path = sidecar_path(md_path)
    if not _same_except_fetch_time(meta_path, record):
        write_atomic(meta_path, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    return md_path


def _same_except_fetch_time(path: Path, record: Mapping[str, object]) -> bool:
    """True when the sidecar on disk says the same as ``record`` apart from ``fetched_at``:
    an unchanged re-crawl leaves the file (and its ``fetched_at``, the time this content was
    first fetched) alone."""
    try:
        old: Any = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(old, dict):
        return False
    return _without(old, "fetched_at") == _without(record, "fetched_at")


def _without(record: Mapping[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in record.items() if k != key}


def _iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
