"""Which page to revisit how often under a fetch budget (docs/freshness.md).

A page whose changes are a Poisson process of rate λ, revisited every 1/f seconds, is current

    F(λ, f) = (f / λ) (1 - e^{-λ/f})

of the time (Cho & Garcia-Molina, "Effective page refresh policies"). Maximising Σ F over the
pages with Σ f ≤ budget (and, per host, Σ f ≤ host budget), each f in [1/max_interval,
1/min_interval], is a concave, separable problem: at the optimum each page's marginal freshness

    ∂F/∂f = g(λ/f) / λ,   g(r) = 1 - (1 + r) e^{-r}  (rising from 0 to 1),

equals one multiplier μ (a host's own, larger one where that host's budget binds) unless a bound
holds the page. A page with 1/λ ≤ μ changes faster than the budget can follow: it gets only its
least frequency, and the fetches go where they keep more pages current.

No page is visited more often than keeps it current ``ENOUGH`` (95%) of the time by its rate:
past that a visit buys almost nothing, and without this bound a budget that does not bind (μ = 0)
would send every page, one that never changes too, to min_interval. The bound is one more box
constraint per page, so the problem stays concave and separable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError

__all__ = ["ENOUGH", "Allocation", "Level", "RateGroup", "allocate", "expected_freshness"]

Array = npt.NDArray[np.float64]
_ROUNDS = 100  # bisection steps in log space: far below any clock's resolution
_TINY, _HUGE = float(np.finfo(np.float64).tiny), float(np.finfo(np.float64).max)
ENOUGH = 0.95  # a page current this share of the time is visited no more often


def expected_freshness(rate: float, frequency: float) -> float:
    """F(λ, f): the share of time a page of change rate ``rate`` revisited at ``frequency`` is
    current (both per second)."""
    if rate <= 0:
        return 1.0
    if frequency <= 0:
        return 0.0
    r = rate / frequency
    return -math.expm1(-r) / r


def _g(r: Array) -> Array:
    return np.asarray(-np.expm1(-r) - r * np.exp(-r), dtype=np.float64)


def _enough_ratio(share: float) -> float:
    """λ/f at which F = ``share``: F falls in λ/f, so bisect."""
    lo, hi = 1e-9, 50.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if -math.expm1(-mid) / mid > share else (lo, mid)
    return (lo + hi) / 2


_R_ENOUGH = _enough_ratio(ENOUGH)  # 0.103: ten visits per expected change keep a page 95% current


# g is inverted by interpolating log r against log g on a table, then one Newton step
_R_TABLE = np.logspace(-6, np.log10(700.0), 4000)
_LOG_G_TABLE = np.log(_g(_R_TABLE))
_LOG_R_TABLE = np.log(_R_TABLE)


def _g_inverse(y: Array) -> Array:
    """r with g(r) = y, for y in (0, 1)."""
    with np.errstate(divide="ignore"):
        r = np.exp(np.interp(np.log(y), _LOG_G_TABLE, _LOG_R_TABLE))
    slope = r * np.exp(-r)
    step = np.where(slope > 0, (_g(r) - y) / np.where(slope > 0, slope, 1.0), 0.0)
    return np.asarray(np.maximum(r - step, r / 2), dtype=np.float64)


def _frequencies(rates: Array, mu: Array, f_min: float, f_max: float) -> Array:
    """Each page's best frequency at marginal value ``mu``, within [f_min, f_max]."""
    with np.errstate(invalid="ignore"):  # inf * 0 for a page that never changes: nan, not < 1
        y = mu * rates
    follow = (rates > 0) & (y < 1)
    safe_y = np.where(follow & (y > 0), y, 0.5)
    f = np.where(follow, rates / _g_inverse(safe_y), 0.0)
    f = np.where(follow & (mu <= 0), np.inf, f)
    f = np.minimum(f, rates / _R_ENOUGH)  # beyond ENOUGH a visit buys almost nothing
    return np.asarray(np.clip(f, f_min, f_max), dtype=np.float64)


@dataclass(frozen=True, slots=True)
class RateGroup:
    """``count`` pages of ``host`` changing ``rate`` times per second."""

    rate: float
    count: int = 1
    host: str = ""


