"""``litecrawl db copy``: move a whole crawl between a SQLite file and PostgreSQL."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.markup import escape

from litecrawl.cli.output import console
from litecrawl.dbcopy import TableCount, copy_database
from litecrawl.errors import LitecrawlError
from litecrawl.urls import shown_location

__all__ = ["db_app"]

db_app = typer.Typer(help="Work on a whole crawl database.", no_args_is_help=True)


@db_app.command("copy")
def copy(
    source: Annotated[
        str, typer.Option("--from", help="The database copied: SQLite file or postgresql:// URL.")
    ],
    target: Annotated[
        str, typer.Option("--to", help="Where it goes (created if needed; re-run to resume).")
    ],
    batch: Annotated[int, typer.Option(min=1, help="Rows per transaction.")] = 5000,
) -> None:
    """Copy a crawl (frontier, index, link graph, sites, runs) to another database.

    Rows already in the target are replaced by the source's, so an interrupted copy is run
    again to finish it. Each table is counted on both sides at the end: exit 1 if they differ
    (the target held other rows)."""
    began = time.monotonic()
    typer.echo(f"copying {shown_location(source)} -> {shown_location(target)}", err=True)

    def shown(count: TableCount) -> None:
        mark = "" if count.same else f"  (target has {count.target})"
        typer.echo(f"{count.table:<18} {count.source:>10}{mark}")

    try:
        counts = copy_database(source, target, batch=batch, on_table=shown)
    except LitecrawlError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc
    rows = sum(c.source for c in counts)
    typer.echo(f"copied {rows} rows in {time.monotonic() - began:.1f}s", err=True)
    differ = [c.table for c in counts if not c.same]
    if differ:
        typer.echo(
            f"error: the target's counts differ from the source's in {', '.join(differ)}: "
            "it held rows the source does not have",
            err=True,
        )
        raise typer.Exit(1)
