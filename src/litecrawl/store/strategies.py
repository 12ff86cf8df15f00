"""What crawling strategies keep in the store: each URL's state, score and meta, and the
domain metadata they share (:mod:`litecrawl.strategy`)."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from litecrawl.strategy.domain import partition_hash

__all__ = ["PARKED", "LinkWrite", "StrategyState", "StrategyWrites"]

# next_crawl_time of a URL a strategy knows (state, score, meta) but did not queue.
PARKED = 1 << 62


@dataclass(frozen=True, slots=True)
class LinkWrite:
    """What a crawling strategy changed for one URL; None = leave the stored value."""

    url: str
    host: str
    depth: int
    state: int | None = None
    meta: str | None = None
    score: float | None = None
    queue: bool = False  # schedule(): due now if not queued yet; False: known, not queued

    def row(self) -> dict[str, Any]:
        """The statement parameters of both stores' strategy writes, by name."""
        return {
            "url": self.url,
            "host": self.host,
            "depth": self.depth,
            "state": self.state,
            "meta": self.meta,
            "score": self.score,
            "queue": self.queue,
            "parked": PARKED,
            "part": partition_hash(self.url, self.meta, self.host),
        }


@dataclass(frozen=True, slots=True)
class StrategyWrites:
    """A strategy's writes, batched with the page's own. Domain metadata: (domain, the JSON
    this worker loaded, its JSON now (None = gone)); the store merges the change into what it
    holds (``litecrawl.strategy.metadata.merge``)."""

    links: tuple[LinkWrite, ...] = ()
    domains: tuple[tuple[str, str | None, str | None], ...] = ()


class StrategyState(abc.ABC):
    """A strategy's reads and the writes it makes outside a page."""

    @abc.abstractmethod
    async def write_strategy(self, writes: StrategyWrites) -> int:
        """Write a strategy's changes outside a page (seeds); returns how many URLs were new."""

    @abc.abstractmethod
    def read_states(self, urls: list[str]) -> dict[str, tuple[int, float, str | None]]:
        """Synchronous (a hook's ``refresh_states``): state, score, meta of the known URLs."""

    @abc.abstractmethod
    def read_domain(self, domain: str) -> str | None:
        """Synchronous: the stored domain metadata (JSON) of a registered domain."""

    @abc.abstractmethod
    async def partitions(self, n: int, now: int) -> dict[int, dict[str, int]]:
        """Pages, crawled and due now in each partition K of ``n``."""

    @abc.abstractmethod
    async def domain_metadata(self) -> dict[str, str]:
        """All domain metadata (``litecrawl stats --domains``)."""

    @abc.abstractmethod
    async def known_hosts(self) -> list[str]:
        """The hosts (``host[:port]``) of the pages the frontier holds: a crawl given no seeds
        resumes the frontier and stays on these sites."""
