"""The re-crawl settings, and the multiplicative rule (docs/python-api.md, step 9): multiply the
last interval by a factor, clamp. The other policies are in :mod:`litecrawl.schedule.planner`."""

from __future__ import annotations

from dataclasses import dataclass

from litecrawl.errors import ConfigError

__all__ = ["POLICIES", "Schedule"]

POLICIES = ("multiplicative", "uniform", "freshness")


@dataclass(frozen=True, slots=True)
class Schedule:
    new_interval_sec: int = 60 * 60 * 24
    min_interval_sec: int = 60 * 60
    max_interval_sec: int = 60 * 60 * 24 * 30
    fresh_factor: float = 0.2
    stale_factor: float = 2.0
    policy: str = "multiplicative"  # or "uniform", "freshness" (docs/freshness.md)
    budget: float | None = None  # re-crawls per second in all (uniform, freshness)
    host_budget: float | None = None  # re-crawls per second per host (freshness)

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ConfigError(f"policy must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        for name, value in (("budget", self.budget), ("host_budget", self.host_budget)):
            if value is not None and not value > 0:
                raise ConfigError(f"{name} must be > 0 re-crawls per second, got {value}")
        if self.policy == "multiplicative" and (self.budget or self.host_budget):
            raise ConfigError(
                "budget is for the uniform and freshness policies; the multiplicative rule "
                "has none (set policy)"
            )
        if self.policy == "uniform" and self.host_budget:
            raise ConfigError("host_budget is for the freshness policy (uniform: budget)")
        if self.min_interval_sec <= 0:
            raise ConfigError(f"min_interval_sec must be > 0, got {self.min_interval_sec}")
        if self.max_interval_sec < self.min_interval_sec:
            raise ConfigError(
                f"max_interval_sec must be >= min_interval_sec ({self.min_interval_sec}), "
                f"got {self.max_interval_sec}"
            )
        if self.new_interval_sec <= 0:
            raise ConfigError(f"new_interval_sec must be > 0, got {self.new_interval_sec}")
        if not 0 < self.fresh_factor <= 1.0:
            raise ConfigError(f"fresh_factor must be in (0, 1.0], got {self.fresh_factor}")
        if self.stale_factor < 1.0:
            raise ConfigError(f"stale_factor must be >= 1.0, got {self.stale_factor}")

    def next_interval(
        self, last_crawl_time: int | None, next_crawl_time: int | None, fresh: bool
    ) -> int:
        """Seconds until the next crawl of a page just processed.

        Never crawled before: ``new_interval_sec``. Otherwise the previous interval times
        ``fresh_factor`` or ``stale_factor``. The result is always clamped into
        [min_interval_sec, max_interval_sec], also for ``new_interval_sec``, so no page escapes
        the user's bounds.
        """
        if last_crawl_time is None or next_crawl_time is None:
            interval = float(self.new_interval_sec)
        else:
            previous = max(next_crawl_time - last_crawl_time, 0)
            interval = previous * (self.fresh_factor if fresh else self.stale_factor)
        return int(min(max(round(interval), self.min_interval_sec), self.max_interval_sec))
