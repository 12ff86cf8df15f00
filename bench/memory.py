"""Memory and CPU of a whole crawl by its size: does anything grow with the crawl?

    uv run python bench/memory.py                          # 10k, 50k, 200k pages, this tree
    uv run python bench/memory.py --sizes 10000 50000 --tree /tmp/main-tree
    uv run python bench/memory.py --sizes 2000 --tracemalloc /tmp/tm   # Python heap snapshots
    uv run python bench/memory.py --sizes 10000 --backend sqlite postgres   # a PostgreSQL worker

For each size, ``bench/run.py crawl``'s site (bench/site.py, cached under /tmp) is served by
nginx and crawled with ``run.py``'s flags by this tree and by each ``--tree`` (another checkout
with its own ``uv sync``), alternated within the size. Every 0.2 s the crawler and all its
descendants (the analysis workers) are sampled from /proc: VmRSS and Pss (smaps_rollup; shared
pages counted once across the forked processes). Reported: the peak of the tree's sum, the
peak of each single process, each process's RSS at 10/25/50/75/100% of the crawl (steady growth
shows there), and CPU (user + sys of the crawler and every worker it waited for) per page.

``--backend postgres`` crawls into a throwaway PostgreSQL server (``bench/pg.py``, emptied before
each run) instead of an SQLite file, alternated with the other backends within a size; the
server's own CPU is reported apart (it is not in the crawler's tree).

``--tracemalloc DIR`` runs every Python process of the crawl with tracemalloc on (through a
``sitecustomize`` on PYTHONPATH, nothing in the package) and dumps a snapshot per process every
``--every`` seconds into DIR; ``--diff A B`` prints the largest growth between two snapshots.
tracemalloc slows the crawl and costs memory itself: use it to find what grows, not to measure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from pg import dump_statements, empty, server, server_cpu, top_statements
from run import CRAWL_FLAGS, LITECRAWL, Nginx, count_rows, site_dir

SAMPLE_S = 0.2
MIB = 1024 * 1024
SITECUSTOMIZE = """
import atexit, os, threading, time, tracemalloc
tracemalloc.start(int(os.environ.get("LCBENCH_TM_FRAMES", "1")))
_dir, _every = os.environ["LCBENCH_TM_DIR"], float(os.environ["LCBENCH_TM_EVERY"])
_cmd = open("/proc/self/cmdline", "rb").read()  # sys.argv is not set yet under -m
_role = "worker" if b"litecrawl.index.pool" in _cmd else "crawler"
_start = time.monotonic()
def _dump(tag):
    name = f"{_dir}/{_role}-{os.getpid()}-{tag}.snap"
    tracemalloc.take_snapshot().dump(name)
def _loop():
    while True:
        time.sleep(_every)
        _dump(f"{int(time.monotonic() - _start):06d}s")
threading.Thread(target=_loop, daemon=True).start()
atexit.register(_dump, "exit")
"""


@dataclass
class Proc:
    role: str
    peak_rss: int = 0
    rss: list[tuple[float, int]] = field(default_factory=list)  # (seconds since start, bytes)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(_children(p))
    return out


def _kib(path: str, key: str) -> int:
    """``key``'s value in a /proc status-like file, in bytes (0 if the process is gone)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def _role(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "?"
    return "worker" if "litecrawl.index.pool" in cmd else "other"


@dataclass
class Run:
    wall: float
    cpu: float  # user + sys seconds of the crawler and every worker it waited for
    pages: int
    tree_rss: int  # the peak of the tree's summed VmRSS
    tree_pss: int
    procs: dict[int, Proc]
    reachable: int = 0
    server_cpu: float = 0.0  # PostgreSQL's, apart from ``cpu``

    def peak(self, role: str) -> float:
        return max((p.peak_rss for p in self.procs.values() if p.role == role), default=0) / MIB


