"""litecrawl's change-rate estimator until session 13 (src/litecrawl/schedule/estimate.py then),
kept for the simulations' ``freshness`` policy (bench/freshness_sim.py, bench/freshness.py): the
baseline the figures of sessions 5-12 in bench/README.md were measured against.

How often does a page change? Estimated from its fetch history.

A re-fetch is a check at some interval after the previous one. Mostly it tells only *whether*
the page changed meanwhile, not how often. For changes arriving as a Poisson process of rate λ,
an interval of length t ends unchanged with probability e^{-λt}, so the likelihood of a history
is maximised where (Cho & Garcia-Molina, "Estimating frequency of change", irregular intervals)

    Σ_changed t_i / (e^{λ t_i} - 1)  =  Σ_unchanged t_j.

With equal intervals this is their estimator λ = log(n / (n - X)) / t. When a change also comes
with a credible date of the last change (a Last-Modified inside the interval), the interval says
more: the last change was ``a`` seconds before the fetch, likelihood λ e^{-λa}, and it adds 1/λ on
the left and ``a`` on the right. Unless every check is dated the estimate is infinite when every
check found a change and zero when none did, so a Gamma prior is added: ``prior_weight`` changes
seen over ``prior_weight / prior_rate`` seconds. The estimate is the posterior mode, the root of

    (k + D) / λ  +  Σ_undated t_i / (e^{λ t_i} - 1)  =  k / λ0  +  Σ_unchanged t_j  +  Σ_dated a_i.

A new page therefore starts at ``prior_rate`` and is not judged on one observation.

Many pages never change at all, which the Gamma prior alone cannot tell from "rarely": after
quiet time E its estimate falls only as 1/E, and a page that never changes would take many months
to reach max_interval. So the prior is a mixture: "never changes" with weight ``static_share``,
else the Gamma. While no change has been seen the estimate is the Gamma's times how much likelier
than at first the page is to change at all (falling as E^{-α}); the first change seen ends that.

A page's record stays a few numbers: the right side is one sum (``exposure``), the dated changes a
count; the undated ones are stood for by X equal intervals of an effective length c, X φ(λ, c)
with φ(λ, t) = t / (e^{λt} - 1). Each new undated change sets c so that X φ matches the true sum
at the current estimate, where the root is sought (exact for equal intervals; a plain mean of
unequal ones would bias the rate low).

Old checks fade: each change multiplies the weight of all that came before by ``1 - 1/memory``,
and each quiet check by ``exp(-λ t / memory)`` (the changes the estimate expected in it), so the
record spans about ``memory`` expected changes: a page that starts changing is followed within a
few checks, one that stops changing within ~``memory`` expected changes of quiet time (not the
whole time it was watched), while a page never seen to change keeps its whole quiet history and
its rate falls towards 0 (it ends up revisited at max_interval).

A page that stops changing for good looks, for a while, like one in a quiet stretch: the fading
lowers its estimate only hyperbolically, so it keeps its visits for months. The record keeps how
long the page has been quiet since its last change and what it was estimated at then; how
unlikely that quiet is for a page still changing (the Gamma posterior's predictive) weighed
against ``stopped_share``, the share of the crawl's changing pages that have stopped, gives the
chance it stopped (or slowed down), and the rate is blended by that chance towards what is known
of the page since: one change, then the quiet (the changes before belong to another regime).
The share is no constant: :class:`StopShare` learns it from the crawl's own checks, so a site
whose pages keep changing keeps the plain estimate (share 0) and one whose pages stop frees
their visits.

The same share is the prior chance that a page's rate moved when a change is found: a change
that the record makes improbable (a page taken for static, a last change dated long before a
busy page's fetch), weighed against how a page at a new rate (the prior's) would show it, gives
the chance that it comes from a new rate, and the record before it is dropped by that chance
(but for the quiet since the last change, which a page whose rate fell spent at its new rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from litecrawl.errors import ConfigError

__all__ = ["ChangeHistory", "Estimator", "StopShare"]


@dataclass(frozen=True, slots=True)
class ChangeHistory:
    """What a page's checks said; stored with the page (times in seconds)."""

    checks: int = 0  # re-fetches compared with the version before
    changes: int = 0  # of those, how many found a change
    dated: float = 0.0  # faded count of changes whose date was known
    undated: float = 0.0  # faded count of changes known only to lie within their interval
    undated_time: float = 0.0  # those times their effective interval length c
    exposure: float = 0.0  # faded time seen without a change: quiet intervals, dated changes' ages
    quiet: float = 0.0  # time without a change since the last one (from its date when known)
    last_rate: float = 0.0  # the estimate right after the last change (0: none seen)
    last_weight: float = 0.0  # the changes the record weighed then, its prior's included


