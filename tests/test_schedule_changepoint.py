"""Each page's change-point posterior (schedule/changepoint.py) against known check sequences,
bench/freshness_bounds.py's ``empirical`` (which it builds), and the decision on it against
brute force."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.schedule.allocate import Allocation, Level, expected_freshness
from litecrawl.schedule.changepoint import (
    HAZARD_WINDOW,
    RUNS,
    Hazard,
    Learning,
    PriorTally,
    RateGrid,
    RecordsRead,
    observe,
)
from litecrawl.schedule.record import Check, Record, Run, decode, encode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

HOUR, DAY = 3600.0, 86400.0


def watch(grid: RateGrid, checks: list[Check], hazard: float) -> tuple[Run, ...]:
    runs: tuple[Run, ...] = ()
    log_prior = np.log(grid.vague)
    for check in checks:
        runs, _, _ = observe(grid, runs, check, log_prior, hazard)
    return runs


def test_without_a_hazard_the_posterior_is_bayes_on_the_grid() -> None:
    # one run, no move possible: prior times each check's likelihood, normalised (brute force)
    grid = RateGrid(HOUR, 30 * DAY)
    checks = [
        Check(DAY, False),
        Check(DAY, True, 3 * HOUR),
        Check(2 * DAY, True),
        Check(DAY, False),
    ]
    runs = watch(grid, checks, 0.0)
    assert len(runs) == 1
    lam = grid.rates
    with np.errstate(divide="ignore"):
        like = np.exp(-lam * DAY) * lam * np.exp(-lam * 3 * HOUR)
        like *= -np.expm1(-lam * 2 * DAY) * np.exp(-lam * DAY)
    expected = grid.vague * like / (grid.vague * like).sum()
    assert grid.weights(runs, np.log(grid.vague)) == pytest.approx(expected, abs=1e-12)


def test_a_check_no_rate_explains_leaves_the_page_as_it_was() -> None:
    # a change seen over no time at all (a sitemap fetched twice within its second): before,
    # every run's mass was -inf and observe raised (the crawl recorded an internal error)
    grid = RateGrid(HOUR, 30 * DAY)
    log_prior = np.log(grid.vague)
    runs = watch(grid, [Check(DAY, False), Check(DAY, True)], 1e-3)
    after, weights, factor = observe(grid, runs, Check(0.0, True), log_prior, 1e-3)
    assert after == runs and factor is None
    assert weights == pytest.approx(grid.weights(runs, log_prior))
    first, _, _ = observe(grid, (), Check(0.0, True), log_prior, 1e-3)
    assert first == (Run(),)


def test_checks_over_no_time_give_no_hazard() -> None:
    # re-fetches within their second (a test's quick re-crawl): the mean interval was 0 and
    # chance() divided by it (the crawl recorded an internal error for every page)
    hazard = Hazard(30 * DAY)
    assert hazard.chance(0.0) == 0.0 and hazard.chance(0.0) == 0.0
    assert 0.0 < hazard.chance(DAY) < 1.0


def test_a_page_that_never_changes_is_taken_for_static() -> None:
    grid = RateGrid(HOUR, 30 * DAY)
    quiet = watch(grid, [Check(DAY, False)] * 30, 1e-4)
    w = grid.weights(quiet, np.log(grid.vague))
    assert w[0] > 0.75  # "never changes" (the rest: rates slower than a change a month)
    assert grid.mean(w) < 0.01 / DAY


def test_a_change_after_a_long_quiet_starts_a_run_that_grows_check_by_check() -> None:
    # a page quiet for 60 days starts changing every few hours: one change moves the posterior
    # some of the way, each check more; a run of what came before stays (nothing dropped at once)
    grid = RateGrid(HOUR, 30 * DAY)
    log_prior = np.log(grid.vague)
    runs = watch(grid, [Check(3 * DAY, False)] * 20, 1 / 400)
    means = [grid.mean(grid.weights(runs, log_prior))]
    factors = []
    for _ in range(4):
        runs, _, factor = observe(grid, runs, Check(DAY, True, 2 * HOUR), log_prior, 1 / 400)
        assert factor is not None
        factors.append(factor)
        means.append(grid.mean(grid.weights(runs, log_prior)))
    assert factors[0] > 10 > 1 > factors[-1]  # a new rate explained the first change better
    assert means == sorted(means) and means[-1] > 2 / DAY
    assert 1 < len(runs) <= RUNS
    assert math.fsum(math.exp(r.mass) for r in runs) == pytest.approx(1.0)


def test_a_check_as_expected_has_a_factor_under_one() -> None:
    grid = RateGrid(HOUR, 30 * DAY)
    log_prior = np.log(grid.vague)
    runs = watch(grid, [Check(DAY, True, 12 * HOUR)] * 20, 1e-4)
    _, _, factor = observe(grid, runs, Check(DAY, True, 10 * HOUR), log_prior, 1e-4)
    assert factor is not None and factor < 1


_CHECK = st.tuples(
    st.sampled_from(["quiet", "dated", "undated"]),
    st.floats(0.5, 300.0),  # ticks since the fetch before
    st.floats(0.0, 1.0),  # a dated change's age, as a share of the interval
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(_CHECK, min_size=1, max_size=25),
    st.floats(1.0, 100.0),
    st.floats(0.0, 0.3),
    st.integers(0, 2**31),
)
def test_the_posterior_is_the_benchs_empirical(
    checks: list[tuple[str, float, float]], undated_every: float, hazard: float, seed: int
) -> None:
    # bench/freshness_bounds.py's ``empirical`` keeps each run's log-likelihood on its grid;
    # this keeps four numbers a run: where undated changes come at one interval (its ``ell`` sums
    # X log(1 - e^{-λt}), this X log(1 - e^{-λT/X})) the two are the same posterior
    import freshness_bounds as fb
    import freshness_sim as sim

    world = sim.make_world(2, 10, random.Random(1), -3.0, 0.0, 0.0)
    bench = fb.Empirical(2, 1, world)
    rng = np.random.default_rng(seed)
    bench.log_prior = np.log(rng.dirichlet(np.ones(len(bench.grid))))  # a learned prior
    bench._hazard = lambda interval: hazard  # type: ignore[method-assign]
    grid = RateGrid(sim.MIN, sim.MAX)  # ticks: the bench's grid
    assert grid.rates == pytest.approx(bench.grid, rel=1e-12)
    t = 0.0
    bench.visited(0, t, t, None, None)
    runs: tuple[Run, ...] = ()
    for kind, interval, share in checks:
        interval = undated_every if kind == "undated" else interval
        t += interval
        age = share * interval if kind == "dated" else None
        check = Check(interval, kind != "quiet", age)
        bench.visited(0, t, t, check.changed, age)
        runs, weights, _ = observe(grid, runs, check, bench.log_prior, hazard)
        mine = grid.weights(runs, bench.log_prior)
        assert mine == pytest.approx(bench._weights(0), abs=1e-9)
        assert weights == pytest.approx(mine, abs=1e-12)  # observe's own, not computed again
        live = np.isfinite(bench.mass[0])
        assert sorted(r.mass for r in runs) == pytest.approx(sorted(bench.mass[0][live]), abs=1e-9)


def test_undated_changes_at_unequal_intervals_are_near_the_exact_posterior() -> None:
    # X log(1 - e^{-λT/X}) is above the sum of log(1 - e^{-λt}) (Jensen): the rate comes out a
    # little low, within a third for intervals 20x apart
    grid = RateGrid(HOUR, 30 * DAY)
    intervals = [HOUR * h for h in (3, 30, 7, 60, 12, 5, 40)]
    runs = watch(grid, [Check(t, True) for t in intervals], 0.0)
    lam = grid.rates
    with np.errstate(divide="ignore"):
        log_like = sum(np.log(-np.expm1(-lam * t)) for t in intervals)
    exact = grid.vague * np.exp(log_like - np.max(log_like))
    exact /= exact.sum()
    mean = grid.mean(grid.weights(runs, np.log(grid.vague)))
    assert 0.65 * grid.mean(exact) < mean <= grid.mean(exact)


def _brute_interval(rates: np.ndarray, w: np.ndarray, mu: float, lo: float, hi: float) -> float:
    """The interval in [lo, hi] with the most expected freshness less mu a visit a second."""
    best, best_value = hi, -math.inf
    for interval in np.geomspace(lo, hi, 4000):
        f = 1 / interval
        value = sum(wi * expected_freshness(r, f) for r, wi in zip(rates, w, strict=True))
        if value - mu * f > best_value:
            best, best_value = float(interval), value - mu * f
    return best


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31), st.floats(-1.0, 2.0))
def test_the_decision_on_a_posterior_is_the_best_interval(seed: int, log_mu_days: float) -> None:
    rng = np.random.default_rng(seed)
    grid = RateGrid(HOUR, 30 * DAY)
    w = rng.dirichlet(np.full(len(grid.rates), 0.3))
    mu = 10**log_mu_days * DAY
    allocation = Allocation(HOUR, 30 * DAY, Level(mu, mu, 0.0))
    got = allocation.posterior_interval(grid.rates, w, "h")
    cap = min(1 / HOUR, max(float(w @ grid.rates) / 0.1030, 1 / (30 * DAY)))
    want = _brute_interval(grid.rates, w, mu, 1 / cap, 30 * DAY)
    assert got == pytest.approx(want, rel=0.01)  # the brute force's step: 0.2%


def test_a_binding_host_decides_with_its_own_level() -> None:
    grid = RateGrid(HOUR, 30 * DAY)
    w = np.zeros(len(grid.rates))
    w[20] = 1.0
    loose = Allocation(HOUR, 30 * DAY, Level(DAY, DAY, 0.0))
    tight = Allocation(HOUR, 30 * DAY, Level(DAY, DAY, 0.0), {"h": Level(9 * DAY, 9 * DAY, 0.0)})
    assert tight.posterior_interval(grid.rates, w, "h") > loose.posterior_interval(
        grid.rates, w, "h"
    )
    assert tight.posterior_interval(grid.rates, w, "x") == loose.posterior_interval(
        grid.rates, w, "x"
    )
    # a scale over 1 asks more of a visit: longer intervals
    assert loose.posterior_interval(grid.rates, w, "x", 2.0) > loose.posterior_interval(
        grid.rates, w, "x"
    )


def test_the_hazard_is_learned_from_the_checks_bayes_factors() -> None:
    steady = Hazard(30 * DAY)
    moved = Hazard(30 * DAY)
    for i in range(HAZARD_WINDOW):
        for hazard in (steady, moved):
            hazard.chance(DAY)
        steady.seen(0.5)
        moved.seen(200.0 if i % 5 == 0 else 0.05)  # a fifth far better explained by a new rate
    steady.learn()
    moved.learn()
    assert steady.pi == pytest.approx(1e-6)
    assert 0.1 < moved.pi < 0.3
    floor = -math.expm1(-DAY / (16 / 3 * 30 * DAY))
    assert steady.chance(DAY) == pytest.approx(floor)  # one move a page in 160 days
    assert moved.chance(DAY) == pytest.approx(-math.expm1(-moved.pi), rel=0.01)


def test_the_prior_is_learned_from_the_pages() -> None:
    # pages that change a few times a day and pages that never do: the learned prior puts its mass
    # there, and a first step from stored records settles where daily steps would
    grid = RateGrid(HOUR, 30 * DAY)
    pages = [
        watch(grid, [Check(DAY, True, 6 * HOUR) if i % 2 else Check(DAY, False)] * 12, 1e-4)
        for i in range(40)
    ]
    tally = PriorTally(grid)
    tally.step(pages)
    prior = np.exp(tally.log_prior)
    assert tally.steps > 1  # a first read steps until it settles
    assert prior[0] > 0.4  # the static half
    seen = np.argmin(np.abs(grid.rates - 4 / DAY))  # a change 6 hours before each daily check
    assert prior[seen - 3 : seen + 4].sum() > 0.3
    assert prior.min() >= 0.01 * grid.vague.min()  # nothing ruled out
    steps = tally.steps
    tally.step(pages)
    assert tally.steps == steps + 1  # after the first, one step a read


def test_records_read_a_batch_at_a_time_teach_what_all_of_them_at_once_do() -> None:
    # the planner reads every page's record in batches of the store's (docs/freshness.md) and
    # keeps their runs as 32-bit arrays: the prior learned is the one every decoded record gives
    # at once, and the hazard's window is the pages checked last, oldest first
    grid = RateGrid(HOUR, 30 * DAY)
    rng = random.Random(3)
    records: list[tuple[str | None, int | None]] = []
    pages = []
    for i in range(300):
        checks = [Check(DAY * rng.uniform(0.2, 5), rng.random() < 0.4) for _ in range(8)]
        runs = watch(grid, checks, 1e-3)
        pages.append(runs)
        factor = rng.uniform(0.1, 5)
        text = encode(Record(8, 3, runs, factor, DAY, "h", 1e-5))
        records.append((text, 1000 + (i * 7919) % 300))  # last visits in no order
    records.insert(5, ("not a record", 5))
    whole = PriorTally(grid)
    whole.step(pages)
    batched = Learning(HOUR, 30 * DAY)
    read = RecordsRead()
    for i in range(0, len(records), 7):
        read.add(records[i : i + 7])
    batched.read(read)
    assert read.pages == 300
    assert batched.prior.steps == whole.steps
    assert np.exp(batched.log_prior) == pytest.approx(np.exp(whole.log_prior), abs=1e-6)
    last = sorted(range(300), key=lambda i: 1000 + (i * 7919) % 300)[-HAZARD_WINDOW:]
    assert len(batched.hazard.factors) == min(300, HAZARD_WINDOW)
    assert list(batched.hazard.factors) == pytest.approx(
        [decode(records[i + (i >= 5)][0]).factor for i in last]  # type: ignore[union-attr]
    )
