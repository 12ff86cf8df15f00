"""Benchmark litecrawl crawl on a local nginx site; optionally beside the peers' kit.

    uv run python bench/run.py crawl --n 10000 --runs 3      # own site, own runner
    uv run python bench/run.py peers --n 10000 --runs 3      # the shared kit, same invocation
    uv run python bench/run.py browser --n 500               # Playwright path
    uv run python bench/run.py compare fabbe48 HEAD~1 --runs 3   # this tree against others

``crawl`` generates bench/site.py's site (cached under /tmp), serves it with nginx on
127.0.0.1:8181, runs the CLI with politeness opened up (one host, 64 concurrent, no delay) and the
default durable pipeline on (SQLite frontier, index rows, full-text index, hashes, links), and
checks from nginx's access log and the database that every page was crawled exactly once.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from pg import empty, server_cpu, top_statements
from pg import server as pg_server

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The console script, not "python -m": the kit runs crawlers in a work directory that may hold
# a folder named "litecrawl", which "-m" would import instead of the package.
LITECRAWL = [str(Path(sys.executable).parent / "litecrawl")]
CRAWL_FLAGS = [
    "--max-depth",
    "0",
    "--concurrency",
    "64",
    "--per-host",
    "64",
    "--delay-ms",
    "0",
    "--no-cache",
    "--quiet",
]
NGINX_CONF = """worker_processes auto; daemon off; pid nginx.pid; error_log logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
  include /etc/nginx/mime.types; default_type application/octet-stream;
  sendfile on; tcp_nopush on; keepalive_timeout 65; keepalive_requests 100000;
  client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fastcgi;
  uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
  log_format bench '$server_port $status $request_method "$request_uri"';
  access_log logs/access.log bench buffer=256k flush=1s;
{servers}}}
"""
SERVER = "  server {{ listen 127.0.0.1:{port}; root {root}; index index.html; etag on; }}\n"


def bytecode(tree: Path) -> None:
    """Compile ``tree``'s src/ (as .ci/run does): uv compiles what it installs, not an editable
    checkout's own modules, and where PYTHONDONTWRITEBYTECODE is set (this machine's
    environment) every crawler, analysis worker and export process would compile litecrawl's
    modules from source again, a cost no installed litecrawl (nor the peers' installed
    packages) pays: ~0.2 s of CPU a process, bench/README.md "Issue 29 ... (session 6)"."""
    python = tree / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python if python.exists() else sys.executable), "-m", "compileall", "-q", "-j", "0",
         str(tree / "src")],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def site_dir(n: int, port: int = 8181) -> Path:
    """The generated site of ``n`` pages, its links naming ``port`` (a copy for another port
    than 8181, so a benchmark there need not wait for one holding 8181: see Nginx)."""
    out = Path(f"/tmp/lcbench-{n}")
    if not (out / "manifest.json").exists():
        subprocess.run([sys.executable, str(HERE / "site.py"), str(out), "-n", str(n)], check=True)
    if port == 8181:
        return out
    copy = Path(f"/tmp/lcbench-{n}-port{port}")
    if not (copy / "manifest.json").exists():
        part = Path(tempfile.mkdtemp(prefix=f"lcbench-{n}-port{port}-", dir="/tmp"))
        for path in out.rglob("*"):
            target = part / path.relative_to(out)
            if path.is_dir():
                target.mkdir(exist_ok=True)
            else:
                target.write_bytes(path.read_bytes().replace(b":8181", b":%d" % port))
        part.chmod(0o755)  # nginx's workers read it (mkdtemp makes it 0700)
        part.rename(copy)  # whole or not at all: the manifest says it is complete
    return copy


def kit_script(name: str) -> Path:
    """A script of the shared kit (``../shared/bench/``, beside the checkout or beside the
    worktrees' folder)."""
    kits = [d / "shared" / "bench" / name for d in (ROOT.parent, ROOT.parent.parent)]
    return next((k for k in kits if k.exists()), kits[0])


def kit_site_dir(n: int, port: int) -> Path:
    """The shared kit's own site of ``n`` pages (its ``gen_site.py``, the pages ``peers``
    crawls), its links naming ``port``; its manifest also gets ``base`` and ``reachable`` as
    :func:`site_dir`'s has. Its pages are not ours: 4-7 headed sections a page (so section
    vectors), a 3,000-word vocabulary, inline scripts and styles (bench/README.md, issue 29,
    session 13)."""
    out = Path(f"/tmp/lckit-{n}-port{port}")
    if not (out / "manifest.json").exists() or "base" not in json.loads(
        (out / "manifest.json").read_text()
    ):
        base = f"http://127.0.0.1:{port}"
        part = Path(tempfile.mkdtemp(prefix=f"lckit-{n}-port{port}-", dir="/tmp"))
        subprocess.run(
            [sys.executable, str(kit_script("gen_site.py")), str(part), "-n", str(n),
             "--base-url", base, "--offsite-port", str(port)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        manifest = json.loads((part / "manifest.json").read_text())
        manifest.update(base=base, reachable=manifest["reachable_from_index"])
        (part / "manifest.json").write_text(json.dumps(manifest))
        part.chmod(0o755)  # nginx's workers read it (mkdtemp makes it 0700)
        shutil.rmtree(out, ignore_errors=True)
        part.rename(out)
    return out


def bench_site(name: str, n: int, port: int) -> Path:
    """``ours`` (bench/site.py's, :func:`site_dir`) or ``kit`` (:func:`kit_site_dir`)."""
    return kit_site_dir(n, port) if name == "kit" else site_dir(n, port)


class Nginx:
    """nginx serving ``root`` on 127.0.0.1:``port``, or each of ``sites`` (port -> root)."""

    def __init__(self, root: Path, port: int = 8181, sites: dict[int, Path] | None = None) -> None:
        # The generated sites name their port in their links, so two benchmarks on one machine
        # cannot each take another port: the second waits for the first instead of crawling
        # the first one's site (nginx would fail to bind and the crawl would go on regardless).
        ports = sorted(sites or {port: root})
        self.lock = open(f"/tmp/lcbench-nginx-{ports[0]}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"bench: waiting for another benchmark's nginx on port {ports[0]}", flush=True)
            fcntl.flock(self.lock, fcntl.LOCK_EX)
        self.prefix = Path(tempfile.mkdtemp(prefix="lcbench-nginx-"))
        (self.prefix / "logs").mkdir()
        (self.prefix / "tmp").mkdir()
        servers = "".join(SERVER.format(port=p, root=r) for p, r in (sites or {port: root}).items())
        (self.prefix / "nginx.conf").write_text(NGINX_CONF.format(servers=servers))
        self.proc = subprocess.Popen(
            ["nginx", "-p", f"{self.prefix}/", "-c", str(self.prefix / "nginx.conf")]
        )
        time.sleep(0.5)

    def reset_log(self) -> None:
        (self.prefix / "logs" / "access.log").write_text("")

    def requests(self, by_port: bool = False) -> Counter[str]:
        """Requests per path (per "port path" with ``by_port``)."""
        time.sleep(1.3)  # the access log is flushed every second
        seen: Counter[str] = Counter()
        for line in (self.prefix / "logs" / "access.log").read_text().splitlines():
            port, _, rest = line.partition(" ")
            match = re.search(r'"([^"]*)"', rest)
            if match:
                seen[f"{port} {match.group(1)}" if by_port else match.group(1)] += 1
        return seen

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGQUIT)
        self.proc.wait(10)
        shutil.rmtree(self.prefix, ignore_errors=True)
        self.lock.close()  # releases the port for the next benchmark


def timed(cmd: list[str]) -> dict[str, float]:
    """Run under /usr/bin/time -v: wall seconds, CPU seconds, peak RSS MiB."""
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return {"wall": wall, **time_v(proc.stderr)}


def time_v(report: str) -> dict[str, float]:
    """CPU seconds and peak RSS MiB from what ``/usr/bin/time -v`` wrote."""
    field = lambda name: float(re.search(rf"{name}: ([\d.]+)", report).group(1))  # type: ignore[union-attr]  # noqa: E731
    return {
        "cpu": field(r"User time \(seconds\)") + field(r"System time \(seconds\)"),
        "rss_mib": field(r"Maximum resident set size \(kbytes\)") / 1024,
    }


def crawl_once(
    base: str,
    work: Path,
    extra: list[str],
    pg_url: str | None = None,
    litecrawl: list[str] = LITECRAWL,
) -> dict[str, float]:
    """One crawl into a new SQLite file, or into the emptied PostgreSQL database ``pg_url``, by
    ``litecrawl`` (this tree's console script, or another tree's: ``compare``)."""
    db = work / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if pg_url:
        empty(pg_url)
    location = pg_url or str(db)
    metrics = timed(
        [*litecrawl, "crawl", f"{base}/index.html", "--db", location, *CRAWL_FLAGS, *extra]
    )
    query = lambda sql: count_rows(location, sql)  # noqa: E731
    metrics["pages_ok"] = query("SELECT count(*) FROM pages WHERE status = 200")
    metrics["documents"] = query("SELECT count(*) FROM documents")
    return metrics


def count_rows(location: str, sql: str) -> int:
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as pg:
            row = pg.execute(sql.encode()).fetchone()
            return int(row[0]) if row else 0
    conn = sqlite3.connect(location)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def cmd_crawl(args: argparse.Namespace) -> None:
    bytecode(ROOT)
    root = site_dir(args.n)
    manifest = json.loads((root / "manifest.json").read_text())
    nginx = Nginx(root)
    rows: dict[str, list[dict[str, float]]] = {b: [] for b in args.backend}
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            pg_server(args.pg_url if "postgres" in args.backend else "unused") as (pg_url, cluster),
        ):
            for _ in range(args.runs):
                for backend in args.backend:  # alternated: the machine's noise hits both alike
                    nginx.reset_log()
                    server_before = server_cpu(cluster)
                    m = crawl_once(
                        manifest["base"],
                        Path(tmp),
                        args.extra,
                        pg_url if backend == "postgres" else None,
                    )
                    m["db_cpu"] = (
                        server_cpu(cluster) - server_before if backend == "postgres" else 0.0
                    )
                    seen = nginx.requests()
                    m["requests"] = sum(seen.values())
                    m["max_per_url"] = max(seen.values())
                    m["pages_per_s"] = m["pages_ok"] / m["wall"]
                    rows[backend].append(m)
                    print(backend, json.dumps({k: round(v, 2) for k, v in m.items()}), flush=True)
                    if backend == "postgres":
                        print("\n".join(f"  {line}" for line in top_statements(pg_url)))
    finally:
        nginx.stop()
    print(
        "\n| backend | n | runs | extra flags | pages/s (median) | crawler CPU s | database "
        "server CPU s | CPU ms per page (both) | peak RSS MiB | pages ok / expected | documents "
        "| requests | max fetches of one URL |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for backend, runs in rows.items():
        med = lambda key, runs=runs: statistics.median(r[key] for r in runs)  # noqa: E731
        per_page = (med("cpu") + med("db_cpu")) / max(med("pages_ok"), 1) * 1000
        print(
            f"| {backend} | {args.n} | {args.runs} | {' '.join(args.extra) or '-'} | "
            f"{med('pages_per_s'):.0f} | {med('cpu'):.1f} | {med('db_cpu'):.1f} | {per_page:.2f} | "
            f"{med('rss_mib'):.0f} | {med('pages_ok'):.0f} / {manifest['reachable']} | "
            f"{med('documents'):.0f} | {med('requests'):.0f} | "
            f"{max(r['max_per_url'] for r in runs):.0f} |"
        )


def cmd_peers(args: argparse.Namespace) -> None:
    """The shared kit measures litecrawl beside Scrapy and the baselines in one invocation."""
    kit = kit_script("run_peers.py")
    bytecode(ROOT)
    exe = LITECRAWL[0]
    flags = " ".join(CRAWL_FLAGS)

    def command(extra: str) -> str:
        # The kit keeps {work} between runs: start every run from an empty database.
        return (
            f"sh -c 'rm -f {{work}}/lc.db {{work}}/lc.db-wal {{work}}/lc.db-shm && "
            f"{exe} crawl {{url}} --db {{work}}/lc.db {flags} {' '.join(args.extra)} {extra} && "
            f"{exe} export --db {{work}}/lc.db --format jsonl --out {{out}}'"
        )

    # --variant NAME=FLAGS: litecrawl once more with FLAGS, in the same invocation
    variants = [v.split("=", 1) for v in args.variant]
    crawlers = [f"litecrawl=jsonl={command('')}"]
    crawlers += [f"{name}=jsonl={command(extra)}" for name, extra in variants]
    names = [name for name, _ in variants]
    with contextlib.ExitStack() as stack:
        if args.postgres:
            # litecrawl on PostgreSQL too: a throwaway durable server, emptied before each run
            url, _ = stack.enter_context(pg_server(args.pg_url))
            reset = f"{sys.executable} {HERE / 'pg.py'} empty {url}"
            crawlers.append(
                f"litecrawl-postgres=jsonl=sh -c '{reset} && {exe} crawl {{url}} --db {url} "
                f"{flags} {' '.join(args.extra)} && {exe} export --db {url} --format jsonl "
                f"--out {{out}}'"
            )
            names.append("litecrawl-postgres")
        _kit(kit, args, crawlers, ",".join([args.only, *names]))


def _version_dir(stack: contextlib.ExitStack) -> Path:
    """A folder holding only litecrawl's version as installed metadata.

    The kit reports each crawler's version by asking its own venv's Python for the package's
    metadata (``importlib.metadata.version(name)``): litecrawl is not installed there, so it got
    PackageNotFoundError (a traceback on stderr) and "?". With this folder on PYTHONPATH that
    question finds litecrawl's version and nothing else (no code: the peers run as before)."""
    from importlib import metadata

    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lcbench-version-")))
    version = metadata.version("litecrawl")
    info = folder / f"litecrawl-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: litecrawl\nVersion: {version}\n")
    return folder


def _kit(kit: Path, args: argparse.Namespace, crawlers: list[str], only: str) -> None:
    with contextlib.ExitStack() as stack:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(_version_dir(stack)), env.get("PYTHONPATH")) if p
        )
        _run_kit(kit, args, crawlers, only, env)