@dataclass(frozen=True, slots=True)
class Estimator:
    """Change rate (changes per second) of a page from its :class:`ChangeHistory`."""

    prior_rate: float  # assumed for a page with no history, e.g. 1 / new_interval
    prior_weight: float = 0.5  # how many changes the prior counts as
    static_share: float = 0.5  # prior belief that a page never changes at all
    memory: float = 10.0  # changes after which an old check weighs 1/e as much as a new one
    stopped_share: float = 0.0  # of the crawl's changing pages, how many stopped (StopShare)

    def __post_init__(self) -> None:
        if not self.prior_rate > 0:
            raise ConfigError(f"prior_rate must be > 0, got {self.prior_rate}")
        if not self.prior_weight > 0:
            raise ConfigError(f"prior_weight must be > 0, got {self.prior_weight}")
        if not 0 <= self.static_share < 1:
            raise ConfigError(f"static_share must be in [0, 1), got {self.static_share}")
        if not self.memory >= 1:
            raise ConfigError(f"memory must be >= 1, got {self.memory}")
        if not 0 <= self.stopped_share < 1:
            raise ConfigError(f"stopped_share must be in [0, 1), got {self.stopped_share}")

    def observe(
        self, history: ChangeHistory, interval: float, changed: bool, age: float | None = None
    ) -> ChangeHistory:
        """The history after one more check ``interval`` seconds after the previous fetch;
        ``age``: a change's last date was this many seconds before the fetch (ignored unless
        within the interval)."""
        interval = max(float(interval), 0.0)
        if not changed:
            # a quiet check fades what came before by the changes expected in it, once there is
            # a change to forget: a page that stops changing is followed within ~memory
            # expected changes; one never seen to change keeps its whole quiet history
            keep = 1.0
            last_rate, last_weight = history.last_rate, history.last_weight
            if history.changes:
                keep = math.exp(-interval * self._steady(history) / self.memory)
                if last_rate <= 0:  # a record from before quiet was followed: from now on
                    last_rate, last_weight = self._steady(history), self._weight(history)
            return replace(
                _faded(history, keep),
                checks=history.checks + 1,
                exposure=history.exposure * keep + interval,
                quiet=history.quiet + interval,
                last_rate=last_rate,
                last_weight=last_weight,
            )
        # a change the record makes improbable may come from a new rate: the record before it
        # is dropped by the chance that it does (none while the crawl has learned no share),
        # all but the quiet since the last change, which a page whose rate fell spent at the new
        # rate (a page never seen to change was static till now: all of it goes)
        fade = 1.0 - 1.0 / self.memory
        restart = self.restarted(history, interval, age)
        kept = min(history.quiet, history.exposure) * restart if history.changes else 0.0
        dropped = _faded(history, fade * (1.0 - restart))
        faded = replace(
            dropped,
            checks=history.checks + 1,
            changes=history.changes + 1,
            exposure=dropped.exposure + kept * fade,
        )
        if age is not None and 0.0 <= age <= interval:
            after = replace(faded, dated=faded.dated + 1.0, exposure=faded.exposure + age)
            quiet = age
        else:
            lam = self._steady(history)
            x = faded.undated
            total = _phi(lam, faded.undated_time / x) * x if x > 0 else 0.0
            length = _length(lam, (total + _phi(lam, interval)) / (x + 1))
            after = replace(faded, undated=x + 1.0, undated_time=(x + 1.0) * length)
            quiet = 0.0
        return replace(
            after, quiet=quiet, last_rate=self._steady(after), last_weight=self._weight(after)
        )

    def restarted(self, history: ChangeHistory, interval: float, age: float | None) -> float:
        """The chance that a change found ``interval`` after the previous check (its date
        ``age`` before the fetch, when known) comes from a new rate, not the record's, by Bayes:
        the page's rate moved with chance ``stopped_share`` (the crawl's learned share of pages
        whose rate fell); a page changing as its record says (the Gamma posterior) and a page
        at a new rate (the prior's) would have shown this change with the predictive chance (an
        undated change) or density (a dated one) below."""
        s = self.stopped_share
        if s <= 0 or not history.checks:
            return 0.0
        k = self._weight(history)
        old = _predictive(k, k / max(self.rate(history), 1e-300), interval, age)
        k0 = self.prior_weight
        new = _predictive(k0, k0 / self.prior_rate, interval, age)
        return s * new / (s * new + (1.0 - s) * old)

    def rate(self, history: ChangeHistory) -> float:
        """The change rate, in changes per second (> 0): the posterior mode, blended by the
        chance that the page stopped changing (:meth:`stopped`) towards one change over the
        quiet since."""
        lam = self._steady(history)
        p = self.stopped(history)
        if p <= 0:
            return lam
        # what is known of the page since it stopped (or slowed): one change, then the quiet
        since = (self.prior_weight + 1.0) / (self.prior_weight / self.prior_rate + history.quiet)
        return (1 - p) * lam + p * min(since, lam)

    def stopped(self, history: ChangeHistory) -> float:
        """The chance that a page once seen to change has stopped, by Bayes: a page stops in
        place of a change with chance ``stopped_share``, and a page still changing stays as
        quiet as this one with chance :meth:`quiet_chance`."""
        s = self.stopped_share
        if s <= 0 or not history.changes or history.last_rate <= 0:
            return 0.0
        # stopped since the last change: at the next change it would have had, with chance s
        quiet = self.quiet_chance(history)
        odds = s * (1.0 - quiet)
        return odds / (odds + (1.0 - s) * quiet)

    def quiet_chance(self, history: ChangeHistory) -> float:
        """How likely a page changing as estimated at its last change is to stay quiet as long
        as this one has: (1 + λQ/k)^-k, the Gamma posterior's predictive (1 when no change has
        been seen)."""
        if history.last_rate <= 0 or history.quiet <= 0:
            return 1.0
        k = max(history.last_weight, self.prior_weight)
        return float((1.0 + history.last_rate * history.quiet / k) ** -k)

    def _weight(self, history: ChangeHistory) -> float:
        return self.prior_weight + history.dated + history.undated

    def _steady(self, history: ChangeHistory) -> float:
        """The posterior mode of the change rate of a page that keeps changing."""
        k = self.prior_weight + history.dated
        exposure = self.prior_weight / self.prior_rate + history.exposure
        x = history.undated
        if history.changes == 0:
            return k / exposure * self._changing(history.exposure)
        if x <= 0 or history.undated_time <= 0:
            return k / exposure
        mean = history.undated_time / x

        def excess(lam: float) -> float:  # decreasing in lam; the estimate is its root
            return k / lam + x * _phi(lam, mean) - exposure

        # x t / (e^{λt} - 1) lies in (0, x / λ): the root lies between these two
        lo, hi = k / exposure, (k + x) / exposure
        for _ in range(100):
            mid = math.sqrt(lo * hi)
            if excess(mid) > 0:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-12 * hi:
                break
        return math.sqrt(lo * hi)

    def _changing(self, quiet: float) -> float:
        """For a page never seen to change after ``quiet`` seconds of checks: how much more likely
        it is to change at all than it seemed at first (1 at first, then falling as
        (β/quiet)^α), by Bayes between "never changes" (``static_share``) and the Gamma prior,
        under which no change in ``quiet`` has probability (β/(β+quiet))^α."""
        a = self.prior_weight
        still = float((a / self.prior_rate / (a / self.prior_rate + quiet)) ** a)
        p = self.static_share
        return still / (p + (1 - p) * still)


