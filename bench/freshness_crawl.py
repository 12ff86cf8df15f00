"""Freshness at the server with the real crawler: ``litecrawl crawl --watch --schedule P``.

    uv run python bench/freshness_crawl.py [--day 24] [--pages 250] [--budget 25] [--days 64]
        [--measure-from 32] [--max-days 30] [--policies uniform multiplicative freshness]
        [--shift-at DAY [--settled-from DAY]] [--before-src DIR] [--port P]

bench/freshness.py's site (pages changing as Poisson processes, 0.01-10 changes a day, a fifth
never; honest ETag/Last-Modified/304; freshness measured from what the server served), crawled
by one ``litecrawl crawl --watch`` process per policy, each under its own path and with its own
database, all started at once. Time is compressed to ``--day`` real seconds a day and the
crawler's settings are given in those seconds (new interval 1 day, min 1 hour, max
``--max-days``, which must exceed pages / budget days: below it no policy can keep every page
within max interval, the allocation is infeasible and every policy becomes a rotation; the
schedule works in whole seconds, so a day is at least 24 s). Every crawler
gets the same fetch budget: ``--rate-limit`` (the host's requests a second: all pages are on one
host) of ``--budget`` a day, and ``--budget`` itself for the policies that plan with one. The
default is the issue's crowded case: 10x more pages than the budget revisits in a day.
``--shift-at``: the site whose rates shift (bench/freshness.py's ``shift``: each page takes
another page's rate on that day; the oracle re-plans every page then); freshness is measured from
the shift, and again from ``--settled-from`` (default: the shift + ``--max-days``, when every
page has been visited since the shift).

Beside the crawlers, bench/freshness.py's library clients run the same policies (and the oracle,
which only a client can be: it is given the true rates) on the same site at the same budget, so
the table says both how the policies compare and how much the real crawler loses to its
machinery (lateness, the first crawl's pace). The result depends on CPU speed only when a
crawler cannot keep up with its budget: ``fetches/day`` says whether it did, and the load
average is printed. ``--before-src``: another tree's ``src/`` (``git archive main src``) runs its
``crawl --schedule freshness`` beside this one's as ``crawl-freshness-before``, so a change to the
estimator is measured before and after in one run, on one site and one load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from litecrawl.schedule import Schedule

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freshness as lib
from freshness import Client, Scenario, Site


def crawler(
    policy: str,
    urls: list[str],
    work: Path,
    day: float,
    sc: Scenario,
    max_days: float,
    name: str | None = None,
    src: Path | None = None,
) -> subprocess.Popen[bytes]:
    """``litecrawl crawl --watch`` of ``urls`` under ``policy``, settings in real seconds;
    ``src``: litecrawl's source tree to run instead of this one."""
    rate = sc.budget / day
    name = name or policy
    db = work / f"{name}.db"
    (work / name).mkdir()
    config = work / name / "crawl.toml"
    config.write_text(f'[cache]\ndir = "{work / name / "cache"}"\n')
    args = [
        sys.executable, "-m", "litecrawl", "crawl", *urls, "--db", str(db),
        "--config", str(config), "--watch", "--schedule", policy, "--quiet",
        "--ignore-robots", "--no-follow", "--no-embed", "--delay-ms", "0",
        "--rate-limit", f"{rate:.6f}",
        "--new-interval", str(round(day)), "--min-interval", str(max(round(day / 24), 1)),
        "--max-interval", str(round(max_days * day)),
    ]  # fmt: skip
    if policy != "multiplicative":
        args += ["--budget", f"{rate:.6f}"]
    log = (work / f"{name}.log").open("wb")
    env = {**os.environ, "PYTHONPATH": str(src)} if src is not None else None
    return subprocess.Popen(args, cwd=work / name, stdout=log, stderr=subprocess.STDOUT, env=env)


