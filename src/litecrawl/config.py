"""Crawl configuration: the TOML keys of docs/configuration.md as pydantic models.

How the files, the environment and the command line are layered into one of these is
:mod:`litecrawl.config_load`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from litecrawl.article_engines import DEFAULT_ENGINE, ArticleEngine
from litecrawl.errors import ConfigError
from litecrawl.plugins import SPEC
from litecrawl.urls import seed_problem
from litecrawl.version import VERSION

if TYPE_CHECKING:
    from litecrawl.schedule import Schedule

__all__ = [
    "CacheConfig",
    "ConcurrencyConfig",
    "CrawlConfig",
    "DiscoveryConfig",
    "ExtractConfig",
    "FetchConfig",
    "FilterConfig",
    "LimitsConfig",
    "OutputConfig",
    "RateLimitConfig",
    "SitemapConfig",
]

CONTACT_URL = "https://github.com/litecrawl/litecrawl"


def _check_regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise PydanticCustomError(
            "bad_regex", "invalid regular expression: {error}", {"error": str(exc)}
        ) from exc
    return pattern


def _check_domain(domain: str) -> str:
    host = domain.strip().lower().strip(".")
    if not host or any(c in host for c in "/:@ "):
        raise PydanticCustomError("bad_domain", "expected a host name such as example.com")
    return host


def _check_seed(seed: str) -> str:
    problem = seed_problem(seed)
    if problem is not None:
        raise PydanticCustomError(
            "bad_url", "cannot crawl from this: {problem}", {"problem": problem}
        )
    return seed


def _check_spec(value: str) -> str:
    if not SPEC.fullmatch(value):
        raise PydanticCustomError("bad_spec", "expected 'module.path:name'")
    return value


_MEDIA_RANGE = re.compile(r"\*(/\*)?|[a-z0-9][\w.+-]*/(\*|[a-z0-9][\w.+-]*)")


def _check_media_range(value: str) -> str:
    pattern = value.strip().lower()
    if not _MEDIA_RANGE.fullmatch(pattern):
        raise PydanticCustomError(
            "bad_media_type", "expected a media type such as application/pdf, image/* or */*"
        )
    return pattern


_Regex = Annotated[str, AfterValidator(_check_regex)]
_Seed = Annotated[str, Field(min_length=1), AfterValidator(_check_seed)]
_MediaRange = Annotated[str, AfterValidator(_check_media_range)]
_Domain = Annotated[str, AfterValidator(_check_domain)]
_NonEmpty = Annotated[str, Field(min_length=1)]
_Spec = Annotated[str, AfterValidator(_check_spec)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class LimitsConfig(_Section):
    max_pages: int = Field(default=0, ge=0, description="0 = unlimited")


class ConcurrencyConfig(_Section):
    # ``global`` is a Python keyword: the attribute is ``global_``, the TOML key ``global``.
    global_: int = Field(default=8, ge=1, le=10_000, alias="global")
    per_host: int = Field(default=4, ge=1, le=1_000)


class RateLimitConfig(_Section):
    per_host_delay_ms: int = Field(default=500, ge=0, le=3_600_000)
    requests_per_second: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class CacheConfig(_Section):
    dir: _NonEmpty = ".cache/litecrawl"
    respect_conditional: bool = True
    # "files": {host}/{sha[:2]}/{sha}.html + .headers.json; "sqlite": one cache.db
    # (docs/crawling.md, "Conditional GET and the disk cache")
    layout: Literal["files", "sqlite"] = "files"


class OutputConfig(_Section):
    dir: _NonEmpty | None = None


class SitemapConfig(_Section):
    url: _Seed | None = None
    use_lastmod: bool = True
    # sub-sitemaps of one host queued in one run: a server making up new ones stays bounded
    max_per_host: int = Field(default=1000, ge=1)


class DiscoveryConfig(_Section):
    follow_links: bool = True
    include_patterns: list[_Regex] = Field(default_factory=list)
    exclude_patterns: list[_Regex] = Field(default_factory=list)
    domains: list[_Domain] = Field(default_factory=list)


class FilterConfig(_Section):
    dom_remove: list[str] = Field(default_factory=lambda: ["script", "style", "svg"])
    extra_remove: list[str] = Field(default_factory=list)


class ExtractConfig(_Section):
    main_article: bool = False
    engine: ArticleEngine = DEFAULT_ENGINE
    embed: bool = True  # a vector per text for semantic search (index/embed.py)
    # analysis worker processes (index/analyze.py); None: one per usable CPU, 0: in the crawler
    workers: int | None = Field(default=None, ge=0, le=256)


class FetchConfig(_Section):
    timeout: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    max_retries: int = Field(default=3, ge=0, le=100)
    max_bytes: int = Field(default=10 * 1024 * 1024, ge=1)
    render: bool = False
    # Pages of these media types are downloaded too (besides HTML and feeds); another type is
    # recorded as skipped ("content_type") after its headers. ["*/*"]: every body.
    accept_types: list[_MediaRange] = Field(default_factory=list)


class StrategyConfig(_Section):
    """``strategy = "dfs"`` or a ``[strategy]`` table with ``name`` and ``[strategy.args]``."""

    name: str = "bfs"
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _shape(cls, value: str) -> str:
        from litecrawl.strategy.loader import BUILTIN

        if ":" not in value and value not in BUILTIN:
            raise PydanticCustomError(
                "unknown_strategy",
                "unknown strategy {name!r}: use one of {known} or 'module.path:Class'",
                {"name": value, "known": ", ".join(sorted(BUILTIN))},
            )
        if value not in BUILTIN and not SPEC.fullmatch(value):
            raise PydanticCustomError(
                "bad_strategy", "expected a strategy name (bfs, dfs ...) or 'module.path:Class'"
            )
        return value

    @model_validator(mode="after")
    def _args_read(self) -> StrategyConfig:
        from litecrawl.strategy.loader import args_problem

        problem = args_problem(self.name, self.args)
        if problem is not None:
            raise PydanticCustomError("ignored_args", "{problem}", {"problem": problem})
        return self


class ScheduleConfig(_Section):
    """When a crawled page is due again (``--watch``; docs/freshness.md). Times in seconds."""

    policy: Literal["multiplicative", "uniform", "freshness"] = "multiplicative"
    new_interval: int = Field(default=86400, ge=1)
    min_interval: int = Field(default=3600, ge=1)
    max_interval: int = Field(default=30 * 86400, ge=1)
    fresh_factor: float = Field(default=0.2, gt=0, le=1, allow_inf_nan=False)
    stale_factor: float = Field(default=2.0, ge=1, allow_inf_nan=False)
    budget: float | None = Field(default=None, gt=0, allow_inf_nan=False)  # re-crawls/s in all
    host_budget: float | None = Field(default=None, gt=0, allow_inf_nan=False)  # per host

    @model_validator(mode="after")
    def _consistent(self) -> ScheduleConfig:
        try:
            self.to_schedule()
        except ConfigError as exc:
            raise PydanticCustomError("bad_schedule", "{problem}", {"problem": str(exc)}) from exc
        return self

    def to_schedule(self, polite_rate: float | None = None) -> Schedule:
        """The schedule; ``polite_rate`` (requests per second a host allows) is the freshness
        policy's ``host_budget`` when none is set: it plans no more than politeness lets out."""
        from litecrawl.schedule import Schedule

        host_budget = self.host_budget
        if host_budget is None and self.policy == "freshness":
            host_budget = polite_rate
        return Schedule(
            new_interval_sec=self.new_interval,
            min_interval_sec=self.min_interval,
            max_interval_sec=self.max_interval,
            fresh_factor=self.fresh_factor,
            stale_factor=self.stale_factor,
            policy=self.policy,
            budget=self.budget,
            host_budget=host_budget,
        )


