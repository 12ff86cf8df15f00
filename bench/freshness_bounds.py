"""Bounds on what an estimator can do after a rate shift: bench/freshness_sim.py with more
policies, the first four told something no crawler is told (same flags, e.g.)

    uv run python bench/freshness_bounds.py --order overdue \\
        --policies posterior bayes reset stopped --by-kind --pages 2500 --budget 20 \\
        --rates -3.38 -0.38 --static 0.2 --ticks 3840 --shift --settled 2880 --dated

- ``stopped``: ``freshness``, but a page that stopped changing at the shift is known to have
  stopped from its first visit after it (the most freeing the stopped pages' visits can buy);
- ``reset``: ``freshness`` told *when* every page's rate moved (not the new rate): at its first
  visit after the shift a page's record starts again from the prior;
- ``bayes``: the posterior mean rate under the world's true distribution of rates (a fifth never
  changing or whatever ``--static`` says, the rest log-uniform: a grid of 61 rates), from the
  checks since the page's rate moved, told exactly when it moved (the changes since the shift,
  dated or not as the run is): an estimator that knows everything but each page's new rate,
  which it learns by visiting, as well as Bayes allows; each page is given the interval its
  posterior mean rate gets from the allocation, as the freshness policy does with its estimate;
- ``posterior``: ``bayes`` deciding on the whole posterior instead: each page's interval is the
  one at which a visit's expected marginal freshness over the rates it may have equals the
  allocation's multiplier (scaled so that the intervals held spend the budget).

The oracle (bench/freshness_sim.py) is told the new rates at the shift; ``learn`` each page's new
rate at its first visit after it. ``bayes`` bounds every policy that allocates by one estimated
rate a page (as litecrawl's does); ``posterior`` shows what deciding on the whole posterior adds.

``posterior``'s decision, not told when the rates moved:

- ``detect``: the grid's record dropped when litecrawl's estimator believes a change came from a
  new rate or that the page stopped (its chances over 0.5): hard change detection;
- ``changepoint``: Bayesian online change-point detection per page (a run-length posterior
  truncated to four runs, each with the grid's posterior from the checks since; the page's
  posterior is the mixture over its runs), the hazard fixed at one move a page in 3840 ticks;
  ``changepoint-monthly`` at one every max_interval;
- ``learned``: ``changepoint`` with the hazard learned from the crawl (EM on the last 400
  checks' Bayes factors: the share from a new rate, over their mean interval);
- ``vague``: ``learned`` not told the true distribution of rates either (log-uniform over
  [0.1 / max_interval, 1 / min_interval], half "never"; a first visit gets new_interval);
  ``empirical``: ``vague``'s prior learned from the crawl daily (the mean of the pages'
  posteriors: an EM step), a prior a crawler can have: litecrawl's ``freshness`` schedule since
  session 13 (src/litecrawl/schedule/changepoint.py; tests/test_schedule_changepoint.py checks
  that the same checks give the same posterior).
"""

from __future__ import annotations

import math
import sys
from collections import deque
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freshness_sim as sim
from freshness_sim import MAX, MIN, NEW, ChangeHistory, Freshness, World

from litecrawl.schedule.allocate import _R_ENOUGH, _g
from litecrawl.schedule.planner import QUIET_FOR


class Stopped(Freshness):
    """``freshness``, a page that stopped at the shift known to have from its next visit on."""

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        w = self.world
        if t >= w.shift_at and w.after is not None and w.rates[page] > 0 and not w.after[page]:
            self.rate[page] = 1e-12  # the interval it is given is max_interval
            self.fetched[page] = t
            return self._next(page, t, due)
        return super().visited(page, t, due, changed, age)

    def _next(self, page: int, t: float, due: float) -> float:
        interval = min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
        self.spend.set_due(interval, self.held.get(page))
        self.held[page] = interval
        return due + interval if t - interval < due <= t else t + interval


class Reset(Freshness):
    """``freshness`` told when every page's rate moved: its record starts again at its first
    visit after the shift (the checks since then are all it has)."""

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is not None and self.fetched[page] < self.world.shift_at <= t:
            self.hist[page] = ChangeHistory()
        return super().visited(page, t, due, changed, age)


