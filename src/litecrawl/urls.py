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

from litecrawl.canonical import DEFAULT_PORTS, canonical_url
from litecrawl.errors import ConfigError, without_passwords
from litecrawl.hrefs import base_context, names_another_scheme, resolve_quickly, strip

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
        url = strip(url)
        decided, normalized = self._normalize_quickly(url, base_url)
        return normalized if decided else self._normalize_slowly(url, base_url)

    def _normalize_quickly(self, url: str, base_url: str | None) -> tuple[bool, str | None]:
        """(True, the result) when no parsing is needed (most links), else (False, None)."""
        if names_another_scheme(url):
            return True, None  # mailto:, javascript:, tel:, ...
        canonical = resolve_quickly(url, base_url)
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
        url = strip(url)
        decided, normalized = self._normalize_quickly(url, base_url)
        if decided:
            return normalized if normalized is None or self.validate(normalized) else None
        key = (url, base_context(url, base_url))
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
        if names_another_scheme(text) and not text.split(":", 1)[1][:1].isdigit():
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
