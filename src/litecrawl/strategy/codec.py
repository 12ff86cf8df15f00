"""``meta`` and domain metadata to and from the JSON stored in the frontier.

Frontera's meta has bytes keys and bytes values, and its strategies keep sets in domain metadata
(Frontera's own stores turn them into lists); JSON has none of these, so they are tagged:
``{"$b": latin-1 text}`` for bytes, ``{"$s": [...]}`` for a set, ``{"$t": [...]}`` for a tuple,
``{"$d": [[key, value], ...]}`` for a dict whose keys are not all text. Anything else that is not
JSON (an object, a function) raises :class:`NotJSON` naming where it is.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NotJSON", "decode", "dumps_meta", "encode", "loads_meta"]

# Derived on every load (state from the column, domain from the URL, encoding from the
# response, link_text from the linking page): never stored.
_NOT_STORED = (
    b"state",
    b"domain",
    b"encoding",
    b"link_text",
    b"checks",
    b"changes",
    b"change_rate",
)
_TAGS = frozenset({"$b", "$s", "$t", "$d"})


class NotJSON(TypeError):
    """A value that cannot be stored; ``path`` is where it sits (keys, then list indexes)."""

    def __init__(self, path: tuple[Any, ...], value: object) -> None:
        self.path = path
        self.value = value
        where = "".join(f"[{p!r}]" for p in path)
        super().__init__(
            f"{type(value).__name__} at {where or 'top level'} is not storable "
            "(JSON types, bytes, set and tuple are)"
        )


def encode(value: Any, path: tuple[Any, ...] = ()) -> Any:
    """``value`` as plain JSON types, tagged where JSON has no type for it."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):  # JSON has no NaN or infinity; PostgreSQL refuses them
            raise NotJSON(path, value)
        return value
    if isinstance(value, bytes):
        return {"$b": value.decode("latin-1")}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not _TAGS.intersection(value):
            return {k: encode(v, (*path, k)) for k, v in value.items()}
        return {"$d": [[encode(k, (*path, k)), encode(v, (*path, k))] for k, v in value.items()]}
    if isinstance(value, list):
        return [encode(v, (*path, i)) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"$t": [encode(v, (*path, i)) for i, v in enumerate(value)]}
    if isinstance(value, set | frozenset):
        items = [encode(v, (*path, v)) for v in value]
        # sorted by their JSON, so equal sets store equal text whatever their hash order
        return {"$s": sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}
    raise NotJSON(path, value)


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`."""
    if isinstance(value, dict):
        if len(value) == 1:
            (tag, inner), *_ = value.items()
            if tag == "$b":
                return inner.encode("latin-1")
            if tag == "$s":
                return {_hashable(decode(v)) for v in inner}
            if tag == "$t":
                return tuple(decode(v) for v in inner)
            if tag == "$d":
                return {_hashable(decode(k)): decode(v) for k, v in inner}
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def dumps_meta(meta: dict[bytes, Any]) -> str | None:
    """The stored form of a request's meta (None when there is nothing to keep)."""
    kept = {k: v for k, v in meta.items() if k not in _NOT_STORED}
    return json.dumps(encode(kept), separators=(",", ":")) if kept else None


def loads_meta(text: str | None) -> dict[bytes, Any]:
    if not text:
        return {}
    value = decode(json.loads(text))
    return value if isinstance(value, dict) else {}
