"""The HTTP fetcher's errors name what went wrong: the categories recorded on the pages."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

import pytest
from aiohttp import web
from conftest import LocalServer, html_page, site_app

from litecrawl.errors import ConnectError, DnsError, FetchError, TlsError
from litecrawl.fetch.base import FetchRequest, FetchResult
from litecrawl.fetch.http import HttpFetcher


def fetch(url: str) -> FetchResult:
    async def go() -> FetchResult:
        async with HttpFetcher(timeout=10) as fetcher:
            return await fetcher.fetch(FetchRequest(url))

    return asyncio.run(go())


def test_refused_connection_is_connect(refused_base: str) -> None:
    with pytest.raises(ConnectError) as info:
        fetch(refused_base + "/")
    assert info.value.category == "connect" and info.value.unreachable
    assert info.value.detail == "connection refused"


def test_name_that_does_not_resolve_is_dns() -> None:
    with pytest.raises(DnsError) as info:
        fetch("http://no-such-host.invalid/")  # RFC 6761: .invalid never resolves
    assert info.value.category == "dns" and info.value.unreachable
    assert info.value.detail.startswith("DNS lookup failed")


def test_tls_handshake_with_a_plain_http_server_is_tls(
    serve: Callable[[web.Application], LocalServer],
) -> None:
    site = serve(site_app({"/": html_page("plain")}))
    with pytest.raises(TlsError) as info:
        fetch(site.url("/").replace("http://", "https://"))
    assert info.value.category == "tls" and not info.value.retryable
    assert isinstance(info.value.__cause__, ssl.SSLError | OSError)


def test_invalid_url_is_not_a_network_error() -> None:
    with pytest.raises(FetchError) as info:
        fetch("http://[::1/")
    assert info.value.category == "error"
