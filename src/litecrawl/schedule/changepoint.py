"""How often does a page change, and when did that move? (docs/freshness.md)

A re-fetch is a check ``interval`` seconds after the previous fetch: the page changed or not,
and a change may come with the date of the last one (a credible Last-Modified, ``age`` seconds
before the fetch). For changes arriving as a Poisson process of rate λ the check's likelihood is
e^{-λt} (no change), λ e^{-λa} (a dated change) or 1 - e^{-λt} (an undated one).

A page's rate can move (a site redesigned, a page that stopped changing), so each page keeps a
few *runs* (Bayesian online change-point detection, Adams and MacKay 2007): each the hypothesis
that the rate last moved just before a given check, with the checks since and its log chance.
At a check every run grows by the chance the rate held over the interval (1 - H) times its
predictive of the check, a new run is born with H times the prior's predictive (H = 1 - e^{-h t}
for a hazard h a second), and the least likely of ``RUNS + 1`` is dropped. The page's posterior
over a grid of rates is the mixture of its runs' posteriors: one check drops nothing at once, a
move shows as the new run's chance growing check by check.

A run is four numbers besides its chance: ``dated`` changes D, ``exposure`` E (quiet intervals
and dated changes' ages), ``undated`` changes X and the sum of their intervals T, for the
log-likelihood D log λ - λE + X log(1 - e^{-λT/X}) (the undated changes stood for by X equal
intervals: exact when they are equal, a little above the product of their chances otherwise).

The grid is [0.1 / max_interval, 1 / min_interval], 41 rates log-spaced, and "never changes"
(λ = 0). The prior over it is learned from the crawl (:class:`PriorTally`): the mean of the
pages' posteriors, with a hundredth of a vague prior kept (half "never", half log-uniform); the
hazard too (:class:`Hazard`): the share of recent checks a new rate explains better.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from litecrawl.schedule.record import Check, Run, decode

__all__ = ["RUNS", "Hazard", "Learning", "PriorTally", "RateGrid", "RecordsRead", "observe"]

Array = npt.NDArray[np.float64]
RUNS = 4  # hypotheses of when a page's rate last moved
GRID_RATES = 41
KEEP_VAGUE = 0.01  # of the vague prior kept in the learned one, so no rate is ruled out
HAZARD_WINDOW = 400  # checks the hazard is learned from
HAZARD_EVERY = 16 / 3  # the least hazard: one move a page in this many max_intervals (160 days)
FACTOR_MOST = 1e6
_EM_BATCH = 4096  # pages an EM step's arrays hold at once (pages x RUNS x grid, 64-bit)


class RateGrid:
    """The rates a page may change at (per second; 0 first: "never"), from the schedule's
    bounds, and the log-likelihoods of runs and checks over them."""

    def __init__(self, min_interval: float, max_interval: float) -> None:
        changing = np.logspace(math.log10(0.1 / max_interval), math.log10(1 / min_interval),
                               GRID_RATES)  # fmt: skip
        self.rates: Array = np.concatenate([[0.0], changing])
        with np.errstate(divide="ignore"):
            self.log_rates: Array = np.log(self.rates)
        vague = np.concatenate([[0.5], np.full(GRID_RATES, 0.5 / GRID_RATES)])
        self.vague: Array = vague

    def log_likelihood(self, stats: Array) -> Array:
        """Runs' log-likelihoods over the grid: ``stats`` (..., 4) of D, E, X, T -> (..., G)."""
        d, e = stats[..., 0:1], stats[..., 1:2]
        out = np.empty((*stats.shape[:-1], len(self.rates)))
        out[..., 1:] = d * self.log_rates[1:] - e * self.rates[1:]
        undated = stats[..., 2] > 0
        if undated.any():
            x, t = stats[undated][:, 2:3], stats[undated][:, 3:4]
            with np.errstate(divide="ignore"):  # an interval of 0: no chance of a change
                out[undated, 1:] += x * np.log(-np.expm1(-self.rates[1:] * (t / x)))
        # "never changes": no chance of any change seen
        out[..., 0] = np.where((stats[..., 0] > 0) | undated, -np.inf, 0.0)
        return out

    def check_log_likelihood(self, check: Check) -> Array:
        """One check's log-likelihood over the grid."""
        with np.errstate(divide="ignore"):
            if not check.changed:
                return np.asarray(-self.rates * check.interval)
            if check.age is not None:
                return np.asarray(self.log_rates - self.rates * check.age)
            return np.asarray(np.log(-np.expm1(-self.rates * check.interval)))

    def weights(self, runs: Sequence[Run], log_prior: Array) -> Array:
        """The page's posterior over the grid: its runs' posteriors mixed by their chances."""
        stats, mass = _arrays([runs or (Run(),)])
        return np.asarray(self.weights_of(stats, mass, log_prior)[0])

    def weights_of(self, stats: Array, mass: Array, log_prior: Array) -> Array:
        """Many pages' posteriors at once: ``stats`` (pages, RUNS, 4), ``mass`` (pages, RUNS),
        -inf for a run a page does not have."""
        x = log_prior + self.log_likelihood(stats)
        top = x.max(axis=-1, keepdims=True)
        post = np.exp(x - np.where(np.isfinite(top), top, 0.0))
        post /= post.sum(axis=-1, keepdims=True)
        m = np.exp(mass - mass.max(axis=-1, keepdims=True))
        m /= m.sum(axis=-1, keepdims=True)
        return np.asarray(np.einsum("pr,prg->pg", m, post), dtype=np.float64)

    def mean(self, weights: Array) -> float:
        """The posterior mean rate (> 0, so a page taken for static is still counted)."""
        return max(float(weights @ self.rates), 1e-300)


