"""Page states: the one definition of what the pages table's ``state`` column holds.

Frontera's link states (a strategy written for Frontera reads them as ``States``, see
:mod:`litecrawl.strategy.base`); ``litecrawl stats``, the export and the dashboard name them by
:data:`STATE_NAMES`. SQL keeps the numbers: statements take them from here.
"""

from __future__ import annotations

import enum

__all__ = ["RELEASED_STATE", "STATES", "STATE_NAMES", "PageState"]


class PageState(enum.IntEnum):
    """A page's state in the frontier (Frontera's ``States``)."""

    NOT_CRAWLED = 0
    QUEUED = 1
    CRAWLED = 2
    ERROR = 3
    DEFAULT = 0  # Frontera's name for a link's state before any hook set it

    @classmethod
    def after_fetch(cls, error: str | None) -> PageState:
        """The state a processed page is written with."""
        return cls.ERROR if error else cls.CRAWLED


#: state number -> the name ``stats``, the export and the dashboard show
STATE_NAMES: dict[int, str] = {state.value: state.name.lower() for state in PageState}
#: name -> state number (the export's ``--state``, the dashboard's filter)
STATES: dict[str, int] = {name: value for value, name in STATE_NAMES.items()}

#: the state a claim given back unprocessed returns to, as SQL (never crawled, or crawled)
RELEASED_STATE = (
    f"CASE WHEN last_crawl_time IS NULL THEN {PageState.NOT_CRAWLED:d} "
    f"ELSE {PageState.CRAWLED:d} END"
)
