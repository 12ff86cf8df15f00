"""One spelling per resource: RFC 3986 section 6.2.2's syntax-based normalization of an absolute
http(s) URL.

- scheme and host in lower case; a host's trailing dot dropped; a non-ASCII host in its IDNA
  (punycode) form; an IPv6 literal in its compressed form; an empty or malformed host rejected;
- the scheme's default port dropped;
- percent-escapes in upper case (``%c3%bc`` -> ``%C3%BC``), escapes of unreserved characters
  decoded (``%7E`` -> ``~``), and every character a URL may not hold as it is (non-ASCII as its
  UTF-8 bytes, controls, spaces, ``"<>\\^`{|}[]``, a ``%`` that starts no escape) percent-encoded,
  so ``/l/ü``, ``/l/%c3%bc`` and ``/l/%C3%BC`` are one URL;
- dot segments removed (also those that were escaped, ``%2E%2E``), the fragment dropped, an empty
  query dropped.

The result is what is sent on the wire as it is (see :mod:`litecrawl.fetch.http`), and
normalizing it again gives it back unchanged.
"""

from __future__ import annotations

import ipaddress
import re
import string
from collections.abc import Callable
from urllib.parse import unquote, urlsplit, urlunsplit

import idna

__all__ = ["DEFAULT_PORTS", "NOT_CANONICAL", "canonical_url", "is_canonical_host"]

DEFAULT_PORTS = {"http": "80", "https": "443"}

_UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
_SUB_DELIMS = "!$&'()*+,;="

# What makes a path + query not canonical as written (the fast path then leaves the URL to
# canonical_url): a fragment, a character that must be escaped, a lower-case or stray escape,
# an escaped unreserved character, a dot segment, an empty query.
NOT_CANONICAL = re.compile(
    r"""[#\\\x00-\x20\x7f"<>^`{|}\[\]]|[^\x00-\x7f]"""
    r"|%(?![0-9A-F]{2})"
    r"|%(?:2[DE]|3[0-9]|4[1-9A-F]|5[0-9AF]|6[1-9A-F]|7[0-9AE])"
    r"|/\.\.?(?:/|\?|$)|\?$"
)
_HOST = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def _requoter(safe: str) -> Callable[[str], str]:
    """A function that puts one URL component in canonical percent-encoding, ``safe`` being
    the characters it may hold as they are."""
    pattern = re.compile(r"%[0-9A-Fa-f]{2}|[^" + re.escape(safe) + "]")

    def fix(match: re.Match[str]) -> str:
        text = match.group()
        if len(text) == 3:  # an escape
            char = chr(int(text[1:], 16))
            return char if char in _UNRESERVED else text.upper()
        # A lone surrogate cannot be UTF-8: its bytes are kept as Python spells them.
        return "".join(f"%{byte:02X}" for byte in text.encode("utf-8", "surrogatepass"))

    return lambda component: pattern.sub(fix, component)


_UNRESERVED_TEXT = string.ascii_letters + string.digits + "-._~"
_requote_path = _requoter(_UNRESERVED_TEXT + _SUB_DELIMS + ":@/")
_requote_query = _requoter(_UNRESERVED_TEXT + _SUB_DELIMS + ":@/?")
_requote_userinfo = _requoter(_UNRESERVED_TEXT + _SUB_DELIMS + ":")


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 for a path that starts with "/"."""
    if "." not in path:
        return path
    segments = path.split("/")[1:]
    kept: list[str] = []
    for i, segment in enumerate(segments):
        if segment in (".", ".."):
            if segment == ".." and kept:
                kept.pop()
            if i == len(segments) - 1:
                kept.append("")  # "/a/b/.." is the directory "/a/"
        else:
            kept.append(segment)
    return "/" + "/".join(kept)


def is_canonical_host(host: str) -> bool:
    """True for a lower-case ASCII host name with no empty label (not an IP-v6 literal)."""
    return _HOST.fullmatch(host) is not None


def _canonical_host(hostname: str) -> str | None:
    """``hostname`` (as urlsplit gives it: lower case, no brackets) in canonical form, or None
    when it names no host."""
    if ":" in hostname:
        if "%" in hostname:
            return None  # a zone id names an interface of this machine, not a host
        try:
            return f"[{ipaddress.IPv6Address(hostname).compressed}]"
        except ValueError:
            return None
    host = unquote(hostname, errors="strict") if "%" in hostname else hostname
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError:
            try:  # IDNA 2003 takes what 2008 refuses (symbols), as browsers and aiohttp do
                host = host.encode("idna").decode("ascii")
            except UnicodeError:
                return None
    host = host.lower().rstrip(".")
    return host if is_canonical_host(host) else None


def canonical_url(url: str) -> str | None:
    """The canonical form of the absolute URL ``url``, or None if it is not an http(s) URL
    with a host."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a non-numeric or out-of-range port
        hostname = parts.hostname
    except (ValueError, UnicodeError):
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not hostname:
        return None
    try:
        host = _canonical_host(hostname)
    except UnicodeError:  # an escape in the host that is not UTF-8
        return None
    if host is None:
        return None
    # Only the scheme's own default port is dropped: http://x:443 is another server than http://x.
    if port is not None and str(port) != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{_requote_userinfo(userinfo)}@{host}" if userinfo else host
    path = _remove_dot_segments(_requote_path(parts.path)) if parts.path else "/"
    return urlunsplit((scheme, netloc, path, _requote_query(parts.query), ""))
