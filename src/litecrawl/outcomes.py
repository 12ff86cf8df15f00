"""What happened to the pages of a crawl: the counters, the failures by host and cause, and the
one structured log record per page.

Per-page records go to the ``litecrawl.page`` logger with the fields of docs/crawling.md ("Logs")
as ``extra`` (``url``, ``status``, ``source``, ``depth``, ``action``; ``error`` when the page
failed), so any handler can print them as text or JSON. ``action`` is the furthest step the page
reached: ``filter`` (dropped by the URL rules), ``skip`` (robots.txt, sitemap lastmod, host
unreachable, a content type not asked for), ``fetch`` (fetched, or the fetch failed), ``cache`` (304
answered from the disk cache), ``extract`` (indexed), ``output`` (Markdown written).
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from http import HTTPStatus

from litecrawl.errors import FetchError, error_for
from litecrawl.fetch.base import FetchResult
from litecrawl.index.document import IndexDocument
from litecrawl.store.queue import ClaimedPage
from litecrawl.urls import host_of

__all__ = ["Cause", "CrawlStats", "PageOutcomes", "describe", "page_log"]

page_log = logging.getLogger("litecrawl.page")


@dataclass(frozen=True, slots=True)
class Cause:
    """One way pages failed on one host, in words: ``host unreachable: connection refused``."""

    host: str
    category: str
    detail: str
    pages: int
    example: str = ""  # the first URL that failed so: one to look at

    def __str__(self) -> str:
        plural = "" if self.pages == 1 else "s"
        example = f", e.g. {self.example}" if self.example else ""
        words = describe(self.host, self.category, self.detail)
        return f"{words} ({self.pages} page{plural}{example})"


# Outcomes the crawl chose, not failures: robots.txt said no, a content type not asked for, a
# binary body labelled HTML. Counted apart from ``failed``
# (docs/crawling.md, "The summary and exit codes").
SKIPPED_CATEGORIES = frozenset({"robots", "content_type", "not_text"})


@dataclass
class CrawlStats:
    """The counters of one crawl (``pages_fetched``, ``pages_failed``, ``pages_indexed`` and
    ``elapsed_time``, the names of an earlier design, are the same numbers)."""

    claimed: int = 0
    fetched: int = 0  # responses received, whatever their status
    ok: int = 0  # pages finished without an error (2xx, 3xx followed, 304)
    indexed: int = 0  # index documents written
    fresh: int = 0
    redirects: int = 0
    deleted: int = 0
    recovered: int = 0
    new_links: int = 0
    not_modified: int = 0  # 304 answered from the disk cache (the summary's cache hits)
    skipped_lastmod: int = 0
    skipped_scope: int = 0
    at_max_depth: int = 0  # pages at --max-depth with links: those links were not followed
    throttled: int = 0  # 429/503: re-queued for later
    # rendered pages whose render ran out of time after their HTML came: kept as served
    render_timeouts: int = 0
    # pages of the database parked at the end: lost with their worker, alone, at several
    # consecutive claims (litecrawl.frontier.lost); set by the crawl when it ends
    parked: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # category -> pages
    # reason -> sitemaps cut short or not fetched (see litecrawl.discover.listing)
    sitemap_cuts: Counter[str] = field(default_factory=Counter)
    # seed URL -> why the crawl would not fetch it (the patterns, robots.txt): the user asked
    # for it, so the summary names it and the exit code is 1 (docs/crawling.md)
    refused_seeds: dict[str, str] = field(default_factory=dict)
    # (host, category, what the words say): pages failed for one reason on one host, each
    # reason apart ("network error: server disconnected" is not "... body cut short")
    causes: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    details: dict[tuple[str, str, str], str] = field(default_factory=dict)  # first words seen
    examples: dict[tuple[str, str, str], str] = field(default_factory=dict)  # first URL seen
    failed_urls: list[tuple[str, str]] = field(default_factory=list)  # (url, category)
    started: float = field(default_factory=time.monotonic)

    @property
    def failed(self) -> int:
        """Pages that failed: every recorded category but the skips."""
        return sum(n for cat, n in self.errors.items() if cat not in SKIPPED_CATEGORIES)

    @property
    def skipped(self) -> int:
        """Pages skipped on purpose (robots.txt, a type not asked for, a binary body)."""
        return sum(n for cat, n in self.errors.items() if cat in SKIPPED_CATEGORIES)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def pages_fetched(self) -> int:
        return self.fetched

    @property
    def pages_failed(self) -> int:
        return self.failed

    @property
    def pages_indexed(self) -> int:
        return self.indexed

    @property
    def elapsed_time(self) -> float:
        return self.elapsed

    def fail(self, url: str, host: str, category: str, detail: str = "") -> None:
        """Count one page that ended in ``category``."""
        self.errors[category] += 1
        # numbers differ from page to page ("Content-Length 20971520 > ..."), the reason not
        key = (host, category, _NUMBERS.sub("#", detail.replace(url, "")))
        self.causes[key] += 1
        self.details.setdefault(key, detail)
        self.examples.setdefault(key, url)
        self.failed_urls.append((url, category))

    def top_causes(self, n: int = 5) -> list[Cause]:
        """The ``n`` commonest failures by host and cause, most pages first."""
        return [
            Cause(key[0], key[1], self.details[key], pages, self.examples[key])
            for key, pages in self.causes.most_common(n)
        ]


_NUMBERS = re.compile(r"\d+")


def describe(host: str, category: str, detail: str = "") -> str:
    """A failure category in words, for people: ``example.org unreachable: DNS lookup failed``."""
    if category == "dns":
        return f"{host} unreachable: {detail or 'DNS lookup failed'}"
    if category == "connect":
        return f"{host} unreachable: {detail or 'connection failed'}"
    if category.startswith("robots_http_"):
        status = category.removeprefix("robots_http_")
        return f"{host}: robots.txt answered {status}, pages held back for a while (RFC 9309)"
    if category.startswith("http_"):
        code = category.removeprefix("http_")
        try:
            phrase = HTTPStatus(int(code)).phrase
        except ValueError:
            phrase = ""
        if detail.startswith("no sitemap found"):
            return f"{host}: {detail} (HTTP {code} {phrase})"
        return f"{host}: HTTP {code} {phrase}".rstrip()
    words = {
        "timeout": "timed out",
        "network": f"network error: {detail}" if detail else "network error",
        "tls": detail or "TLS error",
        "robots": "disallowed by robots.txt",
        "too_large": "body over the size limit",
        "content_type": f"not downloaded: {detail or 'a content type not asked for'}"
        " (--accept-type takes it)",
        "redirect_loop": "too many redirects",
        "bad_redirect": detail or "redirect to something that is not an http(s) URL",
        "bad_response": detail or "not valid HTTP",
        "not_text": f"not indexed, not text: {detail}" if detail else "not indexed, not text",
        "hook": "a hook raised (see the log)",
        "internal": "internal error (see the log)",
    }
    return f"{host}: {words.get(category, detail or category)}"


class PageOutcomes:
    """Counts each page's outcome into a :class:`CrawlStats` and logs its one record."""

    def __init__(self, stats: CrawlStats) -> None:
        self.stats = stats

    def response(
        self,
        page: ClaimedPage,
        url: str,
        result: FetchResult,
        error: str | None,
        document: IndexDocument | None,
        redirected: bool,
    ) -> None:
        """A page that got a response (``error``: its ``http_<status>`` category, if any)."""
        if error is not None:
            detail = f"HTTP {result.status}"
            if page.kind == "sitemap" and result.status in (404, 410):  # not a page gone
                detail = f"no sitemap found at {url}"
            self.failed(page, url, error_for(error, url, detail), "fetch")
            return
        self.stats.ok += 1
        action, message = "fetch", "fetched"
        if document is not None:
            self.stats.indexed += 1
            action, message = "extract", f"indexed: {document.title or '(no title)'}"
            if document.markdown_path:
                action, message = "output", f"indexed, written to {document.markdown_path}"
        if redirected:
            message = f"redirected to {result.final_url}"
        elif result.revalidated:  # a cache hit is what a reader of the log wants to know
            action, message = "cache", f"not modified, body from the disk cache; {message}"
        self.note(logging.INFO, action, page, url, result.status, message)

    def failed(self, page: ClaimedPage, url: str, error: FetchError, action: str) -> None:
        """A page that ended in ``error``: a failed fetch, an HTTP error status included, is a
        warning, shown at every level (docs/crawling.md, "Logs"); a page skipped (robots.txt, a
        host unreachable before) is not."""
        self.stats.fail(url, host_of(url), error.category, error.detail)
        if page.source == "seed" and error.category == "robots":
            self.stats.refused_seeds.setdefault(url, "disallowed by robots.txt")
        code = error.category.removeprefix("http_")
        status = int(code) if error.category.startswith("http_") and code.isdigit() else None
        level = logging.WARNING if action == "fetch" else logging.INFO
        self.note(level, action, page, url, status, error.detail, error)

    def note(
        self,
        level: int,
        action: str,
        page: ClaimedPage,
        url: str,
        status: int | None,
        message: str,
        error: FetchError | None = None,
    ) -> None:
        """The page's structured record (not even built when nobody would see it)."""
        if not page_log.isEnabledFor(level):
            return
        extra: dict[str, object] = {
            "url": url,
            "status": status,
            "source": page.source,
            "depth": page.depth,
            "action": action,
        }
        if error is not None:
            extra["error"] = error.category
        # "url: words" reads well under any formatter; ours print the url once, as a field
        page_log.log(level, "%s: %s", url, message, extra=extra)
