"""The change-rate estimator against known histories."""

from __future__ import annotations

import dataclasses
import heapq
import math
import random

import pytest

from litecrawl import ConfigError
from litecrawl.schedule import ChangeHistory, Estimator, StopShare


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


def _stopped_page(est: Estimator, quiet_checks: int) -> ChangeHistory:
    # dated changes 300 and 700 s before their fetches, then quiet checks of 2000 s each
    h = ChangeHistory()
    for interval, age in [(5000.0, 300.0), (8000.0, 700.0)]:
        h = est.observe(h, interval, True, age)
    for _ in range(quiet_checks):
        h = est.observe(h, 2000.0, False)
    return h


def test_the_quiet_since_the_last_change_is_weighed_by_the_rate_then() -> None:
    # at the last change: (1 + 2) changes over 1000 s of prior and 1000 s of dated ages, 3/2000;
    # 700 s (its age) + 2 x 2000 s quiet since: the Gamma predictive (1 + λQ/k)^-k, k = 3
    est = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12)
    h = _stopped_page(est, 2)
    assert (h.quiet, h.last_rate, h.last_weight) == pytest.approx((4700.0, 1.5e-3, 3.0))
    assert est.quiet_chance(h) == pytest.approx((1 + 1.5e-3 * 4700 / 3) ** -3)
    # a change ends the quiet (dated: its age is the new quiet; undated: none)
    assert est.observe(h, 2000.0, True, 100.0).quiet == 100.0
    assert est.observe(h, 2000.0, True).quiet == 0.0


def test_without_a_share_of_stopped_pages_the_rate_is_the_plain_estimate() -> None:
    est = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12)
    h = _stopped_page(est, 5)
    assert est.stopped(h) == 0.0
    # (1 + 2) changes over 1000 s of prior, 1000 s of ages and 5 x 2000 s quiet
    assert est.rate(h) == pytest.approx(3 / 12000)


def test_a_long_quiet_stretch_is_read_as_a_stop_by_the_share_of_stopped_pages() -> None:
    est = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12)
    plain = est.rate(_stopped_page(est, 5))
    learned = dataclasses.replace(est, stopped_share=0.2)
    h = _stopped_page(est, 5)  # built without the share: no change of it starts it again
    # a page stops in place of its next change with chance 0.2; one still changing at 3/2000
    # stays quiet 10,700 s with chance (1 + λQ/k)^-k
    chance = (1 + 1.5e-3 * 10700 / 3) ** -3
    odds = 0.2 * (1 - chance) / (0.8 * chance)
    p = odds / (1 + odds)
    assert learned.stopped(h) == pytest.approx(p)
    since = (1 + 1) / (1000 + 10700)  # the prior's and the last change over the quiet since
    assert learned.rate(h) == pytest.approx((1 - p) * plain + p * since)
    assert learned.rate(h) < 0.75 * plain
    # just after a change the page is not believed stopped
    again = learned.observe(h, 2000.0, True, 0.0)
    assert learned.stopped(again) == 0.0


def test_a_record_kept_before_the_quiet_was_followed_follows_it_from_its_next_check() -> None:
    est = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12, stopped_share=0.2)
    h = _stopped_page(dataclasses.replace(est, stopped_share=0.0), 0)
    old = dataclasses.replace(h, quiet=0.0, last_rate=0.0, last_weight=0.0)
    assert est.stopped(old) == 0.0
    later = est.observe(old, 2000.0, False)
    assert later.quiet == 2000.0
    assert later.last_weight == pytest.approx(3.0)
    assert later.last_rate == pytest.approx(est.rate(old))


def _crawl_share(stop_after: float | None, share_stopped: float, seed: int) -> float:
    """StopShare after 100 days of 200 pages changing 0.1-1 times a day (a Last-Modified dates
    each change), each checked every half of its expected change; ``share_stopped`` of them stop
    changing on day ``stop_after``."""
    rng = random.Random(seed)
    day = 86400.0
    est = Estimator(prior_rate=1 / day)
    stops = StopShare(memory=200)
    rates = [10 ** rng.uniform(-1, 0) / day for _ in range(200)]
    histories = [ChangeHistory() for _ in rates]
    due = [(1 / (2 * rate), i) for i, rate in enumerate(rates)]
    heapq.heapify(due)
    while due[0][0] < 100 * day:
        t, i = heapq.heappop(due)
        interval = 1 / (2 * rates[i])
        stopped = stop_after is not None and i < share_stopped * 200 and t > stop_after * day
        p = -math.expm1(-rates[i] * interval)
        changed = not stopped and rng.random() < p
        # the last change's age: the exponential within the interval, backwards from the fetch
        age = -math.log1p(-rng.random() * p) / rates[i] if changed else None
        histories[i] = est.observe(histories[i], interval, changed, age)
        stops.observe(est, histories[i], interval)
        heapq.heappush(due, (t + interval, i))
    return stops.share


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_a_crawl_whose_pages_keep_changing_learns_no_share_of_stopped_pages(seed: int) -> None:
    assert _crawl_share(None, 0.0, seed) == 0.0


