"""The schedule's policies as a crawl runs them (schedule/planner.py)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl import ConfigError, litecrawl
from litecrawl.cli import app
from litecrawl.schedule import Schedule
from litecrawl.schedule.planner import (
    FULL_SEC,
    REFRESH_SEC,
    PageChange,
    Planner,
    Spend,
    change_age,
)
from litecrawl.schedule.record import Record, Run, decode, encode

DAY = 86400


def test_every_policy_waits_new_interval_after_a_first_visit() -> None:
    for policy in ("multiplicative", "uniform", "freshness"):
        planner = Planner(Schedule(new_interval_sec=5000, policy=policy))
        assert planner.next_visit(1000, None, None, True, "h", None).due == 6000


def test_uniform_spreads_the_budget_over_the_pages() -> None:
    planner = Planner(Schedule(policy="uniform", budget=10 / DAY, max_interval_sec=100 * DAY))
    planner.refresh([("h", None)] * 50, now=0)
    # 50 pages, 10 re-crawls a day: each page every 5 days (after it was due: day 9)
    assert planner.next_visit(10 * DAY, 8 * DAY, 9 * DAY, True, "h", None).due == 14 * DAY


def test_a_late_page_keeps_its_rhythm() -> None:
    planner = Planner(Schedule(policy="uniform"))  # every new_interval (a day) without a budget
    planner.refresh([("h", None)], now=0)
    due, now = 10 * DAY, 10 * DAY + 3600  # fetched an hour after it was due
    assert planner.next_visit(now, due - DAY, due, False, "h", None).due == due + DAY
    # late by more than an interval: from now
    assert planner.next_visit(due + 2 * DAY, due - DAY, due, False, "h", None).due == 13 * DAY


def test_freshness_waits_longer_for_a_page_that_does_not_change() -> None:
    planner = Planner(Schedule(policy="freshness", budget=2 / DAY))
    quiet = busy = None
    last = 0
    for k in range(1, 6):
        now = k * DAY
        quiet_change = planner.observe(quiet, last if quiet else None, now, "same")
        busy_change = planner.observe(busy, last if busy else None, now, f"v{k}")
        quiet, busy, last = quiet_change.change_history, busy_change.change_history, now
    assert (quiet_change.checks, quiet_change.changes) == (4, 0)
    assert (busy_change.checks, busy_change.changes) == (4, 4)
    planner.refresh([("h", quiet_change.change_rate), ("h", busy_change.change_rate)], now=last)
    at = 5 * DAY
    quiet_next = planner.next_visit(at, at - DAY, at, False, "h", quiet_change.change_rate).due
    busy_next = planner.next_visit(at, at - DAY, at, True, "h", busy_change.change_rate).due
    assert busy_next < quiet_next


def test_a_304_is_no_change() -> None:
    planner = Planner(Schedule(policy="freshness"))
    first = planner.observe(None, None, 0, "a")
    again = planner.observe(first.change_history, 0, DAY, "b", revalidated=True)
    assert (again.checks, again.changes) == (1, 0)


def test_last_modified_is_believed_only_inside_the_interval() -> None:
    stamp = "Wed, 21 Oct 2015 07:28:00 GMT"
    at = 1445412480.0  # that time
    assert change_age({"last-modified": stamp}, at + 60, int(at) - 10) == 60
    assert change_age({"last-modified": stamp}, at + 60, int(at) + 10) is None  # before
    assert change_age({"last-modified": stamp, "date": stamp}, at + 60, int(at) - 10) is None
    assert change_age({"last-modified": "garbage"}, at, 0) is None


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"policy": "sometimes"}, "policy"),
        ({"budget": 1.0}, "budget"),  # the multiplicative rule has no budget
        ({"policy": "uniform", "host_budget": 1.0}, "host_budget"),
        ({"policy": "freshness", "budget": -1.0}, "budget"),
    ],
)
def test_bad_schedules_are_named(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Schedule(**kwargs)  # type: ignore[arg-type]


def test_litecrawl_refuses_a_budget_for_the_multiplicative_rule(tmp_path: object) -> None:
    with pytest.raises(ConfigError, match="budget"):
        litecrawl(str(tmp_path) + "/x.db", ["http://127.0.0.1:1/"], recrawl_budget=1.0)


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--schedule", "sometimes"], "sometimes"),
        (["--budget", "0.5"], "budget"),
        (["--schedule", "freshness", "--min-interval", "100", "--max-interval", "10"], "max"),
    ],
)
def test_bad_schedule_flags_exit_2(flags: list[str], named: str) -> None:
    result = CliRunner().invoke(app, ["crawl", "http://127.0.0.1:1/", *flags])
    assert result.exit_code == 2
    assert named in result.output


def test_the_freshness_host_budget_defaults_to_the_polite_rate() -> None:
    from litecrawl.config_load import load_config
    from litecrawl.crawl import _options

    def schedule(flat: dict[str, object]) -> Schedule:
        return _options(load_config([], {}, flat), [], None).schedule

    assert schedule({"schedule.policy": "freshness"}).host_budget == 2.0  # 500 ms a request
    polite = {"schedule.policy": "freshness", "rate_limit.requests_per_second": 0.5}
    assert schedule(polite).host_budget == 0.5
    assert schedule({**polite, "schedule.host_budget": 0.1}).host_budget == 0.1
    assert schedule({"schedule.policy": "uniform"}).host_budget is None


def days_to_max_interval(schedule: Schedule, others: list[float]) -> float:
    """A page that never changes, fetched when the planner says, beside ``others``' rates."""
    planner = Planner(schedule)
    history, last, due, now = None, None, None, 0
    while now < 400 * DAY:
        change = planner.observe(history, last, now, "same")
        planner.refresh([("h", change.change_rate)] + [("h", r) for r in others], now)
        visit = planner.next_visit(
            now, last, due, False, "h", change.change_rate, change.change_history
        )
        if visit.interval >= schedule.max_interval_sec:
            return now / DAY
        history, last, due, now = change.change_history, now, visit.due, visit.due
    return math.inf


