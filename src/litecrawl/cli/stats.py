"""``litecrawl stats``: pages by state and kind, what is due, hosts, errors, runs, live workers.

Tables on a terminal, the same tables as plain aligned text when piped, ``--json`` for scripts:
all three show the one :func:`stats_view` of the database.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from litecrawl.cli.crawl import load_or_exit
from litecrawl.errors import LitecrawlError
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import FrontierSummary, HostSummary, RunSummary, WorkerRecord
from litecrawl.lease import LeaseRules, current_identity
from litecrawl.politeness.robots import RobotsPolicy

__all__ = ["robots_origins", "robots_state", "stats", "stats_view"]


def stats(
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    hosts: Annotated[bool, typer.Option("--hosts", help="All hosts, not the top 10.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    domains: Annotated[
        bool, typer.Option("--domains", help="Also the strategy's domain metadata.")
    ] = False,
    partitions: Annotated[
        int, typer.Option(min=0, help="Also pages per partition K of N (crawl --partition K/N).")
    ] = 0,
) -> None:
    """Show the state of a crawl database (also while a crawl runs)."""
    cfg = load_or_exit(config, {"db": db})
    if not cfg.db.startswith("postgres") and not Path(cfg.db).exists():
        typer.echo(f"error: no database at {cfg.db}", err=True)
        raise typer.Exit(2)
    now = time.time()
    try:
        summary, robots, metadata, parts = asyncio.run(
            _summary(
                cfg.db,
                int(now),
                None if hosts else 10,
                cfg.effective_user_agent(),
                domains,
                partitions,
            )
        )
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    view = stats_view(cfg.db, summary, now, LeaseRules(cfg.lease_timeout), robots)
    if domains:
        view["domains"] = {k: json.loads(v) for k, v in metadata.items()}
    if partitions:
        view["partitions"] = {f"{k}/{partitions}": v for k, v in parts.items()}
    if json_out:
        typer.echo(json.dumps(view, indent=2))
        return
    console = Console(highlight=False)
    if console.is_terminal:
        _print(view, console)
        return
    # Piped: the same tables as plain text, never wrapped or cut, no trailing blanks.
    console.width = 1000
    with console.capture() as captured:
        _print(view, console)
    typer.echo("\n".join(line.rstrip() for line in captured.get().splitlines()))


# host -> (robots.txt mode, its Crawl-delay for our user agent, until when the record holds)
_Robots = dict[str, tuple[str, float | None, float]]


async def _summary(
    location: str, now: int, hosts: int | None, user_agent: str, domains: bool, partitions: int
) -> tuple[FrontierSummary, _Robots, dict[str, str], dict[int, dict[str, int]]]:
    async with open_frontier(location) as frontier:
        summary = await frontier.summary(now, hosts)
        metadata = await frontier.domain_metadata() if domains else {}
        parts = await frontier.partitions(partitions, now) if partitions else {}
        records: dict[str, tuple[str, float]] = {}
        for origin in robots_origins(summary.top_hosts):
            if (found := await frontier.get_robots(origin)) is not None:
                records[origin] = found
        return summary, robots_state(summary.top_hosts, records, user_agent), metadata, parts


def robots_origins(hosts: list[HostSummary]) -> list[str]:
    """The robots.txt origins to look up for ``hosts`` (https first)."""
    return [f"{scheme}://{h.host}" for h in hosts for scheme in ("https", "http")]


def robots_state(
    hosts: list[HostSummary], records: dict[str, tuple[str, float]], user_agent: str
) -> _Robots:
    """Each host's robots.txt mode, Crawl-delay and expiry from its cached records
    (origin -> (record, expires_at)); https is preferred, unreadable records skipped."""
    robots: _Robots = {}
    for h in hosts:
        for scheme in ("https", "http"):
            found = records.get(f"{scheme}://{h.host}")
            if found is None:
                continue
            try:
                policy = RobotsPolicy.from_record(json.loads(found[0]), user_agent)
            except ValueError:
                continue
            robots[h.host] = (policy.mode, policy.crawl_delay(), found[1])
            break
    return robots


def stats_view(
    db: str, s: FrontierSummary, now: float, rules: LeaseRules, robots: _Robots | None = None
) -> dict[str, Any]:
    """What ``stats`` shows, as plain data (times ISO 8601 in local time, ages in seconds)."""
    robots = robots or {}
    status = {w.id: _status(w, now, rules) for w in s.workers}
    live = {i for i, st in status.items() if st != "dead"}
    return {
        "db": db,
        "pages": {"total": sum(s.by_state.values()), "by_state": s.by_state, "by_kind": s.by_kind},
        "due_now": s.due_now,
        "claimed": s.claimed,
        "next_due": _iso(s.next_due),
        "hosts": {
            "total": s.hosts,
            "shown": [_host(h, robots.get(h.host), now) for h in s.top_hosts],
        },
        "errors": [asdict(e) for e in s.errors],
        "runs": [_run(r, live, now) for r in s.runs],
        "workers": [
            {
                "id": w.id,
                "hostname": w.identity.hostname,
                "pid": w.identity.pid,
                "command": w.identity.command,
                "started_at": _iso(w.started_at),
                "heartbeat_age_sec": round(max(now - w.heartbeat_at, 0.0), 1),
                "status": status[w.id],
                "claims": w.claims,
            }
            for w in s.workers
        ],
    }


def _run(r: RunSummary, live: set[int], now: float) -> dict[str, Any]:
    if r.finished_at is None:
        # no end written: still running if its worker is alive, else killed (kill -9, crash)
        outcome = "running" if r.worker_id is not None and r.worker_id in live else "killed"
        duration = now - r.started_at if outcome == "running" else None
    else:
        outcome = "interrupted" if r.stats.get("interrupted") else "done"
        duration = float(r.finished_at - r.started_at)
    return {
        "id": r.id,
        "command": r.command,
        "started_at": _iso(r.started_at),
        "duration_sec": None if duration is None else round(duration, 1),
        "fetched": r.stats.get("fetched"),
        "failed": r.stats.get("failed"),
        "pages_per_sec": r.stats.get("pages_per_sec"),
        "outcome": outcome,
    }


def _host(
    h: HostSummary, robots: tuple[str, float | None, float] | None, now: float
) -> dict[str, Any]:
    view = asdict(h)
    mode, delay, expires = robots or (None, None, 0.0)
    view["robots"] = mode
    view["crawl_delay"] = h.crawl_delay if h.crawl_delay is not None else delay
    # robots.txt unreachable (5xx, network): nothing of the host is fetched until the record ends
    view["blocked_until"] = _iso(expires) if mode == "disallow_all" and expires > now else None
    return view


def _status(w: WorkerRecord, now: float, rules: LeaseRules) -> str:
    """alive; late (missed heartbeats, lease not over yet); dead (the next run or any running
    worker recovers its claims)."""
    if rules.is_dead(w, now, current_identity()):
        return "dead"
    return "late" if rules.overdue(w, now) else "alive"


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


# -- tables ------------------------------------------------------------------------------------


def _print(v: dict[str, Any], console: Console) -> None:
    term = console.is_terminal

    def table(title: str, *columns: str) -> Table:
        t = Table(
            title=title if term else None,
            box=box.SIMPLE_HEAD if term else None,
            title_justify="left",
            pad_edge=False,
        )
        for i, name in enumerate(columns):
            t.add_column(name, justify="left" if i == 0 or name in _LEFT else "right")
        return t

    def show(title: str, t: Table) -> None:
        if not t.row_count:
            console.print(f"\n{title}: none")
            return
        if not term:
            console.print(f"\n{title}")
        console.print(t)

    console.print(f"litecrawl stats: {v['db']}")
    pages = table("pages", "state", "pages")
    for state, n in v["pages"]["by_state"].items():
        pages.add_row(state, str(n))
    for kind, n in v["pages"]["by_kind"].items():
        pages.add_row(f"kind {kind}", str(n))
    pages.add_row("total", str(v["pages"]["total"]))
    show("pages", pages)
    next_due = v["next_due"]
    console.print(
        f"\ndue now: {v['due_now']}   claimed: {v['claimed']}   next due: "
        + (f"{_local(next_due)} ({_relative(next_due)})" if next_due else "-")
    )

    shown, total = v["hosts"]["shown"], v["hosts"]["total"]
    title = f"hosts ({len(shown)} of {total} by pages" + (
        "; --hosts for all)" if len(shown) < total else ")"
    )
    hosts = table(title, "host", "pages", "crawled", "errors", "due", "claimed", "politeness")
    for h in shown:
        hosts.add_row(
            h["host"],
            *(str(h[k]) for k in ("pages", "crawled", "errors", "due", "claimed")),
            _politeness(h),
        )
    show(title, hosts)

    errors = table("errors", "category", "pages", "sample URL")
    for e in v["errors"]:
        errors.add_row(e["category"], str(e["pages"]), e["sample_url"])
    show("errors", errors)

    runs = table(
        "last runs", "run", "started", "duration", "fetched", "failed", "pages/s", "outcome"
    )
    for r in v["runs"]:
        runs.add_row(
            str(r["id"]),
            _local(r["started_at"]),
            _duration(r["duration_sec"]),
            *(_dash(r[k]) for k in ("fetched", "failed", "pages_per_sec")),
            r["outcome"],
        )
    show("last runs", runs)

    workers = table(
        "workers", "worker", "host", "pid", "started", "heartbeat", "status", "claims", "command"
    )
    for w in v["workers"]:
        workers.add_row(
            str(w["id"]),
            w["hostname"],
            str(w["pid"]),
            _local(w["started_at"]),
            f"{w['heartbeat_age_sec']:.0f}s ago",
            w["status"],
            str(w["claims"]),
            _short(w["command"]),
        )
    show("workers", workers)

    if "partitions" in v:
        parts = table("partitions", "partition", "pages", "crawled", "due now")
        for k, counts in v["partitions"].items():
            parts.add_row(k, *(str(counts[c]) for c in ("pages", "crawled", "due_now")))
        show("partitions", parts)
    if "domains" in v:
        domains = table("domain metadata (strategy)", "domain", "metadata")
        for domain, data in v["domains"].items():
            domains.add_row(domain, json.dumps(data, sort_keys=True))
        show("domain metadata (strategy)", domains)


_LEFT = {
    "partition",
    "domain",
    "metadata",
    "host",
    "sample URL",
    "started",
    "outcome",
    "politeness",
    "command",
    "state",
    "status",
}


def _local(iso: str | None) -> str:
    return "-" if iso is None else datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M:%S")


def _relative(iso: str) -> str:
    delta = datetime.fromisoformat(iso).timestamp() - time.time()
    return "now" if delta <= 0 else f"in {_duration(delta)}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
    return f"{seconds // 86400:.0f}d{seconds % 86400 // 3600:02.0f}h"


def _politeness(h: dict[str, Any]) -> str:
    parts = []
    if h["slowed_until"] is not None:
        parts.append(f"slowed until {_local(_iso(h['slowed_until']))} (429/503)")
    if h["blocked_until"] is not None:
        parts.append(f"robots.txt unreachable: waiting until {_local(h['blocked_until'])}")
    if h["crawl_delay"] is not None:
        parts.append(f"crawl-delay {h['crawl_delay']:g}s")
    return ", ".join(parts) or "-"


def _short(command: str) -> str:
    """The command line with the program's directory left out."""
    program, _, rest = command.partition(" ")
    return " ".join(filter(None, (program.rsplit("/", 1)[-1], rest)))


def _dash(value: object) -> str:
    return "-" if value is None else str(value)
