"""``litecrawl()``: the one public function of docs/python-api.md, on the shared engine."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, Literal, ParamSpec, cast

from litecrawl.driver import Batch, drive
from litecrawl.engine import CrawlStats, Engine
from litecrawl.engine_options import EngineOptions
from litecrawl.errors import ConfigError
from litecrawl.fetch.base import Fetcher
from litecrawl.lease import Lease, LeaseRules
from litecrawl.politeness.gate import PoliteGate, PolitenessSettings
from litecrawl.schedule import Schedule
from litecrawl.store.sqlite.frontier import SQLiteFrontier
from litecrawl.strategy.base import BaseCrawlingStrategy
from litecrawl.strategy.loader import args_problem, strategy_for
from litecrawl.strategy.runner import StrategyRunner, close_strategy
from litecrawl.urls import UrlRules
from litecrawl.version import VERSION

__all__ = ["alitecrawl", "litecrawl"]

FetcherName = Literal["playwright", "http"]
P = ParamSpec("P")
_Run = Coroutine[Any, Any, CrawlStats]

log = logging.getLogger("litecrawl")

# What only a browser does: with fetcher="http" these are said to have no effect.
_BROWSER_ONLY = (
    "pw_scroll_rounds",
    "pw_scroll_wait_ms",
    "pw_viewport",
    "pw_block_media",
    "page_hook",
)


def litecrawl(
    # Initialization
    sqlite_path: str,
    start_urls: list[str],
    # URL gating
    normalize_patterns: list[dict[str, str]] | None = None,
    include_patterns: list[str] | None = None,
    exclude_patterns: list[str] | None = None,
    # Work distribution
    n_claims: int = 100,
    n_concurrent: int = 10,
    # Playwright
    pw_headers: dict[str, str] | None = None,
    pw_scroll_rounds: int = 1,
    pw_scroll_wait_ms: int = 800,
    pw_timeout_ms: int = 15000,
    pw_viewport: dict[str, int] | None = None,
    pw_block_media: bool = True,
    # Hooks
    page_hook: Callable[[Any], Awaitable[None]] | None = None,
    transform_hook: Callable[[bytes, str, str], str | bytes] | None = None,
    downstream_hook: Callable[[bytes, str, str, bool], None] | None = None,
    # Scheduling
    new_interval_sec: int = 60 * 60 * 24,
    min_interval_sec: int = 60 * 60,
    max_interval_sec: int = 60 * 60 * 24 * 30,
    fresh_factor: float = 0.2,
    stale_factor: float = 2.0,
    # Safeguard
    processing_timeout_sec: int = 60 * 10,
    *,
    fetcher: FetcherName = "playwright",
    obey_robots: bool = True,
    strategy: str | type[BaseCrawlingStrategy] | None = None,
    strategy_args: dict[str, Any] | None = None,
    schedule_policy: Literal["multiplicative", "uniform", "freshness"] = "multiplicative",
    recrawl_budget: float | None = None,
    host_recrawl_budget: float | None = None,
) -> None:
    """Run one batch: bootstrap, recover stale claims, claim ``n_claims`` due pages, process them.

    Arguments as in docs/python-api.md; ``fetcher="http"`` swaps Playwright for plain aiohttp and
    ``obey_robots=False`` skips robots.txt. ``strategy`` (a name such as ``"dfs"``, a
    ``"module:Class"`` or a :class:`~litecrawl.strategy.BaseCrawlingStrategy` subclass, with
    ``strategy_args``) replaces the default ``adaptive`` re-crawl: it decides which links are
    queued and claims follow its scores. ``schedule_policy`` picks when a crawled page is due
    again: the multiplicative rule (``"multiplicative"``, the default), ``"uniform"`` or
    ``"freshness"`` (by each page's estimated change rate, ``recrawl_budget`` re-crawls per
    second in all and ``host_recrawl_budget`` per host; docs/freshness.md). Invalid arguments
    raise ``ValueError`` (a
    :class:`~litecrawl.errors.ConfigError`) naming the parameter, before any database or network
    work.
    """
    kwargs = dict(locals())
    _validate(kwargs)
    asyncio.run(alitecrawl(**kwargs))


def _arguments_of(sync: Callable[P, None]) -> Callable[[Callable[..., _Run]], Callable[P, _Run]]:
    """``alitecrawl`` takes ``litecrawl``'s parameters: for type checkers, ``help()`` and the
    TypeError a misspelled one raises."""

    def take(run: Callable[..., _Run]) -> Callable[P, _Run]:
        run.__signature__ = inspect.signature(sync).replace(  # type: ignore[attr-defined]
            return_annotation="CrawlStats"
        )
        return cast("Callable[P, _Run]", run)

    return take


@_arguments_of(litecrawl)
async def alitecrawl(*args: Any, **given: Any) -> CrawlStats:
    """``litecrawl()`` for callers already inside an event loop; returns the batch's counts."""
    try:
        bound = inspect.signature(litecrawl).bind(*args, **given)
    except TypeError as exc:  # as Python says it of a call: n_clams=5 is no argument
        raise TypeError(f"alitecrawl() {exc}") from None
    bound.apply_defaults()
    kwargs = bound.arguments
    rules, schedule = _validate(kwargs)
    _say_what_has_no_effect(kwargs)
    factory = strategy_for(kwargs.get("strategy") or "adaptive")
    options = EngineOptions(
        rules=rules,
        schedule=schedule,
        n_concurrent=kwargs.get("n_concurrent", 10),
        processing_timeout_sec=kwargs.get("processing_timeout_sec", 600),
        transform_hook=kwargs.get("transform_hook"),
        downstream_hook=kwargs.get("downstream_hook"),
    )
    async with contextlib.AsyncExitStack() as stack:
        frontier = await stack.enter_async_context(SQLiteFrontier(kwargs["sqlite_path"]))
        # A worker row too: a run killed by cron's timeout is seen dead by the next run at once,
        # and its claims come back then (docs/python-api.md, step 2) instead of
        # processing_timeout_sec later; claims older than processing_timeout_sec are still
        # recovered whoever holds them.
        lease = await stack.enter_async_context(Lease(frontier, LeaseRules(), "litecrawl()"))
        fetcher = await stack.enter_async_context(_make_fetcher(kwargs))
        gate = None
        if kwargs.get("obey_robots", True):
            # Robots only: litecrawl() has no per-host cap or delay, but Crawl-delay is honoured.
            settings = PolitenessSettings(
                user_agent=_user_agent_headers(kwargs).get("User-Agent", ""),
                per_host=kwargs.get("n_concurrent", 10),
                concurrency=kwargs.get("n_concurrent", 10),
                delay_ms=0,
            )
            gate = await stack.enter_async_context(PoliteGate(frontier, settings))
        if factory is not None:
            runner = StrategyRunner(
                factory,
                dict(kwargs.get("strategy_args") or {}),
                frontier,
                rules,
                _user_agent_headers(kwargs).get("User-Agent"),
            )
            stack.push_async_callback(close_strategy, runner, frontier)
            options = dataclasses.replace(options, strategy=runner)
        engine = Engine(frontier, fetcher, options, gate=gate, lease=lease)
        start = partial(engine.bootstrap, kwargs["start_urls"])
        report = await drive(engine, lease, Batch(kwargs.get("n_claims", 100)), start)
        return report.stats


