"""``litecrawl serve``: a local web dashboard on a crawl database (pages + a JSON API)."""

from litecrawl.serve.app import ServeSettings, make_app
from litecrawl.store.backends import open_queries
from litecrawl.store.dashboard import DashboardQueries

__all__ = ["DashboardQueries", "ServeSettings", "make_app", "open_queries"]
