"""URL normalization and validation (docs/python-api.md, step 7).

Normalize, then validate: a URL is made absolute, reduced to one canonical spelling, rewritten by
the user's ``normalize_patterns``, and only then checked against include/exclude patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urljoin, urlsplit, urlunsplit

from litecrawl.canonical import DEFAULT_PORTS, NOT_CANONICAL, canonical_url, is_canonical_host
from litecrawl.errors import ConfigError, without_passwords

__all__ = [
    "MAX_URL_LENGTH",
    "DomainScope",
    "UrlRules",
    "host_of",
    "normalize_and_validate_url",
    "seed_problem",
    "shown_location",
    "without_passwords",
]

# Longer URLs are almost always spider traps (ever-growing paths or session ids).
MAX_URL_LENGTH = 2048


@dataclass(frozen=True, slots=True)
class _Rewrite:
    pattern: re.Pattern[str]
    replace: str


def _compile(name: str, pattern: object) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ConfigError(f"{name}: pattern must be a string, got {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{name}: invalid regular expression {pattern!r}: {exc}") from exc


class UrlRules:
    """Compiled normalize/include/exclude patterns; ``rules(url, base)`` normalizes + validates."""

    __slots__ = ("_exclude", "_include", "_memo", "_rewrites")

    def __init__(
        self,
        normalize_patterns: Sequence[Mapping[str, str]] | None = None,
        include_patterns: Sequence[str] | None = None,
        exclude_patterns: Sequence[str] | None = None,
    ) -> None:
        rewrites = []
        for i, item in enumerate(normalize_patterns or ()):
            if not isinstance(item, Mapping) or set(item) != {"pattern", "replace"}:
                raise ConfigError(
                    f"normalize_patterns[{i}]: expected {{'pattern': str, 'replace': str}}, "
                    f"got {item!r}"
                )
            if not isinstance(item["replace"], str):
                raise ConfigError(f"normalize_patterns[{i}]: 'replace' must be a string")
            rewrites.append(
                _Rewrite(_compile("normalize_patterns", item["pattern"]), item["replace"])
            )
        self._rewrites = tuple(rewrites)
        self._include = tuple(_compile("include_patterns", p) for p in include_patterns or ())
        self._exclude = tuple(_compile("exclude_patterns", p) for p in exclude_patterns or ())
        # Pages repeat the same hrefs: what takes the full urllib route is memoized by href and
        # the part of the base URL the resolution really depends on (see _context).
        self._memo: dict[tuple[str, str | None], str | None] = {}

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # Pickled as its patterns (the memo stays behind), unpickled as the one instance per
        # patterns of the receiving process: an analysis worker that resolves the links of
        # every page it is sent keeps one memo across them, bounded as here (_cached_rules).
        return _cached_rules, (
            tuple((r.pattern.pattern, r.replace) for r in self._rewrites),
            tuple(p.pattern for p in self._include),
            tuple(p.pattern for p in self._exclude),
        )

    def normalize(self, url: str, base_url: str | None = None) -> str | None:
        """The canonical absolute form of ``url``, or None if it is not an http(s) URL."""
        url = _strip(url)
        decided, normalized = self._normalize_quickly(url, base_url)
        return normalized if decided else self._normalize_slowly(url, base_url)

    def _normalize_quickly(self, url: str, base_url: str | None) -> tuple[bool, str | None]:
        """(True, the result) when no parsing is needed (most links), else (False, None)."""
        if _names_another_scheme(url):
            return True, None  # mailto:, javascript:, tel:, ...
        canonical = _resolve_quickly(url, base_url)
        return (True, self._rewrite(canonical)) if canonical is not None else (False, None)

    def _rewrite(self, url: str) -> str:
        for rewrite in self._rewrites:
            url = rewrite.pattern.sub(rewrite.replace, url)
        return url

    def _normalize_slowly(self, url: str, base_url: str | None) -> str | None:
        if base_url:
            try:
                url = urljoin(base_url, url)
            except ValueError:
                return None
        canonical = canonical_url(url)
        return None if canonical is None else self._rewrite(canonical)

    def validate(self, url: str) -> bool:
        """Seed rule: at least one include matches (if any), no exclude matches."""
        if len(url) > MAX_URL_LENGTH:
            return False
        if self._include and not any(p.search(url) for p in self._include):
            return False
        return not self._exclude or not any(p.search(url) for p in self._exclude)

    def __call__(self, url: str, base_url: str | None = None) -> str | None:
        """:meth:`normalize`, then :meth:`validate`: the URL to crawl, or None."""
        url = _strip(url)
        decided, normalized = self._normalize_quickly(url, base_url)
        if decided:
            return normalized if normalized is None or self.validate(normalized) else None
        key = (url, _context(url, base_url))
        try:
            return self._memo[key]
        except KeyError:
            pass
        normalized = self._normalize_slowly(url, base_url)
        if normalized is not None and not self.validate(normalized):
            normalized = None
        if len(self._memo) >= _MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = normalized
        return normalized

    def many(self, urls: Iterable[str], base_url: str | None) -> list[str]:
        """Normalize and validate a batch, dropping invalid ones and duplicates (order kept)."""
        seen: dict[str, None] = {}
        for url in urls:
            normalized = self(url, base_url)
            if normalized is not None:
                seen[normalized] = None
        return list(seen)


_VERDICTS = 8192  # hosts whose scope verdict DomainScope keeps
_MEMO_SIZE = 20_000  # ~400 bytes an entry: memory stays flat however large the crawl


_PORT = re.compile(r"[1-9][0-9]{0,4}")
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")  # what urlsplit takes for a scheme
# Around a URL: whitespace (U+00A0 copied from a page too) and controls, which browsers strip.
_AROUND = re.compile(r"^[\s\x00-\x20\x7f]+|[\s\x00-\x20\x7f]+$")


def _strip(url: str) -> str:
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


def _names_another_scheme(href: str) -> bool:
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


def _resolve_quickly(href: str, base: str | None) -> str | None:
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


@lru_cache(maxsize=64)
def _base_parts(base: str) -> tuple[str, str, str] | None:
    """(``base`` without its fragment, its origin, its path) for :func:`_resolve_quickly`, or
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


