"""The analysis pool alone: what handing pages to the workers costs, without fetching or writing.

    uv run python bench/pool.py --pages 2200 --runs 5 [--mode 2 --mode inline] [--tree NAME=SRC]

Each run is a fresh process that reads ``--pages`` pages of ``bench/run.py crawl``'s site into
memory and gives them to :class:`~litecrawl.index.analyze.PageAnalyzer` 64 at a time on uvloop
(as the crawl does: the engine's link rules, the worker's whole job), the first 200 to warm the
workers (their imports, the model, the word cache). Between two readings of /proc after those,
it reports per page: the CPU of the calling process (the event loop's side of the pool: task
pickles, pipe writes, result reads), of the workers, their context switches, and minor page
faults. ``--mode inline`` runs ``analyze()`` in the calling process instead (``workers=0``): the
same work with no pool. ``--tree NAME=SRC`` alternates another tree's ``src`` (``PYTHONPATH``,
the workers inherit it) with this one's, run by run, so the machine's drift hits all alike.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_WARM = 200
_CONCURRENT = 64
_SWITCHES = re.compile(r"ctxt_switches:\s+(\d+)")


def _stat(pid: int) -> tuple[float, int, int]:
    """CPU seconds, minor faults and context switches of process ``pid`` (its main thread's)."""
    fields = Path(f"/proc/{pid}/stat").read_text()
    parts = fields[fields.rindex(")") + 2 :].split()
    status = Path(f"/proc/{pid}/status").read_text()
    cpu = (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")
    return cpu, int(parts[7]), sum(map(int, _SWITCHES.findall(status)))


@contextlib.asynccontextmanager
async def _analyzer(workers: int) -> AsyncIterator[tuple[Any, Any]]:
    """The analyzer and the object whose ``pids`` are its workers: the pool since session 15,
    the analyzer itself (its ``_pool``) in the trees before, which ``--tree`` may run."""
    from litecrawl.index import analyze

    if hasattr(analyze, "AnalysisPool"):
        async with analyze.AnalysisPool(workers) as pool:
            yield analyze.PageAnalyzer(analyze.AnalyzerSettings(), pool), pool
        return
    old: Any = analyze.PageAnalyzer
    async with old(analyze.AnalyzerSettings(), workers=workers) as analyzer:

        class Pids:
            @property
            def pids(self) -> list[int]:
                return analyzer._pool.pids if analyzer._pool is not None else []

        yield analyzer, Pids()


async def _measure(site: Path, n: int, workers: int) -> dict[str, float]:
    from litecrawl.fetch.base import FetchResult
    from litecrawl.parse.resolve import LinkRules
    from litecrawl.urls import UrlRules

    base = json.loads((site / "manifest.json").read_text())["base"]
    files = sorted(site.rglob("*.html"))[:n]
    pages = [(f"{base}/{f.relative_to(site)}", f.read_bytes()) for f in files]
    rules = LinkRules(UrlRules())
    limit = asyncio.Semaphore(_CONCURRENT)
    async with _analyzer(workers) as (analyzer, pool):

        async def one(url: str, body: bytes) -> None:
            async with limit:
                result = FetchResult(url, url, 200, {"content-type": "text/html"}, body)
                await analyzer(url, result, 1, "link", rules)

        await asyncio.gather(*(one(u, b) for u, b in pages[:_WARM]))
        pids = pool.pids
        before = [_stat(p) for p in [os.getpid(), *pids]]
        began = time.monotonic()
        await asyncio.gather(*(one(u, b) for u, b in pages[_WARM:]))
        wall = time.monotonic() - began
        after = [_stat(p) for p in [os.getpid(), *pids]]
    per = 1000 / (len(pages) - _WARM)
    diff = [
        tuple(a - b for a, b in zip(x, y, strict=True)) for x, y in zip(after, before, strict=True)
    ]
    return {
        "caller_ms": diff[0][0] * per,
        "workers_ms": sum(d[0] for d in diff[1:]) * per,
        "tree_ms": sum(d[0] for d in diff) * per,
        "switches": sum(d[2] for d in diff) * per / 1000,
        "faults": sum(d[1] for d in diff) * per / 1000,
        "wall": wall,
        "load": os.getloadavg()[0],
    }


def _child(args: argparse.Namespace) -> None:
    import uvloop

    workers = 0 if args.child == "inline" else int(args.child)
    row = uvloop.run(_measure(Path(args.site), args.pages, workers))
    print(json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--site", default="/tmp/lcbench-10000", help="bench/run.py's site")
    parser.add_argument("--mode", action="append", help="workers (a number) or inline")
    parser.add_argument("--tree", action="append", default=[], help="NAME=path/to/src")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args)
    if not (Path(args.site) / "manifest.json").exists():
        raise SystemExit(f"{args.site}: run bench/run.py crawl --n 10000 once to make the site")
    trees = {"this tree": str(HERE.parent / "src"), **dict(t.split("=", 1) for t in args.tree)}
    rows: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.runs):
        for name, src in trees.items():
            for mode in args.mode or ["2"]:
                env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "1"}
                cmd = [sys.executable, __file__, "--child", mode, "--site", args.site,
                       "--pages", str(args.pages)]  # fmt: skip
                out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
                row = json.loads(out.stdout.strip().splitlines()[-1])
                rows.setdefault(f"{name}, {mode}", []).append(row)
                print(f"{name}, {mode}", json.dumps({k: round(v, 3) for k, v in row.items()}),
                      flush=True)  # fmt: skip
    print("\n| tree, mode | caller ms a page | workers ms | tree ms | switches a page | runs |")
    print("|---|---|---|---|---|---|")
    for key, found in rows.items():
        med = {k: statistics.median(r[k] for r in found) for k in found[0]}
        print(f"| {key} | {med['caller_ms']:.3f} | {med['workers_ms']:.3f} | {med['tree_ms']:.3f}"
              f" | {med['switches']:.2f} | {len(found)} |")  # fmt: skip


if __name__ == "__main__":
    main()
