"""The flat public API: ``litecrawl.__all__`` is sorted and lists exactly the public names."""

from __future__ import annotations

import litecrawl


def test_all_is_sorted_and_complete() -> None:
    public = {name for name in dir(litecrawl) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(litecrawl, name)).__name__ == "module"}
    assert sorted(litecrawl.__all__) == list(litecrawl.__all__)
    assert set(litecrawl.__all__) - {"__version__"} == public - modules


def test_every_error_derives_from_one_root() -> None:
    errors = [getattr(litecrawl, n) for n in litecrawl.__all__ if n.endswith(("Error", "able"))]
    assert errors and all(issubclass(e, litecrawl.LitecrawlError) for e in errors)