@pytest.mark.parametrize(
    ("budget", "others"),
    [(1.0, []), (None, [1 / DAY] * 9), (None, [1e-9 / DAY] * 9), (10 / DAY, [1 / DAY] * 99)],
    ids=["loose", "default", "all-static", "binding"],
)
def test_a_page_that_never_changes_reaches_max_interval(
    budget: float | None, others: list[float]
) -> None:
    # the multiplicative rule gets there in 31 days (1 + 2 + 4 + 8 + 16); a loose budget used to
    # keep such a page at min_interval, a binding one at a day or so for months
    assert days_to_max_interval(Schedule(policy="freshness", budget=budget), others) <= 60


def _after_a_shift(schedule: Schedule) -> Planner:
    """A planner that has learned what a shifted site teaches (session 14's CLI run): a prior
    a fifth "never" and the rest spread in log over the grid (a quiet page may be a slow one),
    and half the checks from a new rate (fewer than the 50 factors it relearns from)."""
    planner = Planner(schedule)
    grid = planner.learned.grid
    prior = np.concatenate([[0.2], np.full(len(grid.rates) - 1, 0.8 / (len(grid.rates) - 1))])
    planner.learned.prior.log_prior = np.log(prior)
    planner.learned.hazard.pi = 0.5
    return planner


def test_a_page_quiet_for_two_max_intervals_is_visited_once_a_max_interval_after_a_shift() -> None:
    # the posterior alone kept such a page at 12-13 days after a shift (max_interval 30):
    # quiet for two months it may still be a slow one, and the hazard keeps adding young runs
    schedule = Schedule(policy="freshness", budget=20 / DAY)
    planner = _after_a_shift(schedule)
    others = [("h", 1 / DAY)] * 50 + [("h", 1 / (100 * DAY))] * 49
    history, last, due, now = None, None, None, 0
    given: list[tuple[float, int]] = []
    while now < 200 * DAY:
        change = planner.observe(history, last, now, "same")
        planner.refresh([("h", change.change_rate), *others], now)
        visit = planner.next_visit(
            now, last, due, False, "h", change.change_rate, change.change_history
        )
        given.append((now / DAY, visit.interval))
        history, last, due, now = change.change_history, now, visit.due, visit.due
    assert planner.learned.hazard.pi == 0.5
    assert min(i for day, i in given if day < 60) < 20 * DAY  # the posterior's own decision
    assert [i for day, i in given if day >= 60] == [30 * DAY] * len(
        [day for day, _ in given if day >= 60]
    )
    # and the first change seen ends it: the page is decided on its posterior again
    change = planner.observe(history, last, now, "moved")
    planner.refresh([("h", change.change_rate), *others], now)
    visit = planner.next_visit(now, last, due, True, "h", change.change_rate, change.change_history)
    assert visit.interval < 30 * DAY


