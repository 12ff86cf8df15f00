"""Issue 30's simulation, as the issue describes it: pure Python, no server, no crawler.

    uv run python bench/freshness_sim.py [--pages 3000] [--budget 150] [--ticks 1500]
        [--order overdue random lowest] [--static 0.2] [--static-share 0.5] [--no-enough]

N pages whose changes are Poisson processes with rates spread log-uniformly over three orders of
magnitude (0.001 to 1 change a tick: with N/B = 20 ticks between uniform visits this is the
spread that gives uniform the issue's 0.62); B fetches a tick, unused fetches lost. A tick is an
hour, so litecrawl's defaults are min 1 tick, new 24, max 720. Every policy sees the same change
history. Freshness is the time-averaged share of pages whose last fetched version is current
(continuous time, fetches at the tick's start), after the warm-up (the first third).

Policies: ``uniform`` (every page every N/B ticks, staggered), ``multiplicative`` (litecrawl's
rule: the scheduled interval times 0.2 after a change, times 2 after none, clamped), ``elapsed``
(the same rule applied to the time since the last fetch, lateness included), ``freshness``
(litecrawl's estimator until session 13, bench/freshness_estimate.py, and its allocation, solved
every tick, the share of stopped pages learned from the checks as the planner did, and the
budget planned over by what the intervals the pages hold take of a plan, ``Spend``, each page
counted at the interval it was given), ``due-sum`` (the same counting each page at its due time
less its visit: session 9's, which reads a page visited late as spending more than it does),
``unspent`` (the same planned at the budget: session 8's),
``fixed`` (the same with that share fixed at 0: the
estimator before session 7), ``stops`` (the share learned but no change starting a page's record
again: the estimator of session 7), ``learn`` (the allocation given each
page's true rate as of its last visit: an estimator that is perfect but learns only by visiting),
``lag2`` / ``lag3`` (the same knowing the rate as of the visit before last / two before: a
perfect estimator that needs two / three visits to see a rate moved)
and ``oracle`` (the allocation given the true rates). ``--order`` is which due pages a tick
fetches when more are due than the budget: ``overdue`` (the earliest due first, as litecrawl's
frontier claims), ``random`` (any due page alike), ``lowest`` (the lowest page number first:
a starving order).
``--by-kind``: the freshness and fetches a tick of each kind of page over the window (static or
changing before > after the shift; rate up, down or within 3x).
``--static``: that share of the pages never changes (as in bench/freshness.py); ``--static-share``
and ``--no-enough`` change the freshness policy's prior and drop its 95% bound (schedule/).
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import random
import time
from collections import deque
from dataclasses import dataclass, replace

from freshness_estimate import ChangeHistory, Estimator, StopShare

from litecrawl.schedule.allocate import RateGroup, allocate
from litecrawl.schedule.planner import Spend

MIN, NEW, MAX = 1.0, 24.0, 720.0  # ticks (hours): litecrawl's 1 hour, 1 day, 30 days
FRESH, STALE = 0.2, 2.0
STATIC_SHARE = 0.5  # --static-share: the estimator's prior belief that a page never changes


@dataclass
class World:
    rates: list[float]
    changes: list[list[float]]
    shift_at: float = math.inf  # from then on each page has another page's rate
    after: list[float] | None = None

    def version(self, page: int, t: float) -> int:
        return bisect.bisect_right(self.changes[page], t)

    def rates_at(self, t: float) -> list[float]:
        return self.after if self.after is not None and t >= self.shift_at else self.rates


def make_world(
    n: int,
    ticks: int,
    rng: random.Random,
    lo: float,
    hi: float,
    static: float,
    shift_at: float = math.inf,
) -> World:
    every = round(1 / static) if static else 0  # every k-th page never changes
    rates = [0.0 if every and i % every == 0 else 10 ** rng.uniform(lo, hi) for i in range(n)]
    after = rates[:]
    if shift_at < math.inf:
        rng.shuffle(after)
    changes = []
    for before_rate, after_rate in zip(rates, after, strict=True):
        t, times = 0.0, []
        while t < ticks + 1:
            r = before_rate if t < shift_at else after_rate
            step = rng.expovariate(r) if r > 0 else math.inf
            if t < shift_at <= t + step:
                t = shift_at  # memoryless: the new rate's clock starts at the shift
                continue
            t += step
            if t <= ticks + 1:
                times.append(t)
        changes.append(times)
    return World(rates, changes, shift_at, after if shift_at < math.inf else None)


class Policy:
    def __init__(self, n: int, budget: int, world: World) -> None:
        self.n, self.budget, self.world = n, budget, world

    def first_due(self, page: int) -> float:
        return 0.0

    def tick(self, t: float) -> None:
        pass

    def replan(self, t: float, fetched_at: dict[int, float]) -> dict[int, float]:
        """New due times for pages whose plan is void from ``t`` on (the oracle at the shift)."""
        return {}

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        raise NotImplementedError


class Uniform(Policy):
    def first_due(self, page: int) -> float:
        return page / self.budget  # staggered: B pages due each tick

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        return due + self.n / self.budget


class Multiplicative(Policy):
    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.interval: dict[int, float] = {}

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        last = self.interval.get(page)
        interval = NEW if last is None else last * (FRESH if changed else STALE)
        interval = min(max(interval, MIN), MAX)
        self.interval[page] = interval
        return t + interval


class Elapsed(Multiplicative):
    """The rule on the time since the last fetch rather than the interval it had scheduled."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.fetched: dict[int, float] = {}

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if page in self.fetched:
            self.interval[page] = t - self.fetched[page]
        self.fetched[page] = t
        return super().visited(page, t, due, changed, age)


