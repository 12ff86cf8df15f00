"""User code named ``module.path:attribute`` in the config (strategies, site filters)."""

from __future__ import annotations

import importlib
import re

from litecrawl.errors import ConfigError

__all__ = ["SPEC", "load_object"]

SPEC = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def load_object(spec: str, label: str) -> object:
    """The object behind ``spec``; ConfigError (exit 2) starting with ``label`` when there is
    none (``label`` names the setting, e.g. "strategy 'x:Y'")."""
    if not SPEC.fullmatch(spec):
        raise ConfigError(f"{label}: use 'module.path:name'")
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{label}: cannot import {module_name}: {exc}") from exc
    target: object = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"{label}: {module_name} has no {attr}")
    return target
