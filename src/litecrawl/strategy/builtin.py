"""The built-in strategies on the public API.

``bfs`` is the default crawl: the engine runs it on its fast path (every link that passes the
depth limit, scope and include/exclude rules is queued, shallow first) and the class here states
the same behaviour on the API, so ``--strategy litecrawl.strategy.builtin:BreadthFirst`` crawls
the same pages. ``dfs`` queues deeper links first. ``focused`` scores links by user terms.
"""

from __future__ import annotations

import re
from typing import IO, Any

from litecrawl.strategy.base import BaseCrawlingStrategy, Request, Response, States

__all__ = ["BreadthFirst", "DepthFirst", "Focused"]


class BreadthFirst(BaseCrawlingStrategy):
    """Shallow links first: score 1 / (depth + 1)."""

    def read_seeds(self, stream: IO[str]) -> None:
        requests = [self.create_request(line.strip()) for line in stream if line.strip()]
        self.refresh_states(requests)
        for request in requests:
            if request.meta[b"state"] == States.NOT_CRAWLED:
                request.meta[b"depth"] = 0
                request.meta[b"state"] = States.QUEUED
                self.schedule(request, self.score(request))

    def page_crawled(self, response: Response) -> None:
        response.meta[b"state"] = States.CRAWLED

    def request_error(self, request: Request, error: str) -> None:
        request.meta[b"state"] = States.ERROR

    def filter_extracted_links(self, request: Request, links: list[Request]) -> list[Request]:
        return links

    def links_extracted(self, request: Request, links: list[Request]) -> None:
        depth = int(request.meta.get(b"depth", 0)) + 1
        for link in links:
            if link.meta[b"state"] == States.NOT_CRAWLED:
                link.meta[b"depth"] = depth
                link.meta[b"state"] = States.QUEUED
                self.schedule(link, self.score(link))

    def score(self, request: Request) -> float:
        return 1.0 / (int(request.meta.get(b"depth", 0)) + 1.0)


class DepthFirst(BreadthFirst):
    """Deep links first: score depth / (depth + 1)."""

    def score(self, request: Request) -> float:
        depth = float(request.meta.get(b"depth", 0))
        return 0.5 if depth == 0 else depth / (depth + 1.0)


class Focused(BreadthFirst):
    """A topic crawl: links score by the share of ``terms`` their URL or anchor text contains;
    links matching none are not crawled (seeds always are); stops after ``budget`` fetches."""

    uses_link_text = True

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        terms = self.args.get("terms", [])
        if isinstance(terms, str):
            terms = [terms]
        self.terms = [str(t).lower() for t in terms]
        self.budget = int(self.args.get("budget", 0))
        self.crawled = 0

    def page_crawled(self, response: Response) -> None:
        super().page_crawled(response)
        self.crawled += 1

    def request_error(self, request: Request, error: str) -> None:
        super().request_error(request, error)
        self.crawled += 1  # the budget is of fetches, failed ones included

    def links_extracted(self, request: Request, links: list[Request]) -> None:
        depth = int(request.meta.get(b"depth", 0)) + 1
        for link in links:
            score = self.relevance(link)
            if score > 0 and link.meta[b"state"] == States.NOT_CRAWLED:
                link.meta[b"depth"] = depth
                link.meta[b"state"] = States.QUEUED
                self.schedule(link, score)

    def relevance(self, link: Request) -> float:
        if not self.terms:
            return 1.0
        anchor = str(link.meta.get(b"link_text") or "")
        text = " ".join(re.split(r"[^a-z0-9]+", f"{link.url} {anchor}".lower()))
        hits = sum(1 for term in self.terms if term in text)
        return hits / len(self.terms)

    def finished(self) -> bool:
        return bool(self.budget) and self.crawled >= self.budget
