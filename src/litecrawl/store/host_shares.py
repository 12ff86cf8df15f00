"""A host's slots shared among the workers that want it (docs/scaling.md#workers), written once
for both backends (in SQLite's spelling, :mod:`litecrawl.store.dialect`).

Each backend's ``claims.py`` runs these with a claim that knows hosts, in its transaction
(PostgreSQL: under the claims' advisory lock; SQLite: ``BEGIN IMMEDIATE``), so what one claim
reads of the other workers' leases cannot change before it has written its own.

A worker's part of a host is ``per_host`` split among the workers with a lease of it, rounded
up (``part``); the lease never takes more than the other workers leave, and never goes under
what its fetches may hold until the claim is back (``in_use``), so all leases together stay
within ``per_host`` while one shrinks: the worker starts no more fetches of the host than its
part (what :data:`MINE` returns), and its lease follows its fetches down at its next claims. A
worker that wants a host whose slots others hold in full takes a lease of none
(:func:`demand`): it makes their part smaller. The workers counted are those with a lease of
the host, so a ``--watch`` process waiting for the next due page, or a site crawl of another
host, counts for nothing, and a dead worker's leases go with its row once its heartbeats have
stopped for ``lease_timeout`` (the recovery of lost claims).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from litecrawl.store.dialect import Dialect
from litecrawl.store.queue import HostRules

__all__ = [
    "MINE",
    "RESHARE",
    "UNHELD",
    "demand",
    "new_lease",
    "part",
    "reshared",
    "share_params",
    "wanted",
]


def _others(host: str, what: str) -> str:
    return f"(SELECT {what} FROM host_leases o WHERE o.host = {host} AND o.worker_id <> :worker)"


def _counted(host: str, others: tuple[str, str] | None) -> tuple[str, str]:
    """How many other workers hold a lease of ``host``, and their slots: ``others`` (the
    columns of a join that counted them) or a look-up each."""
    if others is not None:
        return others
    return _others(host, "count(*)"), _others(host, "coalesce(sum(o.slots), 0)")


def part(dialect: Dialect, host: str, others: tuple[str, str] | None = None) -> str:
    """A worker's part of ``host``'s slots: ``per_host`` split among the workers with a lease
    of it, this one included, rounded up; never more than its own concurrency."""
    workers = f"(1 + {_counted(host, others)[0]})"
    return f"{dialect.least}(:share, (:per_host - 1) / {workers} + 1)"


def new_lease(dialect: Dialect, host: str, others: tuple[str, str] | None = None) -> str:
    """The slots a new lease of ``host`` takes: its part, or what the others leave if less."""
    left = f":per_host - {_counted(host, others)[1]}"
    return f"{dialect.least}({part(dialect, host, others)}, {left})"


def _pairs(dialect: Dialect) -> str:
    """``:in_use`` (a JSON object: host -> the slots its fetches may hold here) as rows (key,
    value)."""
    return "json_each_text(:in_use::json)" if dialect.postgres else "json_each(:in_use)"


def share_params(rules: HostRules) -> dict[str, Any]:
    return {
        "per_host": rules.per_host,
        "share": rules.share,
        "in_use": json.dumps(dict(rules.in_use)),
    }


# This worker's leases of hosts it holds no pages of any more: a lease asked for and not used
# (:func:`demand`), or one whose release is on its way.
UNHELD = (
    "DELETE FROM host_leases WHERE worker_id = :worker AND host NOT IN (SELECT key FROM {pairs})"
)


def reshared(
    dialect: Dialect, host: str = "host_leases.host", others: tuple[str, str] | None = None
) -> str:
    """A lease of this worker set to its part (or what the others leave), never under what its
    fetches hold (in an UPDATE of ``host_leases``, or of ``host`` with ``others``)."""
    in_use = (
        f"coalesce((SELECT CAST(u.value AS INTEGER) FROM {_pairs(dialect)} u"
        f" WHERE u.key = {host}), 0)"
    )
    return f"{dialect.greatest}({in_use}, {new_lease(dialect, host, others)})"


# This worker's leases set to :func:`reshared`.
RESHARE = "UPDATE host_leases SET slots = {reshared} WHERE worker_id = :worker"

# This worker's leases after the claim, each as the slots it may start fetches in: its lease,
# but no more than its part (a lease above it, kept for the fetches still running, shrinks).
MINE = "SELECT l.host, {least}(l.slots, {part}) FROM host_leases l WHERE l.worker_id = :worker"


def statements(dialect: Dialect) -> Mapping[str, str]:
    """:data:`UNHELD`, :data:`RESHARE` and :data:`MINE` in ``dialect``."""
    words = {
        "pairs": _pairs(dialect),
        "reshared": reshared(dialect),
        "least": dialect.least,
        "part": part(dialect, "l.host"),
    }
    return {
        name: dialect.sql(sql.format(**words))
        for name, sql in (("unheld", UNHELD), ("reshare", RESHARE), ("mine", MINE))
    }


def wanted(dialect: Dialect, window: str) -> str:
    """The hosts among ``window`` (a SELECT of hosts, in ``dialect``'s own spelling: this
    worker's next due pages) whose slots the other workers hold in full (a SELECT)."""
    sql = dialect.sql(
        "SELECT o.host FROM host_leases o WHERE o.worker_id <> :worker "
        # the window read only when another worker holds all of a host's slots
        "GROUP BY o.host HAVING sum(o.slots) >= :per_host AND o.host IN ({window})"
    )
    return sql.format(window=window)


def demand(dialect: Dialect, window: str) -> str:
    """A lease of no slots of each host :func:`wanted`."""
    return (
        "INSERT INTO host_leases (host, worker_id, slots) "
        f"SELECT w.host, {dialect.sql(':worker')}, 0 FROM ({wanted(dialect, window)}) AS w "
        "WHERE true "  # SQLite's parser needs a WHERE before ON CONFLICT
        "ON CONFLICT (host, worker_id) DO NOTHING"
    )
