"""``litecrawl index --embed``: vectors for the documents crawled without them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import console
from litecrawl.errors import LitecrawlError
from litecrawl.urls import shown_location

__all__ = ["index"]


def index(
    embed: Annotated[
        bool, typer.Option("--embed", help="Embed the texts that have no vector yet.")
    ] = False,
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
) -> None:
    """Work on the index of an existing crawl, without refetching (resumable)."""
    from litecrawl.index.backfill import embed_missing  # numpy and the model: only here

    if not embed:
        typer.echo("error: nothing to do: give --embed", err=True)
        raise typer.Exit(2)
    cfg = load_or_exit(config, {"db": db})
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task("embed", total=None)
        try:
            done = embed_missing(
                cfg.db,
                on_start=lambda total: progress.update(task, total=total),
                on_batch=lambda n: progress.advance(task, n),
            )
        except LitecrawlError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    typer.echo(f"embedded {done} texts into {shown_location(cfg.db)}", err=True)