def test_writes_keep_the_rates_histogram_as_a_full_read_would() -> None:
    # read every page's rate once, then follow this process's writes: the allocation solved from
    # the histogram is the one a full read of the rates afterwards gives
    schedule = Schedule(policy="freshness", budget=5 / DAY, host_budget=3 / DAY)
    before = [("a", None), ("a", 2 / DAY), ("b", 0.1 / DAY), ("b", 5 / DAY)]
    after = [("a", 0.5 / DAY), ("a", 2 / DAY), ("b", 0.3 / DAY), ("b", 5 / DAY), ("b", 9 / DAY)]
    following = Planner(schedule)
    following.refresh(before, now=0)
    assert not following.due_read(REFRESH_SEC) and following.due_read(FULL_SEC)
    following.moved("a", 1 / DAY, 0.5 / DAY)  # had no estimate yet (the prior's), now has
    following.moved("b", 0.1 / DAY, 0.3 / DAY)
    following.moved("b", None, 9 / DAY)  # a page crawled for the first time
    following.solve(now=60)
    reading = Planner(schedule)
    reading.refresh(after, now=60)
    assert following.pages == reading.pages == 5
    for host, rate in after:
        assert rate is not None
        assert following.allocation is not None and reading.allocation is not None
        assert following.allocation.interval(rate, host) == pytest.approx(
            reading.allocation.interval(rate, host), rel=1e-9
        )


_FINITE = st.floats(allow_nan=False, allow_infinity=False)


@given(
    st.builds(
        Record,
        st.integers(0, 10**9),
        st.integers(0, 10**9),
        st.lists(st.builds(Run, *[_FINITE] * 5), max_size=4).map(tuple),
        st.none() | _FINITE,
        _FINITE,
        st.text(),
        st.none() | _FINITE,
    )
)
def test_the_change_record_reads_back_as_written(record: Record) -> None:
    assert decode(encode(record)) == record


def test_a_record_of_an_earlier_litecrawl_keeps_its_counts_and_starts_its_runs() -> None:
    # session 12's records: the estimator's fields, the hash and the rate, no runs
    old = json.dumps({"checks": 7, "changes": 3, "dated": 1.5, "exposure": 9e5, "quiet": 0.0,
                      "hash": "abc", "rate": 2e-5})  # fmt: skip
    planner = Planner(Schedule(policy="freshness"))
    change = planner.observe(old, 0, DAY, "abd")
    assert (change.checks, change.changes) == (8, 4)
    record = decode(change.change_history)
    assert record is not None and record.runs  # from this check on
    assert all((run.undated, run.undated_time) == (1, DAY) for run in record.runs)


def _watch(planner: Planner, moving: int, days: int = 40) -> list[PageChange]:
    """100 pages changing 0.1-10 times a day (Poisson, dated), checked every 12 hours, the
    prior read from their records daily as a crawl does; the first ``moving`` stop changing on
    day 10. Each page's statistics after its last check."""
    rng = random.Random(7)
    pages: list[PageChange | None] = [None] * 100
    last_change = [0.0] * 100
    versions = [0] * 100
    for k in range(2 * days):
        now = k * DAY // 2
        for i in range(100):
            t = now - DAY / 2
            while i >= moving or now <= 10 * DAY:  # the changes within the last 12 hours
                t += rng.expovariate(10 ** (-1 + 2 * (i % 10) / 9) / DAY)
                if t > now:
                    break
                last_change[i], versions[i] = t, versions[i] + 1
            page = pages[i]
            record = page.change_history if page else None
            age = now - last_change[i] if 0 < now - last_change[i] <= DAY / 2 else None
            pages[i] = change = planner.observe(
                record, now - DAY // 2 if page else None, now, str(versions[i]), age=age
            )
            planner.moved("h", planner.rate(record) if page else None, change.change_rate)
        if k % 2 == 0:
            done = [p for p in pages if p is not None]
            rates = [("h", p.change_rate) for p in done]
            planner.refresh(rates, now, records=[(p.change_history, now) for p in done])
        else:
            planner.solve(now)
    return [p for p in pages if p is not None]


