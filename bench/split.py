"""Where the kit crawl's CPU goes, by part of the process tree: the crawler's event loop, its
other threads (the database writer's is the busiest), the analysis workers.

    uv run python bench/split.py --n 10000 --runs 2 --port 8851 [--litecrawl PATH] [-- FLAGS]

Crawls ``bench/run.py crawl``'s site (``--site kit``: the shared kit's own, as ``compare``'s
option; its flags, nginx on ``--port``) and samples /proc every
0.2 s: each thread's user and system CPU (``/proc/PID/task/TID/stat``), its context switches,
and the crawler's I/O (``/proc/PID/io``: bytes through read/write calls and the calls, which
are the SQLite file's and the pipes' and sockets'). CPU seconds per page hold on a loaded
machine; which thread is the writer is not known from /proc (Python 3.11 names no OS thread):
the crawler's busiest thread besides the event loop is reported as the writer, and the rest
together.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from run import CRAWL_FLAGS, LITECRAWL, ROOT, Nginx, bench_site, bytecode

_TICK = os.sysconf("SC_CLK_TCK")
_SWITCHES = re.compile(r"(voluntary|nonvoluntary)_ctxt_switches:\s+(\d+)")
_PARTS = (
    "event loop",
    "writer thread (busiest other)",
    "other crawler threads",
    "analysis workers",
    "other processes",
)
_IO = ("rchar", "wchar", "syscr", "syscw", "write_bytes")


@dataclass
class Thread:
    """The last /proc reading of one thread: CPU seconds, context switches."""

    user: float = 0.0
    system: float = 0.0
    switches: dict[str, int] = field(default_factory=dict)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
    except OSError:
        pass
    return found


def _sample(root: int, threads: dict[tuple[int, int], Thread], kinds: dict[int, str]) -> None:
    """Read every thread of ``root`` and its descendants into ``threads``."""
    pids = [root]
    for pid in pids:
        pids += _children(pid)
    for pid in pids:
        try:
            if kinds.get(pid) != "worker":  # a worker's first sample may be before its exec
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                kinds[pid] = "worker" if b"litecrawl.index.pool" in cmdline else "other"
            for tid in os.listdir(f"/proc/{pid}/task"):
                stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()
                status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
                threads[(pid, int(tid))] = Thread(
                    int(fields[11]) / _TICK,
                    int(fields[12]) / _TICK,
                    {k: int(v) for k, v in _SWITCHES.findall(status)},
                )
        except OSError:
            continue  # gone between the listing and the reading


def crawl(litecrawl: list[str], base: str, work: Path, extra: list[str]) -> dict[str, float]:
    """One crawl into a new SQLite file; per page: each part's CPU ms, the crawler's I/O."""
    db = work / "split.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    cmd = [*litecrawl, "crawl", f"{base}/index.html", "--db", str(db), *CRAWL_FLAGS, *extra]
    threads: dict[tuple[int, int], Thread] = {}
    kinds: dict[int, str] = {}
    io: dict[str, int] = {}
    began = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    while proc.poll() is None:
        _sample(proc.pid, threads, kinds)
        try:
            lines = Path(f"/proc/{proc.pid}/io").read_text().splitlines()
            io = {k: int(v) for k, _, v in (line.partition(": ") for line in lines)}
        except OSError:
            pass
        time.sleep(0.2)
    wall = time.monotonic() - began
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode})")
    conn = sqlite3.connect(db)
    pages = int(conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0])
    conn.close()
    per = 1000 / max(pages, 1)
    parts: dict[str, list[Thread]] = {name: [] for name in _PARTS}
    crawler = sorted(
        (t for (pid, tid), t in threads.items() if pid == proc.pid and tid != pid),
        key=lambda t: -(t.user + t.system),
    )
    parts["event loop"] = [threads[(proc.pid, proc.pid)]]
    parts["writer thread (busiest other)"] = crawler[:1]
    parts["other crawler threads"] = crawler[1:]
    for (pid, _), t in threads.items():
        if pid != proc.pid:
            parts["analysis workers" if kinds.get(pid) == "worker" else "other processes"].append(t)
    row: dict[str, float] = {"pages": pages, "wall": wall, "load": os.getloadavg()[0]}
    for name, members in parts.items():
        row[f"{name} user"] = sum(t.user for t in members) * per
        row[f"{name} sys"] = sum(t.system for t in members) * per
        row[f"{name} switches"] = sum(sum(t.switches.values()) for t in members) / max(pages, 1)
    for key in _IO:
        scale = 1 if key.startswith("sys") else 1024  # calls, or KiB
        row[f"crawler {key}"] = io.get(key, 0) / max(pages, 1) / scale
    return row


def report(rows: list[dict[str, float]]) -> None:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    loads = ", ".join(f"{r['load']:.1f}" for r in rows)
    print(f"\n{len(rows)} runs, {med('pages'):.0f} pages, wall {med('wall'):.0f} s, "
          f"load {loads} (medians below)")  # fmt: skip
    print("| part | CPU ms per page | user | system | context switches per page |")
    print("|---|---|---|---|---|")
    total = 0.0
    for part in _PARTS:
        cpu = med(f"{part} user") + med(f"{part} sys")
        total += cpu
        print(f"| {part} | {cpu:.3f} | {med(f'{part} user'):.3f} | {med(f'{part} sys'):.3f} | "
              f"{med(f'{part} switches'):.2f} |")  # fmt: skip
    print(f"| **tree** | **{total:.3f}** | | | |")
    print("crawler I/O per page: " + ", ".join(
        f"{key} {med(f'crawler {key}'):.1f}{'' if key.startswith('sys') else ' KiB'}"
        for key in _IO))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--port", type=int, default=8181)
    parser.add_argument("--litecrawl", type=Path, help="another tree's console script")
    parser.add_argument("--site", choices=["ours", "kit"], default="ours", help="as compare's")
    parser.add_argument("extra", nargs="*", help="extra flags for litecrawl crawl (after --)")
    args = parser.parse_args()
    if args.litecrawl:
        bytecode(args.litecrawl.resolve().parent.parent.parent)
        litecrawl = [str(args.litecrawl)]
    else:
        bytecode(ROOT)
        litecrawl = LITECRAWL
    root = bench_site(args.site, args.n, args.port)
    manifest = json.loads((root / "manifest.json").read_text())
    nginx = Nginx(root, args.port)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.runs):
                rows.append(crawl(litecrawl, manifest["base"], Path(tmp), args.extra))
                print(json.dumps({k: round(v, 3) for k, v in rows[-1].items()}), flush=True)
    finally:
        nginx.stop()
    report(rows)


if __name__ == "__main__":
    main()
