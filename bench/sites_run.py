"""``sites run`` of several small sites: the CPU, peak memory and analysis processes of its tree.

    uv run python bench/sites_run.py --sites 4 --pages 300 --runs 2 --port 8710 [--tree DIR]

Each of ``--sites`` sites is bench/site.py's site of ``--pages`` pages (its links naming its own
port), served by one nginx on ports ``--port``, ``--port`` + 1, ...; the sites are added to a new
SQLite database (whitelisted: their index page has no text) and ``litecrawl sites run --once
--workers <sites>`` crawls them all at once, politeness opened up (no delay, 16 fetches a
host). Every 0.1 s the crawler and its descendants are read from /proc: the tree's summed VmRSS
(its peak), the analysis worker processes alive (their most at once, and how many there were).
CPU: user + sys of the crawler and every process it waited for (its analysis workers). Each run
reports the documents indexed a site. ``--tree DIR``: another checkout with its own ``uv sync``
(e.g. the commit before), alternated with this tree run by run so the machine's drift hits both
alike.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from memory import MIB, _kib, _role, _tree
from run import LITECRAWL, Nginx, bytecode, count_rows, site_dir

SAMPLE_S = 0.1
CONFIG = """
[rate_limit]
per_host_delay_ms = 0
[concurrency]
global = 64
per_host = 16
[cache]
respect_conditional = false
[sites]
max_pages_per_site = 0
"""


@dataclass
class Run:
    cpu: float  # user + sys seconds of the crawler and every process it waited for
    wall: float
    peak_rss: int  # the peak of the tree's summed VmRSS, bytes
    most_workers: int  # analysis worker processes alive at once, at most
    workers: int  # analysis worker processes seen over the run
    indexed: dict[str, int]  # documents by site


def sites_run(script: list[str], bases: list[str], tmp: Path) -> Run:
    db = tmp / "sites.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    conf = tmp / "sites.toml"
    conf.write_text(CONFIG)
    add = [*script, "sites", "add", *[f"{b}/" for b in bases], "--db", str(db)]
    subprocess.run(add, check=True, stdout=subprocess.DEVNULL)
    for b in bases:  # the generated index page is one link, no text: relevant all the same
        note = [*script, "sites", "annotate", f"{b}/", "--whitelist", "--db", str(db)]
        subprocess.run(note, check=True, stdout=subprocess.DEVNULL)
    cmd = [*script, "sites", "run", "--once", "--workers", str(len(bases)), "--db", str(db)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen([*cmd, "--config", str(conf)], stdout=subprocess.PIPE, text=True)
    peak_rss = most = 0
    seen: set[int] = set()
    while proc.poll() is None:
        pids = _tree(proc.pid)
        workers = {p for p in pids if _role(p) == "worker"}
        seen |= workers
        most = max(most, len(workers))
        peak_rss = max(peak_rss, sum(_kib(f"/proc/{p}/status", "VmRSS:") for p in pids))
        time.sleep(SAMPLE_S)
    wall = time.monotonic() - start
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{out[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    indexed = {
        b: count_rows(str(db), f"SELECT count(*) FROM documents WHERE url LIKE '{b}/%'")
        for b in bases
    }
    return Run(cpu, wall, peak_rss, most, len(seen), indexed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=4)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--port", type=int, default=8710, help="the first site's port")
    parser.add_argument("--tree", action="append", default=[], help="a checkout with .venv")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    trees = {"this tree": (here, LITECRAWL)}
    for t in args.tree:
        trees[t] = (Path(t).resolve(), [str(Path(t).resolve() / ".venv" / "bin" / "litecrawl")])
    for root, _ in trees.values():
        bytecode(root)
    roots = {args.port + i: site_dir(args.pages, args.port + i) for i in range(args.sites)}
    bases = [json.loads((r / "manifest.json").read_text())["base"] for r in roots.values()]
    reachable = json.loads((next(iter(roots.values())) / "manifest.json").read_text())["reachable"]
    rows: dict[str, list[Run]] = {name: [] for name in trees}
    nginx = Nginx(next(iter(roots.values())), sites=roots)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.runs):
                for name, (_, script) in trees.items():
                    run = sites_run(script, bases, Path(tmp))
                    rows[name].append(run)
                    print(
                        f"{name}: cpu {run.cpu:.2f} s, wall {run.wall:.1f} s, peak RSS "
                        f"{run.peak_rss / MIB:.0f} MiB, analysis processes {run.most_workers} "
                        f"at once, {run.workers} in all; indexed {sorted(run.indexed.values())} "
                        f"of {reachable} a site; load {Path('/proc/loadavg').read_text()[:14]}",
                        flush=True,
                    )
    finally:
        nginx.stop()
    print(f"\n{args.sites} sites of {reachable} pages, `sites run --once --workers {args.sites}`")
    print("| tree | CPU s (median) | peak RSS MiB | analysis processes at once / in all | runs |")
    print("|---|---|---|---|---|")
    for name, found in rows.items():
        cpu = statistics.median(r.cpu for r in found)
        rss = statistics.median(r.peak_rss for r in found) / MIB
        most = max(r.most_workers for r in found)
        seen = max(r.workers for r in found)
        print(f"| {name} | {cpu:.2f} | {rss:.0f} | {most} / {seen} | {len(found)} |")


if __name__ == "__main__":
    main()
