"""The one view of a crawl database's state, shown by ``litecrawl stats`` and ``litecrawl serve``.

Plain data (dicts of JSON types) built from a :class:`FrontierSummary`: the terminal tables, the
``--json`` output and the dashboard's pages and API all read the same numbers.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from litecrawl.frontier.lost import PARK_AFTER
from litecrawl.lease import LeaseRules, current_identity
from litecrawl.politeness.robots import RobotsPolicy
from litecrawl.store.runs import FrontierSummary, HostSummary, RunSummary
from litecrawl.store.workers import WorkerRecord
from litecrawl.urls import shown_location

__all__ = ["Robots", "iso", "robots_origins", "robots_state", "stats_view"]

# origin -> (robots.txt state, crawl delay, expiry)
Robots = dict[str, tuple[str, float | None, float]]


def robots_origins(hosts: list[HostSummary]) -> list[str]:
    """The robots.txt origins to look up for ``hosts`` (https first)."""
    return [f"{scheme}://{h.host}" for h in hosts for scheme in ("https", "http")]


def robots_state(
    hosts: list[HostSummary], records: dict[str, tuple[str, float]], user_agent: str
) -> Robots:
    """Each host's robots.txt mode, Crawl-delay and expiry from its cached records
    (origin -> (record, expires_at)); https is preferred, unreadable records skipped."""
    robots: Robots = {}
    for h in hosts:
        for scheme in ("https", "http"):
            found = records.get(f"{scheme}://{h.host}")
            if found is None:
                continue
            try:
                policy = RobotsPolicy.from_record(json.loads(found[0]), user_agent)
            except ValueError:
                continue
            robots[h.host] = (policy.mode, policy.crawl_delay(), found[1])
            break
    return robots


PARKED_REASON = (
    f"each was lost with its worker, alone, at {PARK_AFTER} or more consecutive claims "
    "(it may be what kills it)"
)


def stats_view(
    db: str, s: FrontierSummary, now: float, rules: LeaseRules, robots: Robots | None = None
) -> dict[str, Any]:
    """What ``stats`` shows, as plain data (times ISO 8601 in local time, ages in seconds)."""
    robots = robots or {}
    status = {w.id: _status(w, now, rules) for w in s.workers}
    live = {i for i, st in status.items() if st != "dead"}
    machines = {w.id: f"{w.identity.hostname}:{w.identity.pid}" for w in s.workers}
    return {
        "db": shown_location(db),  # never the password
        "pages": {"total": sum(s.by_state.values()), "by_state": s.by_state, "by_kind": s.by_kind},
        "due_now": s.due_now,
        "claimed": s.claimed,
        "next_due": iso(s.next_due),
        "changes": s.changes,  # re-fetched pages by what their checks found ({}: none yet)
        "parked": {
            "pages": s.parked,
            "reason": PARKED_REASON,
            "next_try": iso(s.parked_next),
        },
        "suspects": s.suspects,
        "hosts": {
            "total": s.hosts,
            "shown": [_host(h, robots.get(h.host), now) for h in s.top_hosts],
        },
        "errors": [asdict(e) for e in s.errors] + _run_errors(s.runs),
        "runs": [_run(r, live, now, machines) for r in s.runs],
        "workers": [
            {
                "id": w.id,
                "hostname": w.identity.hostname,
                "pid": w.identity.pid,
                "command": w.identity.command,
                "started_at": iso(w.started_at),
                "heartbeat_age_sec": round(max(now - w.heartbeat_at, 0.0), 1),
                "status": status[w.id],
                "claims": w.claims,
                "pages": w.pages,
            }
            for w in s.workers
        ],
    }


# Errors of a run that belong to no page (a strategy hook that raised): counted in its record.
_RUN_ONLY_ERRORS = ("strategy",)


def _run_errors(runs: list[RunSummary]) -> list[dict[str, Any]]:
    """Rows of the errors table for the run-only categories, summed over the runs shown
    (``pages``: how many times; no page to name)."""
    out = []
    for category in _RUN_ONLY_ERRORS:
        counts = [r.stats.get("errors") for r in runs]
        total = sum(int(c.get(category, 0)) for c in counts if isinstance(c, dict))
        if total:
            out.append({"category": category, "pages": total, "sample_url": ""})
    return out


def _run(r: RunSummary, live: set[int], now: float, machines: dict[int, str]) -> dict[str, Any]:
    if r.finished_at is None:
        # no end written: still running if its worker is alive, else killed (kill -9, crash)
        outcome = "running" if r.worker_id is not None and r.worker_id in live else "killed"
        duration = now - r.started_at if outcome == "running" else None
    else:
        outcome = "interrupted" if r.stats.get("interrupted") else "done"
        duration = float(r.finished_at - r.started_at)
    return {
        "id": r.id,
        "command": r.command,
        "started_at": iso(r.started_at),
        "duration_sec": None if duration is None else round(duration, 1),
        "fetched": r.stats.get("fetched"),
        "failed": r.stats.get("failed"),
        "errors": r.stats.get("errors") or {},
        "pages_per_sec": r.stats.get("pages_per_sec"),
        "outcome": outcome,
        # machine:pid, kept in the record at the end; a run still going: its worker's
        "worker": r.stats.get("worker") or machines.get(r.worker_id or -1),
    }


def _host(
    h: HostSummary, robots: tuple[str, float | None, float] | None, now: float
) -> dict[str, Any]:
    view = asdict(h)
    mode, delay, expires = robots or (None, None, 0.0)
    view["robots"] = mode
    view["crawl_delay"] = h.crawl_delay if h.crawl_delay is not None else delay
    # robots.txt unreachable (5xx, network): nothing of the host is fetched until the record ends
    view["blocked_until"] = iso(expires) if mode == "disallow_all" and expires > now else None
    return view


def _status(w: WorkerRecord, now: float, rules: LeaseRules) -> str:
    """alive; late (missed heartbeats, lease not over yet); dead (the next run or any running
    worker recovers its claims)."""
    if rules.is_dead(w, now, current_identity()):
        return "dead"
    return "late" if rules.overdue(w, now) else "alive"


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


# -- tables ------------------------------------------------------------------------------------
