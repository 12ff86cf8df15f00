"""Domain metadata (Frontera's ``backend.domain_metadata``): registered domain -> dict.

Values are checked where the strategy writes them, so a value that cannot be stored raises
:class:`~litecrawl.errors.DomainMetadataError` (naming the domain and key) at the strategy's own
line; keys starting with ``_`` stay in the process and are never stored (as in Frontera's own
domain cache, which keeps a parsed robots.txt under ``_rp``). Changes are written with the next
batch as (what this worker loaded, what it holds now), and the store merges them with what other
workers wrote meanwhile (:func:`merge`): see "Crawling strategies" in the README. After each
batch's write this worker keeps the :data:`DOMAINS_KEPT` domains it used last and forgets the
others (their ``_`` keys too, as Frontera's own domain cache, an LRU, does): the next use reads
the domain again from the database, so memory and the batch's work follow the domains in use,
not every domain the crawl met.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping
from typing import Any, Protocol

from litecrawl.errors import DomainMetadataError
from litecrawl.strategy.base import DomainMetadata
from litecrawl.strategy.codec import NotJSON, decode, encode

__all__ = ["DOMAINS_KEPT", "Entry", "StoredDomainMetadata", "merge"]

# each batch's write compares every domain kept with what it loaded: few are kept
DOMAINS_KEPT = 1024
_MISSING: Any = object()


class DomainReader(Protocol):
    def read_domain(self, domain: str) -> str | None: ...


def _stored(key: object) -> bool:
    return not (isinstance(key, str) and key.startswith("_"))


def _check(domain: str, key: Any, value: Any) -> None:
    if _stored(key):
        try:
            encode(value, (key,))
        except NotJSON as exc:
            raise DomainMetadataError(domain, key, str(exc)) from None


class Entry(dict[str, Any]):
    """One domain's dict: a value that cannot be stored is refused where it is written."""

    __slots__ = ("domain",)

    def __init__(self, domain: str, value: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.domain = domain
        for key, item in (value or {}).items():
            self[key] = item

    def __setitem__(self, key: str, value: Any) -> None:
        _check(self.domain, key, value)
        super().__setitem__(key, value)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value


def dumps(domain: str, value: dict[str, Any]) -> str:
    """The stored JSON of one domain's dict (without its ``_`` keys)."""
    kept = {k: v for k, v in value.items() if _stored(k)}
    try:
        return json.dumps(encode(kept), sort_keys=True, separators=(",", ":"))
    except NotJSON as exc:
        raise DomainMetadataError(domain, exc.path[0] if exc.path else None, str(exc)) from None


def loads(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    value = decode(json.loads(text))
    return value if isinstance(value, dict) else {}


class StoredDomainMetadata(MutableMapping[str, dict[str, Any]], DomainMetadata):
    """Registered domain -> dict, loaded on first access, written with the next batch."""

    def __init__(self, reader: DomainReader, keep: int = DOMAINS_KEPT) -> None:
        self._reader = reader
        self._keep = keep
        self._cache: dict[str, dict[str, Any]] = {}
        # the stored JSON this worker last saw/wrote, the domain used last at the end
        self._loaded: dict[str, str | None] = {}

    def _load(self, key: str) -> None:
        text = self._loaded.pop(key, _MISSING)
        if text is not _MISSING:
            self._loaded[key] = text  # now the domain used last
            return
        text = self._reader.read_domain(key)
        self._loaded[key] = text
        value = loads(text)
        if value is not None:
            self._cache[key] = Entry(key, value)

    def __getitem__(self, key: str) -> dict[str, Any]:
        self._load(key)
        return self._cache[key]

    def __setitem__(self, key: str, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise DomainMetadataError(key, None, f"a domain's value must be a dict, not {value!r}")
        for name, item in value.items():
            _check(key, name, item)
        self._load(key)
        self._cache[key] = value  # the very object: later changes to it are written too

    def __delitem__(self, key: str) -> None:
        self._load(key)
        del self._cache[key]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        self._load(key)
        return key in self._cache

    def setdefault(self, key: str, default: dict[str, Any] | None = None) -> dict[str, Any]:
        if key not in self:
            self[key] = Entry(key, default)
        return self[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._cache)

    def __len__(self) -> int:
        return len(self._cache)

    def changed(self) -> tuple[list[tuple[str, str | None, str | None]], list[DomainMetadataError]]:
        """(domain, JSON as loaded, JSON now (None = deleted)) of the changed entries, and the
        errors of values changed in place that cannot be stored (their keys are dropped)."""
        out: list[tuple[str, str | None, str | None]] = []
        errors: list[DomainMetadataError] = []
        for key, before in list(self._loaded.items()):
            value = self._cache.get(key)
            now = None
            while value is not None:
                try:
                    now = dumps(key, value)
                    break
                except DomainMetadataError as exc:
                    errors.append(exc)
                    if exc.key not in value:
                        now = before
                        break
                    del value[exc.key]
            if now != before:
                out.append((key, before, now))
                self._loaded[key] = now
        for key in list(self._loaded)[: max(len(self._loaded) - self._keep, 0)]:
            del self._loaded[key]  # used longest ago; written above if it changed
            self._cache.pop(key, None)
        return out, errors


def merge(base: str | None, mine: str | None, theirs: str | None) -> str | None:
    """This worker's change (``base`` -> ``mine``) applied to what is stored now (``theirs``),
    key by key: keys it did not change keep the stored value; numbers add its difference; sets
    add what it added and drop what it dropped; dicts merge the same way; any other value, and a
    deleted domain, is the last writer's."""
    if mine is None or theirs is None or theirs == base:
        return mine
    merged = _merge_dict(loads(base) or {}, loads(mine) or {}, loads(theirs) or {})
    return json.dumps(encode(merged), sort_keys=True, separators=(",", ":"))


def _merge_dict(base: dict[Any, Any], mine: dict[Any, Any], theirs: dict[Any, Any]) -> Any:
    out = dict(theirs)
    for key in {*base, *mine}:
        was, now = base.get(key, _MISSING), mine.get(key, _MISSING)
        if _same(was, now):
            continue
        if now is _MISSING:
            out.pop(key, None)
        else:
            out[key] = _merge_value(was, now, theirs.get(key, _MISSING))
    return out


def _merge_value(was: Any, now: Any, stored: Any) -> Any:
    if stored is _MISSING or _same(stored, was):
        return now
    if all(_number(v) for v in (now, stored)) and (was is _MISSING or _number(was)):
        return stored + (now - (0 if was is _MISSING else was))
    if isinstance(now, set) and isinstance(stored, set):
        old = was if isinstance(was, set) else set()
        return (stored | (now - old)) - (old - now)
    if isinstance(now, dict) and isinstance(stored, dict):
        return _merge_dict(was if isinstance(was, dict) else {}, now, stored)
    return now


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    return a is b or (a is not _MISSING and b is not _MISSING and type(a) is type(b) and a == b)
