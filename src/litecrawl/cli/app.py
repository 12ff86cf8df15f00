"""The typer application and its entry point; each command lives in its own module."""

from __future__ import annotations

import typer

from litecrawl.cli import crawl as crawl_cmd
from litecrawl.cli import export as export_cmd
from litecrawl.cli import index as index_cmd
from litecrawl.cli import search as search_cmd
from litecrawl.cli import serve as serve_cmd
from litecrawl.cli import stats as stats_cmd
from litecrawl.cli.db import db_app
from litecrawl.cli.seeds import seeds_app
from litecrawl.cli.sites import sites_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="litecrawl",
    help="Incremental, polite, resumable web crawler and indexer.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("crawl")(crawl_cmd.crawl)
app.command("search")(search_cmd.search)
app.command("similar")(search_cmd.similar)
app.command("index")(index_cmd.index)
app.command("stats")(stats_cmd.stats)
app.command("serve")(serve_cmd.serve)
app.command("export")(export_cmd.export)
app.add_typer(seeds_app, name="seeds")
app.add_typer(sites_app, name="sites")
app.add_typer(db_app, name="db")


def main() -> None:
    app()
