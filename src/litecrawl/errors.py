"""The one exception tree users see.

::

    LitecrawlError
    ├── ConfigError (also ValueError)     a bad parameter, config key or value
    ├── FrontierError                     the database could not be used
    │   └── DatabaseUnusable              no work can go on with it: the crawl stops (exit 1)
    │       ├── DatabaseDamaged           the file is damaged or not a database (.recover)
    │       └── DiskFull                  its disk is full (what was written is kept)
    ├── BrowserUnavailable                no Chromium to render with (says what to install)
    ├── DomainMetadataError (also TypeError) a strategy stored a value that cannot be stored;
    │                                     names the domain and key
    ├── HostHeldBack                      a page's host may not be fetched for a long while
                                          (a Retry-After): the page is given back, not failed
    └── FetchError                        one URL could not be fetched; carries url + category
        ├── FetchTimeout                  "timeout"       (retried)
        ├── NetworkError                  "network"       (retried: reset, closed, protocol)
        │   ├── DnsError                  "dns"           (retried; the host is unreachable)
        │   ├── ConnectError              "connect"       (retried; refused, no route: unreachable)
        │   └── TlsError                  "tls"           (not retried: a bad certificate stays bad)
        ├── TooLarge                      "too_large"     (not retried)
        ├── TooManyRedirects              "redirect_loop" (not retried)
        ├── BadRedirect                   "bad_redirect"  (not retried: a redirect to a URL
        │                                                 that is not http(s): javascript:,
        │                                                 data:, ftp:, or no URL at all)
        ├── BadResponse                   "bad_response"  (not retried: not valid HTTP, a bad
        │                                                 status line, oversized or malformed
        │                                                 headers, an undecodable encoding)
        ├── UnwantedType                  "content_type"  (not retried: a body of a type not
        │                                                  asked for, never downloaded)
        ├── RobotsDenied                  "robots"        (not retried: robots.txt says no)
        └── RobotsUnavailable             "robots_http_<status>" (robots.txt answered 5xx/429:
                                                          RFC 9309 says disallow for a while)

A page is recorded with the category of what really went wrong: when robots.txt cannot be fetched
because the host is unreachable, its pages get ``dns``/``connect``/``timeout``/..., not
``robots``. Failed HTTP responses are recorded as ``http_<status>``, a body labelled HTML that
is not text (an image, a PDF) as ``not_text`` (not indexed), and ``internal`` is a bug.

Foreign exceptions (aiohttp, Playwright, sqlite3) are translated at the boundary with
``raise ... from exc``.
"""

from __future__ import annotations

import re

__all__ = [
    "BadRedirect",
    "BadResponse",
    "BrowserUnavailable",
    "ConfigError",
    "ConnectError",
    "DatabaseDamaged",
    "DatabaseUnusable",
    "DiskFull",
    "DnsError",
    "DomainMetadataError",
    "FetchError",
    "FetchTimeout",
    "FrontierError",
    "HostHeldBack",
    "LitecrawlError",
    "NetworkError",
    "RobotsDenied",
    "RobotsUnavailable",
    "TlsError",
    "TooLarge",
    "TooManyRedirects",
    "UnwantedType",
    "error_for",
    "is_retry_worthy",
    "without_passwords",
]


class LitecrawlError(Exception):
    """Root of every error litecrawl raises on purpose."""


class HostHeldBack(LitecrawlError):
    """The politeness gate will not start a request to the host before ``until`` (epoch
    seconds), further ahead than a claimed page should wait: the page goes back to the
    frontier, due then."""

    def __init__(self, host: str, until: float) -> None:
        super().__init__(f"{host}: held back until {until:.0f}")
        self.until = until


class ConfigError(LitecrawlError, ValueError):
    """A parameter, config file key or value is invalid; the message names it."""


class FrontierError(LitecrawlError):
    """The frontier database could not be opened, migrated or written.

    Its message never holds a password: database drivers quote the URL they were given (with
    its password) in their own errors, which these messages carry."""

    def __init__(self, message: str) -> None:
        super().__init__(without_passwords(message))


class DatabaseUnusable(FrontierError):
    """The database cannot be used any more by anyone: a crawl stops at once (exit 1) with
    this one line, rather than recording page after page as failed."""