class NoRestarts(Estimator):
    """The estimator of session 7: a change never starts a page's record again."""

    def restarted(self, history: ChangeHistory, interval: float, age: float | None) -> float:
        return 0.0


class Freshness(Policy):
    LEARN_STOPS = True  # the share of stopped pages learned from the checks, as the planner does
    ESTIMATOR: type[Estimator] = Estimator
    SPEND = True  # the budget planned over by what the pages' held intervals take of a plan
    SPEND_BY_DUE = False  # session 9's measure of a page's spend: its due time less the visit

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.est = self.ESTIMATOR(prior_rate=1 / NEW, static_share=STATIC_SHARE)
        self.stops = StopShare(memory=n)
        self.spend = Spend()
        self.held: dict[int, float] = {}  # the interval each page was given at its last visit
        self.hist = [ChangeHistory() for _ in range(n)]
        self.rate = [self.est.prior_rate] * n
        self.tick(0.0)
        self.fetched: dict[int, float] = {}

    def tick(self, t: float) -> None:
        if self.LEARN_STOPS:
            self.est = replace(self.est, stopped_share=self.stops.share)
        # rates within 12% are one group, as litecrawl's planner bins them
        groups: dict[int, list[float]] = {}
        for r in self.rate:
            groups.setdefault(round(math.log10(r) * 20) if r > 0 else -9999, []).append(r)
        level = self.alloc.level if t > 0 else None
        if self.SPEND and level is not None and level.high > 0:  # as the planner does
            self.spend.update(self.budget, self.n, 1.0, NEW)
        over = self.spend.factor
        self.alloc = allocate(
            [RateGroup(sum(rs) / len(rs), len(rs)) for rs in groups.values()],
            self.budget * over,
            MIN,
            MAX,
        )

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        if changed is not None:
            interval = t - self.fetched[page]
            self.hist[page] = self.est.observe(self.hist[page], interval, changed, age)
            self.stops.observe(self.est, self.hist[page], interval)
            self.rate[page] = self.est.rate(self.hist[page])
        self.fetched[page] = t
        interval = min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
        next_due = due + interval if t - interval < due <= t else t + interval
        # what the page will spend: the interval given (a late page's due time is closer)
        given = next_due - t if self.SPEND_BY_DUE else interval
        self.spend.set_due(given, self.held.get(page))
        self.held[page] = given
        return next_due


class Fixed(Freshness):
    """The estimator of session 6: no share of stopped pages learned (``stopped_share`` 0)."""

    LEARN_STOPS = False


class Unspent(Freshness):
    """The policy of session 8: the allocation planned at the budget, which the intervals the
    pages hold spend less of."""

    SPEND = False


class DueSum(Freshness):
    """The policy of session 9: what a page spends read from its due time less its visit, which
    for a page visited late (its due time anchored) is shorter than the interval it was given."""

    SPEND_BY_DUE = True


class Stops(Freshness):
    """The estimator of session 7: the share of stopped pages learned, no restarts."""

    ESTIMATOR = NoRestarts