@dataclass(slots=True)
class StopShare:
    """The share of a crawl's changing pages that have stopped changing, learned from its checks
    (the :class:`Estimator`'s ``stopped_share``).

    A page still changing as its record says stays quiet so long that its quiet has a chance
    under ``UNLIKELY`` only that share of the time (the predictive is calibrated), so the share
    of time its changing pages spend that quiet, beyond ``UNLIKELY`` and what chance adds to it,
    is pages that stopped (about: one that stopped lately is not that quiet yet). Each check
    weighs its interval, so a page visited seldom counts as much as one visited often; the tally
    forgets at the pace of ``memory`` checks, so a crawl follows a site whose pages start to
    stop."""

    memory: float = 1000.0  # checks: the planner makes it the crawl's page count
    _unlikely_time: float = 0.0
    _time: float = 0.0

    UNLIKELY = 0.05

    def observe(self, estimator: Estimator, history: ChangeHistory, interval: float) -> None:
        """Count a check that left the page with ``history``, ``interval`` after the one before
        (pages never seen to change are the prior's business, not counted)."""
        if not history.changes or interval <= 0:
            return
        keep = 1.0 - 1.0 / max(self.memory, 1.0)
        unlikely = estimator.quiet_chance(history) < self.UNLIKELY
        self._unlikely_time = self._unlikely_time * keep + (interval if unlikely else 0.0)
        self._time = self._time * keep + interval

    @property
    def share(self) -> float:
        if self._time <= 0:
            return 0.0
        # beyond what chance gives ``memory`` pages still changing (two standard deviations)
        noise = 2.0 * math.sqrt(self.UNLIKELY * (1.0 - self.UNLIKELY) / max(self.memory, 1.0))
        excess = self._unlikely_time / self._time - self.UNLIKELY - noise
        return min(max(excess / (1.0 - self.UNLIKELY), 0.0), 0.99)


