"""The plain HTTP fetcher: one shared aiohttp session, pooled connections, bounded bodies."""

from __future__ import annotations

import os
import re
import socket
import ssl
import time
from types import TracebackType
from typing import Self

import aiohttp
from aiohttp.http_exceptions import ContentLengthError, HttpProcessingError
from yarl import URL

from litecrawl.errors import (
    BadRedirect,
    BadResponse,
    ConnectError,
    DnsError,
    FetchError,
    FetchTimeout,
    NetworkError,
    TlsError,
    TooLarge,
    TooManyRedirects,
    UnwantedType,
)
from litecrawl.fetch.base import MAX_BYTES, FetchRequest, FetchResult, accepts
from litecrawl.hrefs import is_canonical
from litecrawl.version import VERSION

__all__ = ["HttpFetcher", "default_user_agent"]


def default_user_agent(contact: str = "https://github.com/litecrawl/litecrawl") -> str:
    return f"litecrawl/{VERSION} (+{contact})"


class HttpFetcher:
    """``async with HttpFetcher(...) as f: await f.fetch(FetchRequest(url))``.

    Redirects are followed (at most ``max_redirects`` hops) and reported through
    ``FetchResult.final_url``; the engine applies the redirect rules to it (docs/python-api.md,
    step 5).
    """

    def __init__(
        self,
        *,
        user_agent: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 10.0,
        max_bytes: int = MAX_BYTES,
        max_redirects: int = 10,
        concurrency: int = 100,
        per_host: int = 0,
        cut_at_max_bytes: bool = False,
    ) -> None:
        self._headers = {"User-Agent": user_agent or default_user_agent(), **(headers or {})}
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=min(timeout, 10.0))
        self._max_bytes = max_bytes
        # True: a longer body is read up to max_bytes and cut there (robots.txt), not refused
        self._cut = cut_at_max_bytes
        self._max_redirects = max_redirects
        self._limit = concurrency
        self._per_host = per_host
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Self:
        connector = aiohttp.TCPConnector(
            limit=self._limit, limit_per_host=self._per_host, ttl_dns_cache=300
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=self._headers,
            timeout=self._timeout,
            # Cookies would let session ids multiply URLs (a classic spider trap); crawl stateless.
            cookie_jar=aiohttp.DummyCookieJar(),
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def fetch(self, request: FetchRequest) -> FetchResult:
        if self._session is None:
            raise RuntimeError("HttpFetcher used outside 'async with'")
        url = request.url
        started = time.monotonic()
        try:
            async with self._session.get(
                _on_the_wire(url), headers=dict(request.headers), max_redirects=self._max_redirects
            ) as response:
                content_type = response.headers.get("Content-Type", "")
                if 200 <= response.status < 300 and not accepts(content_type, request.accept_types):
                    response.close()  # the body is not read: the connection goes, not pooled
                    raise UnwantedType(url, content_type, response.status)
                body = await self._read(url, response)
                return FetchResult(
                    url=url,
                    # aiohttp's response.url is its own spelling of the URL: only a redirect
                    # really followed makes the final URL another one
                    final_url=str(response.url) if response.history else url,
                    status=response.status,
                    headers={k.lower(): v for k, v in response.headers.items()},
                    body=body,
                    elapsed=time.monotonic() - started,
                )
        except FetchError:
            raise
        except aiohttp.TooManyRedirects as exc:
            raise TooManyRedirects(url, f"more than {self._max_redirects} redirects") from exc
        except TimeoutError as exc:
            raise FetchTimeout(url, "timed out") from exc
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise _translate(url, exc) from exc

    async def _read(self, url: str, response: aiohttp.ClientResponse) -> bytes:
        declared = response.content_length
        if (
            not self._cut
            and declared is not None
            and declared > self._max_bytes
            and not response.headers.get("Content-Encoding")
        ):
            raise TooLarge(url, f"Content-Length {declared} > {self._max_bytes}")
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(65536):
            size += len(chunk)
            if size > self._max_bytes:
                if not self._cut:
                    raise TooLarge(url, f"body over {self._max_bytes} bytes")
                # the rest is never read: the connection is closed, not drained
                chunks.append(chunk[: len(chunk) - (size - self._max_bytes)])
                break
            chunks.append(chunk)
        return b"".join(chunks)


def _on_the_wire(url: str) -> URL | str:
    """A canonical URL is sent exactly as stored (yarl would decode some escapes, ``%3A`` ->
    ``:``); any other is left to yarl to make fit for the wire."""
    return URL(url, encoded=True) if is_canonical(url) else url


def _translate(url: str, exc: Exception) -> FetchError:
    """aiohttp's error as the category of what went wrong: a user reads ``dns`` or ``connect``
    as "the host cannot be reached", ``tls`` as a certificate/handshake problem."""
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return DnsError(url, f"DNS lookup failed: {_reason(exc)}")
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return TlsError(url, f"TLS error: {_reason(exc)}")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return ConnectError(url, _reason(exc))
    # Answers that will be as bad on the next try: not retried, each its own category.
    if isinstance(exc, aiohttp.NonHttpUrlRedirectClientError):
        scheme = str(exc).partition(":")[0].lower()
        return BadRedirect(url, f"redirect to {scheme}:, not to an http(s) URL")
    if isinstance(exc, aiohttp.InvalidUrlRedirectClientError):
        return BadRedirect(url, "redirect to something that is not a URL")
    if isinstance(exc, aiohttp.InvalidURL):
        return FetchError(url, f"invalid URL: {exc}")
    if isinstance(exc, aiohttp.ClientResponseError):  # the response could not be parsed
        return BadResponse(url, f"not valid HTTP: {_first_words(exc.message)}")
    if isinstance(exc, aiohttp.ClientPayloadError):
        cause = exc.__cause__
        if isinstance(cause, ContentLengthError):  # may well be a dropped connection
            return NetworkError(url, "connection closed before the end of the body")
        words = cause.message if isinstance(cause, HttpProcessingError) else str(exc)
        return BadResponse(url, f"body not decodable: {_first_words(words)}")
    return NetworkError(url, f"{type(exc).__name__}: {_first_words(str(exc))}")


def _first_words(message: str) -> str:
    """aiohttp's message without the bytes it quotes: ``Bad status line``, ``Too many headers
    received``, ``Can not decode content-encoding: gzip``."""
    line = message.strip().partition("\n")[0]
    line = re.split(r":\s*(?:b'|b\"|bytearray\()", line)[0].strip().rstrip(":")
    over = re.match(r"Got more than (\d+) bytes", line)
    if over:
        return f"a status or header line over {over[1]} bytes"
    return line or "unreadable"


def _reason(exc: Exception) -> str:
    """The operating system's words ("connection refused"), else the exception's."""
    error = getattr(exc, "os_error", None) or exc
    if isinstance(error, ssl.SSLError):
        return str(error.reason or error).lower().replace("_", " ")
    if isinstance(error, OSError):
        # asyncio words a refused connection "Connect call failed (...)"; errno says it plainly
        if not isinstance(error, socket.gaierror) and error.errno:
            return os.strerror(error.errno).lower()
        if error.strerror:
            return error.strerror.lower()
    return str(exc) or type(exc).__name__