class Bayes(Stopped):
    """The posterior mean rate under the true distribution of rates, from the checks since the
    page's rate moved (told when: the shift)."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        changing = [r for r in world.rates if r > 0]
        lo, hi = math.log10(min(changing)), math.log10(max(changing))
        self.grid = np.concatenate([[0.0], np.logspace(lo, hi, 61)])
        static = 1 - len(changing) / len(world.rates)
        prior = np.concatenate([[static], np.full(61, (1 - static) / 61)])
        with np.errstate(divide="ignore"):
            self.log_prior, self.log_grid = np.log(prior), np.log(self.grid)
        self.log_likelihood = np.zeros((n, len(self.grid)))
        super().__init__(n, budget, world)
        self.rate = [self._mean(p) for p in range(n)]
        self.tick(0.0)

    def _weights(self, page: int) -> np.ndarray:
        """The page's posterior over the grid of rates (summing to 1)."""
        x = self.log_prior + self.log_likelihood[page]
        w = np.exp(x - x.max())
        return w / w.sum()

    def _mean(self, page: int) -> float:
        return max(float((self._weights(page) * self.grid).sum()), 1e-12)

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        w = self.world
        if changed is not None:
            since = self.fetched[page]
            if since < w.shift_at <= t:
                self.log_likelihood[page] = 0.0  # what came before was another rate's
                since = w.shift_at
            v = w.version(page, t)
            with np.errstate(divide="ignore"):
                if v == w.version(page, since):
                    self.log_likelihood[page] -= self.grid * (t - since)
                elif age is not None:  # the last change's date: density λ e^{-λ a}
                    a = t - w.changes[page][v - 1]
                    self.log_likelihood[page] += self.log_grid - self.grid * a
                else:  # a change somewhere since
                    self.log_likelihood[page] += np.log(-np.expm1(-self.grid * (t - since)))
            self.rate[page] = self._mean(page)
        self.fetched[page] = t
        return self._next(page, t, due)


class Posterior(Bayes):
    """``bayes`` deciding on the whole posterior: a page's interval is the one at which the
    expected marginal freshness of a visit over the rates it may have, Σ w(λ) g(λ/f) / λ,
    equals the allocation's multiplier (scaled so that the intervals held spend the budget), not
    the one its mean rate would get. A page that may be fast or slow is neither given up on as
    fast nor visited as if it were certainly slow."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        self.scale = 1.0  # on the multiplier: the point allocation's is not this rule's
        super().__init__(n, budget, world)

    def tick(self, t: float) -> None:
        super().tick(t)
        if t > 0 and self.spend.pages >= self.n and self.spend.held > 0:
            self.scale *= (self.spend.held / self.budget) ** (1 / NEW)
            self.scale = min(max(self.scale, 1e-3), 1e3)

    def _interval(self, page: int) -> float:
        level = self.alloc.level
        mu = math.sqrt(level.low * level.high) if level.low > 0 < level.high else level.high
        mu *= self.scale
        w = self._weights(page)
        rates, weights = self.grid[1:], w[1:]
        f_min, f_max = 1 / MAX, 1 / MIN
        cap = min(f_max, max(float((w * self.grid).sum()) / _R_ENOUGH, f_min))
        if mu <= 0 or math.isinf(mu):
            return 1 / (cap if mu <= 0 else f_min)

        def gain(f: float) -> float:
            return float((weights * _g(rates / f) / rates).sum())

        if gain(f_min) <= mu:
            return MAX
        if gain(cap) >= mu:
            return 1 / cap
        lo, hi = math.log(f_min), math.log(cap)
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gain(math.exp(mid)) > mu else (lo, mid)
        return 1 / math.exp((lo + hi) / 2)

    def _next(self, page: int, t: float, due: float) -> float:
        interval = min(max(self._interval(page), MIN), MAX)
        self.spend.set_due(interval, self.held.get(page))
        self.held[page] = interval
        return due + interval if t - interval < due <= t else t + interval


class Detect(Posterior):
    """``posterior`` not told when the rates moved, with litecrawl's hard change detection: the
    grid's record is dropped when litecrawl's estimator believes a change came from a new rate
    (its restart chance over 0.5) or that the page stopped (its stopped chance passing 0.5;
    what is kept then is the quiet since the last change)."""

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is not None:
            interval = t - self.fetched[page]
            before = self.hist[page]
            moved = changed and self.est.restarted(before, interval, age) > 0.5
            self.hist[page] = self.est.observe(before, interval, changed, age)
            self.stops.observe(self.est, self.hist[page], interval)
            stopped = (
                not changed
                and self.est.stopped(self.hist[page]) > 0.5
                and self.est.stopped(before) <= 0.5
            )
            if moved or stopped:
                self.log_likelihood[page] = 0.0
                if stopped:
                    self.log_likelihood[page] -= self.grid * self.hist[page].quiet
            if changed or not stopped:
                self.log_likelihood[page] += self._check(interval, changed, age)
            self.rate[page] = self._mean(page)
        self.fetched[page] = t
        return self._next(page, t, due)

    def _check(self, interval: float, changed: bool, age: float | None) -> np.ndarray:
        """A check's log-likelihood over the grid of rates."""
        with np.errstate(divide="ignore"):
            if not changed:
                return -self.grid * interval
            if age is not None:
                return self.log_grid - self.grid * age
            return np.log(-np.expm1(-self.grid * interval))


