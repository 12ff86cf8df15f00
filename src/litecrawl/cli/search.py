"""``litecrawl search QUERY``: ranked full-text hits with URL, title and a highlighted snippet."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from litecrawl.cli.crawl import load_or_exit
from litecrawl.errors import LitecrawlError
from litecrawl.index.search import SearchHit
from litecrawl.index.search import search as run_search

__all__ = ["search"]

# private markers for the terminal (user text may contain "[" and "]")
_OPEN, _CLOSE = "\x02", "\x03"
_MAX_OTHER_URLS = 3


def search(
    query: Annotated[str, typer.Argument(help='FTS5 query: words, "a phrase", prefix*, OR, NOT.')],
    db: Annotated[str | None, typer.Option(help="SQLite database file.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many hits.")] = 10,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many hits (paging).")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """Search the full-text index: best matches first, near-duplicates shown once."""
    cfg = load_or_exit(config, {"db": db})
    if cfg.db.startswith(("postgresql://", "postgres://")):
        typer.echo("error: search works on a SQLite database for now", err=True)
        raise typer.Exit(2)
    markers = ("[", "]") if json_out else (_OPEN, _CLOSE)
    try:
        hits = run_search(
            cfg.db,
            query,
            limit=limit,
            offset=offset,
            open_mark=markers[0],
            close_mark=markers[1],
        )
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if json_out:
        typer.echo(json.dumps([asdict(hit) for hit in hits], ensure_ascii=False, indent=2))
        return
    out = Console(highlight=False, soft_wrap=True)
    if not hits:
        out.print(Text(f"no results for {query!r}", style="dim"))
        return
    for rank, hit in enumerate(hits, start=offset + 1):
        out.print(_render(rank, hit))


def _render(rank: int, hit: SearchHit) -> Text:
    text = Text()
    text.append(f"{rank}. ", style="bold")
    text.append(hit.title or "(no title)", style="bold")
    text.append(f"  {hit.score:.2f}\n", style="dim")
    text.append(f"   {hit.url}\n", style="cyan underline")
    text.append("   ")
    text.append_text(_highlighted(hit.snippet))
    if hit.other_urls:
        shown = ", ".join(hit.other_urls[:_MAX_OTHER_URLS])
        more = len(hit.other_urls) - _MAX_OTHER_URLS
        text.append(f"\n   also at: {shown}" + (f" (+{more} more)" if more > 0 else ""), "dim")
    text.append("\n")
    return text


def _highlighted(snippet: str) -> Text:
    """The snippet with the matches (between the private markers) in bold yellow."""
    text = Text()
    for i, part in enumerate(snippet.split(_OPEN)):
        if i == 0:
            text.append(part.replace(_CLOSE, ""))
            continue
        match, _, rest = part.partition(_CLOSE)
        text.append(match, style="bold yellow")
        text.append(rest)
    return text
