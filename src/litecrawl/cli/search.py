"""``litecrawl search QUERY`` (keyword, semantic or hybrid hits with URL, title and a
highlighted snippet) and ``litecrawl similar URL`` (the pages closest in meaning)."""

from __future__ import annotations

import json
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import exit_code
from litecrawl.errors import LitecrawlError
from litecrawl.store.index import SearchHit
from litecrawl.urls import shown_location

__all__ = ["search", "similar"]

# private markers for the terminal (user text may contain "[" and "]")
_OPEN, _CLOSE = "\x02", "\x03"
_MAX_OTHER_URLS = 3


def search(
    query: Annotated[
        str,
        typer.Argument(help='Words or a question; keywords also take "a phrase", x*, OR, NOT.'),
    ],
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many hits.")] = 10,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many hits (paging).")] = 0,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
    mode: Annotated[
        SearchMode | None,
        typer.Option(
            help="keyword (bm25), semantic (meaning) or hybrid (both; the default "
            "when the database has vectors, else keyword)."
        ),
    ] = None,
) -> None:
    """Search the index: best matches first, near-duplicates shown once."""
    from litecrawl.index.semantic import find  # numpy and the model: only when searching

    path = load_or_exit(config, {"db": db}).db
    markers = ("[", "]") if json_out else (_OPEN, _CLOSE)
    try:
        results = find(
            path,
            query,
            mode=mode.value if mode is not None else None,
            limit=limit,
            offset=offset,
            open_mark=markers[0],
            close_mark=markers[1],
        )
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    if results.note:
        typer.echo(f"note: {results.note}", err=True)
    _show(results.hits, offset, json_out, f"no results for {query!r}")


def similar(
    url: Annotated[str, typer.Argument(help="A crawled URL.")],
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    limit: Annotated[int, typer.Option(min=1, help="How many pages.")] = 10,
    json_out: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """The crawled pages closest in meaning to URL (by their embeddings)."""
    from litecrawl.index.semantic import similar as run_similar

    path = load_or_exit(config, {"db": db}).db
    try:
        hits = run_similar(path, url, limit=limit)
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    _show(hits, 0, json_out, f"no other page with a vector in {shown_location(path)}")


class SearchMode(StrEnum):
    keyword = "keyword"
    semantic = "semantic"
    hybrid = "hybrid"


def _show(hits: list[SearchHit], offset: int, json_out: bool, nothing: str) -> None:
    if json_out:
        typer.echo(json.dumps([asdict(hit) for hit in hits], ensure_ascii=False, indent=2))
        return
    out = Console(highlight=False, soft_wrap=True)
    if not hits:
        out.print(Text(nothing, style="dim"))
        return
    for rank, hit in enumerate(hits, start=offset + 1):
        out.print(_render(rank, hit))


def _render(rank: int, hit: SearchHit) -> Text:
    text = Text()
    text.append(f"{rank}. ", style="bold")
    text.append(hit.title or "(no title)", style="bold")
    text.append(f"  {hit.score:.2f}\n", style="dim")
    text.append(f"   {hit.url}\n", style="cyan underline")
    if hit.section:  # the part of the page that matched by meaning
        text.append(f"   § {hit.section}", style="bold")
        if hit.section_url and hit.section_url != hit.url:
            text.append(f"  {hit.section_url}", style="cyan")
        text.append("\n")
    text.append("   ")
    # one line under the URL: a snippet keeps the page's line breaks (a menu, an index's
    # entries), which would start each at column 0 and run on for dozens of lines
    text.append_text(_highlighted(" ".join(hit.snippet.split())))
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