def test_pages_seen_to_stop_teach_the_planner_a_hazard_and_their_rates_fall() -> None:
    steady, stopping = Planner(Schedule(policy="freshness", budget=50 / DAY)), None
    stopping = Planner(Schedule(policy="freshness", budget=50 / DAY))
    kept = _watch(steady, moving=0)
    moved = _watch(stopping, moving=30)
    assert stopping.learned.hazard.pi > 10 * steady.learned.hazard.pi
    stopped, still = moved[9], moved[99]  # both changed 10 times a day
    assert stopped.change_rate is not None and still.change_rate is not None
    assert kept[9].change_rate is not None
    assert stopped.change_rate < 0.1 * kept[9].change_rate  # quiet for 30 days
    assert still.change_rate == pytest.approx(kept[99].change_rate, rel=0.5)


def test_the_histogram_follows_writes_as_a_full_read_would() -> None:
    # as the crawl writes (writeback._moved): a page leaves the histogram at the rate it was
    # stored with; otherwise pages pile up in the histogram and the allocation spreads the
    # budget over pages that are not there
    planner = Planner(Schedule(policy="freshness", budget=50 / DAY))
    pages = _watch(planner, moving=30)
    reading = Planner(planner.schedule)
    reading.refresh([("h", p.change_rate) for p in pages], now=40 * DAY)
    assert planner.pages == reading.pages == 100
    assert planner.allocation is not None and reading.allocation is not None
    for p in pages:
        assert p.change_rate is not None
        assert planner.allocation.interval(p.change_rate, "h") == pytest.approx(
            reading.allocation.interval(p.change_rate, "h"), rel=1e-9
        )


def test_a_restarted_planner_learns_its_prior_and_hazard_again_from_the_records() -> None:
    schedule = Schedule(policy="freshness", budget=50 / DAY)
    running = Planner(schedule)
    pages = _watch(running, moving=30)
    records = [(p.change_history, 40 * DAY) for p in pages]
    rates = [("h", p.change_rate) for p in pages]
    assert running.wants_records(40 * DAY)
    running.refresh(rates, 40 * DAY, records=records)
    restarted, again = Planner(schedule), Planner(schedule)
    restarted.refresh(rates, 40 * DAY, records=records)
    again.refresh(rates, 40 * DAY, records=records)
    # the same stored records give the same prior and hazard window, whoever reads them
    assert list(restarted.learned.hazard.factors) == list(again.learned.hazard.factors)
    assert len(restarted.learned.hazard.factors) == 100
    assert restarted.learned.log_prior == pytest.approx(again.learned.log_prior)
    assert np.exp(restarted.learned.log_prior)[0] < 0.5  # learned: most pages change
    # and a page's next visit is decided alike
    page = pages[50]
    visits = [
        p.next_visit(
            40 * DAY, 39 * DAY, 40 * DAY, False, "h", page.change_rate, page.change_history
        )
        for p in (restarted, again)
    ]
    assert visits[0] == visits[1]
    assert not restarted.wants_records(40 * DAY + 3600)
    assert restarted.wants_records(41 * DAY)


def test_spend_plans_the_budget_over_what_the_held_intervals_spend() -> None:
    # 100 pages, a budget of 10 visits a day: they hold intervals of 12.5 days (8 a day), so the
    # plan is raised by (10 / 8) to the power time / tau, and on while they hold less
    spend = Spend()
    for _ in range(100):
        spend.set_due(12.5 * DAY, None)
    assert spend.held == pytest.approx(8 / DAY)
    spend.update(10 / DAY, 100, DAY, 2 * DAY)
    assert spend.factor == pytest.approx(1.25**0.5)
    assert spend.scale == pytest.approx(0.8**0.5)  # the posterior decision's: the other way
    spend.update(10 / DAY, 100, DAY, 2 * DAY)
    assert spend.factor == pytest.approx(1.25)
    # the pages, set due again, now hold 12.5 a day: the plan comes back towards the budget
    for _ in range(100):
        spend.set_due(8 * DAY, 12.5 * DAY)
    assert (spend.pages, spend.held) == (100, pytest.approx(12.5 / DAY))
    spend.update(10 / DAY, 100, 2 * DAY, 2 * DAY)  # at most half the way (in log) at once
    assert spend.factor == pytest.approx(1.25 * 0.8**0.5)


def test_spend_counts_the_pages_it_has_not_set_due_at_the_budget_and_stays_in_bounds() -> None:
    # 50 of 100 pages set due by this process, at 2 days; the other 50 assumed to hold their
    # share of the budget (0.1 a day each): 25 + 5 = 30 a day against a budget of 10: no less
    # than the budget is planned
    spend = Spend()
    for _ in range(50):
        spend.set_due(2 * DAY, None)
    spend.update(10 / DAY, 100, 10 * DAY, DAY)
    assert spend.factor == 1.0
    # pages that hold next to nothing: planned at most MOST times over
    slow = Spend()
    for _ in range(100):
        slow.set_due(1000 * DAY, None)
    for _ in range(20):
        slow.update(10 / DAY, 100, DAY, DAY)
    assert slow.factor == Spend.MOST


