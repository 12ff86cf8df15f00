"""Freshness measured where it happens, at the server (issue 30).

    uv run python bench/freshness.py [--day 1.0] [--scenario baseline crowded shift] [--seed 1]

A local aiohttp server serves N pages whose contents change as Poisson processes, rates spread
log-uniformly over three orders of magnitude (0.01 to 10 changes a day) and a fifth of the pages
never changing; it answers honestly: an ETag and a Last-Modified per version, 304 to a matching
If-None-Match or If-Modified-Since. Time is compressed: ``--day`` real seconds are one day, and
every interval (litecrawl's defaults: new page 1 day, min 1 hour, max 30 days) is in these days.

Four clients crawl it at once, each under its own path so the server tells them apart, all with
the same fetch budget (at most B fetches a day, the most overdue page first, nothing fetched
before it is due) and the same change history (common random numbers):

- ``uniform``: every page every N/B days;
- ``multiplicative``: litecrawl()'s default rule (`litecrawl.schedule.Schedule`);
- ``freshness``: each page's change rate estimated from its checks (`Estimator`, with the share
  of stopped pages learned from them, `StopShare`, as the crawler's planner did until session 13:
  bench/freshness_estimate.py; the planner's change-point estimate since is
  bench/freshness_bounds.py's ``empirical``, measured through the crawler), revisits from
  the allocation under the budget (`allocate`), solved again every day and planned over the
  budget by what the intervals the pages hold take of a plan (`Spend`);
- ``empirical``: litecrawl's planner itself (``Planner``, ``--schedule freshness`` since session
  13: change points per page, prior and hazard learned, intervals decided on each page's
  posterior), called as the crawler's write-back calls it, in virtual seconds;
- ``unspent``: the same planned at the budget (session 8's);
- ``due-sum``: what a page spends read from its due time less its visit (session 9's; a late
  page's due time is closer than the interval it was given, so a late queue reads as spending more);
- ``fixed``: the same with no share of stopped pages learned (the estimator before session 7);
- ``stops``: the same with the share learned but no change starting a page's record again (the
  estimator of session 7);
- ``oracle``: the same allocation given the true rates.

The server records every response (time, version served); afterwards it computes, per client,
the time-averaged share of pages whose last-served version is still the current one (a page
not served yet counts as stale), over the days after the warm-up. The clients are small loops on
the library's schedule code, not ``litecrawl crawl``: its schedule works in whole seconds, too
coarse for compressed days.

Scenarios: ``baseline`` (the budget revisits each page every 5 days on average), ``crowded``
(10x more pages than the budget can revisit in a day), ``shift`` (each page takes another page's
rate halfway; measured over the second half; the oracle re-plans every page at the shift).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import hashlib
import heapq
import itertools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from email.utils import formatdate, parsedate_to_datetime

import aiohttp
from aiohttp import web
from freshness_estimate import ChangeHistory, Estimator, StopShare

from litecrawl.schedule import Schedule
from litecrawl.schedule.allocate import RateGroup, allocate
from litecrawl.schedule.planner import Planner, Spend

DAY = 86400.0  # the policies work in virtual seconds, as the crawler does in real ones
EPOCH = 1.7e9  # Last-Modified: virtual seconds after this


@dataclass(frozen=True)
class Scenario:
    name: str
    pages: int
    budget: float  # fetches per day
    days: float
    measure_from: float  # day the measurement starts
    shift_at: float | None = None
    settled_from: float | None = None  # a second window: after the policies had time to adapt


SCENARIOS = {
    "baseline": Scenario("baseline", 250, 50, 100, 30),
    "crowded": Scenario("crowded", 500, 50, 150, 50),
    "shift": Scenario("shift", 250, 50, 160, 80, shift_at=80, settled_from=120),
}


# -- the server --------------------------------------------------------------------------------


class Site:
    """N pages changing as Poisson processes; records what it served to whom, and when."""

    def __init__(self, sc: Scenario, rng: random.Random) -> None:
        n = sc.pages
        before = [0.0 if i % 5 == 0 else 10 ** rng.uniform(-2, 1) for i in range(n)]
        after = before[:]
        rng.shuffle(after)
        self.shift_at = sc.shift_at
        self.rates_before, self.rates_after = before, after
        self.changes: list[list[float]] = []
        for i in range(n):
            times, t = [], 0.0
            while True:
                shifted = sc.shift_at is not None and t >= sc.shift_at
                rate = after[i] if shifted else before[i]
                if rate <= 0:
                    if sc.shift_at is None or shifted:
                        break
                    t = sc.shift_at
                    continue
                step = rng.expovariate(rate)
                if sc.shift_at is not None and not shifted and t + step >= sc.shift_at:
                    t = sc.shift_at  # memoryless: start the new rate's clock at the shift
                    continue
                t += step
                if t > sc.days + 1:
                    break
                times.append(t)
            self.changes.append(times)
        self.served: dict[str, list[list[float]]] = {}
        self.clock: Callable[[], float] = lambda: 0.0
        # a client's Last-Modified for a change on day d: virtual seconds after EPOCH (a real
        # crawler is given wall-clock times instead: bench/freshness_crawl.py)
        self.stamp: Callable[[str, float], float] = lambda client, d: EPOCH + d * DAY

    def rates(self, day: float) -> list[float]:
        shifted = self.shift_at is not None and day >= self.shift_at
        return self.rates_after if shifted else self.rates_before

    def version(self, page: int, day: float) -> int:
        return bisect.bisect_right(self.changes[page], day)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        client, page = request.match_info["client"], int(request.match_info["page"])
        now = self.clock()
        version = self.version(page, now)
        changed_at = self.changes[page][version - 1] if version else 0.0
        etag = f'"{page}-{version}"'
        modified = formatdate(self.stamp(client, changed_at), usegmt=True)
        self.served.setdefault(client, [[] for _ in self.changes])[page].append(now)
        headers = {"ETag": etag, "Last-Modified": modified}
        inm, ims = request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")
        if inm == etag or (
            inm is None
            and ims is not None
            and parsedate_to_datetime(ims).timestamp() >= math.floor(self.stamp(client, changed_at))
        ):
            return web.Response(status=304, headers=headers)
        body = f"<html><title>page {page}</title><body><p>page {page}, version {version}</p>"
        return web.Response(text=body + "</body></html>", content_type="text/html", headers=headers)

    def freshness(self, client: str, start: float, end: float) -> float:
        """Time-averaged share of pages whose last-served version is current, over [start, end]."""
        fresh = 0.0
        for page, serves in enumerate(self.served.get(client, [])):
            changes = self.changes[page]
            for k, t in enumerate(serves):
                nxt = serves[k + 1] if k + 1 < len(serves) else end
                i = bisect.bisect_right(changes, t)
                stale_at = changes[i] if i < len(changes) else math.inf
                lo, hi = max(t, start), min(nxt, stale_at, end)
                fresh += max(hi - lo, 0.0)
        return fresh / (len(self.changes) * (end - start))

    def revisits(self, client: str, pages: list[int], start: float) -> float:
        """Mean days between serves of ``pages`` after ``start``."""
        gaps = []
        for page in pages:
            serves = self.served.get(client, [[]] * len(self.changes))[page]
            gaps += [b - a for a, b in itertools.pairwise(serves) if a >= start]
        return sum(gaps) / len(gaps) if gaps else math.nan


# -- the policies (virtual seconds) ------------------------------------------------------------

SCHEDULE = Schedule()  # litecrawl's defaults: new 1 day, min 1 h, max 30 days, x0.2, x2


class Anchored:
    """The next visit one interval after the visit was *due*, not after it happened: a page
    fetched late does not push its later visits back, so what the plan spends is spent."""

    def __init__(self) -> None:
        self.due: dict[int, float] = {}

    def after(self, page: int, now: float, interval: float) -> float:
        due = self.due.get(page)
        base = due if due is not None and now - interval < due <= now else now
        self.due[page] = base + interval
        return base + interval


class Uniform(Anchored):
    def __init__(self, sc: Scenario, site: Site) -> None:
        super().__init__()
        self.interval = sc.pages / sc.budget * DAY

    def tick(self, now: float) -> None:
        pass

    def visited(
        self, page: int, now: float, changed: bool | None, age: float | None = None
    ) -> float:
        interval = min(max(self.interval, SCHEDULE.min_interval_sec), SCHEDULE.max_interval_sec)
        return self.after(page, now, interval)


class Multiplicative:
    def __init__(self, sc: Scenario, site: Site) -> None:
        self.last: dict[int, tuple[int, int]] = {}

    def tick(self, now: float) -> None:
        pass

    def visited(
        self, page: int, now: float, changed: bool | None, age: float | None = None
    ) -> float:
        last, nxt = self.last.get(page, (None, None))
        # the first fetch of a page is "fresh" to the rule, as a new page's content is
        interval = SCHEDULE.next_interval(last, nxt, changed is not False)
        self.last[page] = (int(now), int(now) + interval)
        return now + interval


class NoRestarts(Estimator):
    """The estimator of session 7: a change never starts a page's record again."""

    def restarted(self, history: ChangeHistory, interval: float, age: float | None) -> float:
        return 0.0