class ChangePoint(Detect):
    """``posterior`` not told when the rates moved: Bayesian online change-point detection per
    page (Adams and MacKay, 2007). A page keeps ``RUNS`` run lengths: each a hypothesis that its
    rate last moved just before a given check, with the grid's log-likelihood of the checks
    since and its posterior chance; at each check every run grows by the chance its rate held
    over the interval (1 - H, H = 1 - e^{-h t} for a hazard h a tick) times its predictive of
    the check, a new run is born with H times the prior's predictive, and the least likely of
    ``RUNS + 1`` is dropped. The page's posterior of its current rate is the mixture over its
    runs (nothing is dropped at once on one check), decided on whole as ``posterior`` does."""

    RUNS = 4
    HAZARD = 1 / 3840  # a tick: one move a page in the run

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self._set_prior()
        self.runs = np.zeros((n, self.RUNS, len(self.grid)))
        self.mass = np.full((n, self.RUNS), -np.inf)  # each run's log chance
        self.mass[:, 0] = 0.0
        self.rate = [self._mean(p) for p in range(n)]
        self.tick(0.0)

    def _set_prior(self) -> None:
        pass  # the world's true distribution of rates, as ``bayes``'s

    def _weights(self, page: int) -> np.ndarray:
        if not hasattr(self, "runs"):
            return super()._weights(page)
        live = np.isfinite(self.mass[page])
        x = self.log_prior + self.runs[page][live]
        post = np.exp(x - x.max(axis=1, keepdims=True))
        post /= post.sum(axis=1, keepdims=True)
        m = np.exp(self.mass[page][live] - self.mass[page][live].max())
        return np.asarray((m / m.sum()) @ post)

    def _hazard(self, interval: float) -> float:
        """H: the chance the page's rate moved within ``interval``."""
        return -math.expm1(-self.HAZARD * interval)

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is not None:
            interval = t - self.fetched[page]
            ell = self._check(interval, changed, age)
            mass, runs = self.mass[page], self.runs[page]
            live = np.isfinite(mass)
            x = self.log_prior + runs[live]
            h = self._hazard(interval)
            grown = np.full(self.RUNS, -np.inf)
            grown[live] = mass[live] + math.log1p(-h) + _lse(x + ell) - _lse(x)
            born = math.log(h) + float(_lse(self.log_prior + ell)) if h > 0 else -np.inf
            masses = np.concatenate([grown, [born]])
            keep = np.argsort(-masses)[: self.RUNS]
            kept = masses[keep]
            self.mass[page] = kept - _lse(kept[np.isfinite(kept)])
            self.runs[page] = np.concatenate([runs + ell, ell[None, :]])[keep]
            self.rate[page] = self._mean(page)
        self.fetched[page] = t
        return self._next(page, t, due)


class Monthly(ChangePoint):
    """``changepoint`` with a hazard of one move a page every max_interval."""

    HAZARD = 1 / MAX


