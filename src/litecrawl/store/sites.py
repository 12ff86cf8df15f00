"""The site queue's storage interface; :func:`litecrawl.store.backends.open_sites`
picks the backend by location."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from litecrawl.sites.model import Annotation, Site, SiteCrawl, SiteFeed, SiteSchedule, StartPage
from litecrawl.store.lifecycle import SyncStore

__all__ = ["CRAWL_COLUMNS", "SITE_COLUMNS", "SiteStore"]

# The columns both stores read a site and a site crawl by (``Site.from_row``,
# ``SiteCrawl.from_row``).
SITE_COLUMNS = (
    "id, base_url, host, status, reason, source, added_at, checked_at, final_url, title, "
    "language, feeds, sitemaps, next_crawl, next_feed_crawl"
)
CRAWL_COLUMNS = (
    "site_id, kind, worker, started_at, finished_at, fetched, new_pages, errors, interrupted"
)


class SiteStore(SyncStore):
    """Synchronous (the CLI calls it from a thread); ``with store:`` opens and migrates."""

    @abstractmethod
    def add(self, base_urls: Sequence[str], now: float) -> int:
        """Queue sites not known yet; returns how many were new."""

    @abstractmethod
    def annotate(self, base_url: str, kind: str, text: str | None, now: float) -> Annotation:
        """Add an annotation (tied to the site when it exists)."""

    @abstractmethod
    def remove_annotations(self, base_url: str, kind: str) -> int:
        """Remove a site's annotations of one kind; returns how many."""

    @abstractmethod
    def annotations(self, base_url: str) -> list[Annotation]: ...

    @abstractmethod
    def site(self, base_url: str) -> Site | None: ...

    @abstractmethod
    def sites(self, status: str | None, limit: int | None = None) -> list[Site]:
        """Sites by base URL; ``status`` one of STATUSES or LISTINGS, or None for all."""

    @abstractmethod
    def due_checks(
        self, checked_before: float, limit: int, unreachable_before: float | None = None
    ) -> list[Site]:
        """Sites whose start page was never checked or last checked before ``checked_before``
        (an unreachable site's: before ``unreachable_before``, when given)."""

    @abstractmethod
    def record_check(
        self, site_id: int, status: str, reason: str, page: StartPage | None, now: float
    ) -> None:
        """The outcome of a check: status, why, and what the start page said."""

    @abstractmethod
    def counts(self) -> dict[str, int]:
        """Sites by status."""

    @abstractmethod
    def checkout(self, worker: str, due_by: float, now: float, lock_sec: float) -> Site | None:
        """Lock one relevant site whose full or feed crawl is due by ``due_by`` and that no
        live lock holds (a lock of a worker that died expires after ``lock_sec``); None when
        there is none."""

    @abstractmethod
    def renew(self, site_id: int, worker: str, until: float) -> bool:
        """Extend this worker's lock; False when it was lost (expired and taken)."""

    @abstractmethod
    def checkin(
        self, crawl: SiteCrawl, schedule: SiteSchedule, links: dict[str, int], now: float
    ) -> int:
        """Unlock, schedule the next crawls, record the crawl and the feeds found, and count
        the links found to other sites (base URL -> links), queueing those not known; returns
        sites queued."""

    @abstractmethod
    def outlinks(self, host: str) -> list[str]:
        """Every link target of the host's pages (the link graph)."""

    @abstractmethod
    def feeds(self, site_id: int) -> list[SiteFeed]:
        """The site's feeds, with what their last read found."""

    @abstractmethod
    def listed(self, listings: Sequence[str]) -> list[str]:
        """The entries of these feeds (or sitemaps) at their last read (the link graph)."""

    @abstractmethod
    def crawls(self, site_id: int, limit: int) -> list[SiteCrawl]:
        """The site's last crawls, newest first."""

    @abstractmethod
    def site_links(self, site_id: int, inbound: bool, limit: int) -> list[tuple[str, int]]:
        """Sites linking to (``inbound``) or linked from this site: (base URL, links), most
        links first."""
