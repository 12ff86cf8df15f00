"""The re-crawl planner on hostile histories, under every policy (schedule/; docs/freshness.md).

Session 13's planner crashed twice on inputs nobody had tried (a re-crawl within its second: a
change over no time, a mean interval of 0). These drive the planner the way writeback.py does,
step by step, with what a real crawl can hand it: intervals of 0, many checks in one second,
a clock stepped back, gaps of years, a page changing at every check or never, records written by
earlier litecrawls or damaged; and check what must hold whatever came: no exception, the next
visit after now and at most max_interval on, the interval given within the bounds, and nothing
stored that does not read back (a NaN in a record reads back as a damaged record: the page's
history lost).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.schedule import Schedule
from litecrawl.schedule.allocate import RateGroup, allocate
from litecrawl.schedule.changepoint import Hazard, RateGrid, observe
from litecrawl.schedule.planner import NextVisit, PageChange, Planner
from litecrawl.schedule.record import Check, Record, Run, decode, encode, quiet_time

YEAR = 365 * 86400
START = 1_800_000_000

# a step's time: mostly none or a little (re-crawls within a second), back (a clock stepped
# back), ordinary intervals and gaps of years
_DT = st.one_of(
    st.just(0),
    st.integers(-3, 3),
    st.integers(-10 * YEAR, -1),
    st.integers(1, 10**6),
    st.integers(YEAR, 30 * YEAR),
)

# records a page may come with: earlier litecrawls' (session 12's estimator fields, the first
# schedule's without a rate), and damaged ones
_OLD_RECORDS = [
    '{"checks":7,"changes":3,"dated":1.5,"undated":0.0,"undated_time":0.0,"exposure":9e5,'
    '"quiet":0.0,"last_rate":0.0,"last_weight":0.0,"hash":"v0","rate":2e-5}',
    '{"checks":2,"changes":0,"dated":0.0,"exposure":0.0,"hash":"v0"}',
    '{"checks":0,"changes":0,"hash":"v0","rate":null}',
    '{"checks":4,"changes":4,"hash":"v0","rate":0.0}',
    '{"checks":4,"changes":4,"hash":"v0","rate":-1.0}',
    '{"checks":4,"changes":1,"hash":"v0","rate":NaN}',
    '{"checks":4,"changes":1,"hash":"v0","rate":Infinity}',
    '{"checks":4,"changes":1,"hash":"v0","rate":1e-320}',
    '{"checks":3,"changes":1,"runs":[[0,0,0,0,0]],"factor":NaN,"interval":0,"hash":"v0",'
    '"rate":1e-6}',
    '{"checks":3,"changes":1,"runs":[],"factor":Infinity,"interval":-5,"hash":"v0","rate":1e-6}',
    '{"checks":3,"changes":1,"runs":[[-700,1e6,1e13,1e6,1e13]],"factor":1e6,'
    '"interval":1e13,"hash":"v0","rate":1e-6}',
    '{"checks":1e400,"changes":0,"hash":"v0"}',
    '{"checks":"x","changes":0,"hash":"v0"}',
    '{"checks":1,"changes":0,"runs":[[1,2]],"hash":"v0"}',
    '{"checks":1,"changes":0,"runs":7,"hash":"v0"}',
    "[1, 2]",
    '"text"',
    "{",
    "",
]


@st.composite
def schedules(draw: st.DrawFn) -> Schedule:
    policy = draw(st.sampled_from(["multiplicative", "uniform", "freshness"]))
    low = draw(st.sampled_from([1, 60, 3600, 86400, 10 * YEAR]))
    high = low * draw(st.sampled_from([1, 2, 30, 10_000]))
    budget = host_budget = None
    if policy != "multiplicative":
        budget = draw(st.none() | st.sampled_from([1e-9, 1e-5, 0.01, 1.0, 1e6]))
    if policy == "freshness":
        host_budget = draw(st.none() | st.sampled_from([1e-9, 1e-4, 1.0]))
    return Schedule(
        new_interval_sec=draw(st.sampled_from([1, 3600, 86400, 30 * YEAR])),
        min_interval_sec=low,
        max_interval_sec=high,
        fresh_factor=draw(st.sampled_from([1e-9, 0.2, 1.0])),
        stale_factor=draw(st.sampled_from([1.0, 2.0, 1e9])),
        policy=policy,
        budget=budget,
        host_budget=host_budget,
    )


@dataclass
class Step:
    page: int
    dt: int
    changed: bool
    revalidated: bool
    age: float | None  # a share of the interval, when the change is dated
    stale: bool  # finished without content (an error): no check
    refresh: bool  # a full read of every page now


_STEPS = st.builds(
    Step,
    st.integers(0, 3),
    _DT,
    st.booleans(),
    st.booleans(),
    st.none() | st.floats(0.0, 1.0),
    st.booleans(),
    st.booleans(),
)


@dataclass
class Page:
    host: str
    history: str | None = None
    last: int | None = None
    due: int | None = None
    interval: int | None = None
    version: int = 0


def _finite_json(text: str) -> object:
    def refuse(constant: str) -> float:
        raise AssertionError(f"{constant} in a stored record: {text}")

    return json.loads(text, parse_constant=refuse)


def _assert_planner_sound(planner: Planner) -> None:
    spend = planner.spend
    assert all(math.isfinite(v) for v in (spend.factor, spend.scale, spend.held)), spend
    for key, (count, total) in planner._bins.items():
        assert count >= 0 and math.isfinite(total) and total >= 0, (key, count, total)
    allocation = planner.allocation
    if allocation is not None:
        for level in (allocation.level, *allocation.host_levels.values()):
            assert not any(map(math.isnan, (level.low, level.high, level.share))), level


def _assert_change_sound(change: PageChange) -> None:
    assert 0 <= change.changes <= change.checks
    assert change.change_rate is None or (
        math.isfinite(change.change_rate) and change.change_rate > 0
    )
    data = _finite_json(change.change_history)
    assert isinstance(data, dict)
    record = decode(change.change_history)
    assert record is not None, change.change_history  # it reads back: the page keeps its history
    assert (record.checks, record.changes) == (change.checks, change.changes)


def _assert_visit_sound(schedule: Schedule, visit: NextVisit, now: int) -> None:
    assert isinstance(visit.due, int) and isinstance(visit.interval, int)
    assert schedule.min_interval_sec <= visit.interval <= schedule.max_interval_sec
    assert now < visit.due <= now + schedule.max_interval_sec


def _crawl(schedule: Schedule, pages: list[Page], steps: list[Step]) -> None:
    """The steps as writeback.py takes them: refresh the plan when due, check the page (unless
    it finished without content), decide its next visit, keep the histogram and the spend."""
    planner = Planner(schedule)
    now = START
    for step in steps:
        now = max(now + step.dt, 0)
        page = pages[step.page % len(pages)]
        crawled = [p for p in pages if p.last is not None]
        if step.refresh or planner.due_refresh(now):
            if step.refresh or planner.due_read(now):
                rates = [(p.host, planner.rate(p.history)) for p in crawled]
                wants = step.refresh or planner.wants_records(now)
                records = [(p.history, p.last) for p in crawled] if wants else None
                planner.refresh(rates, now, 0.0, records)
            else:
                planner.solve(now)
            _assert_planner_sound(planner)
        change = None
        if not step.stale:
            page.version += step.changed
            interval = None if page.last is None else max(now - page.last, 0)
            age = None
            if step.changed and step.age is not None and interval:
                age = step.age * interval  # change_age's: within the interval
            change = planner.observe(
                page.history, page.last, now, f"v{page.version}", step.revalidated, age
            )
            _assert_change_sound(change)
        rate = change.change_rate if change else planner.rate(page.history)
        record = change.change_history if change else page.history
        fresh = change is not None and step.changed
        visit = planner.next_visit(now, page.last, page.due, fresh, page.host, rate, record)
        _assert_visit_sound(schedule, visit, now)
        # the visit a page with new links would get (writeback's decide_in_write)
        linked = planner.next_visit(now, page.last, page.due, True, page.host, rate, record)
        _assert_visit_sound(schedule, linked, now)
        if planner.needs_rates:
            before = planner.rate(page.history) if page.last is not None else None
            planner.moved(page.host, before, rate)
        planner.set_due(page.last, page.interval, visit.interval, page.history)
        _assert_planner_sound(planner)
        page.history, page.last = record, now
        page.due, page.interval = visit.due, visit.interval


@settings(max_examples=100)
@given(
    schedules(),
    st.lists(st.sampled_from(_OLD_RECORDS) | st.none(), min_size=4, max_size=4),
    st.lists(_STEPS, min_size=1, max_size=40),
)
def test_the_planner_survives_any_history_under_every_policy(
    schedule: Schedule, records: list[str | None], steps: list[Step]
) -> None:
    pages = [
        Page(f"h{i % 2}", record, None if record is None else START - 86400)
        for i, record in enumerate(records)
    ]
    _crawl(schedule, pages, steps)


def test_thousands_of_checks_in_one_second_and_of_a_page_that_never_changes() -> None:
    # max_interval 10 s: 2,000 quiet checks a second apart are 200 max_intervals without a
    # change, where the chance of every changing rate underflows. Every policy keeps the
    # records; only freshness decides on them, so it takes the long histories
    for policy, many in (("multiplicative", 100), ("uniform", 100), ("freshness", 1000)):
        schedule = Schedule(new_interval_sec=10, min_interval_sec=1, max_interval_sec=10,
                            policy=policy)  # fmt: skip
        same_second = [Step(0, 0, False, False, None, False, False)] * many
        quiet = [Step(1, 1, False, False, None, False, False)] * (2 * many)
        busy = [Step(2, i % 2, True, False, None, False, False) for i in range(many // 4)]
        pages = [Page("h"), Page("h"), Page("g")]
        _crawl(schedule, pages, [*same_second, *quiet, *busy, Step(1, 30 * YEAR, *[False] * 5)])
        still = decode(pages[1].history)
        assert still is not None and (still.checks, still.changes) == (2 * many, 0)


_CHECKS = st.builds(
    lambda interval, changed, share: Check(
        interval, changed, None if share is None or not changed else share * interval
    ),  # a dated change's age is within its interval (planner.change_age)
    st.sampled_from([0.0, 1e-9, 1.0, 3600.0, 1e9, 1e10]),
    st.booleans(),
    st.none() | st.sampled_from([0.0, 1e-9, 0.5, 1.0]),
)


@given(
    st.sampled_from([(1.0, 1.0), (1.0, 1e9), (3600.0, 2592000.0)]),
    st.lists(_CHECKS, min_size=1, max_size=40),
    st.sampled_from([0.0, 1e-12, 0.5, 1.0 - 1e-12, 1.0]),
)
def test_the_change_points_stay_finite_whatever_the_checks(
    bounds: tuple[float, float], checks: list[Check], hazard: float
) -> None:
    grid = RateGrid(*bounds)
    log_prior = np.log(grid.vague)
    runs: tuple[Run, ...] = ()
    for check in checks:
        runs, weights, factor = observe(grid, runs, check, log_prior, hazard)
        assert 1 <= len(runs) <= 4
        # log-likelihoods of -1e9 (a rate of 1/s over 30 years) keep about 1e-7 of a weight
        assert np.all(np.isfinite(weights)) and abs(float(weights.sum()) - 1) < 1e-6
        assert factor is None or (math.isfinite(factor) and factor >= 0)
        assert decode(encode(Record(1, 0, runs, factor, 0.0, "h", grid.mean(weights)))) is not None
        again = grid.weights(runs, log_prior)  # what a restarted crawl reads from the record
        assert np.all(np.isfinite(again)) and abs(float(again.sum()) - 1) < 1e-6


@given(st.lists(st.sampled_from([0.0, 0.0, 1e-9, 1.0, 1e9, 1e15]), min_size=1, max_size=50))
def test_the_hazard_is_a_chance_whatever_the_intervals(intervals: list[float]) -> None:
    hazard = Hazard(2592000.0)
    for interval in intervals:
        h = hazard.chance(interval)
        assert 0 <= h < 1 or (h == 1 and interval > 0)
        hazard.seen(1e6)
    hazard.learn()
    assert 0 < hazard.pi <= 0.5


# what the planner gives it: posterior means, down to 1e-300 (a page taken for static) and up to
# 1/min_interval (above it: stored under a smaller min_interval), and damaged records' below
_RATES = st.sampled_from([0.0, 1e-320, 1e-300, 1e-12, 1e-6, 1e-3, 1.0, 10.0])


@given(
    st.lists(
        st.builds(RateGroup, _RATES, st.integers(0, 10**6), st.sampled_from("ab")), max_size=6
    ),
    st.none() | st.sampled_from([1e-12, 1e-6, 1.0, 1e9]),
    st.none() | st.sampled_from([1e-12, 1e-6, 1.0]),
    st.sampled_from([(1.0, 1.0), (1.0, 1e9), (3600.0, 2592000.0)]),
    st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_an_allocation_gives_every_page_an_interval_within_the_bounds(
    groups: list[RateGroup],
    budget: float | None,
    host_budget: float | None,
    bounds: tuple[float, float],
    scale: float,
) -> None:
    low, high = bounds
    allocation = allocate(groups, budget, low, high, host_budget)
    grid = RateGrid(low, high)
    for rate in (0.0, 1e-300, 1e-6, 1.0, 1e300):
        for host in "abc":
            interval = allocation.interval(rate, host)
            assert low * (1 - 1e-9) <= interval <= high * (1 + 1e-9), (rate, host, interval)
    for weights in (grid.vague, np.eye(len(grid.rates))[0], np.eye(len(grid.rates))[-1]):
        interval = allocation.posterior_interval(grid.rates, weights, "a", scale)
        assert low * (1 - 1e-9) <= interval <= high * (1 + 1e-9), interval


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_CHECKS, min_size=1, max_size=30),
    st.sampled_from([0.0, 1e-12, 0.3, 1.0 - 1e-12, 1.0]),
    st.integers(0, 2**31),
)
def test_the_quiet_a_record_holds_is_at_most_the_quiet_since_its_last_change(
    checks: list[Check], hazard: float, seed: int
) -> None:
    # what the promise to pages that never change reads (planner.QUIET_FOR): never more quiet
    # than the checks since the last change seen, whatever the prior and the hazard dropped
    grid = RateGrid(3600.0, 2592000.0)
    log_prior = np.log(np.random.default_rng(seed).dirichlet(np.full(len(grid.rates), 0.5)))
    runs: tuple[Run, ...] = ()
    since = 0.0
    for check in checks:
        runs, _, _ = observe(grid, runs, check, log_prior, hazard)
        explained = np.isfinite(grid.check_log_likelihood(check)).any()
        since = 0.0 if check.changed and explained else since + (not check.changed) * check.interval
        assert quiet_time(runs) <= since * (1 + 1e-12)
    if hazard == 0 and not any(c.changed for c in checks):
        assert quiet_time(runs) == pytest.approx(sum(c.interval for c in checks))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**31),
    st.floats(1e-6, 0.5),
    st.lists(st.floats(0.05, 1.5), min_size=8, max_size=40),  # in max_intervals
    st.sampled_from([None, 1e-5, 1e-3]),
    st.sampled_from([(3600, 2592000), (60, 86400)]),
)
def test_a_page_quiet_for_two_max_intervals_gets_max_interval_whatever_was_learned(
    seed: int, pi: float, gaps: list[float], budget: float | None, bounds: tuple[int, int]
) -> None:
    # the posterior alone may keep visiting such a page (a slow page looks the same, and a
    # high hazard adds young runs): the promise holds under any prior and hazard learned
    low, high = bounds
    schedule = Schedule(new_interval_sec=low * 24, min_interval_sec=low, max_interval_sec=high,
                        policy="freshness", budget=budget)  # fmt: skip
    planner = Planner(schedule)
    rng = np.random.default_rng(seed)
    grid = planner.learned.grid
    planner.learned.prior.log_prior = np.log(rng.dirichlet(np.full(len(grid.rates), 0.5)))
    planner.learned.hazard.pi = pi
    others = [("h", float(r)) for r in 10 ** rng.uniform(-9, -3, 30)]
    history, last, due, now, quiet = None, None, None, START, 0.0
    for gap in gaps:
        change = planner.observe(history, last, now, "same")
        planner.refresh([("h", change.change_rate), *others], now)
        visit = planner.next_visit(now, last, due, False, "h", change.change_rate,
                                   change.change_history)  # fmt: skip
        _assert_visit_sound(schedule, visit, now)
        if quiet >= 2 * high:
            assert visit.interval == high, (quiet / high, visit.interval / high)
        history, last, due = change.change_history, now, visit.due
        step = max(int(gap * high), 1)
        now, quiet = now + step, quiet + step