def _run_kit(
    kit: Path, args: argparse.Namespace, crawlers: list[str], only: str, env: dict[str, str]
) -> None:
    subprocess.run(
        [
            sys.executable,
            str(kit),
            "--n",
            str(args.n),
            "--runs",
            str(args.runs),
            "--tag",
            args.tag,
            "--results",
            args.results,
            "--only",
            only,
            *(arg for crawler in crawlers for arg in ("--crawler", crawler)),
        ],
        check=True,
        env=env,
    )


def cmd_browser(args: argparse.Namespace) -> None:
    root = site_dir(args.n)
    manifest = json.loads((root / "manifest.json").read_text())
    nginx = Nginx(root)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "render.db"
            m = timed(
                [
                    *LITECRAWL,
                    "crawl",
                    f"{manifest['base']}/index.html",
                    "--db",
                    str(db),
                    "--render",
                    "--max-depth",
                    "0",
                    "--per-host",
                    "8",
                    "--delay-ms",
                    "0",
                    "--no-cache",
                    "--quiet",
                    "--max-pages",
                    str(args.n),
                ]
            )
            conn = sqlite3.connect(db)
            ok = conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0]
            conn.close()
    finally:
        nginx.stop()
    print("| render pages | pages/s | CPU s (crawler only) | peak RSS MiB (crawler only) |")
    print("|---|---|---|---|")
    print(f"| {ok} | {ok / m['wall']:.1f} | {m['cpu']:.1f} | {m['rss_mib']:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    crawl = sub.add_parser("crawl")
    crawl.add_argument("--n", type=int, default=10_000)
    crawl.add_argument("--runs", type=int, default=3)
    crawl.add_argument(
        "--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"],
        help="alternate the runs over these backends",
    )  # fmt: skip
    crawl.add_argument("--pg-url", help="a PostgreSQL database to use (emptied!); default: a "
                       "throwaway server with PostgreSQL's durable defaults")  # fmt: skip
    crawl.add_argument("extra", nargs="*", help="extra flags for litecrawl crawl (after --)")
    peers = sub.add_parser("peers")
    peers.add_argument("--n", type=int, default=10_000)
    peers.add_argument("--runs", type=int, default=3)
    peers.add_argument("--tag", default="litecrawl-side-by-side")
    peers.add_argument("--results", default="/tmp/bench-results")
    peers.add_argument("--only", default="scrapy,baseline-aiohttp,litecrawl")
    peers.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=FLAGS",
        help="also litecrawl with FLAGS, named NAME (e.g. litecrawl-no-embed=--no-embed)",
    )
    peers.add_argument(
        "--postgres", action="store_true", help="also litecrawl on PostgreSQL (litecrawl-postgres)"
    )
    peers.add_argument("--pg-url", help="a PostgreSQL database for --postgres (emptied!)")
    peers.add_argument("extra", nargs="*")
    browser = sub.add_parser("browser")
    browser.add_argument("--n", type=int, default=500)
    compare = sub.add_parser("compare", help="this tree against REVs, alternated in one run")
    compare.add_argument("revs", nargs="+", metavar="REV")
    compare.add_argument("--n", type=int, default=10_000)
    compare.add_argument("--runs", type=int, default=3)
    compare.add_argument("--extra", default="", help="extra flags for every crawl, one string")
    compare.add_argument(
        "--port", type=int, default=8181, help="serve a copy of the site on this port instead"
    )
    compare.add_argument(
        "--site", choices=["ours", "kit"], default="ours",
        help="bench/site.py's site, or the shared kit's own (the pages `peers` crawls)",
    )  # fmt: skip
    args = parser.parse_args()
    os.chdir(ROOT)
    from compare import cmd_compare

    commands = {"crawl": cmd_crawl, "peers": cmd_peers, "browser": cmd_browser}
    commands["compare"] = cmd_compare
    commands[args.command](args)


if __name__ == "__main__":
    main()
