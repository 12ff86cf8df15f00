"""Page analysis off the event loop: extraction, hashes, Markdown + sidecar, the index document.

:class:`PageAnalyzer` is the engine's ``analyzer`` (``EngineOptions.analyzer``), one a crawl, on
the :class:`AnalysisPool` of whoever runs the crawls (one for all of them)::

    async with AnalysisPool() as pool:
        analyzer = PageAnalyzer(AnalyzerSettings(output_dir=Path("output")), pool)
        ...  # EngineOptions(..., analyzer=analyzer)

It returns a :class:`~litecrawl.index.document.PageAnalysis`: the index document and the page's
links, both made in a worker. The pool owns a :class:`~litecrawl.index.pool.WorkerPool` (one
worker per usable CPU by default; ``workers=0`` runs inline in the event loop thread, for tests
and tiny crawls). Workers are fresh interpreters (``python -m litecrawl.index.pool``), never
forks of the crawler with its threads; a worker that dies (killed, out of memory) costs the pages
it held, and a new one takes its place.

The work for one page never raises: a page that cannot be analyzed yields None and a warning
naming its URL, and the crawl goes on. :func:`analyze_page` does the same work in the calling
thread, for direct use.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from litecrawl.article_engines import DEFAULT_ENGINE, ArticleEngine
from litecrawl.cache import CacheLayout
from litecrawl.errors import ConfigError
from litecrawl.fetch.base import FetchResult
from litecrawl.index.document import IndexDocument, PageAnalysis
from litecrawl.index.pool import NoWorker, WorkerDied, WorkerPool
from litecrawl.parse.links import PageLinks
from litecrawl.parse.resolve import LinkRules, ResolvedLinks

__all__ = ["AnalysisPool", "AnalyzerSettings", "PageAnalyzer", "analyze_page"]

log = logging.getLogger("litecrawl.index")

# What the workers run, by name: the crawler process itself never imports the extraction stack
# (lxml cleaning, trafilatura, numpy: seconds of start-up for a crawl that only fetches).
_WORK = "litecrawl.index.work:analyze_task"


@dataclass(frozen=True, slots=True)
class AnalyzerSettings:
    """What the analysis of every page needs (plain data: it travels to the worker processes).

    ``extra_remove``: CSS selectors dropped before extraction (``filter.extra_remove``).
    ``main_article``: the main article's text instead of the full page (003
    ``extract.main_article``), by ``article_engine`` (``extract.engine``). ``output_dir``: where
    Markdown + ``.meta.json`` go (None: no files). ``cache_dir``: the disk cache directory, for
    the sidecar's ``cache_path`` (None: the sidecar says null). ``embed``: a vector of the text
    for semantic search (``extract.embed``; the model loads in each worker on its first page).
    ``tsvector``: the page's PostgreSQL full-text vector (the database is PostgreSQL: built
    here, in the worker, rather than by the database, see ``index/tsvector.py``).
    """

    extra_remove: tuple[str, ...] = ()
    main_article: bool = False
    article_engine: ArticleEngine = DEFAULT_ENGINE
    output_dir: Path | None = None
    cache_dir: Path | None = None
    cache_layout: CacheLayout = "files"
    embed: bool = True
    tsvector: bool = False


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
    outcome, _links, _hash = _inline(settings, None, _page_args(url, result, depth, source, when))
    if isinstance(outcome, str):
        log.warning("analysis failed for %s: %s", url, outcome)
        return None
    return outcome


class AnalysisPool:
    """The analysis worker processes of whoever runs crawls (``crawl``, ``sites run``): every
    crawl it runs at once or in turn shares them. A task carries its crawl's settings and link
    rules (:class:`PageAnalyzer`), so one pool serves crawls of different settings; a pool per
    crawl held N pools of a worker per CPU under ``sites run --workers N`` (docs/sites.md)."""

    def __init__(self, workers: int | None = None):
        if workers is not None and workers < 0:
            raise ConfigError(f"analyzer workers must be >= 0 (0 = inline), not {workers}")
        self.workers = _usable_cpus() if workers is None else workers
        self._pool: WorkerPool | None = None
        self._entered = False

    async def __aenter__(self) -> Self:
        # The workers start with the first page, not here: a run with nothing due (cron's
        # usual run) then starts none, where it started one a CPU and waited for their imports
        # to end before it could exit (docs/architecture.md, "The way of a page").
        self._entered = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        pool, self._pool, self._entered = self._pool, None, False
        if pool is not None:
            await pool.__aexit__(exc_type, exc, tb)

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers (none before the first page)."""
        return self._pool.pids if self._pool is not None else []

    async def analyze(
        self,
        settings: AnalyzerSettings,
        context: bytes,
        link_rules: LinkRules | None,
        page: _PageArgs,
    ) -> PageAnalysis:
        """One page by ``settings`` and ``link_rules`` (``context``: both pickled)."""
        url = page[0]
        links: PageLinks | ResolvedLinks | None = None
        if self.workers == 0:
            outcome, links, body_hash = _inline(settings, link_rules, page)
        else:
            if not self._entered:
                raise RuntimeError("use 'async with AnalysisPool(...)' before analyzing")
            if self._pool is None:  # the first page: start the workers (WorkerPool's
                # __aenter__ only creates tasks, never suspends: no second page starts a pool)
                self._pool = await WorkerPool(_WORK, self.workers).__aenter__()
            try:
                outcome, links, body_hash = await self._pool.run(context, *page)
            except NoWorker:
                log.warning("no analysis worker could be started: analyzing %s inline", url)
                outcome, links, body_hash = _inline(settings, link_rules, page)
            except WorkerDied:
                # killed, out of memory, a crash in C code: the pool starts a new worker
                log.warning("analysis worker died on %s; a new worker takes over", url)
                return PageAnalysis(None)
            except Exception as exc:  # e.g. a result that cannot be sent back
                log.warning("analysis failed for %s: %s: %s", url, type(exc).__name__, exc)
                return PageAnalysis(None)
        document = None
        if isinstance(outcome, str):
            log.warning("analysis failed for %s: %s", url, outcome)
        else:
            document = outcome
        if isinstance(links, ResolvedLinks):
            return PageAnalysis(document, resolved=links, content_hash=body_hash)
        return PageAnalysis(document, links, content_hash=body_hash)


