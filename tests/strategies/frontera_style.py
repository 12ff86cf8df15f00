# Written in Frontera's style (untyped, bytes meta keys, `is` on states, page_error): a strategy
# for Frontera runs on litecrawl with only this import line changed.
from urllib.parse import urlsplit

from litecrawl.strategy import BaseCrawlingStrategy, States


class Breadth(BaseCrawlingStrategy):
    def read_seeds(self, stream):
        for url in stream:
            url = url.strip()
            req = self.create_request(url)
            self.refresh_states(req)
            if req.meta[b"state"] is States.NOT_CRAWLED:
                req.meta[b"state"] = States.QUEUED
                req.meta[b"depth"] = 0
                self.schedule(req)

    def page_crawled(self, response):
        response.meta[b"state"] = States.CRAWLED

    def filter_extracted_links(self, request, links):
        return links

    def links_extracted(self, request, links):
        for link in links:
            link.meta[b"depth"] = request.meta[b"depth"] + 1
            if link.meta[b"state"] is States.NOT_CRAWLED:
                link.meta[b"state"] = States.QUEUED
                self.schedule(link, self.get_score(link))

    def page_error(self, request, error):
        request.meta[b"state"] = States.ERROR
        request.meta[b"error"] = error.encode()
        self.schedule(request, score=0.0, dont_queue=True)

    def get_score(self, link):
        depth = float(link.meta[b"depth"])
        return 1.0 - (depth / (depth + 1.0))


class Depth(Breadth):
    def get_score(self, link):
        depth = float(link.meta[b"depth"])
        return depth / (depth + 1.0)


class OnlyWord(Breadth):
    """Schedules only links whose URL contains args['word']; the others' states are never
    needed, so they are filtered out before the state lookup."""

    def __init__(self, manager, args, scheduled_stream, states_context):
        super().__init__(manager, args, scheduled_stream, states_context)
        self.word = args.get("word", "keep")

    def filter_extracted_links(self, request, links):
        return [link for link in links if self.word in link.url]


class StopAfter(Breadth):
    """finished() after args['pages'] crawled pages; close() leaves a mark in domain metadata."""

    def __init__(self, manager, args, scheduled_stream, states_context):
        super().__init__(manager, args, scheduled_stream, states_context)
        self.limit = args.get("pages", 3)
        self.crawled = 0
        self.encodings = set()

    def page_crawled(self, response):
        super().page_crawled(response)
        self.crawled += 1
        self.encodings.add(response.meta.get(b"encoding", b"").decode())

    def finished(self):
        return self.crawled >= self.limit

    def close(self):
        self.domain_metadata["closed"] = {"crawled": self.crawled, "enc": sorted(self.encodings)}
        super().close()


class CountDomains(Breadth):
    """Per-domain counters in domain metadata."""

    def page_crawled(self, response):
        super().page_crawled(response)
        name = response.meta[b"domain"][b"name"].decode()
        stats = self.domain_metadata.get(name, {"pages": 0})
        stats["pages"] += 1
        self.domain_metadata[name] = stats


class Raising(Breadth):
    """Raises on one page's links; the crawl goes on."""

    def links_extracted(self, request, links):
        if request.url.endswith("/n0"):
            raise RuntimeError("boom in links_extracted")
        super().links_extracted(request, links)


class Rescore(Breadth):
    """Seeds schedule args['url'] with dont_queue: only its score changes."""

    def read_seeds(self, stream):
        super().read_seeds(stream)
        req = self.create_request(self.args["url"])
        self.refresh_states([req])
        self.schedule(req, score=0.125, dont_queue=True)


class BadMetadata(Breadth):
    """Keeps a set and a counter per domain through the manager's backend, then an object that
    cannot be stored."""

    def page_crawled(self, response):
        super().page_crawled(response)
        name = response.meta[b"domain"][b"name"].decode()
        entry = self._manager.backend.domain_metadata.setdefault(name, {})
        entry["pages"] = entry.get("pages", 0) + 1
        entry.setdefault("seen", set()).add(urlsplit(response.url).path)
        entry["parser"] = object()
