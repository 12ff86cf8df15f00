"""Registered domains through the public suffix list (offline) and the stable partition hash."""

from __future__ import annotations

import ipaddress
import zlib
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import tldextract

__all__ = [
    "domain_meta",
    "partition_hash",
    "partition_of",
    "registered_domain",
    "rehashed_hosts",
]


@lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    """The snapshot bundled with tldextract; never downloads, never writes a cache. The list's
    private section too: alice.github.io and bob.github.io are two sites, not one "github.io".
    Made at the first host name: tldextract brings requests (~0.2 s of CPU at start-up), which
    a crawl of IP addresses and the commands that only read a database never need."""
    import tldextract

    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
    )


# Hosts remembered by each cache below. An entry costs ~560 bytes in both together (measured,
# tracemalloc); a miss costs one suffix-list lookup. A page's links go mostly to its own host
# and a few popular ones, so a few thousand hosts catch nearly all lookups (65,536 was 35 MiB).
HOSTS_CACHED = 8192


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@lru_cache(maxsize=HOSTS_CACHED)
def _parts(host: str) -> tuple[str, str, str, str]:
    """(subdomain, sld, tld, registered domain) of a host name. A host without a known public
    suffix (an IP address, ``localhost``, ``wiki.corp``) or that is one (``github.io``) is its
    own registered domain: no guess lumps unrelated intranet hosts into one site."""
    host = host.lower().rstrip(".")
    if _is_ip(host):
        return "", host.strip("[]"), "", host.strip("[]")
    parts = _extractor()(host)
    if not parts.suffix or not parts.domain:
        return parts.subdomain, parts.domain, parts.suffix, host
    return parts.subdomain, parts.domain, parts.suffix, f"{parts.domain}.{parts.suffix}"


def registered_domain(host: str) -> str:
    """``www.london.co.uk`` -> ``london.co.uk``, ``a.alice.github.io`` -> ``alice.github.io``;
    an IP address or ``localhost`` is itself (``host`` may carry a port)."""
    try:
        name = urlsplit(f"//{host}").hostname or host  # drops a port and IPv6 brackets
    except ValueError:
        name = host
    return _parts(name)[3]


def domain_meta(url: str) -> dict[bytes, bytes]:
    """Frontera's ``meta[b'domain']``: name (registered domain), netloc, scheme, sld, tld,
    subdomain; bytes values."""
    parts = urlsplit(url)
    subdomain, sld, tld, name = _parts(parts.hostname or "")
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


@lru_cache(maxsize=HOSTS_CACHED)
def _host_hash(host: str) -> int:
    return zlib.crc32(registered_domain(host).encode())


def rehashed_hosts(hosts: Iterable[str]) -> list[str]:
    """Of ``hosts`` (``host[:port]``), those whose registered domain differs from what litecrawl
    computed before the private section of the suffix list was used (and before a host without
    a known suffix stood for itself): their pages' stored partition hashes are stale. Loads a
    second suffix list: for the one-time database migration only (a new database has no
    hosts: nothing to load)."""
    hosts = list(hosts)
    if not hosts:
        return []
    import tldextract

    icann = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)

    def before(host: str) -> str:
        try:
            name = urlsplit(f"//{host}").hostname or host
        except ValueError:
            name = host
        name = name.lower().rstrip(".")
        if _is_ip(name):
            return name.strip("[]")
        parts = icann(name)
        return f"{parts.domain}.{parts.suffix}" if parts.suffix else parts.domain

    return [host for host in hosts if before(host) != registered_domain(host)]
