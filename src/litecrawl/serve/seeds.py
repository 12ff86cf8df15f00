"""The dashboard's one write: seed URLs into the frontier (as ``litecrawl seeds add``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litecrawl.store.backends import open_frontier
from litecrawl.store.queue import NewLink
from litecrawl.urls import UrlRules, host_of

__all__ = ["SeedAdder"]

MAX_SEEDS = 10_000  # per request


@dataclass(frozen=True, slots=True)
class SeedAdder:
    db: str
    rules: UrlRules  # the crawl config's include/exclude patterns

    async def add(self, lines: list[str], due_now: bool, now: int) -> dict[str, Any]:
        """Add the valid URLs of ``lines`` (blank lines and '#' comments skipped) as seeds;
        with ``due_now`` known ones become due at once. Says what was added and skipped."""
        candidates = [s.strip() for s in lines]
        candidates = [s for s in candidates if s and not s.startswith("#")][:MAX_SEEDS]
        checked = [(s, self.rules(s)) for s in candidates]
        valid = list(dict.fromkeys(u for _, u in checked if u is not None))
        skipped = [s for s, u in checked if u is None]
        added = due = 0
        if valid:
            async with open_frontier(self.db) as frontier:
                added = await frontier.add(NewLink(u, host_of(u), 0, "seed", 1.0) for u in valid)
                due = await frontier.make_due(valid, now) if due_now else 0
        return {
            "added": added,
            "known": len(valid) - added,
            "made_due": due,
            "urls": valid,
            "skipped": skipped,
        }
