"""The ``warc`` export: WARC 1.1 (warcio, gzip per record) rebuilt from the disk cache.

A ``warcinfo`` record, then per successfully fetched URL in the frontier (pages, but also feeds,
sitemaps and non-HTML responses) a ``request`` and a ``response`` record. URLs without a cached
body are skipped, each given to ``on_skip`` and counted in one warning.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import IO
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.timeutils import datetime_to_iso_date
from warcio.warcwriter import WARCWriter

from litecrawl.cache import ResponseCache
from litecrawl.store.documents import DocumentFilter
from litecrawl.store.index import IndexReader

__all__ = ["write_warc"]

log = logging.getLogger("litecrawl.export")

# the cache holds decoded bodies: headers describing the wire encoding no longer apply
_WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})


def write_warc(
    index: IndexReader,
    out: IO[bytes],
    cache: ResponseCache,
    since: int | None,
    flt: DocumentFilter,
    on_skip: Callable[[str], None] | None,
) -> int:
    from litecrawl import __version__

    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    info = {
        "software": f"litecrawl/{__version__}",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
    }
    writer.write_record(writer.create_warcinfo_record("", info))
    count = skipped = 0
    for url in index.fetched_urls(since, flt):
        cached = cache.load(url)
        if cached is None:
            skipped += 1
            if on_skip is not None:
                on_skip(url)
            continue
        date = datetime_to_iso_date(
            datetime.fromtimestamp(cached.fetched_at, UTC).replace(tzinfo=None),
            use_micros=True,
        )
        response = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(cached.body),
            length=len(cached.body),
            http_headers=_response_headers(cached.status, cached.headers, len(cached.body)),
            warc_headers_dict={"WARC-Date": date},
        )
        request = writer.create_warc_record(
            url, "request", http_headers=_request_headers(url, cached.headers)
        )
        writer.write_request_response_pair(request, response)
        count += 1
    if skipped:
        log.warning("warc export: %d fetched URLs had no cached body and were skipped", skipped)
    out.flush()
    return count


def _response_headers(status: int, headers: dict[str, str], length: int) -> StatusAndHeaders:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    kept = [(name, value) for name, value in headers.items() if name.lower() not in _WIRE_HEADERS]
    kept.append(("Content-Length", str(length)))
    return StatusAndHeaders(f"{status} {reason}".strip(), kept, protocol="HTTP/1.1")


def _request_headers(url: str, response_headers: dict[str, str]) -> StatusAndHeaders:
    """The request as the crawler sent it, as far as the cache knows it (method, target, host).

    The cache keeps response headers only, so User-Agent and conditional headers are not known.
    """
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [("Host", parts.netloc)]
    if "content-encoding" in {name.lower() for name in response_headers}:
        headers.append(("Accept-Encoding", "gzip, deflate, br"))
    return StatusAndHeaders(f"GET {target} HTTP/1.1", headers, is_http_request=True)
