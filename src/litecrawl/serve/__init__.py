"""``litecrawl serve``: a local web dashboard on a crawl database (pages + a JSON API)."""

from litecrawl.serve.app import ServeSettings, make_app
from litecrawl.serve.queries import DashboardQueries
from litecrawl.store.sqlite.dashboard import SQLiteDashboardQueries

__all__ = ["DashboardQueries", "SQLiteDashboardQueries", "ServeSettings", "make_app"]
