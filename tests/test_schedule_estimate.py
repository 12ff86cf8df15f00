"""The change-rate estimator against known histories."""

from __future__ import annotations

import math
import random

import pytest

from litecrawl import ConfigError
from litecrawl.schedule import ChangeHistory, Estimator


def history(est: Estimator, checks: list[tuple[float, bool]]) -> ChangeHistory:
    h = ChangeHistory()
    for interval, changed in checks:
        h = est.observe(h, interval, changed)
    return h


def test_a_new_page_has_the_prior_rate() -> None:
    assert Estimator(prior_rate=1 / 86400).rate(ChangeHistory()) == pytest.approx(1 / 86400)


@pytest.mark.parametrize(("n", "x"), [(10, 4), (20, 1), (5, 4), (100, 50)])
def test_equal_intervals_give_the_maximum_likelihood_estimate(n: int, x: int) -> None:
    # Cho & Garcia-Molina: X changes seen in n checks every I seconds: λ = log(n / (n - X)) / I
    est = Estimator(prior_rate=1e-3, prior_weight=1e-9, memory=1e12)
    h = history(est, [(100.0, i < x) for i in range(n)])
    assert (h.checks, h.changes) == (n, x)
    assert est.rate(h) == pytest.approx(math.log(n / (n - x)) / 100.0, rel=1e-5)


def test_unchanged_checks_lower_the_rate_by_the_exposure() -> None:
    est = Estimator(prior_rate=1 / 1000, prior_weight=2.0, memory=1e12, static_share=0.0)
    h = history(est, [(500.0, False), (1500.0, False)])
    # the prior's 2 changes over 2000 s, then 2000 s more without one
    assert est.rate(h) == pytest.approx(2 / 4000)


def test_one_observation_does_not_decide() -> None:
    est = Estimator(prior_rate=1 / 3600, prior_weight=1.0)
    changed = est.rate(history(est, [(3600.0, True)]))
    unchanged = est.rate(history(est, [(3600.0, False)]))
    # unchanged: half the Gamma's rate, and "never changes" twice as likely as at first (2/3)
    assert 1 / 3600 / 4 <= unchanged < 1 / 3600 < changed <= 2 / 3600


def test_dated_changes_give_changes_over_exposure() -> None:
    # a Last-Modified inside the interval: the last change was `age` seconds before the fetch
    est = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12)
    h = ChangeHistory()
    for interval, age in [(5000.0, 300.0), (8000.0, 700.0), (4000.0, 4000.0)]:
        h = est.observe(h, interval, True, age)
    h = est.observe(h, 2000.0, False)
    assert (h.checks, h.changes) == (4, 3)
    assert est.rate(h) == pytest.approx((1 + 3) / (1000 + 300 + 700 + 4000 + 2000))


def test_a_date_outside_the_interval_is_not_believed() -> None:
    est = Estimator(prior_rate=1 / 1000, memory=1e12)
    dated = est.observe(ChangeHistory(), 500.0, True, 900.0)  # before the previous fetch
    undated = est.observe(ChangeHistory(), 500.0, True)
    assert dated == undated


def test_always_changed_stays_finite_and_grows() -> None:
    est = Estimator(prior_rate=1 / 3600)
    rates = [est.rate(history(est, [(3600.0, True)] * n)) for n in (1, 5, 20)]
    assert all(math.isfinite(r) for r in rates)
    assert rates[0] < rates[1] < rates[2]


@pytest.mark.parametrize("true_rate", [0.2, 1.0, 3.0])
def test_irregular_intervals_recover_the_rate(true_rate: float) -> None:
    rng = random.Random(7)
    est = Estimator(prior_rate=1.0, memory=1e12)
    checks = []
    for _ in range(3000):
        t = math.exp(rng.uniform(math.log(0.25), math.log(4.0)))
        checks.append((t, rng.random() < -math.expm1(-true_rate * t)))
    assert est.rate(history(est, checks)) == pytest.approx(true_rate, rel=0.12)


def test_a_shifted_rate_is_followed() -> None:
    # 200 quiet checks, then the page starts changing at every check
    before = [(3600.0, False)] * 200
    after = [(3600.0, True)] * 40
    forgetful = Estimator(prior_rate=1 / 3600, memory=10)
    stubborn = Estimator(prior_rate=1 / 3600, memory=1e12)
    assert forgetful.rate(history(forgetful, before + after)) > 1 / 3600
    assert stubborn.rate(history(stubborn, before + after)) < 1 / 3600 / 4


def test_a_page_that_stops_changing_is_followed() -> None:
    # changed at each of 40 checks 6 hours apart (~7.6 a day by the estimate), then quiet: each
    # quiet check fades the record by the changes it expected, so the estimate falls within
    # days; without that fading the 40 changes would weigh until months of quiet outweighed them
    # (0.89 a day after 10 days, 0.33 after 30)
    day = 86400.0
    est = Estimator(prior_rate=1 / day, memory=10)
    busy = history(est, [(day / 4, True)] * 40)
    assert est.rate(busy) > 7 / day
    assert est.rate(history(est, [(day / 4, True)] * 40 + [(day / 4, False)] * 40)) < 0.5 / day
    assert est.rate(history(est, [(day / 4, True)] * 40 + [(day / 4, False)] * 120)) < 0.1 / day


def test_a_page_that_never_changes_keeps_its_whole_history() -> None:
    est = Estimator(prior_rate=1 / 3600, memory=5)
    h = history(est, [(3600.0, True)] * 5 + [(3600.0, False)] * 400)
    assert est.rate(h) < 1 / 3600 / 50


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"prior_rate": 0.0}, "prior_rate"),
        ({"prior_rate": 1.0, "prior_weight": -1.0}, "prior_weight"),
        ({"prior_rate": 1.0, "memory": 0.5}, "memory"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Estimator(**kwargs)


def test_quiet_checks_make_never_changing_likelier() -> None:
    # Bayes between "never changes" (half the pages, a priori) and the Gamma prior: 30 quiet days
    # leave (β / (β + 30 d))^α of the Gamma's pages unchanged, β = 0.5 d, α = 0.5
    day = 86400.0
    est = Estimator(prior_rate=1 / day, prior_weight=0.5, static_share=0.5)
    h = history(est, [(day, False)] * 30)
    gamma = 0.5 / (0.5 * day + 30 * day)
    still = (0.5 / 30.5) ** 0.5
    assert est.rate(h) == pytest.approx(gamma * still / (0.5 + 0.5 * still))
    assert Estimator(prior_rate=1 / day, static_share=0.0).rate(h) == pytest.approx(gamma)
    # one change seen: the page does change, the Gamma alone estimates how often
    changed = est.observe(h, day, True, age=day / 2)
    assert est.rate(changed) == pytest.approx((0.5 + 1) / (0.5 * day + 0.9 * 30 * day + day / 2))