def crawl_sampled(script: list[str], base: str, db: str, env: dict[str, str]) -> Run:
    """One crawl, sampled every SAMPLE_S: peaks of the tree and of each process, CPU seconds.
    ``db``: an SQLite path (removed first) or a PostgreSQL URL (emptied first)."""
    if db.startswith("postgresql://"):
        empty(db)
    else:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    cmd = [*script, "crawl", f"{base}/index.html", "--db", db, *CRAWL_FLAGS]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    procs: dict[int, Proc] = {}
    tree_rss = tree_pss = 0
    while proc.poll() is None:
        now = time.monotonic() - start
        rss_sum = pss_sum = 0
        for pid in _tree(proc.pid):
            rss = _kib(f"/proc/{pid}/status", "VmRSS:")
            if not rss:
                continue
            p = procs.get(pid)
            if p is None or p.role == "other":  # read again: a child may not have exec'd yet
                role = "crawler" if pid == proc.pid else _role(pid)
                p = procs[pid] = p or Proc(role)
                p.role = role
            p.peak_rss = max(p.peak_rss, rss)
            p.rss.append((now, rss))
            rss_sum += rss
            pss_sum += _kib(f"/proc/{pid}/smaps_rollup", "Pss:")
        tree_rss, tree_pss = max(tree_rss, rss_sum), max(tree_pss, pss_sum)
        time.sleep(SAMPLE_S)
    wall = time.monotonic() - start
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-3000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    pages = count_rows(db, "SELECT count(*) FROM pages WHERE status = 200")
    return Run(wall, cpu, pages, tree_rss, tree_pss, procs)


def timeline(p: Proc, wall: float) -> str:
    """RSS MiB at 10/25/50/75/100% of the crawl (the last sample at or before each point)."""
    marks = []
    for frac in (0.1, 0.25, 0.5, 0.75, 1.0):
        upto = [r for t, r in p.rss if t <= frac * wall] or [p.rss[0][1]]
        marks.append(f"{upto[-1] / MIB:.0f}")
    return " → ".join(marks)