@dataclass(frozen=True, slots=True)
class Level:
    """A multiplier μ, bracketed by ``low`` <= ``high``. For a page changing far faster than it is
    visited, F is flat and its frequency swings within a bracket no float can narrow; there the
    optimum is as good at any mix, so the one that spends the budget exactly is taken:
    f(high) + share * (f(low) - f(high)). 0: the budget does not bind; inf: it cannot pay even
    one visit per max_interval."""

    low: float = 0.0
    high: float = 0.0
    share: float = 0.0


@dataclass(frozen=True, slots=True)
class Allocation:
    """The solved budget: a page's revisit frequency follows from its rate and host alone."""

    min_interval: float
    max_interval: float
    level: Level = Level()
    host_levels: Mapping[str, Level] = field(default_factory=dict)  # hosts held to their budget

    def frequency(self, rate: float, host: str = "") -> float:
        """Revisits per second for a page of change rate ``rate`` (per second) on ``host``."""
        level = self.host_levels.get(host, self.level)
        f = _mixed(
            np.array([max(rate, 0.0)]),
            np.array([level.low]),
            np.array([level.high]),
            np.array([level.share]),
            1.0 / self.max_interval,
            1.0 / self.min_interval,
        )
        return float(f[0])

    def interval(self, rate: float, host: str = "") -> float:
        """Seconds until the next visit of such a page."""
        return 1.0 / self.frequency(rate, host)

    def posterior_interval(
        self, rates: Array, weights: Array, host: str = "", scale: float = 1.0
    ) -> float:
        """Seconds until the next visit of a page whose rate is ``rates`` with chances
        ``weights`` (a posterior, "never" at rate 0 included): where a visit's expected marginal
        freshness over them, Σ w g(λ/f) / λ, meets the multiplier (times ``scale``, which makes
        the intervals the pages hold spend the budget). A page that may be fast or slow is
        neither given up on as fast nor visited as if it were certainly slow (docs/freshness.md,
        the allocation); no more often than ``ENOUGH`` keeps its mean rate current."""
        level = self.host_levels.get(host, self.level)
        mu = math.sqrt(level.low * level.high) if level.low > 0 < level.high else level.high
        mu *= scale
        f_min, f_max = 1.0 / self.max_interval, 1.0 / self.min_interval
        cap = min(f_max, max(float(weights @ rates) / _R_ENOUGH, f_min))
        if mu <= 0 or math.isinf(mu):
            return 1.0 / (cap if mu <= 0 else f_min)
        moving = rates > 0
        lam, w = rates[moving], weights[moving]

        def gain(f: Array) -> Array:  # at each of the frequencies f
            return np.asarray(_g(lam[None, :] / f[:, None]) @ (w / lam), dtype=np.float64)

        if gain(np.array([f_min]))[0] <= mu:
            return self.max_interval
        if gain(np.array([cap]))[0] >= mu:
            return 1.0 / cap
        # the gain falls as f grows: bracket its crossing of mu on a log grid, twice, then
        # interpolate (one evaluation a grid, not forty a bisection)
        lo, hi = math.log(f_min), math.log(cap)
        for _ in range(2):
            logs = np.linspace(lo, hi, 64)
            above = gain(np.exp(logs)) > mu
            i = max(int(np.argmin(above)) - 1, 0)
            lo, hi = float(logs[i]), float(logs[i + 1])
        g_lo, g_hi = gain(np.exp(np.array([lo, hi])))
        at = lo + (hi - lo) * (g_lo - mu) / (g_lo - g_hi) if g_lo > g_hi else lo
        return 1.0 / math.exp(at)

    @property
    def feasible(self) -> bool:
        """False when the budget cannot even visit every page once per max_interval."""
        levels = [self.level, *self.host_levels.values()]
        return not any(math.isinf(level.high) for level in levels)


def _mixed(
    rates: Array, low: Array, high: Array, share: Array, f_min: float, f_max: float
) -> Array:
    at_high = _frequencies(rates, high, f_min, f_max)
    at_low = _frequencies(rates, low, f_min, f_max)
    return np.asarray(at_high + share * (at_low - at_high), dtype=np.float64)