async def run(args: argparse.Namespace) -> list[tuple[str, dict[str, float]]]:
    if args.shift_at is None:
        sc = Scenario("crowded", args.pages, args.budget, args.days, args.measure_from)
    else:
        settled = args.settled_from
        if settled is None or settled >= args.days:
            settled = min(args.shift_at + args.max_days, args.days)
        if settled >= args.days:
            settled = args.shift_at  # no room for a second window
        sc = Scenario("shift", args.pages, args.budget, args.days, args.shift_at, args.shift_at,
                      settled)  # fmt: skip
    lib.SCHEDULE = Schedule(max_interval_sec=round(args.max_days * lib.DAY))
    site = Site(sc, random.Random(args.seed))
    runner, base = await lib.serve(site, args.port)
    loop = asyncio.get_running_loop()
    start = loop.time() + 2.0
    wall = time.time() + 2.0
    site.clock = lambda: (loop.time() - start) / args.day
    before = [f"{p}-before" for p in args.policies if args.before_src and p == "freshness"]
    crawled = {f"crawl-{p}" for p in args.policies + before}
    # the crawler compares Last-Modified with its own clock: give it wall-clock dates
    site.stamp = lambda client, d: (
        (wall + d * args.day) if client in crawled else lib.EPOCH + d * lib.DAY
    )
    work = Path(tempfile.mkdtemp(prefix="lcfresh-crawl-"))
    procs = {}
    for policy in args.policies:
        urls = [f"{base}/crawl-{policy}/{p}" for p in range(sc.pages)]
        procs[policy] = crawler(policy, urls, work, args.day, sc, args.max_days)
    for name in before:
        urls = [f"{base}/crawl-{name}/{p}" for p in range(sc.pages)]
        procs[name] = crawler(
            "freshness", urls, work, args.day, sc, args.max_days, name, args.before_src
        )
    clients = [
        Client(f"lib-{name}", cls(sc, site), base, sc, site.clock, day=args.day)
        for name, cls in lib.POLICIES.items()
    ]
    loads = []

    async def sample_load() -> None:
        while True:
            loads.append(os.getloadavg()[0])
            await asyncio.sleep(30)

    sampler = asyncio.create_task(sample_load())
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
            await asyncio.gather(*(c.run(session) for c in clients))
    finally:
        sampler.cancel()
        for proc in procs.values():
            proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
        await runner.cleanup()
    never = [p for p in range(sc.pages) if site.rates_before[p] == site.rates_after[p] == 0]
    rows = []
    for name in [f"crawl-{p}" for p in args.policies + before] + [c.name for c in clients]:
        served = site.served.get(name, [])
        rows.append(
            (
                name,
                {
                    "freshness": site.freshness(name, sc.measure_from, sc.days),
                    "settled": site.freshness(name, sc.settled_from or sc.measure_from, sc.days),
                    "fetches_per_day": sum(len(s) for s in served) / sc.days,
                    "measured_fetches_per_day": sum(
                        1 for s in served for t in s if t >= sc.measure_from
                    )
                    / (sc.days - sc.measure_from),
                    "early_fetches_per_day": sum(
                        1 for s in served for t in s if t < min(args.max_days, sc.days)
                    )
                    / min(args.max_days, sc.days),
                    "never_revisit_days": site.revisits(name, never, sc.measure_from),
                    "never_min_gap": min(
                        (
                            b - a
                            for p in never
                            for a, b in zip(served[p], served[p][1:], strict=False)
                            if a >= sc.measure_from
                        ),
                        default=float("nan"),
                    )
                    if served
                    else float("nan"),
                },
            )
        )
    print(f"work dir {work}; load average over the run: min {min(loads):.1f}, "
          f"mean {sum(loads) / len(loads):.1f}, max {max(loads):.1f}")  # fmt: skip
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--day", type=float, default=24.0, help="real seconds per virtual day")
    ap.add_argument("--pages", type=int, default=250)
    ap.add_argument("--budget", type=float, default=25.0, help="fetches a day")
    ap.add_argument("--days", type=float, default=64.0)
    ap.add_argument("--measure-from", type=float, default=32.0)
    ap.add_argument("--max-days", type=float, default=30.0, help="max interval, days")
    ap.add_argument("--policies", nargs="+", default=["uniform", "multiplicative", "freshness"])
    ap.add_argument("--shift-at", type=float, help="the day every page takes another's rate")
    ap.add_argument("--settled-from", type=float, help="start of a second window (with a shift)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=0, help="the site's local port (0: a free one)")
    ap.add_argument(
        "--before-src",
        type=Path,
        help="another litecrawl src/ (e.g. main's, from git archive): its crawl --schedule "
        "freshness runs beside this tree's as crawl-freshness-before",
    )
    args = ap.parse_args()
    if args.shift_at is not None:
        args.measure_from = args.shift_at
    began = time.monotonic()
    rows = asyncio.run(run(args))
    ref = dict(rows)
    print(
        f"{args.pages} pages, {args.budget:g} fetches a day, day = {args.day:g} s, days "
        f"{args.measure_from:g}-{args.days:g} measured, max interval {args.max_days:g} days, "
        f"{time.monotonic() - began:.0f} s"
        + (f", rates shifted on day {args.shift_at:g}" if args.shift_at is not None else "")
    )
    shifted = args.shift_at is not None
    print(
        "| client | freshness | x multiplicative (same kind) | x uniform (same kind) "
        "| x oracle | fetches/day (measured window) (first max interval) | never-changing: mean "
        "/ least days between visits |"
        + (" settled | x mult | x uniform | x oracle |" if shifted else "")
    )
    print("|---|---|---|---|---|---|---|" + ("---|---|---|---|" if shifted else ""))
    for name, r in rows:
        kind = name.split("-", 1)[0]
        f = r["freshness"]
        mult = ref.get(f"{kind}-multiplicative", {}).get("freshness", float("nan"))
        uni = ref.get(f"{kind}-uniform", {}).get("freshness", float("nan"))
        print(
            f"| {name} | {f:.3f} | {f / mult:.2f} | {f / uni:.2f} "
            f"| {f / ref['lib-oracle']['freshness']:.2f} "
            f"| {r['fetches_per_day']:.1f} ({r['measured_fetches_per_day']:.1f}) "
            f"({r['early_fetches_per_day']:.1f}) "
            f"| {r['never_revisit_days']:.1f} / {r['never_min_gap']:.1f} |"
            + (_settled(r, ref, kind) if shifted else "")
        )


def _settled(r: dict[str, float], ref: dict[str, dict[str, float]], kind: str) -> str:
    """The row's figures over the settled window."""
    s = r["settled"]
    mult = ref.get(f"{kind}-multiplicative", {}).get("settled", float("nan"))
    uni = ref.get(f"{kind}-uniform", {}).get("settled", float("nan"))
    return f" {s:.3f} | {s / mult:.2f} | {s / uni:.2f} | {s / ref['lib-oracle']['settled']:.2f} |"


if __name__ == "__main__":
    main()
