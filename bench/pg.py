"""PostgreSQL for the benchmarks: a throwaway server with PostgreSQL's own durable defaults
(the tests' cluster, tests/pg_cluster.py, with fsync and synchronous commit left on), or the
server of ``--pg-url``; databases emptied between runs; the server's CPU time."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pg_cluster import Cluster, find_bindir

__all__ = ["ServerSampler", "dump_statements", "empty", "server", "server_cpu", "top_statements"]


@contextmanager
def server(url: str | None) -> Iterator[tuple[str, Cluster | None]]:
    """(a database URL, the cluster we started or None when ``url`` was given)."""
    if url:
        yield url, None
        return
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL programs (initdb): install postgresql or give --pg-url")
    # pg_stat_statements (in Debian's postgresql package): where the server's time goes
    # and each statement's planning too (LCBENCH_PG_OPTIONS: more server settings, "-c k=v ...";
    # LCBENCH_PG_PORT: the port, else a free one)
    options = "-c shared_preload_libraries=pg_stat_statements"
    options += " -c pg_stat_statements.track_planning=on"
    cluster = Cluster(
        bindir, durable=True, options=f"{options} {os.environ.get('LCBENCH_PG_OPTIONS', '')}"
    )
    if port := os.environ.get("LCBENCH_PG_PORT"):  # a port of one's own on a shared machine
        cluster.port = int(port)
    cluster.start()
    try:
        yield cluster.create_database(), cluster
    finally:
        cluster.stop()


def empty(url: str) -> None:
    """Drop every table: the next run starts from a new database."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        try:  # kept out of public, which the next run drops
            conn.execute("CREATE SCHEMA IF NOT EXISTS monitor")
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA monitor")
            conn.execute("SELECT monitor.pg_stat_statements_reset()")
        except psycopg.Error:
            pass  # a server without the library: no statement table


def dump_statements(url: str, path: Path) -> None:
    """Every statement's counters since :func:`empty` as JSON (to compare two runs)."""
    with psycopg.connect(url) as conn:
        cur = conn.execute(
            "SELECT query, calls, total_exec_time, total_plan_time, plans, rows, "
            "shared_blks_hit, shared_blks_read, shared_blks_dirtied, wal_bytes "
            "FROM monitor.pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        names = [c.name for c in cur.description or ()]
        plain = [[float(v) if isinstance(v, Decimal) else v for v in row] for row in cur]
    rows = [dict(zip(names, row, strict=True)) for row in plain]
    path.write_text(json.dumps(rows, indent=1))


def top_statements(url: str, limit: int = 8) -> list[str]:
    """The statements that took the server's time since :func:`empty`, most first (needs
    pg_stat_statements: our own server has it): total and mean execution time, calls, rows,
    shared blocks a call (hit + read: what holds under load, unlike the times)."""
    try:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT calls, total_exec_time, rows, "
                "(shared_blks_hit + shared_blks_read)::float8 / greatest(calls, 1), "
                "left(regexp_replace(query, '\\s+', ' ', 'g'), 90) FROM monitor.pg_stat_statements "
                "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "ORDER BY total_exec_time DESC LIMIT %s",
                (limit,),
            ).fetchall()
    except psycopg.Error:
        return []
    return [
        f"{ms / 1000:7.2f} s {calls:>7} calls {ms / max(calls, 1):7.3f} ms/call {n:>8} rows "
        f"{blocks:8.1f} blocks/call  {q}"
        for calls, ms, n, blocks, q in rows
    ]


def server_cpu(cluster: Cluster | None) -> float:
    """CPU seconds used so far by our server and its finished backends (0 when not ours)."""
    if cluster is None:
        return 0.0
    pid = int((cluster.data / "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    live = 0
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        child_fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        live += sum(int(f) for f in child_fields[11:13])
    return (ticks + live) / os.sysconf("SC_CLK_TCK")


_AUXILIARY = ("autovacuum launcher", "walwriter", "checkpointer", "background writer", "logical")


def _kind(pid: str) -> str:
    """What a server process does, from the title PostgreSQL gives it: "postgres: walwriter",
    "postgres: autovacuum worker", "postgres: litecrawl t1 127.0.0.1(5000) idle" (a backend)."""
    title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    name = title.removeprefix("postgres: ")
    if name.startswith("autovacuum worker"):
        return "autovacuum"
    if name.startswith(_AUXILIARY):
        return "other"
    return "backend"


class ServerSampler:
    """The server's CPU by kind of process while something runs (``with ServerSampler(c) as
    s: ...; s.by_kind``): each child of the postmaster read from /proc every ``every`` seconds
    (``schedstat``: nanoseconds), its last reading kept. A process that ends between two
    readings loses its last moments: ``unseen`` is what the postmaster's counters say its
    children used beyond what was read (short autovacuum workers, mostly)."""

    def __init__(self, cluster: Cluster | None, every: float = 0.1) -> None:
        self.cluster, self.every = cluster, every
        self.by_kind: Counter[str] = Counter()
        self.backends = 0  # connections opened meanwhile
        self._seen: dict[str, tuple[str, float]] = {}  # pid -> (kind, CPU s)
        self._start: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _children(self) -> list[str]:
        assert self.cluster is not None
        pid = int((self.cluster.data / "postmaster.pid").read_text().split()[0])
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()

    def _read(self) -> None:
        for pid in self._children():
            try:
                used = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
                kind = self._seen[pid][0] if pid in self._seen else _kind(pid)
            except (OSError, IndexError):
                continue  # ended meanwhile
            self._seen[pid] = (kind, used)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._read()

    def __enter__(self) -> ServerSampler:
        if self.cluster is not None:
            self._total = server_cpu(self.cluster)
            self._read()
            self._start = {pid: used for pid, (_, used) in self._seen.items()}
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.cluster is None:
            return
        self._stop.set()
        self._thread.join()
        self._read()
        for pid, (kind, used) in self._seen.items():
            self.by_kind[kind] += used - self._start.get(pid, 0.0)
            self.backends += kind == "backend" and pid not in self._start
        self.by_kind["unseen"] = max(
            0.0, server_cpu(self.cluster) - self._total - sum(self.by_kind.values())
        )


if __name__ == "__main__":  # python bench/pg.py empty URL (the peers' PostgreSQL runs)
    if sys.argv[1:2] == ["empty"] and len(sys.argv) == 3:
        empty(sys.argv[2])
    else:
        raise SystemExit("usage: pg.py empty postgresql://...")
