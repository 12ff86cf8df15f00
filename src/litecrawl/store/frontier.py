"""The frontier: every role a crawl worker needs of its database, on one connection.

Built from the role interfaces: the page queue (:mod:`litecrawl.store.queue`), worker leases
(:mod:`litecrawl.store.workers`), per-host state (:mod:`litecrawl.store.hosts`), strategies'
state (:mod:`litecrawl.store.strategies`), run records (:mod:`litecrawl.store.runs`) and the
index's writes (:mod:`litecrawl.store.index_writes`).
SQLite (``store/sqlite/frontier.py``) and PostgreSQL (``store/postgres/frontier.py``) implement
it; :func:`litecrawl.store.backends.open_frontier` picks one by location.
"""

from __future__ import annotations

from litecrawl.store.hosts import HostState
from litecrawl.store.index_writes import IndexWrites
from litecrawl.store.lifecycle import AsyncStore
from litecrawl.store.queue import PageQueue
from litecrawl.store.runs import RunRecords
from litecrawl.store.strategies import StrategyState
from litecrawl.store.workers import WorkerLeases

__all__ = ["Frontier"]


class Frontier(
    AsyncStore, PageQueue, WorkerLeases, HostState, StrategyState, RunRecords, IndexWrites
):
    """``async with frontier:`` opens and migrates the store; methods are safe across processes.

    One frontier object is one worker: after :meth:`register_worker` its claims name it.
    """
