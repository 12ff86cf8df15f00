"""What a crawl starts from besides its seeds: the frontier's own sites when it is given none,
pages made due again (``--recrawl``), and, when nothing was due, when the next page is."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from litecrawl.errors import ConfigError
from litecrawl.store.frontier import Frontier
from litecrawl.urls import without_passwords

__all__ = ["known_sites", "make_due_again", "next_due"]

log = logging.getLogger("litecrawl")


async def known_sites(frontier: Frontier, db: str) -> list[str]:
    """A crawl given no seeds resumes the frontier, on the sites it holds; with nothing there
    it could only do nothing: bad usage.

    It runs with this run's settings (flags, config files, environment), not those of the
    runs before: the database keeps no settings, only each run's command line, and a run's
    flags mixed with an earlier one's would be settings nobody wrote. So it says so, naming
    the last crawl's command for the user to repeat its flags (docs/crawling.md)."""
    hosts = await frontier.known_hosts()
    if not hosts:
        raise ConfigError(
            f"no seed URLs, and {without_passwords(db)} holds no pages to resume: give URLs, "
            "'seeds' in a config file, or add seeds first (litecrawl seeds add)"
        )
    runs = (await frontier.summary(int(time.time()), hosts=0)).runs
    last = next((r.command for r in runs if " crawl" in f" {r.command}"), None)
    shown = ", ".join(sorted(hosts)[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
    log.info(
        "no seeds: resuming %s with this run's settings (flags, config, environment); those "
        "of earlier runs are not reused%s",
        shown,
        f" (the last crawl was: {last})" if last else "",
    )
    return hosts


async def make_due_again(frontier: Frontier, match: Callable[[str], bool]) -> int:
    """``--recrawl``: every known page ``match`` takes is due now, whatever its schedule."""
    made = await frontier.make_all_due(int(time.time()), match)
    log.info("re-crawl: %d known pages made due now", made)
    return made


async def next_due(frontier: Frontier) -> int | None:
    """When the next page is due (epoch seconds), or None when none is scheduled."""
    return (await frontier.summary(int(time.time()), hosts=0)).next_due
