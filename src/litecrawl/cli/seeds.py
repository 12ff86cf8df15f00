"""``litecrawl seeds add FILE``: inject seed URLs into the frontier (docs/strategies.md)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.config import CrawlConfig
from litecrawl.errors import LitecrawlError
from litecrawl.store.backends import open_frontier
from litecrawl.store.queue import NewLink
from litecrawl.strategy.base import BaseCrawlingStrategy
from litecrawl.strategy.loader import strategy_for
from litecrawl.strategy.runner import StrategyRunner, close_strategy
from litecrawl.urls import UrlRules, host_of, seed_problem

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
    strategy: Annotated[
        str | None, typer.Option(help="Through this strategy's read_seeds (dfs, module:Class).")
    ] = None,
) -> None:
    """Add seed URLs (blank lines and '#' comments skipped); invalid ones are reported.

    With a strategy other than bfs the URLs go through its ``read_seeds``, which decides what
    is scheduled (Frontera's add-seeds step, docs/strategies.md)."""
    cfg = load_or_exit(config, {"db": db, "strategy.name": strategy})
    try:
        factory = strategy_for(cfg.strategy.name)
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text("utf-8")
    except OSError as exc:
        typer.echo(f"error: cannot read {file}: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc
    rules = UrlRules(None, cfg.discovery.include_patterns, cfg.discovery.exclude_patterns)
    lines = [s.strip() for s in text.splitlines()]
    candidates = [s for s in lines if s and not s.startswith("#")]
    valid = [u for u in (rules(s) for s in candidates) if u is not None]
    for number, line in enumerate(lines, 1):
        if line and not line.startswith("#") and rules(line) is None:
            why = seed_problem(line) or "outside the include/exclude patterns"
            typer.echo(f"line {number}: skipped ({why}): {line}", err=True)
    if factory is not None:
        scheduled, added = asyncio.run(_through_strategy(cfg, factory, rules, valid, due_now))
        typer.echo(f"{scheduled} scheduled by {cfg.strategy.name}, {added} new")
        return
    added, due = asyncio.run(_add(cfg.db, valid, due_now))
    message = f"{added} new seeds, {len(valid) - added} already known"
    if due_now:
        message += f" ({due} of them made due now)"
    typer.echo(f"{message}, {len(candidates) - len(valid)} skipped")


async def _through_strategy(
    cfg: CrawlConfig,
    factory: type[BaseCrawlingStrategy],
    rules: UrlRules,
    urls: list[str],
    due_now: bool,
) -> tuple[int, int]:
    async with open_frontier(cfg.db) as frontier:
        runner = StrategyRunner(factory, dict(cfg.strategy.args), frontier, rules)
        try:
            writes = runner.read_seeds(urls)
            added = await frontier.write_strategy(writes)
        finally:
            await close_strategy(runner, frontier)
        if runner.errors:
            raise typer.Exit(1)
        queued = [w.url for w in writes.links if w.queue]
        if due_now:  # what the strategy queued, due at once even when already known
            await frontier.make_due(queued, int(time.time()))
        return len(queued), added


async def _add(location: str, urls: list[str], due_now: bool) -> tuple[int, int]:
    async with open_frontier(location) as frontier:
        added = await frontier.add(NewLink(u, host_of(u), 0, "seed", 1.0) for u in urls)
        due = await frontier.make_due(urls, int(time.time())) if due_now else 0
        return added, due
