"""The schedule's policies as a crawl runs them (schedule/planner.py)."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from litecrawl import ConfigError, litecrawl
from litecrawl.cli import app
from litecrawl.schedule import Schedule
from litecrawl.schedule.estimate import ChangeHistory
from litecrawl.schedule.planner import (
    FULL_SEC,
    REFRESH_SEC,
    PageChange,
    Planner,
    Spend,
    _decode,
    _encode,
    change_age,
)

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
        nxt = planner.next_visit(now, last, due, False, "h", change.change_rate).due
        if nxt - now >= schedule.max_interval_sec:
            return now / DAY
        history, last, due, now = change.change_history, now, nxt, nxt
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


@given(
    st.builds(
        ChangeHistory,
        st.integers(0, 10**9),
        st.integers(0, 10**9),
        *[st.floats(allow_nan=True, allow_infinity=True)] * 7,
    ),
    st.text(),
)
def test_the_change_record_is_the_histories_fields_and_hash_as_json(
    history: ChangeHistory, change_hash: str
) -> None:
    # the fast encoding against the plain one it replaced: the same text for any record
    record = {**dataclasses.asdict(history), "hash": change_hash, "rate": None}
    plain = json.dumps(record, separators=(",", ":"))
    assert _encode(history, change_hash) == plain
    decoded = _decode(plain)
    assert decoded is not None and decoded[1] == change_hash


def _watch(planner: Planner, stopping: int, days: int = 40) -> list[PageChange]:
    """100 pages changing once a day (dated), checked every 12 hours; the first ``stopping`` stop
    changing on day 10. Each page's statistics after its last check."""
    pages: list[PageChange | None] = [None] * 100
    for k in range(2 * days):
        now = k * DAY // 2
        for i in range(100):
            still = not (i < stopping and now > 10 * DAY)
            changed = still and (k + i) % 2 == 0
            version = f"{(k + i) // 2}" if still else "the last"
            page = pages[i]
            pages[i] = planner.observe(
                page.change_history if page else None,
                now - DAY // 2 if page else None,
                now,
                version,
                age=3600.0 if changed else None,
            )
        planner.solve(now)
    return [p for p in pages if p is not None]


def _plain_rate(planner: Planner, page: PageChange) -> float:
    decoded = _decode(page.change_history)
    assert decoded is not None
    return dataclasses.replace(planner.estimator, stopped_share=0.0).rate(decoded[0])


def test_pages_seen_to_stop_teach_the_planner_to_free_their_visits() -> None:
    schedule = Schedule(policy="freshness", budget=50 / DAY)
    learning = Planner(schedule)
    pages = _watch(learning, stopping=30)
    assert learning.estimator.stopped_share > 0.1
    stopped, steady = pages[0], pages[99]
    assert stopped.change_rate is not None and steady.change_rate is not None
    # a stopped page's stored rate: well under the estimate without the learned share
    assert stopped.change_rate < 0.6 * _plain_rate(learning, stopped)
    # a page that keeps changing: hardly touched
    assert steady.change_rate > 0.9 * _plain_rate(learning, steady)


def test_a_planner_whose_pages_keep_changing_learns_no_stops() -> None:
    planner = Planner(Schedule(policy="freshness", budget=50 / DAY))
    pages = _watch(planner, stopping=0)
    assert planner.estimator.stopped_share == 0.0
    assert [p.change_rate for p in pages] == [_plain_rate(planner, p) for p in pages]


def test_the_histogram_follows_writes_while_the_share_of_stopped_pages_is_learned() -> None:
    # as the crawl writes (writeback._moved): a page leaves the histogram at the rate it was
    # stored with, not at what the record gives under the share learned since; otherwise pages
    # pile up in the histogram and the allocation spreads the budget over pages that are not there
    planner = Planner(Schedule(policy="freshness", budget=50 / DAY))
    pages: list[PageChange | None] = [None] * 100
    for k in range(80):
        now = k * DAY // 2
        for i in range(100):
            still = not (i < 30 and now > 10 * DAY)
            changed = still and (k + i) % 2 == 0
            page = pages[i]
            record = page.change_history if page else None
            pages[i] = change = planner.observe(
                record,
                now - DAY // 2 if page else None,
                now,
                f"{(k + i) // 2}" if still else "the last",
                age=3600.0 if changed else None,
            )
            planner.moved("h", planner.rate(record) if page else None, change.change_rate)
        planner.solve(now)
    assert planner.estimator.stopped_share > 0.1
    reading = Planner(planner.schedule)
    reading.refresh([("h", p.change_rate) for p in pages if p is not None], now=40 * DAY)
    assert planner.pages == reading.pages == 100
    assert planner.allocation is not None and reading.allocation is not None
    for p in pages:
        assert p is not None and p.change_rate is not None
        assert planner.allocation.interval(p.change_rate, "h") == pytest.approx(
            reading.allocation.interval(p.change_rate, "h"), rel=1e-9
        )


def test_spend_plans_the_budget_over_what_the_held_intervals_spend() -> None:
    # 100 pages, a budget of 10 visits a day: they hold intervals of 12.5 days (8 a day), so the
    # plan is raised by (10 / 8) to the power time / tau, and on while they hold less
    spend = Spend()
    for _ in range(100):
        spend.set_due(12.5 * DAY, None)
    assert spend.held == pytest.approx(8 / DAY)
    spend.update(10 / DAY, 100, DAY, 2 * DAY)
    assert spend.factor == pytest.approx(1.25**0.5)
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
        planner.set_due(None, None, round(held * interval))
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
    planner.set_due(8 * DAY, 2 * DAY, visit.interval)  # it held 2 days, given at day 8
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
    planner.set_due(9 * DAY, DAY, 2 * DAY)
    assert (planner.spend.pages, planner.spend.held) == (1, pytest.approx(0.5 / DAY))
    planner.set_due(11 * DAY, 2 * DAY, DAY)  # its own: 2 days replaced by 1
    assert (planner.spend.pages, planner.spend.held) == (1, pytest.approx(1 / DAY))