def allocate(
    groups: Sequence[RateGroup],
    budget: float | None,
    min_interval: float,
    max_interval: float,
    host_budget: float | None = None,
) -> Allocation:
    """The allocation that spends ``budget`` fetches per second over ``groups`` (and at most
    ``host_budget`` per host) for the most expected freshness. ``None``: no such limit."""
    if not 0 < min_interval <= max_interval:
        raise ConfigError(
            f"need 0 < min_interval <= max_interval, got {min_interval} and {max_interval}"
        )
    for name, value in (("budget", budget), ("host_budget", host_budget)):
        if value is not None and not value > 0:
            raise ConfigError(f"{name} must be > 0 fetches per second, got {value}")
    f_min, f_max = 1.0 / max_interval, 1.0 / min_interval
    groups = [g for g in groups if g.count > 0]
    if not groups:
        return Allocation(min_interval, max_interval)
    rates = np.array([max(g.rate, 0.0) for g in groups], dtype=np.float64)
    counts = np.array([g.count for g in groups], dtype=np.float64)
    names = sorted({g.host for g in groups})
    index = {h: i for i, h in enumerate(names)}
    hosts = np.array([index[g.host] for g in groups], dtype=np.intp)
    moving = rates[rates > 0]
    # below lo every page gets f_max, above hi every page f_min; kept within the positive
    # floats: g(λ/f_max) is 0 in floats for a page all but certainly static (a posterior mean
    # of 1e-300), whose frequency ENOUGH holds at f_min whatever the multiplier
    lo = float(np.min(_g(moving / f_max) / moving)) / 2 if moving.size else 1.0
    with np.errstate(over="ignore"):
        hi = float(np.max(1.0 / moving)) * 2 if moving.size else 1.0
    lo, hi = max(lo, _TINY), min(hi, _HUGE)
    zeros = np.zeros(len(names))
    host = (zeros, zeros, zeros)
    if host_budget is not None:

        def per_host(mu: Array) -> Array:
            f = _frequencies(rates, mu[hosts], f_min, f_max)
            return np.bincount(hosts, weights=counts * f, minlength=len(names)).astype(np.float64)

        floors = np.bincount(hosts, weights=counts * f_min, minlength=len(names)).astype(np.float64)
        host = _solve(per_host, floors, host_budget, lo, hi)
    held = _mixed(rates, host[0][hosts], host[1][hosts], host[2][hosts], f_min, f_max)
    level = Level()
    if budget is not None:

        def total(mu: Array) -> Array:
            own = _frequencies(rates, np.full_like(rates, mu[0]), f_min, f_max)
            return np.array([float(np.sum(counts * np.where(host[1][hosts] > mu[0], held, own)))])

        low, high, share = _solve(total, np.array([float(counts.sum()) * f_min]), budget, lo, hi)
        level = Level(float(low[0]), float(high[0]), float(share[0]))
    binding = {
        h: Level(float(host[0][i]), float(host[1][i]), float(host[2][i]))
        for h, i in index.items()
        if host[1][i] > level.high
    }
    return Allocation(min_interval, max_interval, level, binding)


def _solve(
    spend: Callable[[Array], Array], floor: Array, limit: float, lo: float, hi: float
) -> tuple[Array, Array, Array]:
    """Per entry, the multiplier bracket (low, high, share) at which ``spend`` (falling in each
    entry's multiplier, down to ``floor``) equals ``limit``: 0 where it is within ``limit``
    already, inf where even ``floor`` is over it."""
    start = np.zeros_like(floor)
    at_zero = spend(start)
    result = np.where(at_zero <= limit * (1 + 1e-12), 0.0, np.nan)
    result = np.where(np.isnan(result) & (floor > limit * (1 + 1e-9)), np.inf, result)
    open_ = np.isnan(result)
    low = np.full_like(start, math.log(lo))
    high = np.full_like(start, math.log(hi))
    for _ in range(_ROUNDS):
        mid = (low + high) / 2
        over = spend(np.where(open_, np.exp(mid), result)) > limit
        low = np.where(open_ & over, mid, low)
        high = np.where(open_ & ~over, mid, high)
    low = np.where(open_, np.exp(low), result)
    high = np.where(open_, np.exp(high), result)
    at_low, at_high = spend(low), spend(high)
    gap = at_low - at_high
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(open_ & (gap > 0), (limit - at_high) / np.where(gap > 0, gap, 1.0), 0.0)
    return low, high, np.asarray(np.clip(share, 0.0, 1.0), dtype=np.float64)
