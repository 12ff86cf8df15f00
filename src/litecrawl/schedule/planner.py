"""When a page just processed is due again, under the schedule's policy (docs/freshness.md).

Every policy keeps each page's change statistics (``checks``, ``changes``, ``change_rate`` and the
estimator's record, ``change_history``), so they are there to read and to switch policy on; the
policy decides only the next visit:

- ``multiplicative``: the last interval times ``fresh_factor`` or ``stale_factor``;
- ``uniform``: every page every ``pages / budget`` seconds (``new_interval`` without a budget);
- ``freshness``: the interval the budget's allocation gives the page's estimated change rate.

Under ``uniform`` and ``freshness`` the next visit is one interval after the visit was *due*,
not after it happened, as long as it was late by less than an interval: a page fetched late does
not push its later visits back, so the budget planned is the budget spent.
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from email.utils import parsedate_to_datetime
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from litecrawl.schedule.estimate import ChangeHistory, Estimator, StopShare
from litecrawl.schedule.multiplicative import Schedule

if TYPE_CHECKING:
    from litecrawl.schedule.allocate import Allocation

__all__ = ["NextVisit", "PageChange", "Planner", "Spend", "change_age"]

REFRESH_SEC = 60.0  # how often the allocation is solved again, from the rates' histogram
FULL_SEC = 3600.0  # how often at least the histogram is read again from every crawled page
FULL_SHARE = 0.01  # and at most this share of the time goes into reading it
_BINS_PER_DECADE = 20  # rates within 12% of each other are one group to the allocation


@dataclass(frozen=True, slots=True)
class PageChange:
    """A page's change statistics after a check, as its row stores them."""

    checks: int
    changes: int
    change_rate: float | None  # changes per second; None until a re-fetch has been compared
    change_history: str  # JSON: the estimator's record and the hash the next check compares


def change_age(headers: dict[str, str] | object, now: float, previous: int | None) -> float | None:
    """Seconds since the page last changed by its Last-Modified, when credible: after the
    previous fetch, not in the future, and not the response's own Date (a server that stamps
    every response with the time it is sent says nothing about the content)."""
    get = getattr(headers, "get", None)
    if get is None or previous is None:
        return None
    modified, date = get("last-modified"), get("date")
    if not modified or modified == date:
        return None
    try:
        at = parsedate_to_datetime(modified).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if not previous < at <= now:
        return None
    return now - at