class Oracle(Freshness):
    """The allocation given the true rates; at the shift it knows the new rates at once and
    re-plans every page as if they had been known at its last fetch (a page overdue by the new
    plan is due now, the most overdue first), so it is a bound after the shift as well."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.rate = list(world.rates)
        self.tick(0.0)

    def tick(self, t: float) -> None:
        self.rate = list(self.world.rates_at(t))
        super().tick(t)

    def replan(self, t: float, fetched_at: dict[int, float]) -> dict[int, float]:
        if not t - 1 < self.world.shift_at <= t:
            return {}
        return {
            page: at + min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
            for page, at in fetched_at.items()
        }

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        interval = min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
        return due + interval if t - interval < due <= t else t + interval


class Learn(Freshness):
    """The allocation given each page's true rate as of its last visit: what a policy that
    learns a page's rate perfectly, but only by visiting it, could do. No re-plan at the shift:
    a page that was static is found changing only at its max-interval visit. The gap between it
    and the oracle is what visiting cannot learn sooner; between it and ``freshness``, the
    estimate's."""

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.rate = list(world.rates)
        self.tick(0.0)

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        self.rate[page] = self.world.rates_at(t)[page]
        interval = min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
        return due + interval if t - interval < due <= t else t + interval


class Lag(Learn):
    """The allocation given each page's true rate as of ``K - 1`` visits back: a perfect
    estimator that needs ``K`` visits since a page's rate moved to know it (``learn`` is K = 1).
    The least that detection delay costs an estimator, which must see evidence of a new rate
    (a visit says only whether the page changed, and when, if dated) before it follows it."""

    K = 2

    def __init__(self, n: int, budget: int, world: World) -> None:
        super().__init__(n, budget, world)
        self.known = [deque([r], maxlen=self.K) for r in world.rates]

    def visited(
        self, page: int, t: float, due: float, changed: bool | None, age: float | None
    ) -> float:
        known = self.known[page]
        known.append(self.world.rates_at(t)[page])
        self.rate[page] = known[0]
        interval = min(max(self.alloc.interval(self.rate[page]), MIN), MAX)
        return due + interval if t - interval < due <= t else t + interval


class Lag3(Lag):
    K = 3


POLICIES: dict[str, type[Policy]] = {
    "uniform": Uniform,
    "multiplicative": Multiplicative,
    "elapsed": Elapsed,
    "freshness": Freshness,
    "unspent": Unspent,
    "due-sum": DueSum,
    "fixed": Fixed,
    "stops": Stops,
    "learn": Learn,
    "lag2": Lag,
    "lag3": Lag3,
    "oracle": Oracle,
}


def kind(world: World, page: int) -> str:
    """A page by its rates before and after the shift: static or changing, and whether its rate
    went up or down more than 3x."""
    before, after = world.rates[page], world.rates_at(math.inf)[page]
    if not before or not after:
        return (
            ("static" if not before else "changing")
            + " > "
            + ("static" if not after else "changing")
        )
    return "rate " + (
        "up 3x+" if after > 3 * before else "down 3x+" if after < before / 3 else "within 3x"
    )


