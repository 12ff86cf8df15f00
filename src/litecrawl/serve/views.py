"""Each dashboard page as plain data: the JSON API returns it, the HTML templates render it."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from litecrawl.lease import LeaseRules
from litecrawl.serve.chart import BarChart, activity_chart
from litecrawl.sites.model import LISTINGS
from litecrawl.stats_view import robots_origins, robots_state, stats_view
from litecrawl.store.dashboard import DashboardQueries, PageFilter, SiteActivity

if TYPE_CHECKING:
    from litecrawl.index.semantic import Mode

__all__ = ["HOST_SORTS", "LINK_LIMIT", "PAGE_LIMIT", "SEARCH_MODES", "WINDOWS", "Dashboard", "iso"]

PAGE_LIMIT = 50
HOST_SORTS = (
    "host",
    "pages",
    "crawled",
    "errors",
    "due",
    "claimed",
    "avg_response_ms",
    "robots",
    "crawl_delay",
)
# litecrawl.index.semantic.MODES, without importing numpy and the model at start-up
SEARCH_MODES = ("keyword", "semantic", "hybrid")
# The overview's time windows: (bucket width in seconds, number of buckets)
WINDOWS = {"1h": (60, 60), "24h": (1800, 48)}
LINK_LIMIT = 100  # links in and links out shown per page of a page's detail


def iso(epoch: float | None) -> str | None:
    """Local time, ISO 8601 (as ``litecrawl stats --json`` writes times)."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Dashboard:
    """The reads behind every page, on one database."""

    db: str
    queries: DashboardQueries
    user_agent: str
    lease_timeout: float

    def stats(self, now: float, hosts: int | None) -> dict[str, Any]:
        """Exactly what ``litecrawl stats --json`` shows (``--hosts`` when ``hosts`` is None)."""
        summary = self.queries.summary(int(now), hosts)
        records = self.queries.robots_records(robots_origins(summary.top_hosts))
        robots = robots_state(summary.top_hosts, records, self.user_agent)
        return stats_view(self.db, summary, now, LeaseRules(self.lease_timeout), robots)

    def overview(self, window: str = "1h") -> tuple[dict[str, Any], BarChart]:
        """``litecrawl stats`` plus fetches and errors by category over ``window`` (a key of
        WINDOWS), bucket by bucket."""
        width, count = WINDOWS[window]
        now = time.time()
        view = self.stats(now, 10)
        since = (int(now) // width + 1) * width - count * width
        buckets = self.queries.activity(since, width)
        by_category: dict[str, int] = {}
        for b in buckets:
            for category, n in b.by_error.items():
                if category is not None:
                    by_category[category] = by_category.get(category, 0) + n
        view["activity"] = {
            "window": window,
            "since": iso(since),
            "bucket_sec": width,
            "fetched": sum(b.fetched for b in buckets),
            "errors": dict(sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0]))),
            "buckets": [
                {
                    "start": iso(b.start),
                    "fetched": b.fetched,
                    "errors": {k: n for k, n in b.by_error.items() if k is not None},
                }
                for b in buckets
            ],
        }
        labels = [datetime.fromtimestamp(since + i * width).strftime("%H:%M") for i in range(count)]
        return view, activity_chart(buckets, since, width, count, labels)

    def hosts(self, sort: str, descending: bool) -> dict[str, Any]:
        view = self.stats(time.time(), None)
        shown: list[dict[str, Any]] = view["hosts"]["shown"]
        # None (no robots.txt yet, no delay) sorts last either way
        present = [h for h in shown if h[sort] is not None]
        present.sort(key=lambda h: (h[sort], h["host"]), reverse=descending)
        return {
            "total": view["hosts"]["total"],
            "sort": sort,
            "order": "desc" if descending else "asc",
            "hosts": present + [h for h in shown if h[sort] is None],
        }

    def pages(self, where: PageFilter, offset: int, limit: int = PAGE_LIMIT) -> dict[str, Any]:
        found = self.queries.pages(where, limit, offset)
        return {
            "filter": asdict(where),
            "total": found.total,
            "offset": offset,
            "limit": limit,
            "pages": [_times(asdict(r)) for r in found.rows],
        }

    def page(self, url: str, in_offset: int = 0, out_offset: int = 0) -> dict[str, Any] | None:
        detail = self.queries.page(url)
        if detail is None:
            return None
        last, next_ = detail.record.get("last_crawl_time"), detail.record.get("next_crawl_time")
        given = detail.record.get("recrawl_interval")
        if given is None and last is not None and next_ is not None:
            given = next_ - last  # a row not visited since the interval was kept
        return {
            "url": url,
            "frontier": _times(detail.record),
            # the schedule's interval at the last visit (a page visited late is due sooner:
            # one interval after it was due, docs/freshness.md)
            "interval_sec": given,
            "document": None if detail.document is None else _document(detail.document),
            "language": detail.language,
            "duplicates": [{"url": u, "title": t} for u, t in detail.duplicates],
            # None: a database from before the link graph, not crawled since
            "links_in": self._links(url, True, in_offset),
            "links_out": self._links(url, False, out_offset),
        }

    def _links(self, url: str, inbound: bool, offset: int) -> dict[str, Any] | None:
        found = self.queries.links(url, inbound, LINK_LIMIT, offset)
        if found is None:
            return None
        return {
            "total": found.total,
            "offset": offset,
            "limit": LINK_LIMIT,
            "links": [asdict(r) for r in found.rows],
        }

    def sites(self, status: str | None) -> dict[str, Any] | None:
        """The site queue, with counts by status; None when the database has none."""
        found = self.queries.sites(None)
        if found is None:
            return None
        counts: dict[str, int] = {}
        for site in found:
            counts[site.status] = counts.get(site.status, 0) + 1
        shown = [s for s in found if status is None or s.status == status]
        for listing in LISTINGS:  # by their standing annotation, across statuses
            marked = self.queries.sites(listing) or []
            counts[listing] = len(marked)
            if status == listing:
                shown = marked
        return {
            "status": status,
            "counts": counts,
            "sites": [_site(asdict(s)) for s in shown],
        }

    def site(self, url: str) -> dict[str, Any] | None:
        """One site: its status and why, start page facts and annotations."""
        found = self.queries.site(url)
        if found is None:
            return None
        site, annotations = found
        if site is None and not annotations:
            return None
        activity = self.queries.site_activity(site.id, 20) if site else SiteActivity([], [], [], [])
        return {
            "base_url": url,
            "site": None if site is None else _site(asdict(site)),
            "annotations": [{**asdict(a), "created_at": iso(a.created_at)} for a in annotations],
            "crawls": [
                {
                    **asdict(c),
                    "started_at": iso(c.started_at),
                    "finished_at": iso(c.finished_at),
                    "duration_sec": round(c.finished_at - c.started_at, 1),
                }
                for c in activity.crawls
            ],
            "links_to": [{"site": u, "links": n} for u, n in activity.links_to],
            "links_from": [{"site": u, "links": n} for u, n in activity.links_from],
            "feeds": [{**asdict(f), "last_read": iso(f.last_read)} for f in activity.feeds],
        }

    def search(
        self, query: str, mode: str | None, limit: int, offset: int, marks: tuple[str, str]
    ) -> tuple[list[Any], str, str | None]:
        """The hits of ``litecrawl search`` (same modes and default), the mode that ran and
        why it is not the one asked for."""
        from litecrawl.index.semantic import find  # numpy and the model: only when searching

        results = find(
            self.db,
            query,
            mode=cast("Mode | None", mode),  # checked against SEARCH_MODES by the caller
            limit=limit,
            offset=offset,
            open_mark=marks[0],
            close_mark=marks[1],
        )
        return [asdict(h) for h in results.hits], results.mode, results.note


def _site(row: dict[str, Any]) -> dict[str, Any]:
    """A site with its times as ISO 8601 and its lists as lists."""
    return {
        **row,
        "added_at": iso(row["added_at"]),
        "checked_at": iso(row["checked_at"]),
        "next_crawl": iso(row["next_crawl"]),
        "next_feed_crawl": iso(row["next_feed_crawl"]),
        "feeds": list(row["feeds"]),
        "sitemaps": list(row["sitemaps"]),
    }


def _document(row: dict[str, Any]) -> dict[str, Any]:
    """The index row with its keywords as a list (stored as JSON text)."""
    try:
        words = json.loads(row["keywords"])
    except (TypeError, ValueError):
        words = []
    return {**row, "keywords": words if isinstance(words, list) else []}


def _times(row: dict[str, Any]) -> dict[str, Any]:
    """Epoch-second columns (``*_time``) as ISO 8601, like the rest of the API."""
    return {k: iso(v) if k.endswith("_time") and v is not None else v for k, v in row.items()}
