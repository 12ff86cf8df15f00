"""Resolving a link's href against its page's URL without parsing, when it needs none
(docs/architecture.md, the urls stage).

Most links on most pages are absolute http(s) URLs, root-relative or relative paths already in
canonical form: :func:`resolve_quickly` resolves those with str methods exactly as ``urljoin``
and normalization would, and says None for the rest (then ``UrlRules`` in litecrawl/urls.py
takes the full urllib route). Measured reasons: bench/README.md, issue 29, sessions 5-7.
"""

from __future__ import annotations

import re
from functools import lru_cache

from litecrawl.canonical import DEFAULT_PORTS, NOT_CANONICAL, canonical_url, is_canonical_host

__all__ = [
    "base_context",
    "is_canonical",
    "join_quickly",
    "names_another_scheme",
    "resolve_quickly",
    "strip",
]

_PORT = re.compile(r"[1-9][0-9]{0,4}")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")  # what urlsplit takes for a scheme
# Around a URL: whitespace (U+00A0 copied from a page too) and controls, which browsers strip.
_AROUND = re.compile(r"^[\s\x00-\x20\x7f]+|[\s\x00-\x20\x7f]+$")


def strip(url: str) -> str:
    # whitespace or a control at either end, asked of str methods (re's \s is str.isspace):
    # two regex calls cost ~8% of a page's link resolving (bench/README.md, issue 29, session 7)
    if url and (
        url[0] <= " "
        or url[-1] <= " "
        or url[0].isspace()
        or url[-1].isspace()
        or "\x7f" in (url[0], url[-1])
    ):
        return _AROUND.sub("", url)
    return url


def names_another_scheme(href: str) -> bool:
    """True for an absolute URL of another scheme than http(s) (``mailto:``, ``javascript:``):
    never a page. urlsplit's own test for a scheme, so the full route would say the same."""
    if ":" not in href:  # most links; "in" is cheaper than find's argument parsing
        return False
    colon = href.find(":")
    return (
        colon > 0
        and href[:colon].lower() not in DEFAULT_PORTS
        and bool(_SCHEME.fullmatch(href, 0, colon))
    )


def resolve_quickly(href: str, base: str | None) -> str | None:
    """``href`` resolved against ``base`` when that needs no parsing, else None (then the full
    urljoin/urlsplit route decides).

    Handled here: an absolute http(s) URL, a root-relative path, a relative path (dot segments
    resolved exactly as urljoin does) and a fragment-only link, whose result is already in
    canonical form (lower-case scheme and host, no default port, a path, no dot segments);
    a fragment is dropped first, as normalization would. Most links on most pages take this path.
    """
    href = href.split("#", 1)[0]
    if href[:7] == "http://" or href[:8] == "https://":
        return _canonical_or_none(href)
    parts = _base_parts(base) if base is not None else None
    if parts is None:
        return None
    base, origin, base_path = parts
    if not href:  # "#section": the page itself
        return _canonical_or_none(base)
    if href[0] == "/":
        return None if href.startswith("//") else _canonical_or_none(origin + href)
    if (
        href[0] == "?"
        or ";" in href
        or ";" in base
        or ":" in href.split("/", 1)[0]
        or _CONTROL.search(href)
    ):
        return None  # query-only, path parameters, "a:b", tabs urlsplit drops: urljoin decides
    path, query_mark, query = href.partition("?")
    joined = _join_path(base_path.split("?", 1)[0], path) + query_mark + query
    return _canonical_or_none(origin + joined)


def join_quickly(href: str, base: str) -> str | None:
    """``urljoin(base, href)`` when that needs no parsing, else None (then urljoin decides):
    a relative path (dot segments resolved as urljoin does), with a query and a fragment, or a
    fragment alone, against an http(s) base without a query, parameters or fragment. Not
    normalized: what the Markdown's links are (``extract/dom.py``), where urljoin took ~200
    calls a Python-docs page (bench/README.md, issue 29, session 10)."""
    if not href or href[0] in "/?" or ";" in href or _CONTROL.search(href):
        return None  # root-relative, query-only, path parameters, characters urlsplit drops
    parts = _join_base(base)
    if parts is None:
        return None
    origin, base_path = parts
    rest, _, fragment = href.partition("#")
    after = "#" + fragment if fragment else ""  # urlunsplit drops an empty fragment
    if not rest:  # "#section": the base itself
        return origin + base_path + after
    path, _, query = rest.partition("?")
    if not path or ":" in path.split("/", 1)[0]:
        return None  # "a:b" may be a scheme: urljoin decides
    return origin + _join_path(base_path, path) + ("?" + query if query else "") + after


