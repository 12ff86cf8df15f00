"""litecrawl: an incremental, polite, resumable web crawler and indexer."""

from litecrawl.api import alitecrawl, litecrawl
from litecrawl.errors import (
    BrowserUnavailable,
    ConfigError,
    FetchError,
    FrontierError,
    LitecrawlError,
)
from litecrawl.urls import normalize_and_validate_url
from litecrawl.version import VERSION as __version__

__all__ = [
    "BrowserUnavailable",
    "ConfigError",
    "FetchError",
    "FrontierError",
    "LitecrawlError",
    "__version__",
    "alitecrawl",
    "litecrawl",
    "normalize_and_validate_url",
]
