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

import math
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, NamedTuple

from litecrawl.schedule.multiplicative import Schedule
from litecrawl.schedule.record import Record, decode, encode, quiet_time

if TYPE_CHECKING:
    from litecrawl.schedule.allocate import Allocation, Array
    from litecrawl.schedule.changepoint import Learning, RecordsRead

__all__ = ["NextVisit", "PageChange", "Planner", "Spend", "change_age"]

REFRESH_SEC = 60.0  # how often the allocation is solved again, from the rates' histogram
FULL_SEC = 3600.0  # how often at least the histogram is read again from every crawled page
FULL_SHARE = 0.01  # and at most this share of the time goes into reading it
_BINS_PER_DECADE = 20  # rates within 12% of each other are one group to the allocation
QUIET_FOR = 2  # max_intervals of checks without a change: the page is visited every max_interval


@dataclass(frozen=True, slots=True)
class PageChange:
    """A page's change statistics after a check, as its row stores them."""

    checks: int
    changes: int
    change_rate: float | None  # changes per second; None until a re-fetch has been compared
    change_history: str  # JSON: the page's runs and the hash the next check compares


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
        self.prior_rate = 1.0 / schedule.new_interval_sec  # a page not checked yet counts at it
        self.pages = 0
        self.allocation: Allocation | None = None
        self._learned: Learning | None = None  # made at the first check (it needs numpy)
        # the last record observed, its weights and its quiet time (next_visit decides on them)
        self._weighed: tuple[str, Array, float] | None = None
        self._refreshed = -math.inf
        self._read_at = -math.inf  # the last full read of every page's rate
        self._read_every = min(FULL_SEC, schedule.new_interval_sec)
        self._stepped = -math.inf  # the prior's last EM step
        self._solve_every = REFRESH_SEC  # longer when solving takes over FULL_SHARE of it
        # (host, rate bin) -> [pages, sum of their rates]: what the allocation is solved from,
        # kept up to date with this process's own writes between full reads
        self._bins: dict[tuple[str, int], list[float]] = {}
        self.spend = Spend()  # how many times over the budget is planned for it to be spent
        self._started = int(time.time())  # due times set before this are another process's

    @property
    def learned(self) -> Learning:
        """The grid of rates, the prior and the hazard, learned from this crawl's checks."""
        if self._learned is None:
            from litecrawl.schedule.changepoint import Learning

            s = self.schedule
            self._learned = Learning(float(s.min_interval_sec), float(s.max_interval_sec))
        return self._learned

    @property
    def needs_rates(self) -> bool:
        return self.schedule.policy != "multiplicative"

    def due_refresh(self, now: float) -> bool:
        return self.needs_rates and now - self._refreshed >= self._solve_every

    def due_read(self, now: float) -> bool:
        """Time to read every crawled page's rate again (at most hourly, or every new_interval
        when shorter, and never more than ``FULL_SHARE`` of the time); in between the
        histogram follows this process's writes."""
        return now - self._read_at >= self._read_every

    def wants_records(self, now: float) -> bool:
        """Whether the next full read should read every page's record too: the prior's EM step
        is due (at a process's first read, then every new_interval)."""
        return self.needs_rates and now - self._stepped >= self.schedule.new_interval_sec

    def refresh(
        self,
        rates: Sequence[tuple[str, float | None]],
        now: float | None = None,
        took: float = 0.0,
        records: Sequence[tuple[str | None, int | None]] | RecordsRead | None = None,
    ) -> None:
        """Rebuild the histogram from every crawled page's (host, change rate), read in ``took``
        seconds, and solve the allocation; a page without a rate yet counts at the prior's.
        ``records``: every crawled page's (record, last visit), or those read a batch at a time
        (:meth:`records_read`), for the prior's EM step and, at a process's first read, the
        hazard's last checks."""
        now = time.time() if now is None else now
        self._read_at = now
        self._read_every = max(min(FULL_SEC, self.schedule.new_interval_sec), took / FULL_SHARE)
        bins: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0, 0.0])
        for host, rate in rates:
            r = self._rate_or_prior(rate)
            entry = bins[(host, _bin(r))]
            entry[0] += 1
            entry[1] += r
        self._bins = dict(bins)
        if records is not None:
            self._stepped = now
            self.learned.read(records)
        self.solve(now)

    def records_read(self) -> RecordsRead:
        """What the pages' records are read into, a batch at a time, for :meth:`refresh`."""
        from litecrawl.schedule.changepoint import RecordsRead

        return RecordsRead()

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

    def set_due(
        self,
        last_crawl_time: int | None,
        held: int | None,
        interval: int,
        change_history: str | None = None,
    ) -> None:
        """A page is given ``interval`` seconds to its next visit (:meth:`next_visit`); it held
        ``held``, given at its visit at ``last_crawl_time`` (the row's ``recrawl_interval``),
        with its record then ``change_history``: what the pages hold is followed
        (:class:`Spend`). The interval, not the due time: a page visited late is due one
        interval after it was due, sooner than one interval after its visit, and still spends
        one visit an interval. A first visit's interval (``new_interval``, whatever the plan)
        is not counted: the page counts at its share of the budget until the plan gives it one
        (counted, a new crawl's first visits read as many times the budget, and the scale of
        the decision on the posteriors ran to its bound)."""
        if self.schedule.policy != "freshness" or last_crawl_time is None:
            return
        before = decode(change_history)
        planned = before is not None and before.checks > 0  # the interval held was the plan's
        mine = planned and last_crawl_time >= self._started
        self.spend.set_due(float(interval), float(held) if mine and held is not None else None)

    def solve(self, now: float | None = None) -> None:
        """Solve the allocation again from the histogram: groups, not pages, but (host, bin)
        groups of many hosts are many (83,000 at 10^6 pages on 1,000 hosts: 1.6 s of CPU), so
        it is solved no more often than keeps it under ``FULL_SHARE`` of the time."""
        now = time.time() if now is None else now
        elapsed, self._refreshed = now - self._refreshed, now
        self.pages = int(sum(count for count, _ in self._bins.values()))
        if self._learned is not None:
            self._learned.hazard.learn()
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
        # a damaged record's rate (infinite) counts at the prior's too: no bin holds it
        return rate if rate is not None and 0 < rate < math.inf else self.prior_rate

    def rate(self, change_history: str | None) -> float:
        """A page's change rate as its record stored it (the prior's without one): the rate the
        histogram counts it at, whatever the prior learned since."""
        stored = decode(change_history)
        return self._rate_or_prior(None if stored is None else stored.rate)

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
        stored = decode(change_history)
        if stored is None or last_crawl_time is None:
            record = Record()  # the first look: nothing to compare with yet
        else:
            from litecrawl.schedule.changepoint import observe
            from litecrawl.schedule.record import Check

            changed = not revalidated and change_hash != stored.hash
            interval = float(max(now - last_crawl_time, 0))
            learned = self.learned
            hazard = learned.hazard.chance(interval)
            check = Check(interval, changed, age if changed else None)
            runs, weights, factor = observe(
                learned.grid, stored.runs, check, learned.log_prior, hazard
            )
            learned.hazard.seen(factor)
            record = Record(stored.checks + 1, stored.changes + changed, runs, factor, interval)
        # the estimate before any check is the prior's, which says nothing of this page: stored
        # as none, so exports and stats show only measured rates (the schedule reads the prior)
        rate = self.learned.grid.mean(weights) if record.checks else None
        record = Record(record.checks, record.changes, record.runs, record.factor,
                        record.interval, change_hash, rate)  # fmt: skip
        text = encode(record)
        if record.checks:  # next_visit decides on these weights: not computed again
            self._weighed = (text, weights, quiet_time(record.runs))
        return PageChange(record.checks, record.changes, rate, text)

    def _estimate(self, change_history: str | None) -> tuple[Array, float] | None:
        """The page's posterior over the grid of rates and the seconds of checks its record
        holds without a change (None: not checked yet)."""
        if self._weighed is not None and self._weighed[0] == change_history:
            return self._weighed[1], self._weighed[2]  # the record observe() just wrote
        stored = decode(change_history)
        if stored is None or not stored.checks:
            return None
        return self.learned.weights(stored.runs), quiet_time(stored.runs)

    def next_visit(
        self,
        now: int,
        last_crawl_time: int | None,
        next_crawl_time: int | None,
        fresh: bool,
        host: str,
        rate: float | None,
        change_history: str | None = None,
    ) -> NextVisit:
        """When the page is due again, and the interval that was given it; under ``freshness``
        decided on the page's whole posterior, from its record ``change_history``."""
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
            estimate = self._estimate(change_history)
            if estimate is None:
                interval = self.allocation.interval(self._rate_or_prior(rate), host)
            elif estimate[1] >= QUIET_FOR * s.max_interval_sec:
                # a promise, not the posterior's decision: a page that never changes is visited
                # once a max_interval, after a rate shift too (docs/freshness.md, the allocation)
                interval = s.max_interval_sec
            else:
                interval = self.allocation.posterior_interval(
                    self.learned.grid.rates, estimate[0], host, self.spend.scale
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
    scale: float = 1.0  # on the multiplier of the decision on a page's posterior, both ways
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
        # the posterior decision (Allocation.posterior_interval) is not the point allocation
        # the budget was solved for: its multiplier is scaled, up or down, until the intervals
        # the pages hold spend the budget
        self.scale = min(max(self.scale * (held / budget) ** step, 1e-3), 1e3)


def _bin(rate: float) -> int:
    return round(math.log10(rate) * _BINS_PER_DECADE)