def observe(
    grid: RateGrid, runs: Sequence[Run], check: Check, log_prior: Array, hazard: float
) -> tuple[tuple[Run, ...], Array, float | None]:
    """The runs after ``check`` (``hazard``: the chance the rate moved over its interval), the
    page's posterior after it (:meth:`RateGrid.weights` of those runs), and the check's Bayes
    factor: the prior's predictive of it over the page's, how much better a new rate explains
    it (what :class:`Hazard` learns from; None when the page's posterior gives the check no
    chance at all)."""
    runs = tuple(runs) or (Run(),)
    ell = grid.check_log_likelihood(check)
    if not np.isfinite(ell).any():
        # a check no rate explains (a change seen over no time at all: a sitemap fetched twice
        # within a second) tells nothing: the page's runs stay as they were
        return runs, grid.weights(runs, log_prior), None
    stats, masses_before = _arrays([runs])
    n = len(runs)
    mass = masses_before[0, :n]
    x = log_prior + grid.log_likelihood(stats[0, :n])
    before = _lse(x)
    predictive = _lse(x + ell) - before  # each run's, of this check
    # a hazard of 1 (an interval hundreds of max_intervals long: a crawl resumed after months)
    # says the rate surely moved: no run grows, the new one alone is left
    stay = math.log1p(-hazard) if hazard < 1 else -math.inf
    grown = mass + stay + predictive
    prior_odds = float(_lse(log_prior + ell))
    born = math.log(hazard) + prior_odds if hazard > 0 else -math.inf
    masses = np.concatenate([grown, [born]])
    keep = [int(i) for i in np.argsort(-masses)[:RUNS] if np.isfinite(masses[i])]
    total = float(_lse(masses[keep]))
    candidates = [*runs, Run()]
    after = tuple(candidates[i].with_check(check, float(masses[i]) - total) for i in keep)
    rows = np.concatenate([x + ell, (log_prior + ell)[None, :]])[keep]
    post = np.exp(rows - rows.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    weights = np.exp(masses[keep] - total) @ post
    m = mass - float(_lse(mass))
    page_odds = float(_lse(m + predictive))
    if not math.isfinite(page_odds):
        return after, weights, None
    return after, weights, math.exp(min(prior_odds - page_odds, math.log(FACTOR_MOST)))


@dataclass(slots=True)
class Hazard:
    """The chance a page's rate moves, learned from the crawl: the share ``pi`` of the last
    ``HAZARD_WINDOW`` checks that came from a new rate, by EM on their Bayes factors (the
    mixture pi·BF + 1 - pi), over the checks' mean interval: a hazard a second, at least one
    move a page in ``HAZARD_EVERY`` max_intervals. Low while a site's rates hold, high after
    many moved."""

    max_interval: float
    pi: float = 0.01
    factors: deque[float] = field(default_factory=lambda: deque(maxlen=HAZARD_WINDOW))
    intervals: deque[float] = field(default_factory=lambda: deque(maxlen=HAZARD_WINDOW))

    def chance(self, interval: float) -> float:
        """H for a check ``interval`` seconds after the fetch before, counted in the mean."""
        self.intervals.append(interval)
        mean = sum(self.intervals) / len(self.intervals)
        if mean <= 0:  # checks over no time yet (re-fetches within their second): no move
            return 0.0
        floor = 1 / (HAZARD_EVERY * self.max_interval)
        return -math.expm1(-max(self.pi / mean, floor) * interval)

    def seen(self, factor: float | None) -> None:
        if factor is not None:
            self.factors.append(factor)

    def learn(self) -> None:
        """EM on the window's factors (at each solve of the allocation)."""
        if len(self.factors) < 50:
            return
        b, pi = np.array(self.factors), self.pi
        for _ in range(20):
            pi = float((pi * b / (pi * b + 1 - pi)).mean())
        self.pi = min(max(pi, 1e-6), 0.5)


class PriorTally:
    """The prior over the grid, learned from the crawl: an EM step (the mean of the pages'
    posteriors under the prior, a hundredth of the vague one kept) towards the distribution of
    rates that makes the crawl's checks likeliest, every ``new_interval`` from the full read of
    every page's record. A process's first read takes steps until the prior settles (at most
    ``FIRST_STEPS``), so a restarted crawl learns it again from what is stored."""

    FIRST_STEPS = 30

    def __init__(self, grid: RateGrid) -> None:
        self.grid = grid
        self.log_prior: Array = np.log(grid.vague)
        self.steps = 0

    def step(self, pages: Sequence[Sequence[Run]]) -> None:
        """An EM step over every crawled page's runs (up to ``FIRST_STEPS`` at the first)."""
        batches = [_arrays(pages[i : i + _EM_BATCH]) for i in range(0, len(pages), _EM_BATCH)]
        self.step_over(batches, len(pages))

    def step_over(self, batches: Sequence[tuple[Array, Array]], pages: int) -> None:
        """The same over the pages' runs as arrays (:func:`_arrays`), a batch at a time."""
        for _ in range(self.FIRST_STEPS if self.steps == 0 else 1):
            self.steps += 1
            if not pages:
                return
            total = np.zeros_like(self.grid.rates)
            for stats, mass in batches:  # a batch's arrays stay small
                total += self.grid.weights_of(stats, mass, self.log_prior).sum(axis=0)
            before = np.exp(self.log_prior)
            learned = (1 - KEEP_VAGUE) * total / pages + KEEP_VAGUE * self.grid.vague
            self.log_prior = np.log(learned)
            if float(np.abs(learned - before).sum()) < 1e-4:
                return


class RecordsRead:
    """Every crawled page's record, read a batch at a time (the store's pages in URL order):
    each batch's runs kept as arrays of 32-bit floats (80 bytes a page) rather than the records'
    JSON and their decoded objects (at 10^6 pages ~400 MB of strings at once; bench/README.md),
    and the ``HAZARD_WINDOW`` pages checked last, for a restarted hazard."""

    def __init__(self) -> None:
        self.batches: list[tuple[Array, Array]] = []
        self.pages = 0
        # (last visit, order read, interval, factor): a min-heap of the pages checked last
        self._last: list[tuple[int, int, float, float]] = []
        self._read = 0

    def add(self, records: Iterable[tuple[str | None, int | None]]) -> None:
        """A batch of (record, last visit)."""
        runs = []
        for text, at in records:
            record = decode(text)
            if record is None:
                continue
            runs.append(record.runs)
            self._read += 1
            if record.factor is not None and at:
                item = (at, self._read, record.interval, record.factor)
                if len(self._last) < HAZARD_WINDOW:
                    heapq.heappush(self._last, item)
                elif item > self._last[0]:
                    heapq.heapreplace(self._last, item)
        for i in range(0, len(runs), _EM_BATCH):  # an EM step's arrays stay small
            stats, mass = _arrays(runs[i : i + _EM_BATCH])
            self.batches.append((stats.astype(np.float32), mass.astype(np.float32)))
        self.pages += len(runs)

    def last_checks(self) -> list[tuple[float, float]]:
        """(interval, Bayes factor) of the pages checked last, oldest first."""
        return [(interval, factor) for _, _, interval, factor in sorted(self._last)]


class Learning:
    """What the crawl learns for every page's estimate: the grid of rates, the prior over it
    and the hazard of a page's rate moving."""

    def __init__(self, min_interval: float, max_interval: float) -> None:
        self.grid: RateGrid = RateGrid(min_interval, max_interval)
        self.prior: PriorTally = PriorTally(self.grid)
        self.hazard: Hazard = Hazard(max_interval)

    @property
    def log_prior(self) -> Array:
        return self.prior.log_prior

    def weights(self, runs: Sequence[Run]) -> Array:
        return self.grid.weights(runs, self.prior.log_prior)

    def read(self, records: Sequence[tuple[str | None, int | None]] | RecordsRead) -> None:
        """Every crawled page's (record, last visit), or those read a batch at a time: the
        prior's EM step over their runs and, at a process's first read, the hazard's window from
        the pages checked last."""
        if not isinstance(records, RecordsRead):
            read = RecordsRead()
            for i in range(0, len(records), _EM_BATCH):
                read.add(records[i : i + _EM_BATCH])
            records = read
        self.prior.step_over(records.batches, records.pages)
        if not self.hazard.factors:
            for interval, factor in records.last_checks():
                self.hazard.intervals.append(interval)
                self.hazard.seen(factor)


def _arrays(pages: Sequence[Sequence[Run]]) -> tuple[Array, Array]:
    """Pages' runs as arrays: stats (pages, RUNS, 4), masses (pages, RUNS; -inf: no run)."""
    stats = np.zeros((len(pages), RUNS, 4))
    mass = np.full((len(pages), RUNS), -np.inf)
    for p, runs in enumerate(pages):
        for r, run in enumerate(runs or (Run(),)):
            stats[p, r] = (run.dated, run.exposure, run.undated, run.undated_time)
            mass[p, r] = run.mass
    return stats, mass


def _lse(x: Array) -> Array:
    """log Σ e^x over the last axis."""
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.asarray(np.squeeze(m, -1) + np.log(np.exp(x - m).sum(axis=-1)))
