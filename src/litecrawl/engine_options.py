"""What the engine is given: the analyzer's signature and the options of a crawl's pipeline
(the URL rules, the schedule, hooks, link following, batching, the strategy, the claims' focus).
:mod:`litecrawl.engine` runs pages through them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from litecrawl.discover.listing import DEFAULT_SITEMAPS_PER_HOST
from litecrawl.fetch.base import FetchResult
from litecrawl.fetch.policy import FetchPolicy
from litecrawl.hooks import DownstreamHook, TransformHook
from litecrawl.index.document import PageAnalysis
from litecrawl.parse.resolve import LinkRules
from litecrawl.schedule import Schedule
from litecrawl.store.queue import ClaimFocus
from litecrawl.urls import UrlRules

if TYPE_CHECKING:
    from litecrawl.strategy.runner import StrategyRunner

__all__ = ["Analyzer", "EngineOptions"]


class Analyzer(Protocol):
    """Given the page URL, its fetch result, depth and source: the index document and maybe the
    page's links, resolved by ``link_rules`` (see litecrawl.index.analyze). Runs only for OK
    HTML pages."""

    def __call__(
        self,
        url: str,
        result: FetchResult,
        depth: int,
        source: str,
        link_rules: LinkRules | None = None,
    ) -> Awaitable[PageAnalysis]: ...


@dataclass(frozen=True, slots=True)
class EngineOptions:
    rules: UrlRules
    schedule: Schedule
    n_concurrent: int = 10
    processing_timeout_sec: int = 600
    transform_hook: TransformHook | None = None
    downstream_hook: DownstreamHook | None = None
    follow_links: bool = True
    max_depth: int = 0  # 0 = unlimited
    scope: Callable[[str], bool] | None = None  # extra link filter (e.g. same domain)
    canonical_links: bool = False  # also follow <link rel=canonical>
    discover_feeds: bool = False  # <link rel=alternate> feeds enter the frontier
    use_lastmod: bool = True  # skip pages whose sitemap lastmod is older than our last fetch
    sitemaps_per_host: int = DEFAULT_SITEMAPS_PER_HOST  # sub-sitemaps of a host queued in a run
    fetch_policy: FetchPolicy = field(default_factory=FetchPolicy)  # retries, cond. GET, cache
    retry_uncrawled: bool = False  # recovery makes never-crawled claims due again (once)
    analyzer: Analyzer | None = None
    write_batch: int = 256  # finalized pages per transaction
    # ...or fewer, once the oldest has waited this long: a finished page stays claimed and
    # unwritten until its batch is written, and a kill -9 loses what was not.
    flush_after_sec: float = 1.0
    # A crawling strategy decides which links are queued and with what score (None: the
    # built-in bfs, today's fast path: every link in scope and depth is queued).
    strategy: StrategyRunner | None = None
    partition: tuple[int, int] | None = None  # (K, N): claim only partition K of N
    focus: ClaimFocus | None = None  # claim only part of the frontier (a site crawl)
