"""litecrawl: an incremental, polite, resumable web crawler and indexer."""

from importlib import metadata as _metadata

from litecrawl.api import alitecrawl, litecrawl
from litecrawl.errors import (
    BrowserUnavailable,
    ConfigError,
    FetchError,
    FrontierError,
    LitecrawlError,
)
from litecrawl.urls import normalize_and_validate_url

try:
    __version__ = _metadata.version("litecrawl")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

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
