"""The kit crawl's CPU by stage, as litecrawl runs it: each part of the process tree
(bench/split.py's /proc sampling) and, inside them, the analysis workers' stages and the writer
thread's statements, each function's own thread CPU (``time.thread_time``) summed over the crawl.

    uv run python bench/stages.py --site kit --n 10000 --port 8822 [--keep DIR]

The crawl runs with bench/stage_hooks/ on PYTHONPATH: its ``sitecustomize`` wraps the stages in
every process of the crawl (the crawler and its analysis workers) and writes their totals at
exit; a wrapped call costs ~1 us (~15 a page). ``--keep DIR``: the crawl's database stays in DIR,
for ``bench/floors.py writer --db DIR/split.db`` (the floor of each writer stage). Stages not
wrapped are read as differences: the page's own upsert and the rest of a batch's writes,
the commits and the claims' transactions, the worker outside ``analyze`` (its task's pipe,
the pickles, start-up). bench/README.md, issue 29, session 14, has the table beside the floors.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from run import LITECRAWL, Nginx, bench_site
from split import crawl, report

HOOKS = Path(__file__).resolve().parent / "stage_hooks"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--site", choices=["ours", "kit"], default="kit")
    parser.add_argument("--keep", type=Path, help="keep the crawl's database in this folder")
    args = parser.parse_args()
    root = bench_site(args.site, args.n, args.port)
    base = json.loads((root / "manifest.json").read_text())["base"]
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        out = Path(tmp) / "stages"
        out.mkdir()
        os.environ["LC_STAGES"] = str(out)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(HOOKS), os.environ.get("PYTHONPATH")) if p
        )
        nginx = Nginx(root, args.port)
        try:
            row = crawl(LITECRAWL, base, work, [])
        finally:
            nginx.stop()
        report([row])
        pages = int(row["pages"])
        cpu: dict[str, float] = defaultdict(float)
        spent: dict[str, float] = defaultdict(float)
        for path in out.glob("*.json"):
            found = json.loads(path.read_text())
            kind = "worker" if "litecrawl.index.pool" in found["argv"] else "crawler"
            cpu[kind] += found["cpu"]
            for label, (seconds, _) in found["stages"].items():
                spent[label] += seconds
    ms = {label: seconds / pages * 1e3 for label, seconds in spent.items()}
    total = {kind: seconds / pages * 1e3 for kind, seconds in cpu.items()}
    derived = {
        "writer: page rows and the rest of a batch": ms["writer: a batch's writes, all of them"]
        - ms["writer: the frontier's link rows"]
        - ms["writer: the link graph"]
        - ms["writer: documents, all of it"],
        "writer: commits and the other transactions (claims, leases)": ms[
            "writer: transactions, all of them"
        ]
        - ms["writer: a batch's writes, all of them"],
        "worker: outside analyze (pipe, pickles, start-up)": total.get("worker", 0.0)
        - ms["worker: analyze, all of it"],
    }
    print(f"\nCPU ms a page by stage ({pages} pages; processes: {json.dumps(total)})")
    print("| stage | ms a page |\n|---|---|")
    for label, value in sorted({**ms, **derived}.items()):
        print(f"| {label} | {value:.3f} |")


if __name__ == "__main__":
    main()
