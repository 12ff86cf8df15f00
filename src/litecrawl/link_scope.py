"""A page's links kept or dropped by the crawl's scope and depth: the links to follow with
their hosts, its feeds, and every valid link for the link graph (docs/crawling.md, scope)."""

from __future__ import annotations

from collections.abc import Iterable

from litecrawl.engine_options import EngineOptions
from litecrawl.outcomes import CrawlStats
from litecrawl.parse.resolve import ResolvedLinks
from litecrawl.store.queue import NewLink
from litecrawl.urls import DomainScope, host_of

__all__ = ["LinkScope"]


class LinkScope:
    """The engine's scope and depth rules over a page's links; what it drops is counted in
    ``stats.skipped_scope``."""

    def __init__(self, options: EngineOptions, stats: CrawlStats) -> None:
        self.options = options
        self.stats = stats

    def page_links(
        self, found: ResolvedLinks, depth: int
    ) -> tuple[list[str], list[str], list[NewLink], list[str]]:
        """Links of an HTML page to follow (if we follow from this depth) and their hosts, its
        feeds, and all its valid links (the link graph keeps them, followed or not)."""
        o = self.options
        links: list[str] = []
        hosts: list[str] = []
        normalized = list(found.links)
        if o.follow_links and (o.max_depth <= 0 or depth < o.max_depth):
            scope = o.scope
            # the hosts come with the links (the worker's resolve_links): none computed here
            known = found.hosts if len(found.hosts) == len(normalized) else ()
            pairs = zip(normalized, known or map(host_of, normalized), strict=True)
            if scope is None:
                kept = list(pairs)
            elif isinstance(scope, DomainScope):  # the default: its verdicts are by host
                kept = [(u, h) for u, h in pairs if scope.allows_host(h)]
            else:
                kept = [(u, h) for u, h in pairs if scope(u)]
            links, hosts = [u for u, _ in kept], [h for _, h in kept]
            self.stats.skipped_scope += len(normalized) - len(links)
        elif o.follow_links and normalized:
            self.stats.at_max_depth += 1  # the summary says why the crawl stopped there
        feeds: list[NewLink] = []
        if found.feeds:
            feeds = self.in_scope(
                NewLink(u, host_of(u), depth, "link", 0.5, "feed") for u in found.feeds
            )
        return links, hosts, feeds, normalized

    def in_scope(self, links: Iterable[NewLink]) -> list[NewLink]:
        rules, scope = self.options.rules, self.options.scope
        kept: list[NewLink] = []
        for link in links:
            normalized = rules(link.url)
            if normalized is None or (scope is not None and not scope(normalized)):
                self.stats.skipped_scope += 1
                continue
            kept.append(
                NewLink(
                    normalized,
                    host_of(normalized),
                    link.depth,
                    link.source,
                    link.score,
                    link.kind,
                    link.lastmod,
                )
            )
        return kept
