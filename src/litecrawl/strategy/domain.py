"""Registered domains through the public suffix list (offline) and the stable partition hash."""

from __future__ import annotations

import ipaddress
import zlib
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import tldextract

__all__ = ["domain_meta", "partition_hash", "partition_of", "registered_domain"]

# The snapshot bundled with tldextract; never downloads, never writes a cache.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@lru_cache(maxsize=65536)
def _parts(host: str) -> tuple[str, str, str]:
    """(subdomain, sld, tld) of a host name."""
    host = host.lower().rstrip(".")
    if _is_ip(host):
        return "", host, ""
    parts = _EXTRACT(host)
    if not parts.suffix:
        return parts.subdomain, parts.domain, ""
    return parts.subdomain, parts.domain, parts.suffix


def registered_domain(host: str) -> str:
    """``www.london.co.uk`` -> ``london.co.uk``; an IP address or ``localhost`` is itself
    (``host`` may carry a port)."""
    try:
        name = urlsplit(f"//{host}").hostname or host  # drops a port and IPv6 brackets
    except ValueError:
        name = host
    _, sld, tld = _parts(name)
    return f"{sld}.{tld}" if tld else sld


def domain_meta(url: str) -> dict[bytes, bytes]:
    """Frontera's ``meta[b'domain']``: name (registered domain), netloc, scheme, sld, tld,
    subdomain; bytes values."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    subdomain, sld, tld = _parts(host)
    name = f"{sld}.{tld}" if tld else sld
    return {
        b"name": name.encode(),
        b"netloc": parts.netloc.encode(),
        b"scheme": parts.scheme.encode(),
        b"sld": sld.encode(),
        b"tld": tld.encode(),
        b"subdomain": subdomain.encode(),
    }


def partition_key(url: str, meta: dict[bytes, Any] | None = None) -> bytes:
    """``meta[b'slot']`` if set, else the URL's registered domain."""
    slot = (meta or {}).get(b"slot")
    if slot is not None:
        return slot if isinstance(slot, bytes) else str(slot).encode()
    return registered_domain(urlsplit(url).hostname or "").encode()


def partition_of(key: bytes, n: int) -> int:
    """Stable across machines and runs (crc32, not ``hash()``)."""
    return zlib.crc32(key) % n


def partition_hash(url: str, meta: str | None = None, host: str | None = None) -> int:
    """What the frontier stores per page (``pages.part``) for ``--partition K/N``: the crc32 of
    its partition key (``meta`` as stored, JSON), so ``part % N`` is its partition K. ``host``:
    the URL's ``host[:port]`` when the caller has it (``urls.host_of``)."""
    if meta:
        from litecrawl.strategy.codec import loads_meta

        if b"slot" in (decoded := loads_meta(meta)):
            return zlib.crc32(partition_key(url, decoded))
    # Every link a page finalizes is hashed: parsing each URL again cost ~14 us (0.4 ms a page
    # of 30 links, ~10% of a page's CPU); per host, once, it is a dict lookup.
    return _host_hash(host if host is not None else urlsplit(url).netloc.rpartition("@")[2])


@lru_cache(maxsize=65536)
def _host_hash(host: str) -> int:
    return zlib.crc32(registered_domain(host).encode())
