"""The parts of Frontera's frontier manager that strategies reach through ``self._manager``.

Frontera's ``Discovery`` strategy reads ``manager.backend.domain_metadata``,
``manager.backend.states`` and ``manager.settings``; others build requests with
``manager.request_model``. The runner is the manager; these are its attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from litecrawl.strategy.base import Request
from litecrawl.strategy.metadata import StoredDomainMetadata

__all__ = ["Backend", "States", "frontera_settings"]

# Frontera's defaults for the settings its bundled strategies read.
_DEFAULTS: dict[str, Any] = {"DISCOVERY_MAX_PAGES": 100, "USER_AGENT": "litecrawl"}


def frontera_settings(args: Mapping[str, Any], user_agent: str | None) -> dict[str, Any]:
    """``manager.settings``: Frontera's defaults, the crawl's user agent, then the strategy's
    upper-case arguments (``DISCOVERY_MAX_PAGES = 20`` under ``[strategy.args]``)."""
    settings = dict(_DEFAULTS)
    if user_agent:
        settings["USER_AGENT"] = user_agent
    settings.update({k: v for k, v in args.items() if k.isupper()})
    return settings


class _Refresher(Protocol):
    def refresh_and_keep(self, requests: Request | Iterable[Request]) -> None: ...


class States:
    """Frontera's ``backend.states``: ``set_states`` loads the stored states into requests'
    meta; what a hook changes is written after it returns, so ``update_cache``, ``fetch`` and
    ``flush`` have nothing to do."""

    def __init__(self, refresher: _Refresher) -> None:
        self._refresher = refresher

    def set_states(self, objs: Request | Iterable[Request]) -> None:
        self._refresher.refresh_and_keep(objs)

    def update_cache(self, objs: Request | Iterable[Request]) -> None:
        return None

    def fetch(self, fingerprints: Iterable[bytes]) -> None:
        return None

    def flush(self, force_clear: bool = False) -> None:
        return None


class Backend:
    """Frontera's ``manager.backend``, as far as strategies use it."""

    def __init__(self, domain_metadata: StoredDomainMetadata, states: States) -> None:
        self.domain_metadata = domain_metadata
        self.states = states
