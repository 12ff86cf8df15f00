"""The scheduling math of docs/python-api.md, step 9 (schedule and write)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litecrawl import ConfigError
from litecrawl.schedule import Schedule

schedules = st.builds(
    lambda lo, span, new, ff, sf: Schedule(new, lo, lo + span, ff, sf),
    st.integers(1, 10**6),
    st.integers(0, 10**7),
    st.integers(1, 10**8),
    st.floats(0.01, 1.0),
    st.floats(1.0, 10.0),
)


@given(schedules, st.none() | st.integers(0, 10**9), st.integers(0, 10**8), st.booleans())
def test_interval_always_within_bounds(
    s: Schedule, last: int | None, gap: int, fresh: bool
) -> None:
    nxt = None if last is None else last + gap
    interval = s.next_interval(last, nxt, fresh)
    assert s.min_interval_sec <= interval <= s.max_interval_sec


@given(schedules, st.integers(0, 10**9), st.integers(1, 10**8))
def test_fresh_shrinks_and_stale_grows(s: Schedule, last: int, gap: int) -> None:
    prev = min(max(gap, s.min_interval_sec), s.max_interval_sec)  # an interval the clamp allows
    fresh = s.next_interval(last, last + prev, True)
    stale = s.next_interval(last, last + prev, False)
    assert fresh <= prev <= stale


def test_seed_formulas() -> None:
    s = Schedule(new_interval_sec=86400, min_interval_sec=3600, max_interval_sec=30 * 86400)
    assert s.next_interval(None, None, True) == 86400
    assert s.next_interval(1000, 1000 + 86400, True) == 17280  # * 0.2
    assert s.next_interval(1000, 1000 + 86400, False) == 172800  # * 2
    assert s.next_interval(1000, 1000 + 4000, True) == 3600  # clamped to min
    assert s.next_interval(1000, 1000 + 20 * 86400, False) == 30 * 86400  # clamped to max


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"min_interval_sec": 0}, "min_interval_sec"),
        ({"min_interval_sec": 10, "max_interval_sec": 5}, "max_interval_sec"),
        ({"fresh_factor": 1.5}, "fresh_factor"),
        ({"stale_factor": 0.5}, "stale_factor"),
    ],
)
def test_invalid_schedule_names_parameter(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ConfigError, match=name):
        Schedule(**kwargs)  # type: ignore[arg-type]