class SitesConfig(_Section):
    """The site queue (``litecrawl sites``, docs/sites.md)."""

    # a known site's start page is checked again only after this many seconds
    site_revisit_delay: float = Field(default=7 * 86400, ge=0, allow_inf_nan=False)
    # ... but a site that could not be reached (DNS, connection, timeout, 5xx) after this many
    unreachable_recheck_delay: float = Field(default=3600, ge=0, allow_inf_nan=False)
    workers: int = Field(default=1, ge=1, le=64)  # sites crawled at once, one per worker
    site_delay: float = Field(default=600, ge=0, allow_inf_nan=False)  # between queue passes
    full_crawl_interval: float = Field(default=7 * 86400, ge=0, allow_inf_nan=False)
    # feed crawls (only the entries of the site's feeds) in between full crawls
    feed_crawl_interval: float = Field(default=86400, ge=0, allow_inf_nan=False)
    max_pages_per_site: int = Field(default=1000, ge=0, description="per crawl; 0 = unlimited")
    filter: _Spec | None = None
    # (site, path) -> bool: which paths of a site are crawled (None: all in scope)
    path_filter: _Spec | None = None
    languages: list[Annotated[str, Field(pattern=r"^[a-z]{2,3}$")]] = Field(default_factory=list)


class CrawlConfig(_Section):
    """The whole validated configuration; field names are the TOML keys (docs/configuration.md)."""

    mode: Literal["seed", "sitemap"] = "seed"
    user_agent: _NonEmpty | None = None
    obey_robots: bool = True
    same_domain_only: bool = True
    max_depth: int = Field(default=2, ge=0, description="0 = unlimited")
    seeds: list[_Seed] = Field(default_factory=list)
    db: _NonEmpty = "litecrawl.db"
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    concurrency: ConcurrencyConfig = Field(default_factory=ConcurrencyConfig)
    rate_limit: RateLimitConfig = Field(default_factory=RateLimitConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    sitemap: SitemapConfig = Field(default_factory=SitemapConfig)
    discovery: DiscoveryConfig = Field(default_factory=DiscoveryConfig)
    filter: FilterConfig = Field(default_factory=FilterConfig)
    extract: ExtractConfig = Field(default_factory=ExtractConfig)
    fetch: FetchConfig = Field(default_factory=FetchConfig)
    watch: bool = False
    # seconds without a heartbeat after which a worker's claims go to other workers
    lease_timeout: float = Field(default=30.0, ge=1, le=86_400, allow_inf_nan=False)
    strategy: StrategyConfig = Field(default_factory=StrategyConfig)
    sites: SitesConfig = Field(default_factory=SitesConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    partition: str | None = Field(default=None, pattern=r"^\d+/\d+$", description="K/N")
    verbose: bool = False
    quiet: bool = False

    @field_validator("partition")
    @classmethod
    def _partition(cls, value: str | None) -> str | None:
        if value is not None:
            k, n = (int(x) for x in value.split("/"))
            if n < 1 or k >= n:
                raise PydanticCustomError("bad_partition", "expected K/N with 0 <= K < N")
        return value

    def partition_k_n(self) -> tuple[int, int] | None:
        if self.partition is None:
            return None
        k, n = self.partition.split("/")
        return int(k), int(n)

    @field_validator("strategy", mode="before")
    @classmethod
    def _strategy_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    def effective_user_agent(self) -> str:
        """``user_agent`` if set, else ``litecrawl/<version> (+contact-url)``."""
        if self.user_agent is not None:
            return self.user_agent
        return f"litecrawl/{VERSION} (+{CONTACT_URL})"