class Learned(ChangePoint):
    """``changepoint`` with the hazard learned from the crawl: the share ``pi`` of the last
    ``WINDOW`` checks that came from a new rate, by EM on their Bayes factors (the prior's
    predictive of the check over the page's), made a hazard a tick by the checks' mean interval
    (at least ``HAZARD``): low while the site's rates hold, high once many moved."""

    WINDOW = 400  # checks

    def __init__(self, n: int, budget: int, world: World) -> None:
        self.factors: deque[float] = deque(maxlen=self.WINDOW)
        self.intervals: deque[float] = deque(maxlen=self.WINDOW)
        self.pi = 0.01
        super().__init__(n, budget, world)

    def tick(self, t: float) -> None:
        super().tick(t)
        if len(self.factors) >= 50:
            b, pi = np.array(self.factors), self.pi
            for _ in range(20):
                pi = float((pi * b / (pi * b + 1 - pi)).mean())
            self.pi = min(max(pi, 1e-6), 0.5)

    def _hazard(self, interval: float) -> float:
        mean = sum(self.intervals) / len(self.intervals) if self.intervals else NEW
        return -math.expm1(-max(self.pi / mean, self.HAZARD) * interval)

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is not None:
            interval = t - self.fetched[page]
            self.intervals.append(interval)
            p = np.exp(self._check(interval, changed, age))
            page_odds = float((self._weights(page) * p).sum())
            prior_odds = float((np.exp(self.log_prior) * p).sum())
            if page_odds > 0:
                self.factors.append(min(prior_odds / page_odds, 1e6))
        return super().visited(page, t, due, changed, age)


class Vague(Learned):
    """``learned`` not told the world's distribution of rates either: a prior log-uniform over
    [0.1 / max_interval, 1 / min_interval] (41 rates), half of it "never changes"."""

    def _set_prior(self) -> None:
        self.grid = np.concatenate([[0.0], np.logspace(math.log10(0.1 / MAX), 0.0, 41) / MIN])
        prior = np.concatenate([[0.5], np.full(41, 0.5 / 41)])
        with np.errstate(divide="ignore"):
            self.log_prior, self.log_grid = np.log(prior), np.log(self.grid)

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is None:  # a first visit: new_interval, as litecrawl's planner gives it
            self.fetched[page] = t
            self.spend.set_due(NEW, self.held.get(page))
            self.held[page] = NEW
            return t + NEW
        return super().visited(page, t, due, changed, age)


class Empirical(Vague):
    """``vague``'s prior learned from the crawl every day (``NEW`` ticks): the mean of the pages'
    posteriors under it (an EM step towards the distribution of rates that makes the crawl's
    checks likeliest), with a hundredth of the vague prior kept so no rate is ruled out. The
    budget followed as litecrawl's planner does since session 13 (src/litecrawl/schedule/
    planner.py's ``Spend``): a first visit's new_interval is not counted as the plan's (a page
    counts at the budget's share until its first check), and the scale on the posterior
    decision is ``Spend.scale``, moved each tick while the budget binds (not only once every
    page has been set due). A page not seen to change for ``QUIET_FOR`` max_intervals since its
    first visit or its last change is given max_interval, as the planner's promise to pages
    that never change (the planner counts the quiet its record's runs hold, at most this)."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        self.quiet_since: dict[int, float] = {}  # the first visit or the last change seen
        super().__init__(n, budget, world)

    def tick(self, t: float) -> None:
        if t > 0 and t % NEW == 0 and hasattr(self, "runs"):
            mean = np.mean([self._weights(p) for p in range(self.n)], axis=0)
            vague = np.concatenate([[0.5], np.full(len(self.grid) - 1, 0.5 / (len(self.grid) - 1))])
            self.log_prior = np.log(0.99 * mean + 0.01 * vague)
        super().tick(t)
        self.scale = self.spend.scale

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is None or changed:
            self.quiet_since[page] = t
        if changed is None:  # a first visit: new_interval, not counted as the plan's
            self.fetched[page] = t
            return t + NEW
        return super().visited(page, t, due, changed, age)

    def _next(self, page: int, t: float, due: float) -> float:
        if t - self.quiet_since.get(page, t) < QUIET_FOR * MAX:
            return super()._next(page, t, due)
        interval = float(MAX)  # the promise to pages that never change (planner.QUIET_FOR)
        self.spend.set_due(interval, self.held.get(page))
        self.held[page] = interval
        return due + interval if t - interval < due <= t else t + interval


def _lse(x: np.ndarray) -> np.ndarray:
    """log Σ e^x over the last axis."""
    m = x.max(axis=-1, keepdims=True)
    return np.asarray(np.squeeze(m, -1) + np.log(np.exp(x - m).sum(axis=-1)))


sim.POLICIES.update(
    {
        "stopped": Stopped,
        "reset": Reset,
        "bayes": Bayes,
        "posterior": Posterior,
        "detect": Detect,
        "changepoint": ChangePoint,
        "changepoint-monthly": Monthly,
        "learned": Learned,
        "vague": Vague,
        "empirical": Empirical,
    }
)

if __name__ == "__main__":
    sim.main()
