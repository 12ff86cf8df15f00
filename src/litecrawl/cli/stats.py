"""``litecrawl stats``: the frontier by state, due now, hosts, errors, last runs."""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import print_summary
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import FrontierSummary

__all__ = ["stats"]


def stats(
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
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
    import json

    summary, metadata, parts = asyncio.run(_summary(cfg.db, domains, partitions))
    if json_out:
        out = asdict(summary)
        if domains:
            out["domains"] = {k: json.loads(v) for k, v in metadata.items()}
        if partitions:
            out["partitions"] = {f"{k}/{partitions}": v for k, v in parts.items()}
        typer.echo(json.dumps(out, indent=2))
        return
    print_summary(
        f"litecrawl stats: {cfg.db}",
        {
            "pages by state": summary.by_state,
            "by kind": summary.by_kind,
            "due now": summary.due_now,
            "claimed now": summary.claimed,
            "hosts": summary.hosts,
            "errors": summary.errors,
            "next due": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(summary.next_due))
            if summary.next_due
            else "-",
            "runs": len(summary.runs),
        },
    )
    for run in summary.runs:
        typer.echo(
            f"run {run['id']}: started {run['started_at']} "
            f"finished {run['finished_at']} {run['stats']}"
        )
    for k, counts in parts.items():
        typer.echo(f"partition {k}/{partitions}: {counts}")
    for domain, data in metadata.items():
        typer.echo(f"domain {domain}: {data}")


async def _summary(
    location: str, domains: bool, partitions: int
) -> tuple[FrontierSummary, dict[str, str], dict[int, dict[str, int]]]:
    async with open_frontier(location) as frontier:
        now = int(time.time())
        summary = await frontier.summary(now)
        metadata = await frontier.domain_metadata() if domains else {}
        parts = await frontier.partitions(partitions, now) if partitions else {}
        return summary, metadata, parts