def _say_what_has_no_effect(kw: dict[str, Any]) -> None:
    """One warning naming the browser's options given with ``fetcher="http"``."""
    if kw.get("fetcher") != "http":
        return
    defaults = inspect.signature(litecrawl).parameters
    given = [n for n in _BROWSER_ONLY if kw.get(n) != defaults[n].default]
    if given:
        log.warning(
            "fetcher='http' renders nothing: %s %s no effect (browser options of "
            "fetcher='playwright')",
            ", ".join(given),
            "has" if len(given) == 1 else "have",
        )


def _validate(kw: dict[str, Any]) -> tuple[UrlRules, Schedule]:
    if not isinstance(kw.get("sqlite_path"), str) or not kw["sqlite_path"]:
        raise ConfigError(f"sqlite_path must be a non-empty string, got {kw.get('sqlite_path')!r}")
    urls = kw.get("start_urls")
    if not isinstance(urls, list | tuple) or not all(isinstance(u, str) for u in urls):
        raise ConfigError(f"start_urls must be a list of strings, got {urls!r}")
    for name in ("n_claims", "n_concurrent", "pw_timeout_ms", "processing_timeout_sec"):
        if name in kw and (not isinstance(kw[name], int) or kw[name] <= 0):
            raise ConfigError(f"{name} must be a positive integer, got {kw[name]!r}")
    for name in ("pw_scroll_rounds", "pw_scroll_wait_ms"):
        if name in kw and (not isinstance(kw[name], int) or kw[name] < 0):
            raise ConfigError(f"{name} must be an integer >= 0, got {kw[name]!r}")
    viewport = kw.get("pw_viewport")
    if viewport is not None and (
        not isinstance(viewport, dict) or set(viewport) != {"width", "height"}
    ):
        raise ConfigError(f"pw_viewport must be {{'width': int, 'height': int}}, got {viewport!r}")
    for name in ("page_hook", "transform_hook", "downstream_hook"):
        if kw.get(name) is not None and not callable(kw[name]):
            raise ConfigError(f"{name} must be callable, got {kw[name]!r}")
    if kw.get("fetcher", "playwright") not in ("playwright", "http"):
        raise ConfigError(f"fetcher must be 'playwright' or 'http', got {kw['fetcher']!r}")
    strategy_for(kw.get("strategy") or "adaptive")  # an unknown strategy: before any work
    args = kw.get("strategy_args")
    if args is not None and not isinstance(args, dict):
        raise ConfigError(f"strategy_args must be a dict, got {args!r}")
    problem = args_problem(kw.get("strategy") or "adaptive", args)
    if problem is not None:
        raise ConfigError(f"strategy_args: {problem}")
    rules = UrlRules(
        kw.get("normalize_patterns"), kw.get("include_patterns"), kw.get("exclude_patterns")
    )
    schedule = Schedule(
        new_interval_sec=kw.get("new_interval_sec", 60 * 60 * 24),
        min_interval_sec=kw.get("min_interval_sec", 60 * 60),
        max_interval_sec=kw.get("max_interval_sec", 60 * 60 * 24 * 30),
        fresh_factor=kw.get("fresh_factor", 0.2),
        stale_factor=kw.get("stale_factor", 2.0),
        policy=kw.get("schedule_policy", "multiplicative"),
        budget=kw.get("recrawl_budget"),
        host_budget=kw.get("host_recrawl_budget"),
    )
    return rules, schedule


def _user_agent_headers(kw: dict[str, Any]) -> dict[str, str]:
    headers = kw.get("pw_headers")
    return dict(headers) if headers is not None else {"User-Agent": f"litecrawl/{VERSION}"}


def _make_fetcher(kw: dict[str, Any]) -> Fetcher:
    headers = _user_agent_headers(kw)
    if kw.get("fetcher", "playwright") == "http":
        from litecrawl.fetch.http import HttpFetcher

        return HttpFetcher(
            user_agent=headers.get("User-Agent"),
            headers={k: v for k, v in headers.items() if k.lower() != "user-agent"},
            timeout=kw.get("pw_timeout_ms", 15000) / 1000,
            concurrency=kw.get("n_concurrent", 10),
        )
    from litecrawl.fetch.browser import BrowserFetcher

    return BrowserFetcher(
        headers=headers,
        viewport=kw.get("pw_viewport") or {"width": 2160, "height": 3840},
        timeout_ms=kw.get("pw_timeout_ms", 15000),
        block_media=kw.get("pw_block_media", True),
        scroll_rounds=kw.get("pw_scroll_rounds", 1),
        scroll_wait_ms=kw.get("pw_scroll_wait_ms", 800),
        page_hook=kw.get("page_hook"),
    )
