"""A page's change record, as its ``change_history`` column keeps it (JSON; docs/freshness.md):
the checks its re-fetches made and the runs of schedule/changepoint.py. Pure Python: written
with every fetched page, under every policy, without numpy."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

__all__ = ["Check", "Record", "Run", "decode", "encode", "quiet_time"]


@dataclass(frozen=True, slots=True)
class Check:
    """What one re-fetch said: ``interval`` seconds after the fetch before, ``changed`` or not,
    its last change ``age`` seconds before the fetch when dated."""

    interval: float
    changed: bool
    age: float | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """A hypothesis of when the page's rate last moved: its log chance and the checks since."""

    mass: float = 0.0
    dated: float = 0.0
    exposure: float = 0.0
    undated: float = 0.0
    undated_time: float = 0.0

    def with_check(self, check: Check, mass: float) -> Run:
        if not check.changed:
            return Run(mass, self.dated, self.exposure + check.interval, self.undated,
                       self.undated_time)  # fmt: skip
        if check.age is not None:
            return Run(mass, self.dated + 1, self.exposure + check.age, self.undated,
                       self.undated_time)  # fmt: skip
        return Run(mass, self.dated, self.exposure, self.undated + 1,
                   self.undated_time + check.interval)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Record:
    """A page's change record as its ``change_history`` keeps it (JSON): its checks and
    changes, its runs (schedule/changepoint.py), its last check's Bayes factor and interval
    (what a restarted crawl learns its hazard from), the hash the next fetch is compared with
    and the rate it was stored with (the histogram takes a page out at the rate it put it in)."""

    checks: int = 0
    changes: int = 0
    runs: tuple[Run, ...] = ()
    factor: float | None = None
    interval: float = 0.0
    hash: str = ""
    rate: float | None = None


def quiet_time(runs: tuple[Run, ...]) -> float:
    """Seconds of checks without a change that the runs hold: the longest run that saw none
    (each run is the checks since some check, so that is the quiet since the earliest kept)."""
    return max((r.exposure for r in runs if r.dated == 0 and r.undated == 0), default=0.0)


# written with every fetched page by the event loop: one encoder, the runs as lists of five
# numbers (about 20 numbers a page)
_RECORD = json.JSONEncoder(separators=(",", ":"))


def encode(record: Record) -> str:
    return _RECORD.encode(
        {
            "checks": record.checks,
            "changes": record.changes,
            "runs": [[r.mass, r.dated, r.exposure, r.undated, r.undated_time] for r in record.runs],
            "factor": record.factor,
            "interval": record.interval,
            "hash": record.hash,
            "rate": record.rate,
        }
    )


def decode(text: str | None) -> Record | None:
    """The record, or None for one that cannot be read (it starts again rather than stop the
    page). A record of an earlier litecrawl (no runs) keeps its counts, hash and rate, and its
    runs start again."""
    if not text:
        return None
    try:
        data = json.loads(text)
        rate = data.get("rate")
        factor = data.get("factor")
        runs = tuple(_run(*(float(v) for v in run)) for run in data.get("runs", ()))
        return Record(
            int(data["checks"]),
            int(data["changes"]),
            runs,
            None if factor is None else float(factor),
            float(data.get("interval", 0.0)),
            str(data["hash"]),
            None if rate is None else float(rate),
        )
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
        return None


def _run(mass: float, dated: float, exposure: float, undated: float, time: float) -> Run:
    if not all(map(math.isfinite, (mass, dated, exposure, undated, time))):
        raise ValueError("a run's numbers are finite")
    return Run(mass, dated, exposure, undated, time)
