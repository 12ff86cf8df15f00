"""The revisit allocation: known cases and, on small inputs, a brute-force optimum."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl import ConfigError
from litecrawl.schedule import Schedule
from litecrawl.schedule.allocate import (
    ENOUGH,
    Allocation,
    RateGroup,
    allocate,
    expected_freshness,
)
from litecrawl.schedule.planner import Planner

DAY = 86400.0


def freqs(a: Allocation, groups: list[RateGroup]) -> list[float]:
    return [a.frequency(g.rate, g.host) for g in groups]


def test_freshness_formula() -> None:
    assert expected_freshness(0.0, 1.0) == 1.0
    assert expected_freshness(1.0, 0.0) == 0.0
    assert expected_freshness(1.0, 1.0) == pytest.approx(1 - np.exp(-1))
    assert expected_freshness(2.0, 1.0) == pytest.approx((1 - np.exp(-2)) / 2)


def test_a_loose_budget_visits_fast_pages_at_min_interval() -> None:
    groups = [RateGroup(30 / DAY), RateGroup(100 / DAY), RateGroup(0.0)]
    a = allocate(groups, budget=1.0, min_interval=3600, max_interval=30 * DAY)
    assert a.level.high == 0
    assert freqs(a, groups) == pytest.approx([1 / 3600, 1 / 3600, 1 / (30 * DAY)])


@pytest.mark.parametrize("rate", [1 / DAY, 0.1 / DAY, 1e-3 / DAY])
def test_a_loose_budget_visits_no_page_more_than_keeps_it_current(rate: float) -> None:
    # without the bound a budget that does not bind sent every page to min_interval
    a = allocate([RateGroup(rate)], budget=1.0, min_interval=3600, max_interval=30 * DAY)
    f = a.frequency(rate)
    assert 1 / (30 * DAY) <= f < 1 / 3600
    assert expected_freshness(rate, f) == pytest.approx(ENOUGH, abs=1e-6) or f == 1 / (30 * DAY)


def test_a_binding_budget_is_spent_exactly() -> None:
    groups = [RateGroup(r / DAY, 3) for r in (0.01, 0.1, 1.0, 10.0)]
    budget = 4 / DAY
    a = allocate(groups, budget=budget, min_interval=3600, max_interval=30 * DAY)
    assert sum(g.count * f for g, f in zip(groups, freqs(a, groups), strict=True)) == (
        pytest.approx(budget, rel=1e-6)
    )


def test_pages_changing_too_fast_get_the_least() -> None:
    slow, mid, fast = RateGroup(0.2 / DAY), RateGroup(1 / DAY), RateGroup(1000 / DAY)
    a = allocate([slow, mid, fast], budget=1 / DAY, min_interval=60, max_interval=30 * DAY)
    f_slow, f_mid, f_fast = freqs(a, [slow, mid, fast])
    assert f_fast == pytest.approx(1 / (30 * DAY))
    assert f_mid > f_slow > f_fast


def test_a_page_that_never_changes_waits_max_interval() -> None:
    groups = [RateGroup(0.0), RateGroup(1 / DAY)]
    a = allocate(groups, budget=1 / DAY, min_interval=60, max_interval=7 * DAY)
    assert a.interval(0.0) == pytest.approx(7 * DAY)


def test_a_budget_below_max_interval_is_not_feasible() -> None:
    groups = [RateGroup(1 / DAY, 100)]
    a = allocate(groups, budget=1 / DAY, min_interval=60, max_interval=30 * DAY)
    assert not a.feasible
    assert a.interval(1 / DAY) == pytest.approx(30 * DAY)


def test_host_budgets_hold_and_the_rest_goes_elsewhere() -> None:
    groups = [RateGroup(5 / DAY, 10, "busy"), RateGroup(5 / DAY, 10, "quiet")]
    a = allocate(
        groups, budget=20 / DAY, min_interval=60, max_interval=30 * DAY, host_budget=4 / DAY
    )
    busy, quiet = freqs(a, groups)
    assert 10 * busy == pytest.approx(4 / DAY, rel=1e-6)
    assert 10 * quiet == pytest.approx(4 / DAY, rel=1e-6)
    b = allocate(
        [RateGroup(5 / DAY, 10, "busy"), RateGroup(5 / DAY, 1, "quiet")],
        budget=5 / DAY,
        min_interval=60,
        max_interval=30 * DAY,
        host_budget=4 / DAY,
    )
    # the busy host is held to 4, the quiet one page takes the remaining 1
    assert 10 * b.frequency(5 / DAY, "busy") == pytest.approx(4 / DAY, rel=1e-6)
    assert b.frequency(5 / DAY, "quiet") == pytest.approx(1 / DAY, rel=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"budget": 0.0}, "budget"),
        ({"budget": 1.0, "host_budget": -1.0}, "host_budget"),
        ({"budget": 1.0, "min_interval": 10.0, "max_interval": 5.0}, "max_interval"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, float], name: str) -> None:
    args: dict[str, float] = {"min_interval": 1.0, "max_interval": 100.0, **kwargs}
    with pytest.raises(ConfigError, match=name):
        allocate([RateGroup(1.0)], **args)  # type: ignore[arg-type]


def brute_force(
    groups: list[RateGroup], budget: float, host_budget: float | None, f_min: float, f_max: float
) -> float:
    """The best total freshness on a grid of frequencies that keeps within the budgets, no page
    visited more often than keeps it ENOUGH current."""
    axis = np.linspace(f_min, f_max, 41)
    grid = np.stack(np.meshgrid(*[axis] * len(groups), indexing="ij"), -1).reshape(-1, len(groups))
    ok = grid.sum(axis=1) <= budget
    lo, hi = 1e-9, 50.0  # λ/f at which F = ENOUGH
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_freshness(mid, 1.0) > ENOUGH else (lo, mid)
    for i, g in enumerate(groups):
        ok &= grid[:, i] <= max(g.rate / lo, f_min) * (1 + 1e-9)
    if host_budget is not None:
        for host in {g.host for g in groups}:
            mine = np.array([g.host == host for g in groups])
            ok &= grid[:, mine].sum(axis=1) <= host_budget
    rates = np.array([g.rate for g in groups])
    moving = rates > 0
    r = np.where(moving, rates, 1.0) / grid
    fresh = np.where(moving, -np.expm1(-r) / r, 1.0)
    return float(fresh[ok].sum(axis=1).max())


pages = st.lists(
    st.builds(
        RateGroup,
        st.sampled_from([0.0, 0.05, 0.3, 1.0, 2.5, 8.0]) | st.floats(0.01, 20.0),
        st.just(1),
        st.sampled_from(["a", "b"]),
    ),
    min_size=1,
    max_size=3,
)


@settings(max_examples=40, deadline=None)
@given(pages, st.floats(0.0, 1.0), st.none() | st.floats(0.3, 1.0))
def test_no_grid_point_beats_the_allocation(
    groups: list[RateGroup], share: float, host_share: float | None
) -> None:
    f_min, f_max = 0.1, 2.0
    n = len(groups)
    budget = n * f_min + share * n * (f_max - f_min) + 1e-6
    host_budget = None if host_share is None else max(budget * host_share, n * f_min + 1e-6)
    a = allocate(groups, budget, 1 / f_max, 1 / f_min, host_budget)
    fs = freqs(a, groups)
    assert all(f_min - 1e-9 <= f <= f_max + 1e-9 for f in fs)
    assert sum(fs) <= budget * (1 + 1e-6)
    if host_budget is not None:
        for host in {g.host for g in groups}:
            spent = sum(f for g, f in zip(groups, fs, strict=True) if g.host == host)
            assert spent <= host_budget * (1 + 1e-6)
    ours = sum(expected_freshness(g.rate, f) for g, f in zip(groups, fs, strict=True))
    assert ours >= brute_force(groups, budget, host_budget, f_min, f_max) - 1e-9


# rates a bin apart (the planner groups rates within 12%), none 0 (the planner reads 0 as unknown)
shifting = st.lists(st.sampled_from([0.02, 0.05, 0.3, 1.0, 2.5, 8.0]), min_size=1, max_size=3)


@settings(max_examples=30, deadline=None)
@given(shifting, st.randoms(use_true_random=False), st.floats(0.0, 1.0))
def test_after_a_rate_shift_no_grid_point_beats_the_planner(
    before: list[float], rng: random.Random, share: float
) -> None:
    """Every page takes another page's rate (or a new one) and is written with it: the planner's
    allocation, following the writes, is the optimum for the rates after the shift."""
    after = [rng.choice([0.02, 0.05, 0.3, 1.0, 2.5, 8.0]) for _ in before]
    f_min, f_max = 0.1, 2.0  # visits a day
    n = len(before)
    budget = n * f_min + share * n * (f_max - f_min) + 1e-6
    planner = Planner(
        Schedule(
            policy="freshness",
            budget=budget / DAY,
            min_interval_sec=round(DAY / f_max),
            max_interval_sec=round(DAY / f_min),
        )
    )
    planner.refresh([("a", r / DAY) for r in before], now=0)
    for old, new in zip(before, after, strict=True):
        planner.moved("a", old / DAY, new / DAY)
    planner.solve(now=60)
    assert planner.allocation is not None
    fs = [planner.allocation.frequency(r / DAY, "a") * DAY for r in after]
    assert sum(fs) <= budget * (1 + 1e-6)
    groups = [RateGroup(r, 1, "a") for r in after]
    ours = sum(expected_freshness(r, f) for r, f in zip(after, fs, strict=True))
    assert ours >= brute_force(groups, budget, None, f_min, f_max) - 1e-9
