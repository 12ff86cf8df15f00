"""Sitemaps (sitemaps.org): index and urlset XML, gzip, plain text; the lastmod policy.

Pure parsing, never raises. XML goes through lxml's pull parser in recover mode (no DTD, no
entities, no network), streamed from the (possibly gzipped) body, so a broken file still yields
every entry that could be read. trafilatura.sitemaps does not fit: in 2.x it reads no
``lastmod``, fetches over the network itself and filters by domain and language.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from email.utils import parsedate_to_datetime
from itertools import chain
from typing import Literal
from urllib.parse import urljoin, urlsplit

from lxml import etree

__all__ = [
    "MAX_SITEMAP_BYTES",
    "MAX_SITEMAP_ENTRIES",
    "SitemapDoc",
    "SitemapEntry",
    "SitemapKind",
    "parse_lastmod",
    "parse_sitemap",
    "should_refetch",
]

MAX_SITEMAP_ENTRIES = 50_000  # sitemaps.org: at most 50,000 URLs per file
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # ... and 50 MB (52,428,800 bytes) uncompressed
_CHUNK = 256 * 1024
_GZIP_MAGIC = b"\x1f\x8b"

SitemapKind = Literal["index", "urlset", "unknown"]
_ENTITY = re.compile(rb"&(?:[A-Za-z_][\w.-]{0,31}|#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8});")
_ROOTS: dict[str, SitemapKind] = {"urlset": "urlset", "sitemapindex": "index"}
_ENTRY_TAGS = {"urlset": "url", "index": "sitemap"}


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    loc: str  # absolute http(s) URL
    lastmod: datetime | None = None  # aware, UTC


@dataclass(frozen=True, slots=True)
class SitemapDoc:
    """One parsed sitemap file. ``kind == "index"``: entries are sub-sitemaps to fetch."""

    url: str
    kind: SitemapKind
    entries: tuple[SitemapEntry, ...] = ()
    truncated: bool = False  # stopped at MAX_SITEMAP_ENTRIES or MAX_SITEMAP_BYTES
    too_many: bool = False  # ... at MAX_SITEMAP_ENTRIES: it lists more
    malformed: bool = False  # broken XML or gzip: entries are what could be read


def _loose_date(value: str) -> datetime | None:
    for fmt in ("%Y", "%Y-%m", "%Y-%m-%d"):
        with suppress(ValueError):
            return datetime.strptime(value, fmt)
    try:
        return parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def parse_lastmod(text: str | None) -> datetime | None:
    """A W3C-datetime-ish ``lastmod`` as an aware UTC datetime, or None if unreadable.

    Accepts ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` (also unpadded), full date-times with or
    without seconds, fractional seconds of any length, ``Z``/``+hh:mm``/``+hhmm``/no zone
    (read as UTC), a space instead of ``T``, and RFC 2822 dates seen in the wild.
    """
    value = (text or "").strip()
    if not value or len(value) > 64:
        return None
    try:
        parsed = datetime.fromisoformat(value.upper())
    except ValueError:
        loose = _loose_date(value)
        if loose is None:
            return None
        parsed = loose
    try:
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (OverflowError, ValueError):
        return None


def should_refetch(lastmod: datetime | None, fetched_at: float | None) -> bool:
    """Is a sitemap entry worth fetching again, given when we last fetched (or parsed) it?

    True when it was never fetched, when ``lastmod`` is unknown, or when ``lastmod`` is newer
    than ``fetched_at`` (epoch seconds). A ``lastmod`` at exactly 00:00:00 UTC is read as a
    date-only value ("changed some time that day"), so it counts as newer than any fetch made
    during that day: refetching once too often beats missing a change.
    """
    if fetched_at is None or lastmod is None:
        return True
    if lastmod.tzinfo is None:
        lastmod = lastmod.replace(tzinfo=UTC)
    try:
        utc = lastmod.astimezone(UTC)
        if utc.time() == time(0):
            utc += timedelta(days=1)
        return utc.timestamp() > fetched_at
    except (OverflowError, OSError, ValueError):
        return True


class _Body:
    """Decompressed chunks of a body, capped at MAX_SITEMAP_BYTES; notes trouble on the way."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.truncated = False
        self.malformed = False

    def chunks(self) -> Iterator[bytes]:
        produced = 0
        for chunk in self._raw_chunks():
            room = MAX_SITEMAP_BYTES - produced
            if room <= 0 or len(chunk) > room:
                self.truncated = True
                chunk = chunk[: max(room, 0)]
            if not chunk:
                return
            produced += len(chunk)
            yield chunk

    def _raw_chunks(self) -> Iterator[bytes]:
        if not self.body.startswith(_GZIP_MAGIC):
            for start in range(0, len(self.body), _CHUNK):
                yield self.body[start : start + _CHUNK]
            return
        pending = self.body
        while pending.startswith(_GZIP_MAGIC):  # gzip members may be concatenated
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                while True:  # bounded output per call: a gzip bomb never inflates at once
                    out = inflater.decompress(pending, _CHUNK)
                    pending = inflater.unconsumed_tail
                    if out:
                        yield out
                    if inflater.eof or not (out or pending):
                        break
            except zlib.error:
                self.malformed = True
                return
            if not inflater.eof:
                self.malformed = True  # truncated download
                return
            pending = inflater.unused_data


class _AmpersandRepair:
    """Escape bare ``&`` outside CDATA, streaming: ``?a=1&b=2`` in a ``<loc>`` is the most
    common sitemap defect, and libxml2's recovery would turn it into ``?a=1=2``. Only the
    ``&`` byte is touched (no structure is parsed here); entity references are kept."""

    _HOLD = 48  # bytes kept back so an entity or "<![CDATA[" never straddles two chunks

    def __init__(self) -> None:
        self.pending = b""
        self.in_cdata = False
        self.repaired = 0

    def feed(self, chunk: bytes, final: bool = False) -> bytes:
        buf = self.pending + chunk
        limit = len(buf) if final else len(buf) - self._HOLD
        out = bytearray()
        pos = 0
        cdata = -2  # next "<![CDATA[" at or after pos; -1: none; -2: not looked for yet
        while pos < limit:
            if self.in_cdata:
                end = buf.find(b"]]>", pos)
                if end == -1:
                    stop = len(buf) if final else max(pos, len(buf) - 2)
                    out += buf[pos:stop]
                    pos = stop
                    break
                out += buf[pos : end + 3]
                pos, self.in_cdata, cdata = end + 3, False, -2
                continue
            amp = buf.find(b"&", pos, limit)
            if cdata == -2 or -1 < cdata < pos:
                cdata = buf.find(b"<![CDATA[", pos, min(limit + 9, len(buf)))
            if cdata != -1 and (amp == -1 or cdata < amp):
                out += buf[pos : cdata + 9]
                pos, self.in_cdata = cdata + 9, True
            elif amp != -1:
                out += buf[pos:amp]
                if _ENTITY.match(buf, amp):
                    out += b"&"
                else:
                    out += b"&amp;"
                    self.repaired += 1
                pos = amp + 1
            else:
                out += buf[pos:limit]
                pos = limit
        self.pending = buf[pos:]
        return bytes(out)


def _localname(tag: object) -> str:
    if not isinstance(tag, str):  # comments, processing instructions
        return ""
    return tag.rsplit("}", 1)[-1].lower()


def _loc_and_lastmod(element: etree._Element) -> tuple[str | None, str | None]:
    found: dict[str, str] = {}
    for child in element:
        name = _localname(child.tag)
        if name in ("loc", "lastmod") and name not in found:
            found[name] = "".join(t for t in child.itertext() if isinstance(t, str))
    return found.get("loc"), found.get("lastmod")


def _absolute(loc: str, base: str) -> str | None:
    loc = loc.strip()
    if loc[:8].lower().startswith(("http://", "https://")):  # the common case, no parsing
        host = loc.split("://", 1)[1]
        return loc if host and host[0] not in "/?#" else None
    try:
        full = urljoin(base, loc)
        scheme = urlsplit(full).scheme.lower()
    except ValueError:
        return None
    return full if scheme in ("http", "https") and "://" in full else None


class _Collector:
    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: set[str] = set()
        self.entries: list[SitemapEntry] = []
        self.full = False

    def add(self, loc: str | None, lastmod: str | None) -> None:
        if not loc or self.full:
            return
        absolute = _absolute(loc, self.url)
        if absolute is None or absolute in self.seen:
            return
        if len(self.entries) >= MAX_SITEMAP_ENTRIES:  # one more than allowed: stop here
            self.full = True
            return
        self.seen.add(absolute)
        self.entries.append(SitemapEntry(absolute, parse_lastmod(lastmod)))


def _parse_xml(chunks: Iterator[bytes], first: bytes, out: _Collector) -> tuple[SitemapKind, bool]:
    """Stream XML into ``out``; returns (kind, malformed)."""
    parser = etree.XMLPullParser(
        events=("end",),
        tag=("{*}url", "{*}sitemap"),  # only entries reach Python: fast on 50,000 of them
        recover=True,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
    )
    kind: SitemapKind | None = None  # decided by the root element

    def drain() -> bool:  # False: stop reading
        nonlocal kind
        for _, element in parser.read_events():
            if not isinstance(element, etree._Element):
                continue
            if kind is None:
                kind = _ROOTS.get(_localname(element.getroottree().getroot().tag), "unknown")
            if kind == "unknown":
                return False
            if _localname(element.tag) != _ENTRY_TAGS[kind]:
                continue
            out.add(*_loc_and_lastmod(element))
            element.clear()
            parent = element.getparent()
            if parent is not None and parent.getparent() is None:  # free finished siblings
                while element.getprevious() is not None:
                    del parent[0]
            if out.full:
                return False
        return True

    repair = _AmpersandRepair()
    malformed = False
    root: etree._Element | None = None
    try:
        for chunk in chain((first,), chunks):
            parser.feed(repair.feed(chunk))
            if not drain():
                return kind or "unknown", bool(repair.repaired)
        parser.feed(repair.feed(b"", final=True))
        root = parser.close()
    except etree.XMLSyntaxError:
        malformed = True
    try:
        drain()
    except etree.XMLSyntaxError:
        malformed = True
    if kind is None and root is not None:  # a sitemap without entries
        kind = _ROOTS.get(_localname(root.tag), "unknown")
    errors = parser.feed_error_log.filter_from_errors()
    return kind or "unknown", malformed or bool(repair.repaired) or len(errors) > 0


def _parse_text(chunks: Iterator[bytes], first: bytes, out: _Collector) -> None:
    text = b"".join(chain((first,), chunks)).decode("utf-8", errors="replace")
    for line in text.splitlines():
        candidate = line.strip().lstrip("\ufeff")
        if candidate.lower().startswith(("http://", "https://")) and not candidate.count(" "):
            out.add(candidate, None)
            if out.full:
                return


def parse_sitemap(body: bytes, url: str) -> SitemapDoc:
    """Parse a sitemap index, urlset (XML, gzipped or not) or plain-text sitemap. Never raises.

    ``kind`` is ``"unknown"`` for anything else (HTML, RSS/Atom, garbage); relative ``loc``
    values are resolved against ``url``; duplicates are dropped; non-http(s) URLs ignored.
    """
    source = _Body(body)
    out = _Collector(url)
    kind: SitemapKind = "unknown"
    malformed = False
    try:
        chunks = source.chunks()
        first = b""
        for chunk in chunks:  # skip to the first byte that says what this is
            first += chunk
            if first.lstrip(b"\xef\xbb\xbf \t\r\n"):
                break
        head = first.lstrip(b"\xef\xbb\xbf \t\r\n")
        if head.startswith(b"<"):
            kind, malformed = _parse_xml(chunks, first, out)
        elif head:
            _parse_text(chunks, first, out)
            kind = "urlset" if out.entries else "unknown"
    except Exception:  # a parser must not take the crawl down; keep what was read
        malformed = True
    return SitemapDoc(
        url=url,
        kind=kind,
        entries=tuple(out.entries),
        truncated=source.truncated or out.full,
        too_many=out.full,
        malformed=malformed or source.malformed,
    )