CHECKED = encode(Record(checks=1, hash="x"))  # a page's record once a re-fetch was compared


def test_a_first_visits_interval_is_not_counted_as_the_plans() -> None:
    # a new crawl's first visits are each given new_interval whatever the budget: counted, 1,000
    # pages read as 1,000 visits a day against a budget of 100, and the scale on the posterior
    # decision ran to its bound; they count at their share of the budget until planned
    planner = Planner(Schedule(policy="freshness", budget=100 / DAY))
    planner._started = 0
    for _ in range(1000):
        planner.set_due(None, None, DAY)
    assert (planner.spend.pages, planner.spend.held) == (0, 0.0)
    planner.refresh([("h", 1 / DAY)] * 1000, now=0)
    planner.solve(now=DAY)
    assert planner.spend.scale == 1.0
    # the second visit replaces nothing it counted: its interval is the plan's first
    planner.set_due(DAY, DAY, 10 * DAY, encode(Record(hash="x")))
    assert (planner.spend.pages, planner.spend.held) == (1, pytest.approx(0.1 / DAY))


def _held_planner(held: float) -> Planner:
    """A freshness planner over 100 pages at 0.02-2 changes a day whose due times it set at
    ``held`` times the intervals its allocation gives them, a day after its first solve."""
    planner = Planner(Schedule(policy="freshness", budget=20 / DAY, max_interval_sec=30 * DAY))
    rates = [(i + 1) / 50 / DAY for i in range(100)]
    planner._started = 0  # the due times below are this process's
    planner.refresh([("h", r) for r in rates], now=0)
    assert planner.allocation is not None
    for r in rates:
        interval = planner.allocation.interval(r, "h")
        planner.set_due(0, None, round(held * interval), CHECKED)
    planner.solve(now=DAY)
    return planner


def test_pages_that_hold_longer_intervals_than_planned_make_the_planner_plan_more() -> None:
    longer, level = _held_planner(1.5), _held_planner(1.0)
    assert longer.spend.factor > 1.1
    assert level.spend.factor == pytest.approx(1.0, abs=1e-3)
    assert longer.allocation is not None and level.allocation is not None
    rate = 0.3 / DAY  # followed: due sooner when the budget is planned over
    assert longer.allocation.interval(rate, "h") < 0.95 * level.allocation.interval(rate, "h")


def test_a_page_visited_late_is_counted_at_the_interval_it_was_given() -> None:
    # due on day 10, visited half a day late: due one interval after day 10, and it spends one
    # visit an interval (not one every interval less half a day)
    planner = _held_planner(1.0)
    rate = 0.3 / DAY
    visit = planner.next_visit(10 * DAY + DAY // 2, 8 * DAY, 10 * DAY, False, "h", rate)
    assert planner.allocation is not None
    assert visit.interval == round(planner.allocation.interval(rate, "h"))
    assert visit.due == 10 * DAY + visit.interval
    held = planner.spend.held
    planner.set_due(8 * DAY, 2 * DAY, visit.interval, CHECKED)  # it held 2 days, from day 8
    assert planner.spend.held == pytest.approx(held + 1 / visit.interval - 1 / (2 * DAY))


def test_only_the_freshness_policy_follows_what_the_pages_hold() -> None:
    for policy in ("uniform", "multiplicative"):
        planner = Planner(Schedule(policy=policy, budget=20 / DAY if policy == "uniform" else None))
        planner.set_due(None, None, DAY)
        assert (planner.spend.pages, planner.spend.held) == (0, 0.0)
    # a page whose due time another process set (fetched before this one started) is counted,
    # and what it held is not taken away from this process's sum
    planner = Planner(Schedule(policy="freshness", budget=20 / DAY))
    planner._started = 10 * DAY  # started on day 10
    planner.set_due(9 * DAY, DAY, 2 * DAY, CHECKED)
    assert (planner.spend.pages, planner.spend.held) == (1, pytest.approx(0.5 / DAY))
    planner.set_due(11 * DAY, 2 * DAY, DAY, CHECKED)  # its own: 2 days replaced by 1
    assert (planner.spend.pages, planner.spend.held) == (1, pytest.approx(1 / DAY))
