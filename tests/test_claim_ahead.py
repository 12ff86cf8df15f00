"""How far the claim loop (litecrawl.claiming) claims ahead, and when it claims again after a
claim came back short (too few due pages, or their hosts' room taken by other workers)."""

from __future__ import annotations

from litecrawl.claiming import _ClaimAhead


def test_a_short_claim_waits_for_an_eighth_of_the_concurrency_to_finish() -> None:
    ahead = _ClaimAhead(64)
    ahead.claimed(3, 40, in_flight=50)
    assert not ahead.ready  # before: claimed again after each finished page
    ahead.finished(7)
    assert not ahead.ready
    ahead.finished(1)
    assert ahead.ready


def test_a_full_claim_leaves_the_next_one_free() -> None:
    ahead = _ClaimAhead(64)
    ahead.claimed(40, 40, in_flight=90)
    assert ahead.ready


def test_a_short_claim_with_little_in_flight_waits_for_that_only() -> None:
    """Early in a crawl (a seed, then its few links): the next claim once those are done."""
    ahead = _ClaimAhead(64)
    ahead.claimed(0, 96, in_flight=2)
    assert not ahead.ready
    ahead.finished(2)
    assert ahead.ready
    ahead.claimed(0, 96, in_flight=0)
    assert ahead.ready


def test_a_strategy_s_claims_are_never_held_back() -> None:
    """Under a strategy each free slot gets the best-scored page at once."""
    ahead = _ClaimAhead(64, ordered=True)
    ahead.claimed(0, 1, in_flight=63)
    assert ahead.ready


def test_only_a_claim_that_brought_nothing_asks_the_others_for_a_part() -> None:
    ahead = _ClaimAhead(64)
    assert not ahead.found_none  # the first claim asks nobody
    ahead.claimed(20, 96, in_flight=20)  # short, but busy with other hosts' pages
    assert not ahead.found_none
    ahead.claimed(0, 96, in_flight=20)
    assert ahead.found_none
    ahead.claimed(96, 96, in_flight=96)
    assert not ahead.found_none
