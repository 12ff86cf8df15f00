"""Whole crawls of a many-host site by several worker processes on one database.

    uv run python bench/workers.py --n 4000 --hosts 16 --workers 1 2 4 --runs 1

Generates a site of N pages spread over H hosts (nginx on 127.0.0.1, one port per host: one
host each), with ~20 links a page, most of them to other hosts, and crawls it from every host's
``/index.html`` with 1, 2, 4 ... ``litecrawl crawl`` processes started at once on one emptied
PostgreSQL database, beside one process (or ``--sqlite-workers``) on a new SQLite file, runs
alternated in one invocation. Reported per configuration: pages/s on the wall clock (first start
to last exit), the crawlers' CPU (all processes), the PostgreSQL server's CPU, database CPU per
page, statements per page (pg_stat_statements: calls, i.e. round trips at most), and from nginx's
log that every page was fetched exactly once and robots.txt once per host.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pg import ServerSampler, dump_statements, empty, server_cpu, top_statements
from pg import server as pg_server
from run import Nginx, time_v
from run import count_rows as query

HERE = Path(__file__).resolve().parent
# bench/site.py by its path: "site" is also the standard library's module, imported at start-up
_spec = importlib.util.spec_from_file_location("bench_site", HERE / "site.py")
assert _spec and _spec.loader
bench_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_site)
paragraph, page_path = bench_site.paragraph, bench_site.page_path
LITECRAWL = str(Path(sys.executable).parent / "litecrawl")
PORT = 8300


def host_of(i: int, hosts: int) -> int:
    return i % hosts  # neighbours on different hosts: every host is busy all through the crawl


def url(host: int, path: str) -> str:
    return f"http://127.0.0.1:{PORT + host}{path}"


def render(i: int, n: int, hosts: int, rng: random.Random) -> str:
    # the spanning tree i -> 2i+1, 2i+2 makes every page reachable from page 0
    targets = [t for t in (2 * i + 1, 2 * i + 2) if t < n]
    targets += [rng.randrange(n) for _ in range(18)]
    here = host_of(i, hosts)
    links = [
        page_path(t) if host_of(t, hosts) == here else url(host_of(t, hosts), page_path(t))
        for t in targets
    ]
    body = "".join(
        f'<p>{paragraph(rng, 40)} <a href="{h}">link {k}</a></p>\n' for k, h in enumerate(links)
    )
    filler = "".join(f"<p>{paragraph(rng, 60)}</p>\n" for _ in range(28))
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Page {i}</title></head>"
        f'<body><nav><a href="/index.html">Home</a></nav><h1>Page {i}</h1>\n{body}{filler}'
        "</body></html>"
    )


def site_dir(n: int, hosts: int) -> Path:
    # the cross-host links name their port: a site for another --port is another directory
    out = Path(f"/tmp/lcbench-hosts-{n}-{hosts}" + ("" if PORT == 8300 else f"-port{PORT}"))
    if (out / "manifest.json").exists():
        return out
    rng = random.Random(20261125)
    for i in range(n):
        path = out / f"h{host_of(i, hosts)}" / page_path(i).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(i, n, hosts, rng), "utf-8")
    for h in range(hosts):
        first = page_path(h) if h < n else "/"
        (out / f"h{h}" / "index.html").write_text(
            f'<!doctype html><html><body><a href="{first}">start</a></body></html>', "utf-8"
        )
        (out / f"h{h}" / "robots.txt").write_text("User-agent: *\nAllow: /\n")
    (out / "manifest.json").write_text(json.dumps({"pages": n, "hosts": hosts}))
    return out


def crawl(
    location: str, seeds: list[str], workers: int, flags: list[str], src: str | None = None
) -> dict[str, float]:
    """``workers`` processes started at once (``src``: another tree's src directory on
    PYTHONPATH); wall seconds to the last exit, CPU of them all."""
    env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
    cmd = ["/usr/bin/time", "-v", LITECRAWL, "crawl", *seeds, "--db", location, *flags]
    start = time.monotonic()
    procs = [
        subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env) for _ in range(workers)
    ]
    cpu = rss = 0.0
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a worker failed ({proc.returncode}):\n{err[-3000:]}")
        used = time_v(err)
        cpu += used["cpu"]
        rss = max(rss, used["rss_mib"])
    return {"wall": time.monotonic() - start, "cpu": cpu, "rss_mib": rss}


def statements(pg_url: str) -> int:
    """Statements the server ran since :func:`pg.empty` (pg_stat_statements calls)."""
    return query(
        pg_url,
        "SELECT coalesce(sum(calls), 0) FROM monitor.pg_stat_statements WHERE dbid = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())",
    )


_COMMITS = (
    "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
)
_WAL = "SELECT wal_bytes FROM pg_stat_wal"


def per_worker(pg_url: str) -> list[int]:
    """The pages each worker fetched (its run record), most first: do all of them take part?"""
    import psycopg

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT stats FROM runs").fetchall()
    return sorted((int(json.loads(stats).get("ok", 0)) for (stats,) in rows), reverse=True)


def by_kind(runs: list[dict[str, float]], ok: float) -> str:
    """The server's CPU a page: its backends (the statements), autovacuum, the rest (WAL
    writer, checkpointer, what ended unsampled), medians; "-" without a server of ours."""
    rest = [r.get("db_other", 0.0) + r.get("db_unseen", 0.0) for r in runs]
    if not any("db_backend" in r for r in runs):
        return "-"
    kinds = ("db_backend", "db_autovacuum")
    parts = [statistics.median(r.get(k, 0.0) for r in runs) for k in kinds]
    return " / ".join(f"{1000 * v / ok:.2f}" for v in (*parts, statistics.median(rest)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000, help="pages")
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2, 4], help="on PostgreSQL")
    parser.add_argument("--sqlite-workers", type=int, nargs="*", default=[1])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--old", help="another tree's src directory, each run beside this one")
    parser.add_argument("--pg-url", help="a PostgreSQL database to use (emptied!)")
    parser.add_argument("--statements", help="a directory: each run's pg_stat_statements as JSON")
    parser.add_argument("--port", type=int, default=8300, help="the first host's port (nginx)")
    parser.add_argument(
        "flags",
        nargs="*",
        help="litecrawl crawl flags (after --); default: --concurrency 64 --per-host 8 "
        "--delay-ms 0 --max-depth 0 --no-cache --quiet",
    )
    args = parser.parse_args()
    global PORT
    PORT = args.port
    flags = args.flags or [
        *("--concurrency", "64", "--per-host", "8", "--delay-ms", "0", "--max-depth", "0"),
        *("--no-cache", "--quiet"),
    ]
    root = site_dir(args.n, args.hosts)
    seeds = [url(h, "/index.html") for h in range(args.hosts)]
    expected = args.n + args.hosts
    trees = [args.old, None] if args.old else [None]
    configs = [("sqlite", w, t) for w in args.sqlite_workers for t in trees]
    configs += [("postgres", w, t) for w in args.workers for t in trees]
    rows: dict[tuple[str, int, str | None], list[dict[str, float]]] = {c: [] for c in configs}
    nginx = Nginx(root, sites={PORT + h: root / f"h{h}" for h in range(args.hosts)})
    try:
        with tempfile.TemporaryDirectory() as tmp, pg_server(args.pg_url) as (pg_url, cluster):
            for _ in range(args.runs):
                for backend, workers, src in configs:  # alternated: the noise hits all alike
                    nginx.reset_log()
                    if backend == "postgres":
                        empty(pg_url)
                        location = pg_url
                    else:
                        location = str(Path(tmp) / f"bench-{workers}.db")
                        for suffix in ("", "-wal", "-shm"):
                            Path(f"{location}{suffix}").unlink(missing_ok=True)
                    before = server_cpu(cluster)
                    if backend == "postgres":
                        commits, wal = query(pg_url, _COMMITS), query(pg_url, _WAL)
                    with ServerSampler(cluster if backend == "postgres" else None) as sampled:
                        m = crawl(location, seeds, workers, flags, src)
                    m["db_cpu"] = server_cpu(cluster) - before if backend == "postgres" else 0.0
                    for kind, used in sampled.by_kind.items():  # the server's CPU by process
                        m[f"db_{kind}"] = used
                    m["connections"] = sampled.backends
                    if backend == "postgres":  # the statistics are sent at each backend's exit
                        time.sleep(1.0)
                        m["transactions"] = query(pg_url, _COMMITS) - commits
                        m["wal_mib"] = (query(pg_url, _WAL) - wal) / 2**20
                        m["ok_per_worker"] = per_worker(pg_url)
                    m["pages_ok"] = query(location, "SELECT count(*) FROM pages WHERE status=200")
                    m["statements"] = statements(pg_url) if backend == "postgres" else 0
                    seen = nginx.requests(by_port=True)
                    robots = [c for k, c in seen.items() if k.endswith(" /robots.txt")]
                    pages = [c for k, c in seen.items() if not k.endswith(" /robots.txt")]
                    m["fetched"] = len(pages)
                    m["max_per_url"] = max(pages)
                    m["max_robots"] = max(robots)
                    m["pages_per_s"] = m["pages_ok"] / m["wall"]
                    rows[(backend, workers, src)].append(m)
                    shown = {k: v if isinstance(v, list) else round(v, 2) for k, v in m.items()}
                    print(backend, workers, src or "", json.dumps(shown), flush=True)
                    if backend == "postgres":
                        print("\n".join(f"  {line}" for line in top_statements(pg_url, 16)))
                        if args.statements:
                            name = f"{workers}-{'old' if src else 'new'}-{time.time():.0f}.json"
                            dump_statements(pg_url, Path(args.statements) / name)
    finally:
        nginx.stop()
    print(
        f"\n{args.n} pages on {args.hosts} hosts ({expected} with the index pages), flags: "
        f"{' '.join(flags)}\n\n| backend | workers | pages/s (median) | crawlers' CPU s | "
        "database server CPU s | crawler CPU ms/page | database CPU ms/page | statements/page | "
        "of it backends / autovacuum / rest ms/page | "
        "pages ok / expected | URLs fetched | max fetches of one URL | max robots.txt of a host |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (backend, workers, src), runs in rows.items():
        med = lambda key, runs=runs: statistics.median(r[key] for r in runs)  # noqa: E731
        ok = max(med("pages_ok"), 1)
        print(
            f"| {backend}{f' ({src})' if src else ''} | {workers} | {med('pages_per_s'):.0f} | "
            f"{med('cpu'):.1f} | "
            f"{med('db_cpu'):.1f} | {med('cpu') / ok * 1000:.2f} | {med('db_cpu') / ok * 1000:.2f} "
            f"| {med('statements') / ok:.1f} | {by_kind(runs, ok)} | "
            f"{med('pages_ok'):.0f} / {expected} | "
            f"{med('fetched'):.0f} | {max(r['max_per_url'] for r in runs):.0f} | "
            f"{max(r['max_robots'] for r in runs):.0f} |"
        )


if __name__ == "__main__":
    main()