class Freshness(Anchored):
    LEARN_STOPS = True
    ESTIMATOR: type[Estimator] = Estimator
    SPEND = True  # the budget planned over by what the pages' held intervals take of a plan
    SPEND_BY_DUE = False  # session 9's measure of a page's spend: its due time less the visit

    def __init__(self, sc: Scenario, site: Site) -> None:
        super().__init__()
        self.budget = sc.budget / DAY
        self.estimator = self.ESTIMATOR(prior_rate=1 / SCHEDULE.new_interval_sec)
        self.stops = StopShare(memory=sc.pages)
        self.spend = Spend()
        self.held: dict[int, float] = {}  # the interval each page was given at its last visit
        self.solved = 0.0
        self.history = [ChangeHistory() for _ in range(sc.pages)]
        self.rate = [self.estimator.prior_rate] * sc.pages
        self.fetched: dict[int, float] = {}
        self.allocation = allocate(
            [RateGroup(r) for r in self.rate],
            self.budget,
            SCHEDULE.min_interval_sec,
            SCHEDULE.max_interval_sec,
        )

    def tick(self, now: float) -> None:
        if self.LEARN_STOPS:
            self.estimator = replace(self.estimator, stopped_share=self.stops.share)
        binds = self.allocation.level.high > 0
        if self.SPEND and binds:  # as the planner does
            self.spend.update(self.budget, len(self.rate), now - self.solved, DAY)
        self.solved = now
        self.allocation = allocate(
            [RateGroup(r) for r in self.rate],
            self.budget * self.spend.factor,
            SCHEDULE.min_interval_sec,
            SCHEDULE.max_interval_sec,
        )

    def visited(
        self, page: int, now: float, changed: bool | None, age: float | None = None
    ) -> float:
        if changed is not None:
            interval = now - self.fetched[page]
            self.history[page] = self.estimator.observe(self.history[page], interval, changed, age)
            self.stops.observe(self.estimator, self.history[page], interval)
            self.rate[page] = self.estimator.rate(self.history[page])
        self.fetched[page] = now
        interval = self.allocation.interval(self.rate[page])
        due = self.after(page, now, interval)
        # what the page will spend: the interval given (a late page's due time is closer)
        given = due - now if self.SPEND_BY_DUE else interval
        self.spend.set_due(given, self.held.get(page))
        self.held[page] = given
        return due


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
    """The allocation given the true rates. At the shift it re-plans every page as if the new
    rates had been known at its last fetch (``replan``), so it is a bound after the shift too."""

    def __init__(self, sc: Scenario, site: Site) -> None:
        super().__init__(sc, site)
        self.site = site
        self.shifted = False
        self.tick(0.0)

    def tick(self, now: float) -> None:
        self.rate = [r / DAY for r in self.site.rates(now / DAY)]
        super().tick(now)

    def replan(self, now: float) -> dict[int, float]:
        shift = self.site.shift_at
        if self.shifted or shift is None or now < shift * DAY:
            return {}
        self.shifted = True
        self.due = {
            page: at + self.allocation.interval(self.rate[page])
            for page, at in self.fetched.items()
        }
        return self.due

    def visited(
        self, page: int, now: float, changed: bool | None, age: float | None = None
    ) -> float:
        self.fetched[page] = now
        return self.after(page, now, self.allocation.interval(self.rate[page]))