class Planner:
    """The schedule's policy for one crawl; ``refresh`` it with the stored rates now and then."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.estimator = Estimator(prior_rate=1.0 / schedule.new_interval_sec)
        self.stops = StopShare()  # how many changing pages stopped, from this crawl's checks
        self.pages = 0
        self.allocation: Allocation | None = None
        self._refreshed = -math.inf
        self._read_at = -math.inf  # the last full read of every page's rate
        self._read_every = FULL_SEC
        self._solve_every = REFRESH_SEC  # longer when solving takes over FULL_SHARE of it
        # (host, rate bin) -> [pages, sum of their rates]: what the allocation is solved from,
        # kept up to date with this process's own writes between full reads
        self._bins: dict[tuple[str, int], list[float]] = {}
        self.spend = Spend()  # how many times over the budget is planned for it to be spent
        self._started = int(time.time())  # due times set before this are another process's

    @property
    def needs_rates(self) -> bool:
        return self.schedule.policy != "multiplicative"

    def due_refresh(self, now: float) -> bool:
        return self.needs_rates and now - self._refreshed >= self._solve_every

    def due_read(self, now: float) -> bool:
        """Time to read every crawled page's rate again (at most hourly, and never more than
        ``FULL_SHARE`` of the time); in between the histogram follows this process's writes."""
        return now - self._read_at >= self._read_every

    def refresh(
        self,
        rates: Sequence[tuple[str, float | None]],
        now: float | None = None,
        took: float = 0.0,
    ) -> None:
        """Rebuild the histogram from every crawled page's (host, change rate), read in ``took``
        seconds, and solve the allocation; a page without a rate yet counts at the prior's."""
        now = time.time() if now is None else now
        self._read_at, self._read_every = now, max(FULL_SEC, took / FULL_SHARE)
        bins: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
        for host, rate in rates:
            r = self._rate_or_prior(rate)
            entry = bins[(host, _bin(r))]
            entry[0] += 1
            entry[1] += r
        self._bins = dict(bins)
        self.solve(now)

    def moved(self, host: str, before: float | None, after: float | None) -> None:
        """A page of ``host`` written with rate ``after``: it had ``before`` (None: it was not
        crawled yet, so not counted). Keeps the histogram current between full reads."""
        if before is not None:
            entry = self._bins.get((host, _bin(before)))
            if entry is not None and entry[0] >= 1:
                entry[0] -= 1
                entry[1] = max(entry[1] - before, 0.0) if entry[0] else 0.0
        r = self._rate_or_prior(after)
        entry = self._bins.setdefault((host, _bin(r)), [0.0, 0.0])
        entry[0] += 1
        entry[1] += r

    def set_due(self, last_crawl_time: int | None, held: int | None, interval: int) -> None:
        """A page is given ``interval`` seconds to its next visit (:meth:`next_visit`); it held
        ``held``, given at its visit at ``last_crawl_time`` (the row's ``recrawl_interval``):
        what the pages hold is followed (:class:`Spend`). The interval, not the due time: a
        page visited late is due one interval after it was due, sooner than one interval
        after its visit, and still spends one visit an interval."""
        if self.schedule.policy != "freshness":
            return
        mine = last_crawl_time is not None and last_crawl_time >= self._started
        self.spend.set_due(float(interval), float(held) if mine and held is not None else None)

    def solve(self, now: float | None = None) -> None:
        """Solve the allocation again from the histogram: groups, not pages, but (host, bin)
        groups of many hosts are many (83,000 at 10^6 pages on 1,000 hosts: 1.6 s of CPU), so
        it is solved no more often than keeps it under ``FULL_SHARE`` of the time."""
        now = time.time() if now is None else now
        elapsed, self._refreshed = now - self._refreshed, now
        self.pages = int(sum(count for count, _ in self._bins.values()))
        self.stops.memory = max(self.pages, 100)
        self.estimator = replace(self.estimator, stopped_share=self.stops.share)
        if self.schedule.policy != "freshness":
            return
        from litecrawl.schedule.allocate import RateGroup, allocate

        began = time.process_time()
        s = self.schedule
        budget = s.budget or max(self.pages, 1) / s.new_interval_sec
        held = self.allocation
        if held is not None and (held.level.high > 0 or held.host_levels):  # a budget binds
            self.spend.update(budget, self.pages, elapsed, s.new_interval_sec)
        over = self.spend.factor
        host_budget = None if s.host_budget is None else s.host_budget * over
        self.allocation = allocate(
            [
                RateGroup(total / n, int(n), host)
                for (host, _), (n, total) in self._bins.items()
                if n
            ],
            budget * over,
            s.min_interval_sec,
            s.max_interval_sec,
            host_budget,
        )
        self._solve_every = max(REFRESH_SEC, (time.process_time() - began) / FULL_SHARE)

    def _rate_or_prior(self, rate: float | None) -> float:
        return rate if rate is not None and rate > 0 else self.estimator.prior_rate

    def rate(self, change_history: str | None) -> float:
        """A page's change rate as its record stored it (the prior's without one): the rate the
        histogram counts it at, whatever share of stopped pages the estimator has learned since."""
        stored = _decode(change_history)
        if stored is None:
            return self.estimator.rate(ChangeHistory())
        history, _, rate = stored
        return rate if rate is not None else self.estimator.rate(history)

    def observe(
        self,
        change_history: str | None,
        last_crawl_time: int | None,
        now: int,
        change_hash: str,
        revalidated: bool = False,
        age: float | None = None,
    ) -> PageChange:
        """The page's statistics after this fetch: changed when ``change_hash`` differs from
        the one stored (a 304, ``revalidated``, is no change)."""
        stored = _decode(change_history)
        if stored is None or last_crawl_time is None:
            history = ChangeHistory()  # the first look: nothing to compare with yet
        else:
            history, previous, _ = stored
            changed = not revalidated and change_hash != previous
            interval = now - last_crawl_time
            history = self.estimator.observe(history, interval, changed, age if changed else None)
            self.stops.observe(self.estimator, history, interval)
        # the estimate before any check is the prior's, which says nothing of this page: stored
        # as none, so exports and stats show only measured rates (the schedule reads the prior)
        rate = self.estimator.rate(history) if history.checks else None
        return PageChange(
            history.checks, history.changes, rate, _encode(history, change_hash, rate)
        )

    def next_visit(
        self,
        now: int,
        last_crawl_time: int | None,
        next_crawl_time: int | None,
        fresh: bool,
        host: str,
        rate: float | None,
    ) -> NextVisit:
        """When the page is due again, and the interval that was given it."""
        s = self.schedule
        if s.policy == "multiplicative":
            seconds = s.next_interval(last_crawl_time, next_crawl_time, fresh)
            return NextVisit(now + seconds, seconds)
        if last_crawl_time is None:
            interval = float(s.new_interval_sec)  # a first visit: nothing known of the page yet
        elif s.policy == "uniform":
            interval = s.new_interval_sec if s.budget is None else self.pages / s.budget
        else:
            if self.allocation is None:
                self.solve()
            assert self.allocation is not None
            interval = self.allocation.interval(
                rate if rate is not None else self.estimator.prior_rate, host
            )
        seconds = int(min(max(round(interval), s.min_interval_sec), s.max_interval_sec))
        due = next_crawl_time
        if last_crawl_time is not None and due is not None and now - seconds < due <= now:
            return NextVisit(due + seconds, seconds)
        return NextVisit(now + seconds, seconds)


