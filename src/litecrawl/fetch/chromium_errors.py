"""Chromium's errors (``net::ERR_*`` in Playwright's messages) as litecrawl's fetch errors, so a
rendered page fails with the category the HTTP fetcher would give it (docs/crawling.md,
"Failures")."""

from __future__ import annotations

import re

import playwright.async_api as pw

from litecrawl.errors import (
    ConnectError,
    DnsError,
    FetchError,
    FetchTimeout,
    NetworkError,
    TlsError,
    TooManyRedirects,
)

__all__ = ["INVALID_REDIRECT", "REFUSED", "net_error", "translate"]

NET_ERR = re.compile(r"net::ERR_[A-Z0-9_]+")
TIMEOUT_CODES = ("net::ERR_TIMED_OUT", "net::ERR_CONNECTION_TIMED_OUT")


def net_error(message: str) -> str:
    """The ``net::ERR_*`` code a message names, or ``""``."""
    return m.group() if (m := NET_ERR.search(message)) else ""


def translate(url: str, exc: pw.Error) -> FetchError:
    """Playwright's error as ours: timeout, redirect loop, network (net::ERR_*), or other."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    code = net_error(message)
    if isinstance(exc, pw.TimeoutError) or code in TIMEOUT_CODES:
        return FetchTimeout(url, message)
    if code == "net::ERR_TOO_MANY_REDIRECTS":
        return TooManyRedirects(url, message)
    if code in ("net::ERR_NAME_NOT_RESOLVED", "net::ERR_NAME_RESOLUTION_FAILED"):
        return DnsError(url, message)
    if code in CONNECT_CODES:
        return ConnectError(url, message)
    if code.startswith(("net::ERR_CERT_", "net::ERR_SSL_")):
        return TlsError(url, message)
    return NetworkError(url, message) if code else FetchError(url, message)


# Chromium's words for a navigation it stopped at a redirect: to no URL, to a scheme it will not
# follow (data:, file:), or "aborted" (javascript:, ftp:, mailto:... and other causes).
INVALID_REDIRECT = "net::ERR_INVALID_REDIRECT"
REFUSED = ("net::ERR_UNSAFE_REDIRECT", "net::ERR_ABORTED")


CONNECT_CODES = frozenset(
    {
        "net::ERR_CONNECTION_REFUSED",
        "net::ERR_CONNECTION_FAILED",
        "net::ERR_ADDRESS_UNREACHABLE",
        "net::ERR_ADDRESS_INVALID",
    }
)
