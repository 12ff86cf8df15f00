"""The one exception tree users see.

::

    LitecrawlError
    ├── ConfigError (also ValueError)     a bad parameter, config key or value
    ├── FrontierError                     the database could not be used
    ├── BrowserUnavailable                no Chromium to render with (says what to install)
    └── FetchError                        one URL could not be fetched; carries url + category
        ├── FetchTimeout                  "timeout"       (retried)
        ├── NetworkError                  "network"       (retried: DNS, refused, reset, TLS)
        ├── TooLarge                      "too_large"     (not retried)
        ├── TooManyRedirects              "redirect_loop" (not retried)
        └── RobotsDenied                  "robots"        (not retried)

Foreign exceptions (aiohttp, Playwright, sqlite3) are translated at the boundary with
``raise ... from exc``.
"""

from __future__ import annotations

__all__ = [
    "BrowserUnavailable",
    "ConfigError",
    "FetchError",
    "FetchTimeout",
    "FrontierError",
    "LitecrawlError",
    "NetworkError",
    "RobotsDenied",
    "TooLarge",
    "TooManyRedirects",
]


class LitecrawlError(Exception):
    """Root of every error litecrawl raises on purpose."""


class ConfigError(LitecrawlError, ValueError):
    """A parameter, config file key or value is invalid; the message names it."""


class FrontierError(LitecrawlError):
    """The frontier database could not be opened, migrated or written."""


class BrowserUnavailable(LitecrawlError):
    """No Chromium could be launched; the message says what to install."""


class FetchError(LitecrawlError):
    """One URL could not be fetched. ``category`` is recorded on the page row."""

    category = "error"
    retryable = False

    def __init__(self, url: str, message: str = "") -> None:
        super().__init__(f"{url}: {message or self.category}")
        self.url = url


class FetchTimeout(FetchError):
    category = "timeout"
    retryable = True


class NetworkError(FetchError):
    category = "network"
    retryable = True


class TooLarge(FetchError):
    category = "too_large"


class TooManyRedirects(FetchError):
    category = "redirect_loop"


class RobotsDenied(FetchError):
    category = "robots"