@pytest.mark.parametrize("seed", [1, 2])
def test_a_crawl_whose_pages_stop_learns_that_they_did(seed: int) -> None:
    assert 0.2 < _crawl_share(50.0, 0.3, seed) < 0.4


def _busy_page(est: Estimator) -> ChangeHistory:
    # five dated changes, each 100 s before a fetch 1000 s after the one before: (1 + 5) changes
    # over 1000 s of prior and 500 s of ages, 6/1500 a second
    h = ChangeHistory()
    for _ in range(5):
        h = est.observe(h, 1000.0, True, 100.0)
    return h


def test_a_change_the_record_makes_improbable_starts_the_record_again() -> None:
    plain = Estimator(prior_rate=1 / 1000, prior_weight=1.0, memory=1e12)
    learned = dataclasses.replace(plain, stopped_share=0.2)
    h = _busy_page(plain)
    assert (h.dated, h.exposure) == pytest.approx((5.0, 500.0))
    # then changed, last 4000 s before a fetch 5000 s on: a page changing as its record says
    # (Gamma(6, 6 / rate)) has its last change that long ago with the Lomax density below, a page
    # at a new rate (the prior, Gamma(1, 1000 s)) with the other; the share is the prior odds
    rate = learned.rate(h)
    beta = 6 / rate
    old = 6 / beta * (beta / (beta + 4000)) ** 7
    new = 1 / 1000 * (1000 / (1000 + 4000)) ** 2
    p = 0.2 * new / (0.2 * new + 0.8 * old)
    assert learned.restarted(h, 5000.0, 4000.0) == pytest.approx(p)
    assert p > 0.9
    after = learned.observe(h, 5000.0, True, 4000.0)
    # the record is dropped by that chance, but for the quiet since its last change (100 s)
    exposure = 500 * (1 - p) + 100 * p + 4000
    assert (after.dated, after.exposure) == pytest.approx((5 * (1 - p) + 1, exposure))
    assert learned.rate(after) < 0.5 * plain.rate(plain.observe(h, 5000.0, True, 4000.0))
    # a change as the record expects it keeps the record nearly whole
    assert learned.restarted(h, 1000.0, 200.0) < 0.1
    # without a share learned (a crawl whose pages keep their rates) nothing restarts
    assert plain.restarted(h, 5000.0, 4000.0) == 0.0
    assert plain.observe(h, 5000.0, True, 4000.0).dated == pytest.approx(6.0)


def test_a_page_taken_for_static_that_changes_is_estimated_from_its_change() -> None:
    day = 86400.0
    plain = Estimator(prior_rate=1 / day, prior_weight=0.5)
    learned = dataclasses.replace(plain, stopped_share=0.1)
    h = history(plain, [(day, False)] * 60)
    # an undated change after 30 days: the chance of one under the record's rate (Gamma(0.5,
    # 0.5 / rate)) against under the prior's (Gamma(0.5, 0.5 days))
    beta = 0.5 / learned.rate(h)
    old = 1 - (beta / (beta + 30 * day)) ** 0.5
    new = 1 - (0.5 * day / (0.5 * day + 30 * day)) ** 0.5
    p = 0.1 * new / (0.1 * new + 0.9 * old)
    assert learned.restarted(h, 30 * day, None) == pytest.approx(p)
    after = learned.observe(h, 30 * day, True)
    assert after.exposure == pytest.approx(60 * day * 0.9 * (1 - p))
    assert learned.rate(after) > 2 * plain.rate(plain.observe(h, 30 * day, True))


class _NoRestarts(Estimator):
    """The estimator before a change could start the record again (session 7)."""

    def restarted(self, history: ChangeHistory, interval: float, age: float | None) -> float:
        return 0.0


def _log_error(est: Estimator, seed: int) -> float:
    """Mean |log(estimate / rate)| over 200 pages (0.1-1 changes a day, dated) whose rates fall
    10x on day 50, 20 days later; each page is checked every two days and the estimator's share
    is the one StopShare learns from the checks, as the planner sets it."""
    rng = random.Random(seed)
    day = 86400.0
    stops = StopShare(memory=200)
    rates = [10 ** rng.uniform(-1, 0) / day for _ in range(200)]
    histories = [ChangeHistory() for _ in rates]
    t = 0.0
    while t < 70 * day:
        t += 2 * day
        est = dataclasses.replace(est, stopped_share=stops.share)
        for i, rate in enumerate(rates):
            rate = rate / 10 if t > 50 * day else rate
            p = -math.expm1(-rate * 2 * day)
            changed = rng.random() < p
            age = -math.log1p(-rng.random() * p) / rate if changed else None
            histories[i] = est.observe(histories[i], 2 * day, changed, age)
            stops.observe(est, histories[i], 2 * day)
    errors = [abs(math.log(est.rate(h) * 10 / r)) for h, r in zip(histories, rates, strict=True)]
    return sum(errors) / len(errors)


@pytest.mark.parametrize("seed", [1, 2])
def test_restarts_follow_a_site_whose_rates_fell(seed: int) -> None:
    day = 86400.0
    with_restarts = _log_error(Estimator(prior_rate=1 / day), seed)
    without = _log_error(_NoRestarts(prior_rate=1 / day), seed)
    assert with_restarts < 0.95 * without
