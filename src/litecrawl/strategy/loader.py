"""Find a strategy class by short name (``bfs``, ``dfs`` ...) or ``module.path:ClassName``."""

from __future__ import annotations

import importlib
import re

from litecrawl.errors import ConfigError
from litecrawl.strategy.base import BaseCrawlingStrategy

__all__ = ["BUILTIN", "DEFAULT", "load_strategy"]

DEFAULT = "bfs"
BUILTIN = {
    "bfs": "litecrawl.strategy.builtin:BreadthFirst",
    "dfs": "litecrawl.strategy.builtin:DepthFirst",
    "focused": "litecrawl.strategy.builtin:Focused",
}
_SPEC = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def load_strategy(name: str) -> type[BaseCrawlingStrategy]:
    """The class behind ``name``; ConfigError (exit 2) naming it when there is none."""
    spec = BUILTIN.get(name, name)
    if not _SPEC.fullmatch(spec):
        known = ", ".join(sorted(BUILTIN))
        raise ConfigError(f"unknown strategy {name!r}: use one of {known} or 'module:Class'")
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"strategy {name!r}: cannot import {module_name}: {exc}") from exc
    target: object = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"strategy {name!r}: {module_name} has no {attr}")
    if not (isinstance(target, type) and issubclass(target, BaseCrawlingStrategy)):
        raise ConfigError(f"strategy {name!r}: {attr} is not a BaseCrawlingStrategy subclass")
    return target