class Empirical:
    """litecrawl's own planner (``Planner``, policy ``freshness``: change points per page, the
    prior and hazard learned, each interval decided on the page's posterior), called as the
    crawler's write-back calls it, in virtual seconds: what ``crawl --schedule freshness`` does
    without the crawler's machinery (lateness, whole seconds of real time)."""

    def __init__(self, sc: Scenario, site: Site) -> None:
        self.planner = Planner(replace(SCHEDULE, policy="freshness", budget=sc.budget / DAY))
        # due times it set are its own from virtual second 0 (not from the wall clock's now)
        self.planner._started = 0
        # page -> (change record, last visit, next visit, interval given), as the row keeps them
        self.rows: dict[int, tuple[str, int, int, int]] = {}
        self.versions: dict[int, int] = {}  # what the change hash stands for: changes seen

    def tick(self, now: float) -> None:
        planner = self.planner
        rates = [("site", planner.rate(row[0])) for row in self.rows.values()]
        records = [(row[0], row[1]) for row in self.rows.values()]
        if planner.due_read(now):
            planner.refresh(rates, now, 0.0, records if planner.wants_records(now) else None)

    def visited(
        self, page: int, now: float, changed: bool | None, age: float | None = None
    ) -> float:
        planner, at = self.planner, int(now)
        row = self.rows.get(page)
        history, last, due, held = row if row is not None else (None, None, None, None)
        self.versions[page] = self.versions.get(page, 0) + bool(changed)
        change = planner.observe(history, last, at, str(self.versions[page]), False, age)
        if planner.due_refresh(now):
            planner.solve(now)
        visit = planner.next_visit(
            at, last, due, bool(changed), "site", change.change_rate, change.change_history
        )
        before = planner.rate(history) if last is not None else None
        planner.moved("site", before, change.change_rate)
        planner.set_due(last, held, visit.interval, history)
        self.rows[page] = (change.change_history, at, visit.due, visit.interval)
        return float(visit.due)