class NextVisit(NamedTuple):
    """A page's next visit: ``due`` (its ``next_crawl_time``) and the ``interval`` it was given,
    in seconds (its ``recrawl_interval``): ``due`` is sooner than the visit plus the interval
    for a page visited late under ``uniform`` and ``freshness``, which is due one interval after
    it was due."""

    due: int
    interval: int


@dataclass(slots=True)
class Spend:
    """How many times over its budget the allocation is planned, for the pages to spend it.

    A page's interval is set at its visit and held until the next, while the allocation moves
    between visits: a page given a long interval is not revisited to take a shorter one, and
    pages near the fastest rate the budget can follow swing most (max_interval at one solve,
    a day or two at the next). So the intervals the pages hold spend less than the allocation
    plans: 131 of 150 fetches a tick in the issue's simulation with dated changes. This keeps
    the sum of the held intervals' frequencies (``held``: this process's, each page counted
    once it set the page's due time, the others at the budget's share) and moves ``factor``
    towards the budget over that sum, by the time since the last move over ``tau``."""

    factor: float = 1.0
    held: float = 0.0  # Σ 1/interval of the due times this process set, less those replaced
    pages: int = 0  # pages whose due time this process set

    MOST = 2.0

    def set_due(self, interval: float, replaced: float | None) -> None:
        """A page given ``interval`` seconds to its next visit; ``replaced``: the interval it
        held, when this process set it (None: a page it had not set due yet)."""
        if interval > 0:
            self.held += 1.0 / interval
        if replaced is None:
            self.pages += 1
        elif replaced > 0:
            self.held -= 1.0 / replaced

    def update(self, budget: float, pages: int, elapsed: float, tau: float) -> None:
        """Move the factor by ``elapsed / tau`` (at most half) of the way, in log, to
        ``budget`` over what ``pages`` pages hold; call it only while the budget binds."""
        if pages <= 0 or self.pages <= 0:
            return
        held = max(self.held, 0.0) + max(pages - self.pages, 0) * budget / pages
        if held <= 0:
            return
        step = min(max(elapsed / tau, 0.0), 0.5)
        self.factor = min(max(self.factor * (budget / held) ** step, 1.0), self.MOST)


def _bin(rate: float) -> int:
    return round(math.log10(rate) * _BINS_PER_DECADE)


# A page's change record, written with every fetched page by the event loop: its fields read by
# one attrgetter and encoded by one encoder, not dataclasses.asdict (which deep-copies every
# value: three quarters of this function's time); the same JSON (tests/test_schedule_planner.py).
# It keeps the rate it was stored with: the estimate depends on the share of stopped pages the
# estimator has learned by then, and the histogram must take a page out at the rate it put it in.
_HISTORY_FIELDS = tuple(f.name for f in fields(ChangeHistory))
_history_values = attrgetter(*_HISTORY_FIELDS)
_RECORD = json.JSONEncoder(separators=(",", ":"))


def _encode(history: ChangeHistory, change_hash: str, rate: float | None = None) -> str:
    record: dict[str, object] = dict(zip(_HISTORY_FIELDS, _history_values(history), strict=True))
    record["hash"] = change_hash
    record["rate"] = rate
    return _RECORD.encode(record)


def _decode(text: str | None) -> tuple[ChangeHistory, str, float | None] | None:
    if not text:
        return None
    try:
        data = json.loads(text)
        change_hash = str(data.pop("hash"))
        rate = data.pop("rate", None)  # records written before it was kept have none
        return ChangeHistory(**data), change_hash, None if rate is None else float(rate)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # a damaged record starts again rather than stop the page