class DatabaseDamaged(DatabaseUnusable):
    """A SQLite file that is damaged ("database disk image is malformed") or is not a
    database; the message names the file and how to recover what it holds."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            f"{path} is damaged ({reason}). Stop using it and recover what it holds into a new "
            f"file: sqlite3 {path} .recover | sqlite3 {path}.recovered -- then use "
            f"--db {path}.recovered"
        )
        self.path = path


class DiskFull(DatabaseUnusable):
    """The disk of the database is full; everything written before is kept."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            f"{path}: the disk is full ({reason}); nothing written before is lost: free some "
            "space and run the same command again"
        )
        self.path = path


_PASSWORD_IN_URL = re.compile(r"(\w+://[^/\s:@]*:)[^@\s/]*@")


def without_passwords(text: str) -> str:
    """Any text (a command line, a driver's message) with the password of every URL in it
    replaced by ``***``."""
    return _PASSWORD_IN_URL.sub(r"\1***@", text)


class DomainMetadataError(LitecrawlError, TypeError):
    """A crawling strategy put a value into domain metadata that cannot be stored (an object
    that is not JSON, bytes, a set or a tuple); raised where it was written."""

    def __init__(self, domain: str, key: object, message: str) -> None:
        where = f"domain metadata of {domain!r}" + (f", key {key!r}" if key is not None else "")
        super().__init__(f"{where}: {message}")
        self.domain = domain
        self.key = key


class BrowserUnavailable(LitecrawlError):
    """No Chromium could be launched; the message says what to install."""


class FetchError(LitecrawlError):
    """One URL could not be fetched. ``category`` is recorded on the page row."""

    category = "error"
    retryable = False
    unreachable = False  # no connection to the host could be made at all
    skipped = False  # not a failure: the crawl chose not to read the page

    def __init__(self, url: str, message: str = "") -> None:
        super().__init__(f"{url}: {message or self.category}")
        self.url = url
        self.detail = message or self.category


class FetchTimeout(FetchError):
    category = "timeout"
    retryable = True


class NetworkError(FetchError):
    category = "network"
    retryable = True


class DnsError(NetworkError):
    category = "dns"
    unreachable = True


class ConnectError(NetworkError):
    category = "connect"
    unreachable = True


class TlsError(NetworkError):
    category = "tls"
    retryable = False


class TooLarge(FetchError):
    category = "too_large"


class TooManyRedirects(FetchError):
    category = "redirect_loop"


class UnwantedType(FetchError):
    """A 2xx answer of a media type not asked for; its body was not read."""

    category = "content_type"
    skipped = True

    def __init__(self, url: str, content_type: str, status: int = 200) -> None:
        super().__init__(url, f"content type {content_type} not accepted")
        self.content_type = content_type
        self.status = status


class BadRedirect(FetchError):
    category = "bad_redirect"


class BadResponse(FetchError):
    category = "bad_response"


class RobotsDenied(FetchError):
    category = "robots"


class RobotsUnavailable(FetchError):
    """robots.txt answered 5xx (or 429): RFC 9309 2.3.1.3, assume complete disallow for a while."""

    def __init__(self, url: str, status: int) -> None:
        super().__init__(url, f"robots.txt answered {status}")
        self.category = f"robots_http_{status}"
        self.status = status


_BY_CATEGORY: dict[str, type[FetchError]] = {
    cls.category: cls
    for cls in (
        FetchError,
        FetchTimeout,
        NetworkError,
        DnsError,
        ConnectError,
        TlsError,
        TooLarge,
        TooManyRedirects,
        UnwantedType,
        RobotsDenied,
    )
}


def error_for(category: str, url: str, message: str = "") -> FetchError:
    """The error of ``category`` for ``url``: its class when it has one, else a plain
    :class:`FetchError` carrying the category (``http_404``, ``hook``, ``internal``)."""
    cls = _BY_CATEGORY.get(category)
    if cls is not None:
        return cls(url, message)
    error = FetchError(url, message or category)
    error.category = category
    return error


def is_retry_worthy(category: str) -> bool:
    """Could fetching again give another outcome? Not for a robots.txt refusal, a 4xx (but 408
    Request Timeout), a redirect to no http(s) URL nor an answer that is not valid HTTP: those
    URLs are left out of ``--failed-out``."""
    if category in ("robots", "content_type", "bad_redirect", "bad_response", "not_text"):
        return False
    if category.startswith("http_4"):
        return category == "http_408"
    return True