POLICIES: dict[str, type[Uniform | Multiplicative | Freshness | Empirical]] = {
    "uniform": Uniform,
    "multiplicative": Multiplicative,
    "freshness": Freshness,
    "empirical": Empirical,
    "unspent": Unspent,
    "due-sum": DueSum,
    "fixed": Fixed,
    "stops": Stops,
    "oracle": Oracle,
}


# -- the clients --------------------------------------------------------------------------------


@dataclass
class Client:
    name: str
    policy: Uniform | Multiplicative | Freshness | Empirical
    base: str
    sc: Scenario
    clock: Callable[[], float]
    due: list[tuple[float, int]] = field(default_factory=list)
    etags: dict[int, str] = field(default_factory=dict)
    hashes: dict[int, str] = field(default_factory=dict)
    lag: float = 0.0  # the most a slot started late, in days
    day: float = 1.0  # real seconds per day

    async def run(self, session: aiohttp.ClientSession) -> None:
        self.due = [(0.0, p) for p in range(self.sc.pages)]
        heapq.heapify(self.due)
        slot, next_tick, tasks = 0.0, 1.0, set()
        while slot < self.sc.days:
            now = self.clock()
            if now < slot:
                await asyncio.sleep((slot - now) * self.day)
                continue
            self.lag = max(self.lag, now - slot)
            slot += 1 / self.sc.budget
            if now >= next_tick:
                self.policy.tick(now * DAY)
                next_tick += 1.0
                if isinstance(self.policy, Oracle) and (plan := self.policy.replan(now * DAY)):
                    self.due = [(plan.get(p, d), p) for d, p in self.due]
                    heapq.heapify(self.due)
            if self.due and self.due[0][0] <= now * DAY:
                _, page = heapq.heappop(self.due)
                task = asyncio.create_task(self.fetch(session, page))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)

    async def fetch(self, session: aiohttp.ClientSession, page: int) -> None:
        headers = {"If-None-Match": self.etags[page]} if page in self.etags else {}
        async with session.get(f"{self.base}/{self.name}/{page}", headers=headers) as resp:
            body = await resp.read()
            changed: bool | None = None
            if page in self.hashes:
                # "change" as litecrawl means it: the content differs (a 304 is no change)
                digest = hashlib.sha256(body).hexdigest() if resp.status == 200 else None
                changed = digest is not None and digest != self.hashes[page]
            if resp.status == 200:
                self.hashes[page] = hashlib.sha256(body).hexdigest()
                self.etags[page] = resp.headers["ETag"]
            modified = parsedate_to_datetime(resp.headers["Last-Modified"]).timestamp()
        now = self.clock() * DAY
        age = now - (modified - EPOCH) if changed else None
        heapq.heappush(self.due, (self.policy.visited(page, now, changed, age), page))