def _predictive(k: float, beta: float, interval: float, age: float | None) -> float:
    """Under a Gamma(k, β) rate: the density of a last change ``age`` before the fetch (the
    Lomax's, k/β (β/(β+a))^(k+1)) when the date is credible, else the chance of a change within
    ``interval``, 1 - (β/(β+t))^k."""
    if age is not None and 0.0 <= age <= interval:
        return float(k / beta * (beta / (beta + age)) ** (k + 1.0))
    return -math.expm1(-k * math.log1p(interval / beta))


def _faded(history: ChangeHistory, keep: float) -> ChangeHistory:
    """The history's weights (not its counts) times ``keep``."""
    return replace(
        history,
        dated=history.dated * keep,
        undated=history.undated * keep,
        undated_time=history.undated_time * keep,
        exposure=history.exposure * keep,
    )


def _phi(lam: float, t: float) -> float:
    """t / (e^{λt} - 1): what an interval of length t that ended changed adds to the equation."""
    u = lam * t
    if u < 1e-12:
        return 1.0 / lam
    return t / math.expm1(min(u, 700.0))


def _length(lam: float, value: float) -> float:
    """The interval length t with φ(λ, t) = value (φ falls from 1/λ towards 0 as t grows)."""
    target = value * lam  # u / (e^u - 1) = target, with u = λt
    if target >= 1.0:
        return 0.0
    lo, hi = 0.0, 700.0
    for _ in range(80):
        mid = (lo + hi) / 2
        if mid / math.expm1(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2 / lam
