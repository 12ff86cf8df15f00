"""Token bucket, host pacer and Retry-After parsing: pure functions of an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.politeness import HostPacer, PacerState, TokenBucket, parse_retry_after

T0 = 1_700_000_000.0


# --- TokenBucket -----------------------------------------------------------------------------


def test_fresh_bucket_allows_a_burst_then_paces() -> None:
    bucket = TokenBucket(rate=2.0, burst=3)
    assert [bucket.take(T0) for _ in range(4)] == [True, True, True, False]
    assert bucket.delay_until_next(T0) == pytest.approx(0.5)
    assert not bucket.take(T0 + 0.49)
    assert bucket.take(T0 + 0.5)
    assert bucket.delay_until_next(T0 + 0.5) == pytest.approx(0.5)


def test_failed_take_consumes_nothing() -> None:
    bucket = TokenBucket(rate=1.0)
    assert bucket.take(T0)
    for _ in range(10):
        assert not bucket.take(T0 + 0.5)
    assert bucket.take(T0 + 1.0)


def test_bucket_refills_up_to_burst_only() -> None:
    bucket = TokenBucket(rate=1.0, burst=2)
    assert bucket.take(T0)
    assert bucket.tokens(T0 + 1000) == 2.0
    later = T0 + 1000
    assert [bucket.take(later) for _ in range(3)] == [True, True, False]


def test_charge_goes_into_debt() -> None:
    bucket = TokenBucket(rate=1.0)
    for _ in range(3):
        bucket.charge(T0)
    assert bucket.delay_until_next(T0) == pytest.approx(3.0)


def test_state_can_be_shared_through_tat() -> None:
    first = TokenBucket(rate=4.0, burst=2)
    first.take(T0)
    first.take(T0)
    second = TokenBucket(rate=4.0, burst=2, tat=first.tat)
    assert second.delay_until_next(T0) == pytest.approx(first.delay_until_next(T0))


@pytest.mark.parametrize(("rate", "burst"), [(0, 1), (-1, 1), (float("nan"), 1), (1, 0.5)])
def test_bucket_rejects_nonsense(rate: float, burst: float) -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate, burst)


@settings(deadline=None, max_examples=300)
@given(
    rate=st.floats(min_value=0.05, max_value=50),
    burst=st.integers(min_value=1, max_value=10),
    gaps=st.lists(st.floats(min_value=0, max_value=3), min_size=1, max_size=200),
)
def test_never_more_than_rate_times_window_plus_burst(
    rate: float, burst: int, gaps: list[float]
) -> None:
    """A client hammering the bucket gets at most rate*T + burst requests in any window T."""
    bucket = TokenBucket(rate, burst)
    now = T0
    admitted: list[float] = []
    for gap in gaps:
        now += gap
        while bucket.take(now):  # as many as it will give
            admitted.append(now)
    for i in range(len(admitted)):
        for j in range(i, len(admitted)):
            window = admitted[j] - admitted[i]
            assert j - i + 1 <= rate * window + burst + 1e-4


@settings(deadline=None)
@given(
    rate=st.floats(min_value=0.05, max_value=50),
    burst=st.integers(min_value=1, max_value=5),
    n=st.integers(min_value=1, max_value=50),
)
def test_waiting_the_announced_delay_is_enough(rate: float, burst: int, n: int) -> None:
    bucket = TokenBucket(rate, burst)
    now = T0
    for _ in range(n):
        now += bucket.delay_until_next(now)
        assert bucket.take(now)
    # n requests as fast as allowed take (n - burst) / rate seconds
    assert now - T0 == pytest.approx(max(0, n - burst) / rate, abs=1e-4)  # epoch-sized floats


# --- HostPacer -------------------------------------------------------------------------------


def test_default_delay_is_500_ms_between_starts() -> None:
    pacer = HostPacer()
    assert pacer.next_allowed(T0) == T0
    pacer.record_request(T0)
    assert pacer.next_allowed(T0) == pytest.approx(T0 + 0.5)
    assert not pacer.ready(T0 + 0.4)
    assert pacer.ready(T0 + 0.5)


@pytest.mark.parametrize(
    ("delay_ms", "crawl_delay", "cap", "interval"),
    [
        (500, None, None, 0.5),
        (500, 2.0, None, 2.0),  # Crawl-delay larger: it wins
        (3000, 2.0, None, 3.0),  # configured delay larger: it wins
        (500, 120.0, 30.0, 30.0),  # capped Crawl-delay
        (0, None, None, 0.0),
        (500, -1.0, None, 0.5),  # nonsense Crawl-delay ignored
        (500, float("inf"), None, 0.5),
    ],
)
def test_interval_combines_delay_and_crawl_delay(
    delay_ms: float, crawl_delay: float | None, cap: float | None, interval: float
) -> None:
    pacer = HostPacer(delay_ms=delay_ms, crawl_delay=crawl_delay, max_crawl_delay=cap)
    assert pacer.interval == pytest.approx(interval)
    pacer.record_request(T0)
    assert pacer.next_allowed(T0) == pytest.approx(T0 + interval)


def test_set_crawl_delay_after_robots_refresh() -> None:
    pacer = HostPacer(delay_ms=100)
    pacer.set_crawl_delay(5)
    assert pacer.interval == 5
    pacer.set_crawl_delay(None)
    assert pacer.interval == pytest.approx(0.1)


def test_slow_down_pushes_next_allowed_and_never_shortens() -> None:
    pacer = HostPacer()
    pacer.record_request(T0)
    pacer.slow_down(T0 + 120)
    assert pacer.next_allowed(T0 + 1) == T0 + 120
    pacer.slow_down(T0 + 10)
    assert pacer.next_allowed(T0 + 1) == T0 + 120
    assert pacer.next_allowed(T0 + 500) == T0 + 500


def test_token_bucket_inside_pacer() -> None:
    pacer = HostPacer(delay_ms=0, rate=2.0, burst=2)
    times = []
    now = T0
    for _ in range(6):
        now = pacer.next_allowed(now)
        pacer.record_request(now)
        times.append(now - T0)
    assert times == pytest.approx([0.0, 0.0, 0.5, 1.0, 1.5, 2.0])


def test_all_constraints_apply_together() -> None:
    pacer = HostPacer(delay_ms=500, crawl_delay=1.0, rate=0.25, burst=1)
    pacer.record_request(T0)
    assert pacer.next_allowed(T0) == pytest.approx(T0 + 4.0)  # the bucket is the slowest
    pacer.slow_down(T0 + 10)
    assert pacer.next_allowed(T0) == pytest.approx(T0 + 10)


def test_snapshot_restores_the_same_schedule() -> None:
    pacer = HostPacer(delay_ms=250, rate=1.0, burst=3)
    for k in range(4):
        pacer.record_request(T0 + k * 0.1)
    pacer.slow_down(T0 + 0.2)
    state = pacer.snapshot()
    assert isinstance(state, PacerState)
    again = HostPacer(delay_ms=250, rate=1.0, burst=3, state=state)
    for now in (T0, T0 + 0.5, T0 + 2.0, T0 + 9.0):
        assert again.next_allowed(now) == pacer.next_allowed(now)


def test_pacer_rejects_negative_delay() -> None:
    with pytest.raises(ValueError):
        HostPacer(delay_ms=-1)


# --- Retry-After -----------------------------------------------------------------------------

HTTP_DATE = format_datetime(datetime.fromtimestamp(T0 + 300, tz=UTC), usegmt=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", T0 + 120),
        ("  30 ", T0 + 30),
        ("0", T0),
        ("1.5", T0 + 1.5),
        (HTTP_DATE, T0 + 300),
        ("Wed, 21 Oct 2015 07:28:00 GMT", T0),  # in the past: retry now
        ("Wed, 21 Oct 2015 07:28:00", T0),  # no zone
        ("99999999999", T0 + 86400),  # capped at max_delay
        ("", None),
        ("soon", None),
        ("-5", None),
        ("1e9", None),
        ("inf", None),
        ("Mon, 99 Foo 2015 99:99:99 GMT", None),
    ],
)
def test_parse_retry_after(value: str, expected: float | None) -> None:
    result = parse_retry_after(value, T0)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


def test_parse_retry_after_custom_cap() -> None:
    assert parse_retry_after("3600", T0, max_delay=60) == T0 + 60


@settings(deadline=None)
@given(value=st.text(max_size=60))
def test_parse_retry_after_never_raises(value: str) -> None:
    result = parse_retry_after(value, T0)
    assert result is None or T0 <= result <= T0 + 86400
