"""A crawl's configuration from its layers, later wins: each TOML file in order (deep-merged:
tables merge key by key, lists and scalars are replaced), then the environment
(``CRAWLER_CONCURRENCY``, ``CRAWLER_RATE_LIMIT``, ``CRAWLER_DB_PATH``, ``LITECRAWL_DB``,
``LITECRAWL_EXTRACT_WORKERS``), then command-line overrides given as dotted keys. The merged
result is validated once (:class:`~litecrawl.config.CrawlConfig`); every error names its source
(file, environment variable or "command line"), the dotted key and the bad value, and is raised
as :class:`ConfigError`.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from litecrawl.config import CrawlConfig
from litecrawl.errors import ConfigError

__all__ = ["ENV_VARS", "deep_merge", "load_config"]

#: Environment variable -> dotted config key, applied in this order (so LITECRAWL_DB beats
#: CRAWLER_DB_PATH when both are set). Empty values count as unset.
ENV_VARS: dict[str, str] = {
    "CRAWLER_CONCURRENCY": "concurrency.global",
    "CRAWLER_RATE_LIMIT": "rate_limit.requests_per_second",
    "CRAWLER_DB_PATH": "db",
    "LITECRAWL_DB": "db",
    "LITECRAWL_EXTRACT_WORKERS": "extract.workers",
}
_ENV_TYPES: dict[str, type[int] | type[float]] = {
    "CRAWLER_CONCURRENCY": int,
    "LITECRAWL_EXTRACT_WORKERS": int,
    "CRAWLER_RATE_LIMIT": float,
}

# Keys litecrawl once accepted and never read: a file that sets one is told so (exit 2), so
# nobody believes it does something.
_NOT_READ = {
    "output.metadata_backend": (
        "not read: metadata goes to the .meta.json files beside the Markdown (output.dir) and "
        "to the database; litecrawl export writes CSV, JSONL or Parquet. Remove the key"
    ),
}


def deep_merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """A new dict: ``a`` updated by ``b``; tables merge key by key, anything else b replaces.

    Neither input is modified; nested tables of the result are fresh dicts.
    """
    out: dict[str, Any] = {k: _copy_tables(v) for k, v in a.items()}
    for key, value in b.items():
        old = out.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            out[key] = deep_merge(old, value)
        else:
            out[key] = _copy_tables(value)
    return out


def _copy_tables(value: Any) -> Any:
    return deep_merge({}, value) if isinstance(value, Mapping) else value


def _nodes(tree: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Every (dotted path, value) in ``tree``, tables before their contents."""
    found: list[tuple[str, Any]] = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        found.append((path, value))
        if isinstance(value, Mapping):
            found.extend(_nodes(value, path + "."))
    return found


def _track(sources: dict[str, str], layer: Mapping[str, Any], label: str) -> None:
    """Record ``label`` as the source of every path ``layer`` sets (for error messages)."""
    for path, value in _nodes(layer):
        if not isinstance(value, Mapping):
            for old in [p for p in sources if p.startswith(path + ".")]:
                del sources[old]
        sources[path] = label


def _expand_dotted(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``; ``None`` values (flag not given) are skipped."""
    tree: dict[str, Any] = {}
    for dotted, value in flat.items():
        if value is None:
            continue
        if isinstance(value, tuple):
            value = list(value)
        *parents, leaf = dotted.split(".")
        nested: dict[str, Any] = {leaf: value}
        for part in reversed(parents):
            nested = {part: nested}
        tree = deep_merge(tree, nested)
    return tree


def _env_value(name: str, raw: str) -> Any:
    try:  # a bad number stays a string: validation then reports it with the variable's name
        return _ENV_TYPES[name](raw.strip()) if name in _ENV_TYPES else raw
    except ValueError:
        return raw


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"no such config file: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        where = "" if "line" in str(exc) else f" (line {len(path.read_bytes().splitlines())})"
        raise ConfigError(f"{path}: invalid TOML: {exc}{where}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from exc


def _known_keys(model: type[BaseModel] = CrawlConfig, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        keys.append(key)
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            keys.extend(_known_keys(sub, key + "."))
    return keys


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str | Mapping | list) else str(value)


def _source_of(sources: Mapping[str, str], path: str) -> str:
    parts = path.split(".")  # the longest prefix of ``path`` some layer set
    found = (sources.get(".".join(parts[:end])) for end in range(len(parts), 0, -1))
    return next((label for label in found if label is not None), "configuration")


def _describe(exc: ValidationError, sources: Mapping[str, str]) -> list[str]:
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        keys = [str(p) for p in err["loc"] if not isinstance(p, int)]
        path = ".".join(keys)
        shown = path + "".join(f"[{p}]" for p in err["loc"][len(keys) :])
        if err["type"] == "extra_forbidden":
            leaves = [p for p in sources if p.startswith(path + ".")]
            leaves = [p for p in leaves if not any(q.startswith(p + ".") for q in leaves)]
            for leaf in leaves or [path]:
                if leaf in _NOT_READ:
                    lines.append(f"{_source_of(sources, leaf)}: {leaf}: {_NOT_READ[leaf]}")
                    continue
                close = difflib.get_close_matches(leaf, _known_keys(), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                lines.append(f"{_source_of(sources, leaf)}: unknown key '{leaf}'{hint}")
            continue
        if err["type"] == "model_type":
            msg = "expected a table"
        else:
            msg = err["msg"]  # "Input should..." -> "input should...", but keep "DuckDB"
            msg = msg[:1].lower() + msg[1:] if msg.split(" ")[0][1:].islower() else msg
        label = _source_of(sources, path)
        lines.append(f"{label}: {shown}: {msg} (got {_show(err['input'])})")
    return lines


def load_config(
    files: Sequence[Path], env: Mapping[str, str], overrides: Mapping[str, Any]
) -> CrawlConfig:
    """Merge ``files`` (in order), then ``env``, then dotted ``overrides``, and validate.

    ``env`` is the environment to read (the CLI passes ``os.environ``); ``overrides`` maps dotted
    keys such as ``"concurrency.global"`` to values from CLI flags, ``None`` meaning "not given".
    Raises :class:`ConfigError` naming the source, key and value of every problem.
    """
    layers: list[tuple[str, Mapping[str, Any]]] = []
    for file in files:
        layers.append((str(file), _read_toml(Path(file))))
    for name, dotted in ENV_VARS.items():
        raw = env.get(name)
        if raw is not None and raw.strip():
            layers.append(
                (f"environment variable {name}", _expand_dotted({dotted: _env_value(name, raw)}))
            )
    layers.append(("command line", _expand_dotted(overrides)))

    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for label, layer in layers:
        merged = deep_merge(merged, layer)
        _track(sources, layer, label)
    try:
        config = CrawlConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError("\n".join(_describe(exc, sources))) from None
    if not config.same_domain_only and config.discovery.domains:
        # --domain widens the seeds' scope; with no scope at all it would be accepted and do
        # nothing (README, "Scope").
        raise ConfigError(
            f"{_source_of(sources, 'discovery.domains')}: discovery.domains (--domain) "
            f"{config.discovery.domains!r} restricts the crawl to the seeds' domains and these, "
            f"but {_source_of(sources, 'same_domain_only')}: same_domain_only = false "
            "(--any-domain) allows every domain: give one or the other"
        )
    return config
