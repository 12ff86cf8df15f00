"""``litecrawl index --embed`` / ``--model NAME``: vectors for the documents that have none of
the database's model, or every vector rebuilt with another model (index/backfill.py)."""

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
    model: Annotated[
        str | None,
        typer.Option(
            help="Make the database's model NAME and rebuild every vector with it: wordllama"
            " (the default, what the crawl embeds with) or minilm (finds answers better, ~1,000x"
            " the CPU; needs the 'minilm' extra). Implies --embed.",
            metavar="NAME",
        ),
    ] = None,
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
) -> None:
    """Work on the index of an existing crawl, without refetching (resumable)."""
    from litecrawl.index.backfill import embed_missing  # numpy and the model: only here

    if not embed and model is None:
        typer.echo("error: nothing to do: give --embed or --model NAME", err=True)
        raise typer.Exit(2)
    cfg = load_or_exit(config, {"db": db})
    where = shown_location(cfg.db)
    columns = (TextColumn("embedding"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    # a progress bar on a terminal, else a line a batch (a long rebuild in a log)
    lines = not console.is_terminal
    state = {"total": 0, "seen": 0}

    def started(total: int) -> None:
        state["total"] = total
        progress.update(task, total=total)
        if lines:
            typer.echo(f"{total} texts to embed in {where}", err=True)

    def advanced(n: int) -> None:
        state["seen"] += n
        progress.advance(task, n)
        if lines:
            typer.echo(f"embedded {state['seen']}/{state['total']}", err=True)

    with Progress(*columns, console=console, disable=lines) as progress:
        task = progress.add_task("embed", total=None)
        try:
            done = embed_missing(cfg.db, model=model, on_start=started, on_batch=advanced)
        except LitecrawlError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
        except KeyboardInterrupt:
            typer.echo(
                f"interrupted after {state['seen']} of {state['total']} texts (each batch is"
                f" kept): run the same command again to go on",
                err=True,
            )
            raise typer.Exit(1) from None
    typer.echo(f"embedded {done} texts into {where}", err=True)
