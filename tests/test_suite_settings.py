"""The suite's own guarantees: every property test runs derandomized, without wall-clock limits."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def _property_tests() -> list[tuple[str, settings]]:
    found: list[tuple[str, settings]] = []
    for path in sorted(TESTS.glob("test_*.py")):
        try:
            module = importlib.import_module(path.stem)
        except pytest.skip.Exception:  # a module skipped as a whole (no Chromium...)
            continue
        for name, obj in vars(module).items():
            chosen = getattr(obj, "_hypothesis_internal_use_settings", None)
            if isinstance(chosen, settings):
                found.append((f"{path.stem}.{name}", chosen))
    return found


def test_profile_is_loaded_for_every_run() -> None:
    assert settings.default.derandomize is True
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_no_property_test_depends_on_the_clock() -> None:
    tests = _property_tests()
    assert len(tests) > 20  # the walk really found the suite's property tests
    for name, chosen in tests:
        assert chosen.derandomize, name
        assert chosen.deadline is None, name
        assert HealthCheck.too_slow in chosen.suppress_health_check, name
