"""Domain metadata written by several workers at once: each change merges into what the others
wrote (no lost update), on SQLite and PostgreSQL; and the merge rules themselves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, NewDb, crawler_env, db_query
from test_many_workers import _site

from litecrawl.store.backends import open_frontier
from litecrawl.store.strategies import StrategyWrites
from litecrawl.strategy.metadata import Entry, StoredDomainMetadata, merge

Serve = Callable[[web.Application], LocalServer]
TESTS = Path(__file__).parent


def test_two_workers_count_every_page(serve: Serve, new_db: NewDb) -> None:
    app, _ = _site(80)
    site = serve(app)
    db = new_db("c")
    cmd = [
        *(sys.executable, "-m", "litecrawl", "crawl", site.url("/"), "--db", db, "--no-cache"),
        *("-q", "--delay-ms", "0", "--concurrency", "2"),
        *("--strategy", "strategies.frontera_style:CountDomains"),
    ]
    env = crawler_env({**os.environ, "PYTHONPATH": str(TESTS)})
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    paths = [r.path for r in site.requests if r.path != "/robots.txt"]
    assert sorted(paths) == sorted({*paths}) and len(paths) == 81  # each page once
    ((data,),) = db_query(db, "SELECT data FROM domain_metadata")
    assert json.loads(data) == {"pages": 81}


def j(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_merge_adds_numbers_and_sets_and_keeps_what_others_wrote() -> None:
    base = j({"pages": 3, "hosts": {"$s": ["a"]}, "seed": "x", "d": {"n": 1}})
    mine = j({"pages": 5, "hosts": {"$s": ["a", "b"]}, "seed": "x", "d": {"n": 2}, "new": 1})
    theirs = j({"pages": 10, "hosts": {"$s": ["a", "c"]}, "seed": "y", "d": {"n": 4}, "k": 1})
    merged = json.loads(merge(base, mine, theirs) or "")
    assert merged == {
        "pages": 12,  # 10 + my 2
        "hosts": {"$s": ["a", "b", "c"]},
        "seed": "y",  # I did not change it
        "d": {"n": 5},
        "new": 1,
        "k": 1,
    }
    # both created the domain at once: counters add up
    assert json.loads(merge(None, j({"pages": 1}), j({"pages": 1})) or "") == {"pages": 2}
    # nothing changed by others: mine as it is; a deletion is a deletion
    assert merge(base, mine, base) == mine
    assert merge(base, None, theirs) is None
    # a plain value both changed: the last writer's
    assert json.loads(merge(j({"s": "a"}), j({"s": "b"}), j({"s": "c"})) or "") == {"s": "b"}
    # a key I removed goes, whatever others did with the rest
    assert json.loads(merge(j({"x": 1, "y": 1}), j({"y": 1}), j({"x": 1, "y": 2})) or "") == {
        "y": 2
    }


def test_a_worker_keeps_the_domains_used_last_and_reads_the_others_again(tmp_path: Path) -> None:
    # Memory follows the domains in use: after a batch's write only the `keep` domains used last
    # stay; a forgotten one comes back from the database with what was written, and a change to
    # a kept one is still written by the next batch.
    async def go() -> None:
        async with open_frontier(str(tmp_path / "d.db")) as frontier:
            meta = StoredDomainMetadata(frontier, keep=2)
            for i, domain in enumerate(["a.com", "b.com", "c.com", "d.com"]):
                meta[domain] = Entry(domain, {"n": i})
            meta["b.com"]["n"] = 10  # b used last but one: kept with d
            writes, errors = meta.changed()
            assert not errors and len(writes) == 4
            await frontier.write_strategy(StrategyWrites(domains=tuple(writes)))
            assert sorted(meta) == ["b.com", "d.com"]
            meta["d.com"]["n"] = 30  # kept: changed in place, written by the next batch
            assert meta["a.com"] == {"n": 0}  # forgotten: read again, as written
            writes, _ = meta.changed()
            assert [(d, json.loads(now or "")) for d, _, now in writes] == [("d.com", {"n": 30})]
            await frontier.write_strategy(StrategyWrites(domains=tuple(writes)))
            assert sorted(meta) == ["a.com", "d.com"]

    asyncio.run(go())
    rows = db_query(str(tmp_path / "d.db"), "SELECT domain, data FROM domain_metadata")
    assert {d: json.loads(data) for d, data in rows} == {
        "a.com": {"n": 0},
        "b.com": {"n": 10},
        "c.com": {"n": 2},
        "d.com": {"n": 30},
    }