async def serve(site: Site, port: int = 0) -> tuple[web.AppRunner, str]:
    """The site on local ``port`` (0: a free one): its runner (to clean up) and base URL."""
    app = web.Application()
    app.router.add_get("/{client}/{page}", site.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", port)
    await tcp.start()
    port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def run_scenario(sc: Scenario, day: float, seed: int) -> dict[str, dict[str, float]]:
    site = Site(sc, random.Random(seed))
    runner, base = await serve(site)
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.5
    site.clock = lambda: (loop.time() - start) / day
    clients = [
        Client(name, cls(sc, site), base, sc, site.clock, day=day) for name, cls in POLICIES.items()
    ]
    connector = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(c.run(session) for c in clients))
    await runner.cleanup()
    never = [p for p in range(sc.pages) if site.rates_before[p] == 0 and site.rates_after[p] == 0]
    results = {}
    for c in clients:
        served = sum(len(s) for s in site.served.get(c.name, []))
        results[c.name] = {
            "freshness": site.freshness(c.name, sc.measure_from, sc.days),
            "settled": site.freshness(c.name, sc.settled_from or sc.measure_from, sc.days),
            "fetches_per_day": served / sc.days,
            "never_revisit_days": site.revisits(c.name, never, sc.measure_from),
            "lag_days": c.lag,
        }
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--day", type=float, default=1.0, help="real seconds per virtual day")
    ap.add_argument("--scenario", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(
        "| scenario | pages | budget/day | policy | freshness | x multiplicative | x uniform "
        "| x oracle | fetches/day | never-changing: days between visits | worst slot lag (days) "
        "| freshness after adapting | its x multiplicative | x oracle |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.scenario:
        sc = SCENARIOS[name]
        began = time.monotonic()
        res = asyncio.run(run_scenario(sc, args.day, args.seed))
        base = {k: res[k]["freshness"] for k in ("multiplicative", "uniform", "oracle")}
        settled = {k: res[k]["settled"] for k in ("multiplicative", "oracle")}
        for policy, r in res.items():
            f = r["freshness"]
            print(
                f"| {name} | {sc.pages} | {sc.budget:g} | {policy} | {f:.3f} "
                f"| {f / base['multiplicative']:.2f} | {f / base['uniform']:.2f} "
                f"| {f / base['oracle']:.2f} | {r['fetches_per_day']:.1f} "
                f"| {r['never_revisit_days']:.1f} | {r['lag_days']:.3f} "
                + (
                    f"| {r['settled']:.3f} | {r['settled'] / settled['multiplicative']:.2f} "
                    f"| {r['settled'] / settled['oracle']:.2f} |"
                    if sc.settled_from
                    else "| | | |"
                )
            )
        print(f"<!-- {name}: {time.monotonic() - began:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
