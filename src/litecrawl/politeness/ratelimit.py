"""Per-host pacing as pure, clock-injected state machines (no asyncio, no sleeping, no I/O).

The engine owns the clock: it asks ``pacer.next_allowed(now)``, waits (or claims another host)
until then, calls ``pacer.record_request(now)`` when a request starts, and
``pacer.slow_down(until)`` after a 429/503 with ``Retry-After``. All times are epoch seconds
(``time.time()``) so that state written to the database means the same on every worker;
:class:`PacerState` is that state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime

__all__ = [
    "HostPacer",
    "PacerState",
    "TokenBucket",
    "parse_retry_after",
]

_EPS = 1e-6  # seconds of slack when comparing "is it time yet" (epoch floats: ulp ~ 2e-7 s)


class TokenBucket:
    """``rate`` requests per second on average, at most ``burst`` back to back.

    Implemented as GCRA (the "virtual scheduling" form of a token bucket): a single theoretical
    arrival time ``tat`` instead of a token count, so there is no refill arithmetic to drift.
    In any window of length T at most ``rate * T + burst`` requests are admitted.
    A fresh bucket is full.
    """

    __slots__ = ("_interval", "_tat", "_tolerance", "burst", "rate")

    def __init__(self, rate: float, burst: float = 1.0, *, tat: float | None = None) -> None:
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"rate must be a positive number of requests/s, got {rate!r}")
        if not (math.isfinite(burst) and burst >= 1):
            raise ValueError(f"burst must be >= 1, got {burst!r}")
        self.rate = float(rate)
        self.burst = float(burst)
        self._interval = 1.0 / self.rate
        self._tolerance = (self.burst - 1.0) * self._interval
        self._tat = tat

    @property
    def tat(self) -> float | None:
        """Theoretical arrival time (persist it to share the bucket across processes)."""
        return self._tat

    def delay_until_next(self, now: float) -> float:
        """Seconds from ``now`` until :meth:`take` would succeed (0.0 = now)."""
        if self._tat is None:
            return 0.0
        return max(0.0, self._tat - self._tolerance - now)

    def tokens(self, now: float) -> float:
        """Tokens available at ``now`` (0..burst), for display."""
        if self._tat is None:
            return self.burst
        return max(0.0, min(self.burst, (now - self._tat) / self._interval + self.burst))

    def take(self, now: float) -> bool:
        """Consume one token if one is available at ``now``; False (and no change) otherwise."""
        if self.delay_until_next(now) > _EPS:
            return False
        self.charge(now)
        return True

    def charge(self, now: float) -> None:
        """Consume one token unconditionally (a request that happened anyway: goes into debt)."""
        base = now if self._tat is None else max(self._tat, now)
        self._tat = base + self._interval


@dataclass(frozen=True, slots=True)
class PacerState:
    """The mutable part of a :class:`HostPacer`, for the hosts table."""

    last_request: float | None = None  # start time of the latest request
    slow_until: float = 0.0  # no request before this (Retry-After back-off)
    bucket_tat: float | None = None  # TokenBucket.tat, when a rate limit is configured


class HostPacer:
    """Everything that decides when the next request to one host may start.

    * ``delay_ms``: minimal gap between request starts (500 ms by default, docs/crawling.md);
    * ``crawl_delay``: robots.txt ``Crawl-delay`` seconds; the larger of the two gaps applies,
      optionally capped by ``max_crawl_delay``;
    * ``rate``/``burst``: an optional :class:`TokenBucket` (``--rate-limit``, docs/crawling.md);
    * :meth:`slow_down`: a back-off deadline from a 429/503 ``Retry-After``.
    """

    __slots__ = ("_bucket", "_crawl_delay", "_last", "_slow_until", "delay", "max_crawl_delay")

    def __init__(
        self,
        *,
        delay_ms: float = 500.0,
        crawl_delay: float | None = None,
        rate: float | None = None,
        burst: float = 1.0,
        max_crawl_delay: float | None = None,
        state: PacerState | None = None,
    ) -> None:
        if not (math.isfinite(delay_ms) and delay_ms >= 0):
            raise ValueError(f"delay_ms must be >= 0, got {delay_ms!r}")
        state = state or PacerState()
        self.delay = delay_ms / 1000.0
        self.max_crawl_delay = max_crawl_delay
        self._crawl_delay: float | None = None
        self.set_crawl_delay(crawl_delay)
        self._bucket = TokenBucket(rate, burst, tat=state.bucket_tat) if rate is not None else None
        self._last = state.last_request
        self._slow_until = state.slow_until

    def set_crawl_delay(self, seconds: float | None) -> None:
        """Apply a (new) robots.txt ``Crawl-delay``; None or nonsense removes it."""
        if seconds is None or not math.isfinite(seconds) or seconds < 0:
            self._crawl_delay = None
            return
        if self.max_crawl_delay is not None:
            seconds = min(seconds, self.max_crawl_delay)
        self._crawl_delay = float(seconds)

    @property
    def interval(self) -> float:
        """The minimal gap between two request starts now in force."""
        return max(self.delay, self._crawl_delay or 0.0)

    @property
    def shared_interval(self) -> float:
        """The gap workers sharing a database keep between their starts together: the
        interval, or the rate limit's 1/rate when that is longer (no bursts across workers)."""
        rate_gap = 1.0 / self._bucket.rate if self._bucket is not None else 0.0
        return max(self.interval, rate_gap)

    @property
    def slow_until(self) -> float:
        return self._slow_until

    def slow_down(self, until: float) -> None:
        """No request before ``until`` (e.g. from :func:`parse_retry_after`). Never shortens."""
        if math.isfinite(until):
            self._slow_until = max(self._slow_until, until)

    def next_allowed(self, now: float) -> float:
        """The earliest time (>= ``now``) at which the next request may start."""
        at = max(now, self._slow_until)
        if self._last is not None:
            at = max(at, self._last + self.interval)
        if self._bucket is not None:
            at = max(at, now + self._bucket.delay_until_next(now))
        return at

    def ready(self, now: float) -> bool:
        return self.next_allowed(now) <= now + _EPS

    def record_request(self, now: float) -> None:
        """A request to this host starts at ``now`` (recorded even if it was early)."""
        self._last = now if self._last is None else max(self._last, now)
        if self._bucket is not None:
            self._bucket.charge(now)

    def snapshot(self) -> PacerState:
        return PacerState(
            last_request=self._last,
            slow_until=self._slow_until,
            bucket_tat=self._bucket.tat if self._bucket is not None else None,
        )


def parse_retry_after(value: str, now: float, *, max_delay: float = 86400.0) -> float | None:
    """The absolute epoch time a ``Retry-After`` header asks us to wait until.

    Accepts delay-seconds (``"120"``) or an HTTP-date (``"Wed, 21 Oct 2015 07:28:00 GMT"``);
    ``now`` must be epoch seconds (``time.time()``) for dates to make sense. The result lies in
    ``[now, now + max_delay]``. None when the value is neither.
    """
    text = value.strip()
    if not text:
        return None
    delay: float | None = None
    if text.isascii() and text.replace(".", "", 1).isdigit():
        delay = float(text)
    else:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        try:
            delay = when.timestamp() - now
        except (OverflowError, OSError, ValueError):
            return None
    if not math.isfinite(delay):
        return None
    return now + min(max(delay, 0.0), max_delay)
