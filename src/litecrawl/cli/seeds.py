"""``litecrawl seeds add FILE``: inject seed URLs into the frontier (004's add-seeds mode)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import NewLink
from litecrawl.urls import UrlRules, host_of

__all__ = ["seeds_app"]

seeds_app = typer.Typer(help="Manage the seed URLs of a crawl database.", no_args_is_help=True)


@seeds_app.command("add")
def add(
    file: Annotated[str, typer.Argument(help="File with one URL per line ('-' = stdin).")],
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    due_now: Annotated[
        bool,
        typer.Option(
            "--due-now", help="Known URLs become due at once (retry a crawl's --failed-out file)."
        ),
    ] = False,
) -> None:
    """Add seed URLs (blank lines and '#' comments skipped); invalid ones are reported."""
    cfg = load_or_exit(config, {"db": db})
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text("utf-8")
    except OSError as exc:
        typer.echo(f"error: cannot read {file}: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc
    rules = UrlRules(None, cfg.discovery.include_patterns, cfg.discovery.exclude_patterns)
    lines = [s.strip() for s in text.splitlines()]
    candidates = [s for s in lines if s and not s.startswith("#")]
    valid = [u for u in (rules(s) for s in candidates) if u is not None]
    for bad in (s for s in candidates if rules(s) is None):
        typer.echo(f"skipped (not a valid URL here): {bad}", err=True)
    added, due = asyncio.run(_add(cfg.db, valid, due_now))
    message = f"{added} new seeds, {len(valid) - added} already known"
    if due_now:
        message += f" ({due} of them made due now)"
    typer.echo(f"{message}, {len(candidates) - len(valid)} skipped")


async def _add(location: str, urls: list[str], due_now: bool) -> tuple[int, int]:
    async with open_frontier(location) as frontier:
        added = await frontier.add(NewLink(u, host_of(u), 0, "seed", 1.0) for u in urls)
        due = await frontier.make_due(urls, int(time.time())) if due_now else 0
        return added, due
