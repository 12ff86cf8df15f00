"""``litecrawl export``: the index as JSON Lines, CSV, Elasticsearch bulk or Parquet; responses
as WARC."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import sys
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, BinaryIO, cast

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import exit_code
from litecrawl.errors import LitecrawlError

__all__ = ["Format", "export"]


class Format(StrEnum):
    jsonl = "jsonl"
    csv = "csv"
    es_bulk = "es-bulk"
    parquet = "parquet"
    warc = "warc"


def export(
    fmt: Annotated[
        Format,
        typer.Option(
            "--format",
            "-f",
            help="Output format; warc is gzip-compressed, record by record (name it .warc.gz).",
        ),
    ],
    since: Annotated[
        str | None,
        typer.Option(help="Only documents updated since this ISO time (UTC if no zone)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output file (default: stdout).")
    ] = None,
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    cache_dir: Annotated[
        Path | None, typer.Option(help="Disk cache directory (warc; default from config).")
    ] = None,
    index_name: Annotated[str, typer.Option(help="Index name in es-bulk actions.")] = "litecrawl",
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    with_vectors: Annotated[
        bool, typer.Option("--with-vectors", help="Add each document's embedding (jsonl).")
    ] = False,
    no_text: Annotated[
        bool, typer.Option("--no-text", help="Leave out each document's full text.")
    ] = False,
    no_markdown: Annotated[
        bool, typer.Option("--no-markdown", help="Leave out each document's Markdown.")
    ] = False,
    host: Annotated[
        list[str] | None,
        typer.Option(
            help="Only pages of this host (host[:port] as in stats; without a port: any port;"
            " repeatable)."
        ),
    ] = None,
    content_type: Annotated[
        list[str] | None,
        typer.Option(help="Only this media type (text/html, or text/*; repeatable)."),
    ] = None,
    state: Annotated[
        list[str] | None,
        typer.Option(help="Only pages in this frontier state (crawled, error...; repeatable)."),
    ] = None,
) -> None:
    """Export the index (jsonl, csv, es-bulk, parquet: metadata, full text and Markdown of
    each document) or the cached responses (warc), streamed."""
    cfg = load_or_exit(config, {"db": db, "cache.dir": str(cache_dir) if cache_dir else None})
    moment = _parse_since(since)
    given = {
        "--cache-dir": cache_dir is not None,
        "--index-name": index_name != "litecrawl",
        "--with-vectors": with_vectors,
        "--no-text": no_text,
        "--no-markdown": no_markdown,
    }
    for option in (name for name, yes in given.items() if yes and fmt not in _READ_BY[name]):
        # told before --out is made: an option the format does not read would do nothing
        formats = ", ".join(f.value for f in _READ_BY[option])
        typer.echo(f"error: {option} is for {formats} only, not {fmt.value}", err=True)
        raise typer.Exit(2)
    skipped: list[str] = []
    # the exporters (warcio, pyarrow's check) load here, not for every command
    from litecrawl.export import document_filter
    from litecrawl.export import export as run_export
    from litecrawl.export_parquet import check_parquet
    from litecrawl.files import replacing

    try:
        # bad input is told before --out is created
        document_filter(None, host or (), content_type or (), state or ())
        if fmt is Format.parquet:
            check_parquet()
        with contextlib.ExitStack() as stack:
            # a file: written whole or not at all (an earlier export there is kept if this fails)
            stream = sys.stdout.buffer if out is None else stack.enter_context(replacing(out))
            count = run_export(
                cfg.db,
                fmt.value,
                cast(BinaryIO, stream),
                since=moment,
                cache_dir=Path(cfg.cache.dir),
                index_name=index_name,
                on_skip=skipped.append,
                with_vectors=with_vectors,
                text=not no_text,
                markdown=not no_markdown,
                hosts=host or (),
                content_types=content_type or (),
                states=state or (),
            )
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    except BrokenPipeError:  # `litecrawl export ... | head`
        raise typer.Exit(0) from None
    what = "pages" if fmt is Format.warc else "documents"
    message = f"exported {count} {what}" + (f" to {out}" if out else "")
    if skipped:
        message += f"; skipped {len(skipped)} without a cached body"
    typer.echo(message, err=True)
    unknown = _unknown_hosts(cfg.db, host) if host else []
    for line in unknown:
        typer.echo(f"warning: {line}", err=True)
    if unknown and not count:
        raise typer.Exit(1)  # asked for pages the database does not hold


def _unknown_hosts(db: str, hosts: list[str]) -> list[str]:
    """What to say of each ``--host`` that no page of ``db`` has (as export matches hosts:
    without a port, on any port), with the database's closest hosts."""
    from litecrawl.store.backends import open_frontier

    async def known() -> list[str]:
        async with open_frontier(db, read_only=True) as frontier:
            return sorted(await frontier.known_hosts())

    try:
        names = asyncio.run(known())
    except LitecrawlError:
        return []  # the export itself read the database: nothing more to say here
    lines = []
    for given in hosts:
        wanted = given.strip().lower()
        if any(n == wanted or n.startswith(wanted + ":") for n in names):
            continue
        close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.5) or names[:3]
        shown = ", ".join(close) if close else "none: the database holds no pages"
        lines.append(f"no page of host {given!r} in the database; hosts there: {shown}")
    return lines


_DOCUMENTS = (Format.jsonl, Format.csv, Format.es_bulk, Format.parquet)
_READ_BY = {
    "--cache-dir": (Format.warc,),
    "--index-name": (Format.es_bulk,),
    "--with-vectors": (Format.jsonl,),
    "--no-text": _DOCUMENTS,
    "--no-markdown": _DOCUMENTS,
}


def _parse_since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        typer.echo(
            f"error: --since {value!r} is not an ISO 8601 time (e.g. 2024-05-01T12:00:00Z)",
            err=True,
        )
        raise typer.Exit(2) from None