def cmd_measure(args: argparse.Namespace) -> None:
    trees = {"this tree": LITECRAWL}
    for t in args.tree:
        trees[t] = [str(Path(t).resolve() / ".venv" / "bin" / "litecrawl")]
    env = dict(os.environ)
    if args.tracemalloc:
        tm = Path(args.tracemalloc).resolve()
        tm.mkdir(parents=True, exist_ok=True)
        hook = Path(tempfile.mkdtemp(prefix="lcbench-tm-"))
        (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env |= {"PYTHONPATH": str(hook), "LCBENCH_TM_EVERY": str(args.every)}
    # every tree on every backend, alternated within a size (the machine's drift hits all alike)
    variants = [
        (name if len(args.backend) == 1 else f"{name}, {backend}", script, backend)
        for backend in args.backend
        for name, script in trees.items()
    ]
    rows: list[tuple[int, str, Run]] = []
    with ExitStack() as stack:
        pg_url, cluster = "", None
        if "postgres" in args.backend:
            pg_url, cluster = stack.enter_context(server(args.pg_url))
        for n in args.sizes:
            root = site_dir(n, args.port)
            manifest = json.loads((root / "manifest.json").read_text())
            nginx = Nginx(root, args.port)
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    for run in range(args.runs):
                        for label, script, backend in variants:
                            if args.tracemalloc:
                                tag = re.sub(r"[^\w.-]+", "-", label)
                                out = tm / f"{n}-{tag}-{run}"
                                out.mkdir(exist_ok=True)
                                env["LCBENCH_TM_DIR"] = str(out)
                            nginx.reset_log()
                            db = pg_url if backend == "postgres" else str(Path(tmp) / "m.db")
                            before = server_cpu(cluster) if backend == "postgres" else 0.0
                            m = crawl_sampled(script, manifest["base"], db, env)
                            if backend == "postgres":
                                m.server_cpu = server_cpu(cluster) - before
                            m.reachable = manifest["reachable"]  # fewer: another nginx there?
                            rows.append((n, label, m))
                            report_run(n, label, m)
                            if backend == "postgres":  # where the server's time went
                                time.sleep(1.0)  # the statistics are sent at each backend's exit
                                print("\n".join(f"  {s}" for s in top_statements(pg_url, 16)))
                                if args.statements:
                                    tag = re.sub(r"[^\w.-]+", "-", label)
                                    name = f"{n}-{tag}-{run}.json"
                                    dump_statements(pg_url, Path(args.statements) / name)
            finally:
                nginx.stop()
    summary(rows)


def report_run(n: int, name: str, m: Run) -> None:
    print(
        f"\n{name} n={n}: {m.pages} / {m.reachable} pages in {m.wall:.0f} s, CPU {m.cpu:.1f} s, "
        f"tree peak RSS {m.tree_rss / MIB:.0f} MiB, PSS {m.tree_pss / MIB:.0f} MiB"
        + (f", PostgreSQL server CPU {m.server_cpu:.1f} s" if m.server_cpu else ""),
        flush=True,
    )
    for pid, p in m.procs.items():
        if p.role in ("crawler", "worker") and p.rss:
            print(f"  {p.role} {pid}: peak {p.peak_rss / MIB:.0f} MiB; at 10/25/50/75/100%: "
                  f"{timeline(p, m.wall)}", flush=True)  # fmt: skip


def summary(rows: list[tuple[int, str, Run]]) -> None:
    print(
        "\n| tree | pages | runs | pages ok | pages/s | CPU ms per page | tree peak RSS MiB "
        "(sum) | tree peak PSS MiB | crawler peak MiB | largest worker peak MiB | workers |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    groups: dict[tuple[int, str], list[Run]] = {}
    for n, name, m in rows:
        groups.setdefault((n, name), []).append(m)
    for (n, name), ms in groups.items():
        med = lambda f, ms=ms: statistics.median(f(m) for m in ms)  # noqa: E731
        workers = med(lambda m: sum(p.role == "worker" for p in m.procs.values()))
        print(
            f"| {name} | {n} | {len(ms)} | {med(lambda m: m.pages):.0f} | "
            f"{med(lambda m: m.pages / m.wall):.0f} | "
            f"{med(lambda m: m.cpu / max(m.pages, 1) * 1000):.2f} | "
            f"{med(lambda m: m.tree_rss) / MIB:.0f} | {med(lambda m: m.tree_pss) / MIB:.0f} | "
            f"{med(lambda m: m.peak('crawler')):.0f} | {med(lambda m: m.peak('worker')):.0f} | "
            f"{workers:.0f} |"
        )


def cmd_diff(args: argparse.Namespace) -> None:
    """The largest growths between two tracemalloc snapshots of one process."""
    import tracemalloc

    old = tracemalloc.Snapshot.load(args.diff[0])
    new = tracemalloc.Snapshot.load(args.diff[1])
    print(f"total {sum(s.size for s in old.statistics('filename')) / MIB:.1f} MiB → "
          f"{sum(s.size for s in new.statistics('filename')) / MIB:.1f} MiB")  # fmt: skip
    for stat in new.compare_to(old, "lineno")[: args.top]:
        print(f"{stat.size_diff / 1024:+10.0f} KiB {stat.count_diff:+8d} blocks  "
              f"(now {stat.size / 1024:.0f} KiB)  {stat.traceback}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--port", type=int, default=8181,
        help="nginx's port (another than a benchmark running beside this one)",
    )  # fmt: skip
    parser.add_argument(
        "--tree",
        action="append",
        default=[],
        help="another checkout (with its own .venv) to measure alternately",
    )
    parser.add_argument(
        "--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"],
        help="alternate the runs over these backends",
    )  # fmt: skip
    parser.add_argument("--pg-url", help="a PostgreSQL database for postgres (emptied!)")
    parser.add_argument("--statements", help="a directory: each PostgreSQL run's statements")
    parser.add_argument("--tracemalloc", metavar="DIR", help="dump Python heap snapshots here")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between snapshots")
    parser.add_argument("--diff", nargs=2, metavar="SNAPSHOT", help="compare two snapshots")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()  # fmt: skip
    if args.diff:
        cmd_diff(args)
    else:
        cmd_measure(args)


if __name__ == "__main__":
    main()
