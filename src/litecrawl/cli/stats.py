"""``litecrawl stats``: pages by state and kind, what is due, hosts, errors, runs, live workers.

Tables on a terminal, the same tables as plain aligned text when piped, ``--json`` for scripts:
all three show the one :func:`stats_view` of the database.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import duration, exit_code
from litecrawl.errors import LitecrawlError
from litecrawl.frontier.lost import TRY_SUSPECTS_AFTER
from litecrawl.lease import LeaseRules
from litecrawl.stats_view import Robots, iso, robots_origins, robots_state, stats_view
from litecrawl.store.backends import open_frontier
from litecrawl.store.runs import FrontierSummary

__all__ = ["stats"]


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
        raise typer.Exit(exit_code(exc)) from exc
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


async def _summary(
    location: str, now: int, hosts: int | None, user_agent: str, domains: bool, partitions: int
) -> tuple[FrontierSummary, Robots, dict[str, str], dict[int, dict[str, int]]]:
    async with open_frontier(location, read_only=True) as frontier:
        summary = await frontier.summary(now, hosts)
        metadata = await frontier.domain_metadata() if domains else {}
        parts = await frontier.partitions(partitions, now) if partitions else {}
        records: dict[str, tuple[str, float]] = {}
        for origin in robots_origins(summary.top_hosts):
            if (found := await frontier.get_robots(origin)) is not None:
                records[origin] = found
        return summary, robots_state(summary.top_hosts, records, user_agent), metadata, parts


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
    if v["changes"]:  # docs/freshness.md: what re-fetches found
        changes = table("re-fetches", "pages and checks", "count")
        for name, n in v["changes"].items():
            changes.add_row(name, str(n))
        show("re-fetches", changes)
    parked = v["parked"]
    if parked["pages"]:
        console.print(
            f"parked: {parked['pages']} pages, {parked['reason']}; next try: "
            f"{_local(parked['next_try'])} ({_relative(parked['next_try'])})"
        )
    if v["suspects"]:
        console.print(
            f"suspects: {v['suspects']} pages lost with their worker (a kill, a crash), each "
            f"tried alone once a run has written {TRY_SUSPECTS_AFTER} pages or has nothing else "
            "to do, parked if it keeps killing"
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
        sample = e["sample_url"] or f"(in the last {len(v['runs'])} runs)"
        errors.add_row(e["category"], str(e["pages"]), sample)
    show("errors", errors)

    runs = table(
        "last runs",
        "run",
        "started",
        "duration",
        "fetched",
        "failed",
        "pages/s",
        "outcome",
        "worker",
    )
    for r in v["runs"]:
        runs.add_row(
            str(r["id"]),
            _local(r["started_at"]),
            duration(r["duration_sec"]),
            *(_dash(r[k]) for k in ("fetched", "failed", "pages_per_sec")),
            r["outcome"],
            _dash(r["worker"]),
        )
    show("last runs", runs)

    workers = table(
        "workers",
        "worker",
        "host",
        "pid",
        "started",
        "heartbeat",
        "status",
        "pages",
        "claims",
        "command",
    )
    for w in v["workers"]:
        workers.add_row(
            str(w["id"]),
            w["hostname"],
            str(w["pid"]),
            _local(w["started_at"]),
            f"{w['heartbeat_age_sec']:.0f}s ago",
            w["status"],
            str(w["pages"]),
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
    return "now" if delta <= 0 else f"in {duration(delta)}"


def _politeness(h: dict[str, Any]) -> str:
    parts = []
    if h["slowed_until"] is not None:
        parts.append(f"slowed until {_local(iso(h['slowed_until']))} (429/503)")
    if h["blocked_until"] is not None:
        parts.append(f"robots.txt unreachable: waiting until {_local(h['blocked_until'])}")
    if h["crawl_delay"] is not None:
        parts.append(f"crawl-delay {h['crawl_delay']:g}s")
    # a start the workers' shared pacing reserved, when it is a while ahead (a long delay)
    if h.get("next_start") is not None and h["next_start"] - time.time() >= 1:
        parts.append(f"next start at {_local(iso(h['next_start']))}")
    if h.get("leases"):  # the share of the host's slots each worker holds while fetching it
        held = ", ".join(f"{n} by worker {w}" for w, n in sorted(h["leases"].items()))
        parts.append(f"slots leased: {held}")
    return ", ".join(parts) or "-"


def _short(command: str) -> str:
    """The command line with the program's directory left out."""
    program, _, rest = command.partition(" ")
    return " ".join(filter(None, (program.rsplit("/", 1)[-1], rest)))


def _dash(value: object) -> str:
    return "-" if value is None else str(value)
