"""Claims lost with their worker (a kill -9, a crash): which pages go back at once, and which
are parked because they may be what kills their workers.

A kill from outside (``timeout`` around a cron job, an OOM killer, a reboot) loses every page
its worker held; none of them is to blame. So a lost claim counts against a page
(``lost_alone``) only when the page was all its worker held *and* that worker had written
other pages in its run (its heartbeat records how many; it beats just before it tries a
suspect): a process that dies before finishing anything (a crawl killed in its first seconds,
its first page in flight) proves nothing about that page, while a page that kills a worker
which was crawling fine is to blame. A page lost once is claimed alone from then on
(:attr:`ClaimKind.SUSPECTS`), once the run has written ``TRY_SUSPECTS_AFTER`` pages or has
nothing else to do, so that a page which really kills its workers is caught alone, after the
run's other work rather than before it, and a kill from outside, which lands mostly early in a
run killed again and again (a ``timeout`` around a short run, a restart loop), seldom finds a
suspect alone. After ``PARK_AFTER`` consecutive lost claims that count
it is parked, for 10 minutes the first time and four times longer each time after, at most a
day (:func:`park_delay`). Any processing of the page (finalize) clears both counts. See
docs/crawling.md, "Resume after a kill, and parked pages".
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOST_CATEGORY",
    "PARK_AFTER",
    "TRY_SUSPECTS_AFTER",
    "ClaimKind",
    "LostClaim",
    "LostReset",
    "claim_terms",
    "park_delay",
    "reset_lost",
]

PARK_AFTER = 3
# Pages a run writes before it tries its suspects alone (docs/crawling.md, "Resume after a
# kill"): trying them after the first page let kills 3-20 requests into each run
# (tests/test_kill_soak.py) catch the same innocent page alone three times in ~6% of the soaks.
TRY_SUSPECTS_AFTER = 50
# The error a parked page carries until it is processed again (as a stale claim does).
LOST_CATEGORY = "claim_timeout"
_FIRST_PARK_SEC = 600
_MAX_PARK_SEC = 86_400


class ClaimKind(enum.Enum):
    """Which due pages a claim takes: any (``litecrawl()``'s batches), those never lost, or
    the suspects (pages whose last claims were lost with their worker), fewest losses first."""

    ANY = "any"
    CLEAN = "clean"
    SUSPECTS = "suspects"


@dataclass(frozen=True, slots=True)
class LostClaim:
    """A claim whose worker is gone, as read from the pages row."""

    url: str
    worker_id: int
    lost: int
    lost_alone: int
    crawled: bool  # the page has been crawled before (state after recovery: crawled, else new)
    # pages its worker had written in its run, as its last heartbeat said (0: unknown)
    worker_done: int = 0


@dataclass(frozen=True, slots=True)
class LostReset:
    """What recovery writes to a lost claim's row: the counts, and when parked its next visit
    (``next_crawl_time``), its state and error; otherwise due as it was, error unchanged."""

    url: str
    lost: int
    lost_alone: int
    state: int
    next_crawl_time: int | None = None
    error: str | None = None


# A claim's condition for each kind, in SQL both backends read alike (idx_pages_lost).
_CONDITION = {
    ClaimKind.ANY: "",
    ClaimKind.CLEAN: " AND lost = 0",
    ClaimKind.SUSPECTS: " AND lost > 0",
}


def claim_terms(
    kind: ClaimKind, order: str, params: dict[str, Any], leases: bool
) -> tuple[str, str]:
    """The condition a claim of ``kind`` adds and the order it takes: suspects one at a time,
    the fewest lost claims first, taking no host leases (``leases`` must be False)."""
    if kind is not ClaimKind.SUSPECTS:
        return _CONDITION[kind], order
    if leases:
        raise ValueError("a claim of suspects is one page: it takes no host leases")
    params["limit"] = 1
    return _CONDITION[kind], f"lost_alone, lost, {order}"


def park_delay(lost_alone: int) -> int:
    """Seconds a page lost alone ``lost_alone`` times in a row waits (``>= PARK_AFTER``)."""
    return min(_FIRST_PARK_SEC << 2 * max(lost_alone - PARK_AFTER, 0), _MAX_PARK_SEC)


def reset_lost(claims: Sequence[LostClaim], now: int) -> list[LostReset]:
    held = Counter(c.worker_id for c in claims)
    resets: list[LostReset] = []
    for c in claims:
        to_blame = held[c.worker_id] == 1 and c.worker_done > 0
        alone = c.lost_alone + 1 if to_blame else c.lost_alone
        if alone >= PARK_AFTER:
            nxt = now + park_delay(alone)
            resets.append(LostReset(c.url, c.lost + 1, alone, 3, nxt, LOST_CATEGORY))
        else:
            resets.append(LostReset(c.url, c.lost + 1, alone, 2 if c.crawled else 0))
    return resets
