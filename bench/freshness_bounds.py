"""Bounds on what an estimator can do after a rate shift: bench/freshness_sim.py with four more
policies, each told something no crawler is told (same flags, e.g.)

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
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freshness_sim as sim
from freshness_sim import MAX, MIN, NEW, ChangeHistory, Freshness, World

from litecrawl.schedule.allocate import _R_ENOUGH, _g


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

    def _mean(self, page: int) -> float:
        x = self.log_prior + self.log_likelihood[page]
        w = np.exp(x - x.max())
        return max(float((w * self.grid).sum() / w.sum()), 1e-12)

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
        x = self.log_prior + self.log_likelihood[page]
        w = np.exp(x - x.max())
        w /= w.sum()
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


sim.POLICIES.update({"stopped": Stopped, "reset": Reset, "bayes": Bayes, "posterior": Posterior})

if __name__ == "__main__":
    sim.main()