@lru_cache(maxsize=64)
def _join_base(base: str) -> tuple[str, str] | None:
    """(origin, path) of a base :func:`join_quickly` can join against, split once a page:
    lower-case http(s), ASCII, a path and nothing after it that urlparse would split off."""
    if not (base.startswith(("http://", "https://")) and base.isascii()):
        return None
    if any(mark in base for mark in "?#;[]@\\") or _CONTROL.search(base):
        return None
    parts = _origin_and_path(base)
    if parts is None or not parts[1]:
        return None
    return parts


@lru_cache(maxsize=64)
def _base_parts(base: str) -> tuple[str, str, str] | None:
    """(``base`` without its fragment, its origin, its path) for :func:`resolve_quickly`, or
    None when its links take the full route: split once for all the links of a page."""
    base = base.split("#", 1)[0]
    parts = _origin_and_path(base)
    if parts is None or "?" in parts[0]:
        return None
    return base, *parts


def _origin_and_path(url: str) -> tuple[str, str] | None:
    """``("scheme://netloc", "/path?query")`` of an absolute URL (the second part may be "");
    None when ``url`` has no "://"."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return None
    path_start = url.find("/", scheme_end + 3)
    return (url, "") if path_start < 0 else (url[:path_start], url[path_start:])


def _join_path(base_path: str, path: str) -> str:
    """urljoin's merge of a relative ``path`` with the base's path (RFC 3986 5.2, with Python's
    dropping of empty segments), step for step."""
    base_parts = base_path.split("/")
    if base_parts[-1] != "":
        del base_parts[-1]  # the base's last segment is a file, not a directory
    segments = base_parts + path.split("/")
    segments[1:-1] = filter(None, segments[1:-1])
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            if resolved:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")
    joined = "/".join(resolved)
    return joined if joined.startswith("/") else "/" + joined  # as urlunsplit puts it back


def is_canonical(url: str) -> bool:
    """``canonical_url(url) == url``, told by a regex and a memo of the origin for the usual
    URL (a crawled page's: already normalized), by ``canonical_url`` for the rest: the fetcher
    asks it of every URL it sends, and ``canonical_url`` cost ~18 us a kit page on the event
    loop against ~2 (bench/README.md, issue 29, session 9)."""
    return _canonical_or_none(url) is not None or canonical_url(url) == url


def _canonical_or_none(url: str) -> str | None:
    """``url`` (absolute) when it is an http(s) URL already in canonical form, else None."""
    scheme, _, rest = url.partition("://")
    slash = rest.find("/")
    if (
        slash <= 0
        or not _canonical_origin(scheme, rest[:slash])
        or NOT_CANONICAL.search(rest, slash)
    ):
        return None
    return url


@lru_cache(maxsize=256)
def _canonical_origin(scheme: str, netloc: str) -> bool:
    """Whether ``scheme://netloc`` is an http(s) origin in canonical form. A crawl's links name a
    few origins: each is checked once, not once a link (its regexes were a third of a link's
    check: bench/README.md, issue 29, session 7)."""
    if scheme not in DEFAULT_PORTS:
        return False
    host, colon, port = netloc.partition(":")
    return is_canonical_host(host) and not (
        colon and (not _PORT.fullmatch(port) or int(port) > 65535 or port == DEFAULT_PORTS[scheme])
    )


def base_context(href: str, base: str | None) -> str | None:
    """The part of ``base`` that resolving ``href`` against it depends on (RFC 3986 5.2)."""
    if base is None:
        return None
    href = strip(href)
    if href[:8].lower().startswith(("http://", "https://")):
        return ""  # absolute: the base plays no part
    stem = base.split("#", 1)[0]
    if not href or href[0] in "?#":
        return stem
    stem = stem.split("?", 1)[0]
    parts = _origin_and_path(stem)
    if parts is None:
        return stem
    origin, path = parts
    if not path:
        return stem + "/"  # "http://a.com" resolves like "http://a.com/"
    if href.startswith("//"):
        return origin.partition("://")[0]  # network-path reference: only the scheme is kept
    if href[0] == "/":
        return origin  # absolute path: only the origin is kept
    return stem[: stem.rfind("/") + 1]  # relative path: the base's directory
