"""``litecrawl crawl``: options -> validated config -> :func:`litecrawl.crawl.run_crawl`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from litecrawl.cli.crawl_report import report_crawl
from litecrawl.cli.output import console, exit_code, setup_logging
from litecrawl.config import CrawlConfig
from litecrawl.config_load import load_config
from litecrawl.errors import LitecrawlError

if TYPE_CHECKING:
    from litecrawl.crawl import CrawlReport
    from litecrawl.engine import CrawlStats

__all__ = ["crawl", "load_or_exit"]

Opt = typer.Option

# A crawl's young objects are collected every 20,000 allocations, not Python's 700: a page's
# objects (its response, its analysis, its pending write) live for its time in flight, so at 700
# they outlived the young collections and were carried into the old generation, whose full
# collections walk every object the process holds. 0.92 -> 0.08 s of the crawler's CPU a
# 10,000-page kit crawl (bench/README.md, issue 29 session 8); garbage in cycles waits for at
# most that many allocations.
YOUNG_COLLECTED_EVERY = 20_000


def load_or_exit(files: list[Path] | None, overrides: dict[str, Any]) -> CrawlConfig:
    """Validated config, or exit code 2 with a message naming file, key and value."""
    try:
        return load_config(files or [], os.environ, overrides)
    except LitecrawlError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from exc


def crawl(
    urls: Annotated[
        list[str] | None, typer.Argument(help="Seed URLs (none: resume the database's frontier).")
    ] = None,
    url: Annotated[
        list[str] | None, Opt("--url", help="A seed URL (repeatable; as the arguments).")
    ] = None,
    sitemap: Annotated[str | None, Opt(help="Sitemap URL (sitemap mode).")] = None,
    sitemap_mode: Annotated[
        bool, Opt("--sitemap-mode", help="Sitemap mode, sitemaps found via robots.txt.")
    ] = False,
    db: Annotated[
        str | None, Opt("--db", "--db-path", help="SQLite file or postgresql:// URL.")
    ] = None,
    config: Annotated[list[Path] | None, Opt("--config", help="TOML file (repeatable).")] = None,
    domain: Annotated[
        list[str] | None, Opt(help="Also allow this domain (repeatable; not with --any-domain).")
    ] = None,
    same_domain: Annotated[
        bool | None, Opt("--same-domain/--any-domain", help="Stay on the seeds' domains.")
    ] = None,
    include: Annotated[list[str] | None, Opt(help="Only URLs matching (repeatable).")] = None,
    exclude: Annotated[list[str] | None, Opt(help="Skip URLs matching (repeatable).")] = None,
    max_pages: Annotated[
        int | None, Opt(help="Stop after this many pages (not counting sitemaps, feeds; 0 = none).")
    ] = None,
    max_depth: Annotated[int | None, Opt(help="Link depth from the seeds (0 = unlimited).")] = None,
    follow: Annotated[bool | None, Opt("--follow/--no-follow", help="Follow links.")] = None,
    concurrency: Annotated[int | None, Opt(help="Concurrent requests in all.")] = None,
    per_host: Annotated[int | None, Opt(help="Concurrent requests per host.")] = None,
    rate_limit: Annotated[float | None, Opt(help="Requests per second per host.")] = None,
    delay_ms: Annotated[int | None, Opt(help="Minimal delay between requests to a host.")] = None,
    timeout: Annotated[float | None, Opt(help="Per-request timeout in seconds.")] = None,
    render: Annotated[
        bool | None, Opt("--render/--no-render", help="Render with Chromium.")
    ] = None,
    output: Annotated[Path | None, Opt(help="Write Markdown + .meta.json here.")] = None,
    main_article: Annotated[
        bool | None, Opt("--main-article/--full-page", help="Extract the main article only.")
    ] = None,
    no_embed: Annotated[
        bool, Opt("--no-embed", help="No vectors for semantic search (extract.embed = false).")
    ] = False,
    ignore_robots: Annotated[bool, Opt("--ignore-robots", help="Do not obey robots.txt.")] = False,
    no_cache: Annotated[bool, Opt("--no-cache", help="No disk cache, no conditional GET.")] = False,
    accept_type: Annotated[
        list[str] | None,
        Opt(
            "--accept-type",
            help="Also download pages of this media type (repeatable; application/pdf, image/*,"
            " */*). Others than HTML and feeds are skipped after their headers.",
        ),
    ] = None,
    user_agent: Annotated[str | None, Opt(help="User-Agent header.")] = None,
    strategy: Annotated[
        str | None, Opt(help="Crawling strategy: bfs (default), dfs, focused or module:Class.")
    ] = None,
    partition: Annotated[
        str | None, Opt(help="K/N: claim only URLs whose domain (or slot) hashes to K.")
    ] = None,
    watch: Annotated[bool, Opt("--watch", help="Keep running; re-crawl as scheduled.")] = False,
    schedule: Annotated[
        str | None,
        Opt(
            help="Re-crawl policy: multiplicative (default), uniform, or freshness (by each "
            "page's estimated change rate under --budget)."
        ),
    ] = None,
    new_interval: Annotated[
        int | None, Opt(help="Seconds before a page crawled once is due again.")
    ] = None,
    min_interval: Annotated[int | None, Opt(help="Least seconds between two crawls.")] = None,
    max_interval: Annotated[int | None, Opt(help="Most seconds between two crawls.")] = None,
    fresh_factor: Annotated[
        float | None, Opt(help="multiplicative: interval factor after a change.")
    ] = None,
    stale_factor: Annotated[
        float | None, Opt(help="multiplicative: interval factor after no change.")
    ] = None,
    budget: Annotated[
        float | None,
        Opt(help="uniform, freshness: re-crawls per second in all (default: pages/new-interval)."),
    ] = None,
    host_budget: Annotated[
        float | None, Opt(help="freshness: re-crawls per second per host.")
    ] = None,
    lease_timeout: Annotated[
        float | None,
        Opt(help="Seconds without a heartbeat before a worker's claims go to others."),
    ] = None,
    recrawl: Annotated[
        bool,
        Opt(
            "--recrawl", help="Every known page (sitemap, feed) is due now, whatever its schedule."
        ),
    ] = False,
    recrawl_match: Annotated[
        str | None,
        Opt(help="Only the known pages whose URL matches this regex are due now (--recrawl)."),
    ] = None,
    verbose: Annotated[bool, Opt("--verbose", "-v", help="Log every page (and DEBUG).")] = False,
    quiet: Annotated[bool, Opt("--quiet", "-q", help="Only warnings and the summary.")] = False,
    log_json: Annotated[
        bool, Opt("--log-json", help="Log records as JSON lines on stderr (for log shippers).")
    ] = False,
    log_file: Annotated[
        Path | None,
        Opt(help="Also log everything (DEBUG, every page) to this file.", dir_okay=False),
    ] = None,
    failed_out: Annotated[
        Path | None,
        Opt(
            help="Write the URLs whose fetch failed in this run here, one per line (to retry).",
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Crawl from seed URLs (BFS by depth) or from sitemaps, politely and resumably."""
    mode = "sitemap" if sitemap or sitemap_mode else None
    overrides: dict[str, Any] = {
        "mode": mode,
        "seeds": [*(urls or ()), *(url or ())] or None,
        "sitemap.url": sitemap,
        "db": db,
        "discovery.domains": domain,
        "same_domain_only": same_domain,
        "discovery.include_patterns": include,
        "discovery.exclude_patterns": exclude,
        "limits.max_pages": max_pages,
        "max_depth": max_depth,
        "discovery.follow_links": follow,
        "concurrency.global": concurrency,
        "concurrency.per_host": per_host,
        "rate_limit.requests_per_second": rate_limit,
        "rate_limit.per_host_delay_ms": delay_ms,
        "fetch.timeout": timeout,
        "fetch.render": render,
        "output.dir": str(output) if output else None,
        "extract.main_article": main_article,
        "extract.embed": False if no_embed else None,
        "obey_robots": False if ignore_robots else None,
        "cache.respect_conditional": False if no_cache else None,
        "fetch.accept_types": accept_type,
        "user_agent": user_agent,
        "strategy.name": strategy,
        "partition": partition,
        "watch": watch or None,
        "schedule.policy": schedule,
        "schedule.new_interval": new_interval,
        "schedule.min_interval": min_interval,
        "schedule.max_interval": max_interval,
        "schedule.fresh_factor": fresh_factor,
        "schedule.stale_factor": stale_factor,
        "schedule.budget": budget,
        "schedule.host_budget": host_budget,
        "lease_timeout": lease_timeout,
        "verbose": verbose or None,
        "quiet": quiet or None,
    }
    if mode == "sitemap" and follow is None:
        overrides["discovery.follow_links"] = False  # sitemap mode fetches what is listed
    cfg = load_or_exit(config, overrides)
    if not cfg.seeds and not cfg.sitemap.url and _no_such_file(cfg.db):  # not made for nothing
        console.print(
            f"[red]error:[/red] no seed URLs, and no database at {escape(cfg.db)} to resume: "
            "give URLs or 'seeds' in a config file",
            highlight=False,
        )
        raise typer.Exit(2)
    try:
        setup_logging(cfg.verbose, cfg.quiet, log_json, log_file)
    except OSError as exc:
        console.print(
            f"[red]error:[/red] --log-file {escape(str(log_file))}: {exc.strerror}", highlight=False
        )
        raise typer.Exit(2) from exc
    try:  # a path that cannot be written is told now, not after the crawl
        if failed_out is not None:
            failed_out.write_text("", "utf-8")
    except OSError as exc:
        console.print(f"[red]error:[/red] --failed-out {escape(str(failed_out))}: {exc.strerror}")
        raise typer.Exit(2) from exc
    again = _recrawl_or_exit(recrawl, recrawl_match)
    try:
        with _collected_late(), asyncio.Runner(loop_factory=_loop_factory()) as runner:
            report = runner.run(_run(cfg, " ".join(sys.argv), again))
    except LitecrawlError as exc:
        if log_json:  # the stream stays JSON lines: the error is its last record
            logging.getLogger("litecrawl").error("%s", exc)
        else:
            console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(exit_code(exc)) from exc
    unembedded = _without_the_models_vectors(cfg.db) if cfg.extract.embed else None
    raise typer.Exit(report_crawl(report, cfg.partition, failed_out, log_json, unembedded))


