"""``litecrawl crawl``'s garbage collection: young objects collected late during the crawl
(cli/crawl.py), the process's own thresholds back after it."""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import LocalServer
from test_cli_crawl import crawl, tree_site

from litecrawl.cli.crawl import YOUNG_COLLECTED_EVERY

Serve = Callable[[web.Application], LocalServer]

_PROBE = """
import gc
from litecrawl.strategy.builtin import BreadthFirst
seen = []
class Probe(BreadthFirst):
    def page_crawled(self, response):
        seen.append(gc.get_threshold())
        super().page_crawled(response)
"""


def test_the_crawl_collects_young_objects_late_and_gives_the_thresholds_back(
    tmp_path: Path, serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gc_probe_strategy.py").write_text(_PROBE)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = gc.get_threshold()
    assert before[0] != YOUNG_COLLECTED_EVERY  # else the test could not tell
    site = serve(tree_site(fanout=2, levels=1))
    result = crawl(tmp_path / "c.db", site.url("/"), "--strategy", "gc_probe_strategy:Probe")
    assert result.exit_code == 0, result.output
    probe = importlib.import_module("gc_probe_strategy")
    assert len(probe.seen) == 3  # the start page and its two children
    assert {threshold[0] for threshold in probe.seen} == {YOUNG_COLLECTED_EVERY}
    assert {threshold[1:] for threshold in probe.seen} == {before[1:]}
    assert gc.get_threshold() == before
