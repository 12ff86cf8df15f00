"""litecrawl: an incremental, polite, resumable web crawler and indexer."""

import typing

from litecrawl.errors import (
    BrowserUnavailable,
    ConfigError,
    FetchError,
    FrontierError,
    LitecrawlError,
)
from litecrawl.urls import normalize_and_validate_url

if typing.TYPE_CHECKING:
    from litecrawl.api import alitecrawl, litecrawl
    from litecrawl.index.semantic import find as search
    from litecrawl.index.semantic import similar
    from litecrawl.strategy.base import BaseCrawlingStrategy, States
    from litecrawl.version import VERSION as __version__

__all__ = [
    "BaseCrawlingStrategy",
    "BrowserUnavailable",
    "ConfigError",
    "FetchError",
    "FrontierError",
    "LitecrawlError",
    "States",
    "__version__",
    "alitecrawl",
    "litecrawl",
    "normalize_and_validate_url",
    "search",
    "similar",
]

_FROM_API = ("alitecrawl", "litecrawl")
_FROM_STRATEGY = ("BaseCrawlingStrategy", "States")
_FROM_SEMANTIC = {"search": "find", "similar": "similar"}  # search(db, query, mode=...)


def __getattr__(name: str) -> object:
    # the version is read from the package's metadata (importlib.metadata, email, zipfile: ~55M
    # instructions): the analysis workers import this package for its submodules and never ask
    if name == "__version__":
        from litecrawl.version import VERSION

        return VERSION
    # litecrawl() brings the engine, aiohttp and pydantic: loaded on first use, so the analysis
    # workers (which import this package for its submodules) start in half the time.
    if name in _FROM_API:
        from litecrawl import api

        return getattr(api, name)
    if name in _FROM_STRATEGY:
        from litecrawl.strategy import base

        return getattr(base, name)
    if name in _FROM_SEMANTIC:
        from litecrawl.index import semantic

        return getattr(semantic, _FROM_SEMANTIC[name])
    raise AttributeError(f"module 'litecrawl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_API, *_FROM_STRATEGY, *_FROM_SEMANTIC})