def _without_the_models_vectors(db: str) -> tuple[str, int] | None:
    """In a database whose vectors ``litecrawl index --model`` made with a model the crawl
    does not run: that model's stored name and how many pages have none of its vectors (search
    finds them by their words only until ``litecrawl index --embed``); None otherwise."""
    from litecrawl.store.backends import open_index
    from litecrawl.store.vectors import MODEL

    try:
        with open_index(db) as index:
            store = index.vectors
            if store.model == MODEL:
                return None
            return store.model, store.count_missing()
    except LitecrawlError:  # the crawl's own summary matters more than this note
        return None


def _recrawl_or_exit(every: bool, pattern: str | None) -> Callable[[str], bool] | None:
    """What ``--recrawl`` / ``--recrawl-match`` make due now (None: nothing)."""
    if pattern is None:
        return (lambda url: True) if every else None
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        console.print(f"[red]error:[/red] --recrawl-match {escape(pattern)!r}: {exc}")
        raise typer.Exit(2) from exc
    return lambda url: regex.search(url) is not None


def _no_such_file(db: str) -> bool:
    return "://" not in db and not Path(db).exists()


@contextlib.contextmanager
def _collected_late() -> Iterator[None]:
    """The crawl's garbage collection thresholds (:data:`YOUNG_COLLECTED_EVERY`), and the
    process's own again after it (the command may run inside another program: tests, a shell)."""
    before = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTED_EVERY, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop where it is installed (a faster event loop), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _run(
    cfg: CrawlConfig, command: str, recrawl: Callable[[str], bool] | None
) -> CrawlReport:
    # the engine, aiohttp and the rest of the crawl: only this command needs them (stats, search,
    # export and seeds start in half the time without)
    from litecrawl.crawl import analysis_pool, run_crawl

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        if stop.is_set():  # second Ctrl+C: leave now, the next run recovers the claims
            os._exit(130)
        logging.getLogger("litecrawl").warning(  # a log line: JSON too with --log-json
            "stopping: finishing in-flight pages (Ctrl+C again to quit at once)"
        )
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    progress = _Progress() if console.is_terminal and not cfg.quiet else None
    try:
        async with analysis_pool(cfg) as pool:
            return await run_crawl(
                cfg,
                stop,
                pool,
                on_progress=progress.update if progress else None,
                command=command,
                recrawl=recrawl,
            )
    finally:
        if progress is not None:
            progress.close()


class _Progress:
    """A one-line live display: pages done, in flight, rate, errors."""

    def __init__(self) -> None:
        from rich.live import Live

        self._live = Live(console=console, refresh_per_second=4, transient=True)
        self._live.start()

    def update(self, stats: CrawlStats, in_flight: int) -> None:
        rate = stats.fetched / stats.elapsed if stats.elapsed > 0 else 0.0
        self._live.update(
            f"fetched {stats.fetched}  in flight {in_flight}  new links {stats.new_links}  "
            f"{rate:.1f} pages/s  errors {stats.failed}"
        )

    def close(self) -> None:
        self._live.stop()
