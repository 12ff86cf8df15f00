"""``litecrawl sites ...``: the site queue, relevance checks and annotations (docs/sites.md)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from litecrawl.cli.crawl import load_or_exit
from litecrawl.config import CrawlConfig
from litecrawl.errors import LitecrawlError
from litecrawl.sites.model import ANNOTATION_KINDS, LISTINGS, STATUSES, Site
from litecrawl.sites.seeds import base_url, parse_site_lines
from litecrawl.store.backends import open_sites
from litecrawl.store.sites import SiteStore

if TYPE_CHECKING:
    from litecrawl.sites.run import SitesReport

__all__ = ["sites_app"]

sites_app = typer.Typer(
    help="Follow many websites: a site queue, relevance checks, annotations.",
    no_args_is_help=True,
)

Db = Annotated[str | None, typer.Option(help="SQLite file or postgresql:// URL.")]
Config = Annotated[list[Path] | None, typer.Option(help="TOML file (repeatable).")]


def _store(cfg: CrawlConfig) -> SiteStore:
    try:
        store = open_sites(cfg.db)
        store.open()
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    return store


@sites_app.command("add")
def add(
    sources: Annotated[list[str], typer.Argument(help="Base URLs, or files of them ('-': stdin).")],
    db: Db = None,
    config: Config = None,
) -> None:
    """Queue sites. In a file: one base URL per line, '#' comments; a leading '+' whitelists
    the site, a leading '-' blacklists it."""
    cfg = load_or_exit(config, {"db": db})
    lines: list[str] = []
    for source in sources:
        if source == "-" or not source.startswith(("http://", "https://")):
            try:
                text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
            except OSError as exc:
                typer.echo(f"error: cannot read {source}: {exc.strerror}", err=True)
                raise typer.Exit(2) from exc
            lines += text.splitlines()
        else:
            lines.append(source)
    seeds, bad = parse_site_lines(lines)
    for line in bad:
        typer.echo(f"skipped (not an http(s) URL): {line}", err=True)
    store = _store(cfg)
    try:
        now = time.time()
        added = store.add([s.base_url for s in seeds], now)
        for seed in seeds:
            if seed.annotation is not None:
                store.annotate(seed.base_url, seed.annotation, None, now)
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        store.close()
    marked = sum(1 for s in seeds if s.annotation)
    typer.echo(
        f"{added} new sites, {len(seeds) - added} already known, {marked} annotated, "
        f"{len(bad)} skipped"
    )


@sites_app.command("check")
def check(db: Db = None, config: Config = None) -> None:
    """Handle the queue once: read each new site's start page (known sites only after
    site_revisit_delay) and decide whether it is relevant. Ctrl+C stops cleanly."""
    cfg = load_or_exit(config, {"db": db})
    from litecrawl.sites.check import check_sites  # the fetch stack, only when checking

    async def run() -> tuple[int, dict[str, int], bool]:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        report = await check_sites(cfg, stop)
        return report.checked, dict(report.outcomes), stop.is_set()

    try:
        checked, outcomes, interrupted = asyncio.run(run())
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    counts = ", ".join(f"{n} {status}" for status, n in sorted(outcomes.items())) or "none due"
    typer.echo(f"checked {checked} sites: {counts}" + (" (interrupted)" if interrupted else ""))
    if interrupted:
        raise typer.Exit(130)


@sites_app.command("run")
def run(
    workers: Annotated[
        int | None, typer.Option(min=1, max=64, help="Sites crawled at once ([sites] workers).")
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="Stop when nothing is due.")] = False,
    db: Db = None,
    config: Config = None,
) -> None:
    """The site crawler: handle the queue (as check), then crawl each due relevant site, one
    per worker, and again after site_delay until Ctrl+C (which releases the locks; the next run
    goes on where this one stopped)."""
    cfg = load_or_exit(config, {"db": db, "sites.workers": workers})
    from litecrawl.sites.run import run_sites  # the crawl stack, only when running

    async def go() -> tuple[SitesReport, bool]:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        report = await run_sites(cfg, stop, workers=cfg.sites.workers, once=once)
        return report, stop.is_set()

    try:
        report, interrupted = asyncio.run(go())
    except LitecrawlError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    for url, c in report.crawls:
        state = " (interrupted)" if c.interrupted else ""
        typer.echo(
            f"crawled {url} ({c.kind}): {c.fetched} fetched, {c.new_pages} new, "
            f"{c.errors} errors{state}"
        )
    typer.echo(
        f"{report.checked} sites checked, {len(report.crawls)} crawled, "
        f"{report.queued} new sites found through links" + (" (interrupted)" if interrupted else "")
    )
    if interrupted:
        raise typer.Exit(130)


@sites_app.command("list")
def list_sites(
    status: Annotated[
        str | None,
        typer.Option(help=f"Only sites that are {' | '.join(STATUSES + LISTINGS)}."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON Lines, one site a line.")] = False,
    db: Db = None,
    config: Config = None,
) -> None:
    """Sites in the queue with their status and why."""
    if status is not None and status not in STATUSES + LISTINGS:
        typer.echo(f"error: --status must be one of {', '.join(STATUSES + LISTINGS)}", err=True)
        raise typer.Exit(2)
    cfg = load_or_exit(config, {"db": db})
    store = _store(cfg)
    try:
        sites = store.sites(status)
    finally:
        store.close()
    for site in sites:
        if as_json:
            typer.echo(json.dumps(asdict(site), ensure_ascii=False))
        else:
            typer.echo(f"{site.status:<11}  {site.base_url}  {site.reason or ''}".rstrip())


@sites_app.command("show")
def show(
    url: Annotated[str, typer.Argument(help="The site's base URL.")],
    db: Db = None,
    config: Config = None,
) -> None:
    """A site's status and why, its start page's title, language, feeds and sitemaps, and
    its annotations."""
    cfg = load_or_exit(config, {"db": db})
    key = base_url(url) or url
    store = _store(cfg)
    try:
        site = store.site(key)
        annotations = store.annotations(key)
        crawls = store.crawls(site.id, 5) if site else []
        feeds = store.feeds(site.id) if site else []
        links_out = store.site_links(site.id, False, 10) if site else []
        links_in = store.site_links(site.id, True, 10) if site else []
    finally:
        store.close()
    if site is None and not annotations:
        typer.echo(f"error: no site {key} (add it with: litecrawl sites add {key})", err=True)
        raise typer.Exit(1)
    if site is not None:
        _print_site(site, has_feeds=bool(feeds))
    for feed in feeds:
        read = _when(feed.last_read) if feed.last_read else "not read yet"
        validators = ", ".join(
            f"{k} {v}" for k, v in (("etag", feed.etag), ("last-modified", feed.last_modified)) if v
        )
        typer.echo(
            f"feed: {feed.url} (read {read}, {feed.entries} entries"
            + (f", {validators})" if validators else ")")
        )
    for c in crawls:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(c.started_at))
        typer.echo(
            f"crawl: {c.kind} {when}, {c.finished_at - c.started_at:.0f} s, {c.fetched} fetched, "
            f"{c.new_pages} new, {c.errors} errors" + (" (interrupted)" if c.interrupted else "")
        )
    for url, n in links_out:
        typer.echo(f"links to: {url} ({n})")
    for url, n in links_in:
        typer.echo(f"linked from: {url} ({n})")
    for a in annotations:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(a.created_at))
        typer.echo(f"annotation: {a.kind}{': ' + a.text if a.text else ''} ({when})")


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def _print_site(site: Site, has_feeds: bool) -> None:
    checked = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(site.checked_at))
        if site.checked_at
        else "never"
    )
    typer.echo(f"site: {site.base_url}")
    typer.echo(f"status: {site.status}" + (f" ({site.reason})" if site.reason else ""))
    typer.echo(f"checked: {checked}")
    if site.final_url and site.final_url != site.base_url:
        typer.echo(f"redirects to: {site.final_url}")
    typer.echo(f"title: {site.title or '-'}")
    typer.echo(f"language: {site.language or '-'}")
    if site.next_crawl is not None:
        typer.echo(f"next full crawl: {_when(site.next_crawl)}")
    if site.next_feed_crawl is not None and has_feeds:
        typer.echo(f"next feed crawl: {_when(site.next_feed_crawl)}")
    elif site.next_crawl is not None:  # the checkout runs no feed crawl for it (docs/sites.md)
        typer.echo("next feed crawl: none (no feeds found)")
    for sitemap in site.sitemaps:
        typer.echo(f"sitemap: {sitemap}")


@sites_app.command("annotate")
def annotate(
    url: Annotated[str, typer.Argument(help="The site's base URL (it need not be queued).")],
    whitelist: Annotated[bool, typer.Option("--whitelist", help="Always relevant.")] = False,
    blacklist: Annotated[bool, typer.Option("--blacklist", help="Never relevant.")] = False,
    note: Annotated[str | None, typer.Option(help="A note about the site.")] = None,
    remove: Annotated[
        str | None,
        typer.Option(help=f"Remove annotations of a kind: {' | '.join(ANNOTATION_KINDS)}."),
    ] = None,
    db: Db = None,
    config: Config = None,
) -> None:
    """Annotate a site: exactly one of --whitelist, --blacklist, --note, --remove. White- and
    blacklisting win over the relevance filter (the latest of the two wins) at the next check."""
    chosen = [x for x in (whitelist, blacklist, note is not None, remove is not None) if x]
    if len(chosen) != 1:
        typer.echo(
            "error: give exactly one of --whitelist, --blacklist, --note, --remove", err=True
        )
        raise typer.Exit(2)
    if remove is not None and remove not in ANNOTATION_KINDS:
        typer.echo(f"error: --remove takes one of {', '.join(ANNOTATION_KINDS)}", err=True)
        raise typer.Exit(2)
    key = base_url(url)
    if key is None:
        typer.echo(f"error: not an http(s) URL: {url}", err=True)
        raise typer.Exit(2)
    cfg = load_or_exit(config, {"db": db})
    store = _store(cfg)
    try:
        if remove is not None:
            n = store.remove_annotations(key, remove)
            typer.echo(f"removed {n} {remove} annotations of {key}")
            return
        kind = "whitelist" if whitelist else "blacklist" if blacklist else "note"
        store.annotate(key, kind, note, time.time())
        typer.echo(f"{kind}: {key}")
    finally:
        store.close()