def _context(href: str, base: str | None) -> str | None:
    """The part of ``base`` that resolving ``href`` against it depends on (RFC 3986 5.2)."""
    if base is None:
        return None
    href = _strip(href)
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


@lru_cache(maxsize=64)
def _cached_rules(
    normalize: tuple[tuple[str, str], ...], include: tuple[str, ...], exclude: tuple[str, ...]
) -> UrlRules:
    return UrlRules([{"pattern": p, "replace": r} for p, r in normalize], include, exclude)


def normalize_and_validate_url(
    url: str,
    base_url: str | None,
    normalize_patterns: list[dict[str, str]] | None,
    include_patterns: list[str] | None,
    exclude_patterns: list[str] | None,
) -> str | None:
    """The public contract (docs/python-api.md, step 7): the normalized URL if valid, else None."""
    rules = _cached_rules(
        tuple((d["pattern"], d["replace"]) for d in normalize_patterns or ()),
        tuple(include_patterns or ()),
        tuple(exclude_patterns or ()),
    )
    return rules(url, base_url)


def seed_problem(seed: str) -> str | None:
    """Why ``seed`` cannot start a crawl, in words (``example.com``: no scheme; ``htp://x``,
    ``file:///x``: not http(s); ``http://./``: no host), or None when it is an http(s) URL."""
    text = seed.strip()
    if "://" not in text:
        if _names_another_scheme(text) and not text.split(":", 1)[1][:1].isdigit():
            return f"{text.split(':', 1)[0]}: URLs are not crawled, only http:// and https://"
        return f"no scheme: write http://{text} or https://{text}"
    scheme = text.split("://", 1)[0].lower()
    if scheme not in DEFAULT_PORTS:
        return f"{scheme}:// URLs are not crawled, only http:// and https://"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        return f"not a URL: {exc}"
    if not (parts.hostname or "").strip("."):
        return "no host name"
    if UrlRules().normalize(text) is None:
        return "not a valid http(s) URL"
    return None


def host_of(url: str) -> str:
    """``host[:port]`` of a normalized URL (the key for per-host politeness)."""
    _, sep, rest = url.partition("://")
    if not sep:
        return urlsplit(url).netloc.rpartition("@")[2]
    # up to the first "/", "?" or "#" (partition parses its argument faster than find)
    netloc = rest.partition("/")[0].partition("?")[0].partition("#")[0]
    return netloc.rpartition("@")[2]


class DomainScope:
    """Same-site scope: a URL is in scope when its registered domain (the public suffix list,
    private section included, resolved offline: www.london.co.uk -> london.co.uk, and
    alice.github.io is not bob.github.io) is one of the allowed ones. IP addresses and hosts
    without a known suffix stand for themselves."""

    def __init__(self, urls_or_domains: Iterable[str]) -> None:
        # the suffix list costs its load only to the commands that need it
        from litecrawl.strategy.domain import registered_domain

        self._registered = registered_domain
        self._verdicts: dict[str, bool] = {}
        self.domains = frozenset(
            self.site_of(item if "//" in item else f"http://{item}/") for item in urls_or_domains
        )

    def site_of(self, url: str) -> str:
        return self._registered(host_of(url))

    def __call__(self, url: str) -> bool:
        return self.allows_host(host_of(url))

    def allows_host(self, host: str) -> bool:
        """Whether the URLs of ``host`` (``host[:port]``, as :func:`host_of` gives it) are in
        scope."""
        verdict = self._verdicts.get(host)
        if verdict is None:
            if len(self._verdicts) >= _VERDICTS:  # flat memory on a crawl of many hosts
                self._verdicts.clear()
            verdict = self._verdicts[host] = self._registered(host) in self.domains
        return verdict


def shown_location(location: str) -> str:
    """A database location fit for messages and logs: a URL's password replaced by ``***``."""
    try:
        parts = urlsplit(location)
        password = parts.password
    except ValueError:  # not a URL one can split ("postgresql://u:pw@[zz/x"): mask by pattern
        return without_passwords(location)
    if password is None:
        return location
    netloc = parts.netloc.replace(f":{password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))
