"""PostgreSQL for the benchmarks: a throwaway server with PostgreSQL's own durable defaults
(the tests' cluster, tests/pg_cluster.py, with fsync and synchronous commit left on), or the
server of ``--pg-url``; databases emptied between runs; the server's CPU time."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pg_cluster import Cluster, find_bindir

__all__ = ["empty", "server", "server_cpu", "top_statements"]


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
    cluster = Cluster(
        bindir, durable=True, options="-c shared_preload_libraries=pg_stat_statements"
    )
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


def top_statements(url: str, limit: int = 8) -> list[str]:
    """The statements that took the server's time since :func:`empty`, most first (needs
    pg_stat_statements: our own server has it)."""
    try:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT calls, total_exec_time, rows, "
                "left(regexp_replace(query, '\\s+', ' ', 'g'), 90) FROM monitor.pg_stat_statements "
                "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "ORDER BY total_exec_time DESC LIMIT %s",
                (limit,),
            ).fetchall()
    except psycopg.Error:
        return []
    return [f"{ms / 1000:7.2f} s {calls:>7} calls {n:>8} rows  {q}" for calls, ms, n, q in rows]


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


if __name__ == "__main__":  # python bench/pg.py empty URL (the peers' PostgreSQL runs)
    if sys.argv[1:2] == ["empty"] and len(sys.argv) == 3:
        empty(sys.argv[2])
    else:
        raise SystemExit("usage: pg.py empty postgresql://...")
