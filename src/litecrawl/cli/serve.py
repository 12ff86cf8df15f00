"""``litecrawl serve``: the web dashboard on a crawl database, also while a crawl writes it."""

from __future__ import annotations

import asyncio
import ipaddress
import secrets
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.cli.output import exit_code
from litecrawl.errors import LitecrawlError
from litecrawl.urls import UrlRules, shown_location

if TYPE_CHECKING:
    from aiohttp import web

    from litecrawl.serve import ServeSettings

__all__ = ["serve"]


def serve(
    db: Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")] = None,
    config: Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")] = None,
    host: Annotated[
        str, typer.Option(help="Address to listen on (anything but loopback exposes the data).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8765,
    token: Annotated[
        str | None, typer.Option(help="Token that writes need (default: a random one, printed).")
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="No writes at all.")] = False,
) -> None:
    """Serve a web dashboard: overview, hosts, pages, search, adding seeds; JSON under /api/."""
    # the dashboard's modules (aiohttp.web, Jinja2) load here, not for every command
    from litecrawl.serve import ServeSettings, make_app, open_queries
    from litecrawl.serve.annotate import SiteAnnotator
    from litecrawl.serve.seeds import SeedAdder
    from litecrawl.serve.views import Dashboard

    cfg = load_or_exit(config, {"db": db})
    if token is not None and len(token) < 8:
        typer.echo("error: --token must be at least 8 characters", err=True)
        raise typer.Exit(2)
    try:
        queries = open_queries(cfg.db)
        queries.summary(0, 0)  # a database litecrawl can read, before announcing the URL
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(exit_code(exc)) from exc
    rules = UrlRules(None, cfg.discovery.include_patterns, cfg.discovery.exclude_patterns)
    settings = ServeSettings(
        dashboard=Dashboard(
            db=cfg.db,
            queries=queries,
            user_agent=cfg.effective_user_agent(),
            lease_timeout=cfg.lease_timeout,
        ),
        seeds=SeedAdder(cfg.db, rules),
        annotator=SiteAnnotator(cfg.db),
        token=token or secrets.token_urlsafe(18),
        read_only=read_only,
        loopback_only=_is_loopback(host),
    )
    try:
        asyncio.run(_run(make_app(settings), host, port, settings))
    except OSError as exc:
        typer.echo(f"error: cannot listen on {host}:{port}: {exc.strerror}", err=True)
        raise typer.Exit(2) from exc


async def _run(app: web.Application, host: str, port: int, settings: ServeSettings) -> None:
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port  # the real one for 0
        shown = f"[{host}]" if ":" in host else host
        database = shown_location(settings.dashboard.db)
        typer.echo(f"litecrawl serve: http://{shown}:{bound}/  (database {database})")
        if not settings.loopback_only:
            typer.echo(
                f"warning: listening on {host}: whoever reaches this address reads the database",
                err=True,
            )
        if settings.read_only:
            typer.echo("read-only: writes are refused")
        else:
            typer.echo(f"token for writes: {settings.token}")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