class PageAnalyzer:
    """One crawl's analyzer, the engine's: ``await analyzer(url, result, depth, source)``, each
    page analyzed by this crawl's ``settings`` in ``pool``'s workers."""

    def __init__(self, settings: AnalyzerSettings, pool: AnalysisPool):
        self.settings = settings
        self.pool = pool
        # (link rules, the settings and those rules pickled): what every page's task repeats
        self._context: tuple[LinkRules | None, bytes] | None = None

    async def __call__(
        self,
        url: str,
        result: FetchResult,
        depth: int,
        source: str,
        link_rules: LinkRules | None = None,
    ) -> PageAnalysis:
        """The page's index document (None if it could not be made) and its links, resolved
        by ``link_rules`` if given, all made in a worker so the event loop parses nothing."""
        page = _page_args(url, result, depth, source, time.time())
        context = self._context_for(link_rules) if self.pool.workers else b""
        return await self.pool.analyze(self.settings, context, link_rules, page)

    def _context_for(self, link_rules: LinkRules | None) -> bytes:
        """The settings and ``link_rules`` as one pickle, made once: a task carries these bytes
        instead of pickling both objects again for every page on the event loop (their
        ``__reduce__`` calls are Python code: 15 -> 5 us a kit page's task), and a worker
        unpickles them once (:func:`litecrawl.index.work.analyze_task`)."""
        if self._context is None or self._context[0] is not link_rules:
            blob = pickle.dumps((self.settings, link_rules), protocol=pickle.HIGHEST_PROTOCOL)
            self._context = (link_rules, blob)
        return self._context[1]


def _inline(
    settings: AnalyzerSettings, link_rules: LinkRules | None, page: _PageArgs
) -> tuple[IndexDocument | str, PageLinks | ResolvedLinks | None, str]:
    """The work for one page in this process (the extraction stack is imported on first use)."""
    from litecrawl.index.work import analyze

    url, body, headers, status, depth, source, fetched_at, revalidated = page
    return analyze(
        url, body, headers, status, depth, source, settings, fetched_at, revalidated, link_rules
    )


# url, body, headers, status, depth, source, fetched_at, revalidated
_PageArgs = tuple[str, bytes, dict[str, str], int, int, str, float, bool]


def _page_args(
    url: str, result: FetchResult, depth: int, source: str, fetched_at: float
) -> _PageArgs:
    """The page's part of :func:`litecrawl.index.work.analyze_task`'s arguments: plain data
    that pickles to a worker."""
    return (
        url,
        result.body,
        dict(result.headers),
        result.status,
        depth,
        source,
        fetched_at,
        result.revalidated,
    )


def _usable_cpus() -> int:
    """CPUs this process may run on (a container's CPU set, not the whole machine)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