def run(
    policy: Policy,
    world: World,
    ticks: int,
    budget: int,
    order: str,
    rng: random.Random,
    dated: bool,
    settled: float,
) -> dict[str, float]:
    n = len(world.rates)
    due = [(policy.first_due(p), p) for p in range(n)]
    heapq.heapify(due)
    pool: list[tuple[float, int]] = []  # due pages not yet fetched (random / lowest orders)
    seen: dict[int, int] = {}  # version fetched last
    fetched_at: dict[int, float] = {}
    fresh_time = settled_time = 0.0
    start = ticks / 3 if world.shift_at == math.inf else world.shift_at
    fetches = 0
    kinds = {p: kind(world, p) for p in range(n)}
    by_kind: dict[str, list[float]] = {k: [0.0, 0.0, 0.0] for k in kinds.values()}
    for k in kinds.values():
        by_kind[k][0] += 1  # pages, fresh time, fetches in the window
    for tick in range(ticks):
        t = float(tick)
        policy.tick(t)
        if replanned := policy.replan(t, fetched_at):
            due = [(replanned.get(p, d), p) for d, p in due + pool]
            heapq.heapify(due)
            pool = []
        if order == "overdue":
            batch = [heapq.heappop(due) for _ in range(min(budget, len(due))) if due[0][0] <= t]
        else:
            while due and due[0][0] <= t:
                pool.append(heapq.heappop(due))
            if order == "random":
                rng.shuffle(pool)
            else:
                pool.sort(key=lambda d: d[1])
            batch, pool = pool[:budget], pool[budget:]
        for d, page in batch:
            v = world.version(page, t)
            changed: bool | None = None
            age: float | None = None
            if page in seen:
                changed = v != seen[page]
                if changed and dated:
                    age = t - world.changes[page][v - 1]
                # the fresh time of the visit before: until the next change or this fetch
                fresh = _fresh(world, page, fetched_at[page], t, start)
                fresh_time += fresh
                by_kind[kinds[page]][1] += fresh
                settled_time += _fresh(world, page, fetched_at[page], t, settled)
            seen[page], fetched_at[page] = v, t
            heapq.heappush(due, (policy.visited(page, t, d, changed, age), page))
            fetches += 1
            if t >= start:
                by_kind[kinds[page]][2] += 1
    for page, ft in fetched_at.items():
        fresh = _fresh(world, page, ft, float(ticks), start)
        fresh_time += fresh
        by_kind[kinds[page]][1] += fresh
        settled_time += _fresh(world, page, ft, float(ticks), settled)
    window = ticks - start
    return {
        "freshness": fresh_time / (n * window),
        "settled": settled_time / (n * (ticks - settled)) if settled < ticks else math.nan,
        "fetches": fetches / ticks,
        **{f"{k}: fresh": v[1] / (v[0] * window) for k, v in by_kind.items()},
        **{f"{k}: fetches": v[2] / window for k, v in by_kind.items()},
    }


def _fresh(world: World, page: int, fetched: float, until: float, start: float) -> float:
    changes = world.changes[page]
    i = bisect.bisect_right(changes, fetched)
    stale = changes[i] if i < len(changes) else math.inf
    return max(min(until, stale) - max(fetched, start), 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--budget", type=int, default=150)
    ap.add_argument("--ticks", type=int, default=1500)
    ap.add_argument("--rates", type=float, nargs=2, default=[-3.0, 0.0], help="log10 range a tick")
    ap.add_argument("--static", type=float, default=0.0, help="share of pages that never change")
    ap.add_argument("--shift", action="store_true", help="rates shuffled halfway; measured after")
    ap.add_argument("--static-share", type=float, default=0.5)
    ap.add_argument("--no-enough", action="store_true", help="no 95%% bound on a page's visits")
    ap.add_argument("--order", nargs="+", default=["overdue", "random", "lowest"])
    ap.add_argument("--policies", nargs="+", default=list(POLICIES))
    ap.add_argument("--dated", action="store_true", help="the estimator sees Last-Modified")
    ap.add_argument(
        "--settled",
        type=float,
        help="start of a second window (default with --shift: the shift + max interval, when "
        "every page has been visited since the shift)",
    )
    ap.add_argument("--by-kind", action="store_true", help="freshness and fetches by page kind")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    global STATIC_SHARE
    STATIC_SHARE = args.static_share
    if args.no_enough:
        import litecrawl.schedule.allocate as alloc

        alloc._R_ENOUGH = 1e-300
    world = make_world(
        args.pages,
        args.ticks,
        random.Random(args.seed),
        args.rates[0],
        args.rates[1],
        args.static,
        args.ticks / 2 if args.shift else math.inf,
    )
    settled = args.settled
    if settled is None:
        settled = args.ticks / 2 + MAX if args.shift else float(args.ticks)
    print(f"| order | policy | freshness | from {settled:.0f} | fetches/tick | s |")
    print("|---|---|---|---|---|---|")
    for order in args.order:
        for name in args.policies:
            began = time.monotonic()
            policy = POLICIES[name](args.pages, args.budget, world)
            r = run(
                policy,
                world,
                args.ticks,
                args.budget,
                order,
                random.Random(args.seed),
                args.dated,
                settled,
            )
            print(
                f"| {order} | {name} | {r['freshness']:.4f} | {r['settled']:.4f} "
                f"| {r['fetches']:.1f} "
                f"| {time.monotonic() - began:.0f} |",
                flush=True,
            )
            if args.by_kind:
                for k in sorted({key.split(": ")[0] for key in r if ": " in key}):
                    print(
                        f"|  | {name}: {k} | {r[k + ': fresh']:.3f} | | "
                        f"{r[k + ': fetches']:.2f} | |"
                    )


if __name__ == "__main__":
    main()
