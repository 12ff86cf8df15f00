"""``meta`` and domain metadata to and from the JSON stored in the frontier.

Frontera's meta has bytes keys and bytes values; JSON has neither, so bytes are tagged.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps_meta", "loads_meta"]

# Derived on every load (state from the column, domain from the URL, encoding from the
# response): never stored.
_NOT_STORED = (b"state", b"domain", b"encoding")


def _enc(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$b": value.decode("latin-1")}
    if isinstance(value, dict):
        return {"$d": [[_enc(k), _enc(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [_enc(v) for v in value]
    return value


def _dec(value: Any) -> Any:
    if isinstance(value, dict):
        if "$b" in value:
            return value["$b"].encode("latin-1")
        if "$d" in value:
            return {_hashable(_dec(k)): _dec(v) for k, v in value["$d"]}
        return {k: _dec(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_dec(v) for v in value]
    return value


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def dumps_meta(meta: dict[bytes, Any]) -> str | None:
    """The stored form of a request's meta (None when there is nothing to keep)."""
    kept = {k: v for k, v in meta.items() if k not in _NOT_STORED}
    return json.dumps(_enc(kept), separators=(",", ":")) if kept else None


def loads_meta(text: str | None) -> dict[bytes, Any]:
    if not text:
        return {}
    value = _dec(json.loads(text))
    return value if isinstance(value, dict) else {}
