"""The continuous claim loop behind ``litecrawl crawl``: the engine kept busy, pipelined.

Claims are refilled while earlier pages are still in flight, so fetchers never wait for a batch
to drain, but only a little ahead of the fetchers: a claim not yet fetched is work a crash
strands until the lease says its worker is dead. The loop ends when nothing is due and no dead
worker's claims are still to come back (or, with ``watch``, sleeps until the next page is), when
``max_pages`` pages (sitemaps and feeds not counted) were claimed, or when ``stop`` is set
(SIGINT/SIGTERM): then no more claims are made, in-flight pages get ``grace`` seconds to finish,
and the rest are released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from litecrawl.engine import CrawlStats, Engine
from litecrawl.errors import DatabaseUnusable
from litecrawl.frontier.lost import TRY_SUSPECTS_AFTER
from litecrawl.lease import Lease
from litecrawl.politeness.gate import CLAIM_HORIZON_SEC, PoliteGate
from litecrawl.store.frontier import Frontier
from litecrawl.urls import host_of

__all__ = ["Continuous", "Landing", "claim_continuously"]

log = logging.getLogger("litecrawl")


@dataclass(frozen=True, slots=True)
class Continuous:
    """Claim until nothing is due (``watch``: for ever), ``max_pages`` pages (0: no limit) or
    ``stop``; ``gate``'s host rules shape each claim, ``on_progress`` hears of the counts."""

    gate: PoliteGate
    stop: asyncio.Event
    max_pages: int = 0
    watch: bool = False
    grace: float = 10.0
    on_progress: Callable[[CrawlStats, int], None] | None = None


async def claim_continuously(engine: Engine, lease: Lease, plan: Continuous) -> bool:
    """Run ``plan``; True when ``stop`` interrupted it."""
    gate, stop, on_progress, grace = plan.gate, plan.stop, plan.on_progress, plan.grace
    frontier = engine.frontier
    concurrency = engine.options.n_concurrent
    max_pages = plan.max_pages
    # a strategy's scores decide each next claim: no claims ahead of what can be fetched
    ahead = _ClaimAhead(concurrency, ordered=engine.options.strategy is not None)
    in_flight: dict[asyncio.Task[None], str] = {}
    landed = Landing()  # the tasks of in_flight that finished since the loop last looked
    held: Counter[str] = Counter()  # pages in flight per host: the next claim's room
    claimed_total = 0
    last_recovery = time.monotonic()

    def busy() -> int:  # pages waiting for their host hold no fetch slot: claim past them
        return len(in_flight) - gate.waiting

    async def refill() -> int:
        nonlocal claimed_total
        want = ahead.high_water - busy()
        if max_pages:
            want = min(want, max_pages - claimed_total)
        if want <= 0:
            return 0
        # the fetch slots are the gate's, taken after the host's wait (PoliteGate.slot)
        pages = await engine.claim(want, gate.host_rules(held, ahead.found_none))
        gate.leases_changed()
        for page in pages:
            task = asyncio.create_task(engine.process(page))
            landed.watch(task)
            in_flight[task] = page.norm_url
            held[host_of(page.norm_url)] += 1
        claimed_total += sum(1 for page in pages if page.kind == "page")  # not sitemaps, feeds
        engine.stats.claimed += len(pages)
        ahead.claimed(len(pages), want, len(in_flight))
        return len(pages)

    async def finished(tasks: set[asyncio.Task[None]]) -> None:
        idle = set()
        for task in tasks:
            if not task.cancelled() and (exc := task.exception()) is not None:
                raise exc  # only DatabaseUnusable leaves Engine.process
            host = host_of(in_flight.pop(task))
            held[host] -= 1
            if held[host] <= 0:
                del held[host]
                idle.add(host)
        ahead.finished(len(tasks))
        claims_next = not stop.is_set() and not engine.finished
        claims_next &= not (max_pages and claimed_total >= max_pages)
        await gate.release_hosts(idle, held, claims_next)

    def budget() -> int | None:
        return max_pages - claimed_total if max_pages else None

    async def claiming() -> bool:
        nonlocal claimed_total, last_recovery
        # Pages lost with a worker are tried alone once this run has written some pages (then a
        # loss proves something, and kills from outside, mostly early, seldom land on one:
        # litecrawl.frontier.lost), half its page budget under max_pages, and when nothing
        # else is due.
        tried = False
        told: float | None = -1.0  # the next due time --watch last said it waits for
        last_report = 0.0
        while not stop.is_set():
            if time.monotonic() - last_recovery >= lease.rules.beat_every:
                last_recovery = time.monotonic()
                await engine.recover()  # claims of workers that died meanwhile
            may_claim = not (max_pages and claimed_total >= max_pages) and not engine.finished
            if not tried and _suspects_due(engine.stats, claimed_total, max_pages):
                may_claim = False  # let what is in flight finish, then try the suspects
                if not in_flight:
                    tried = True
                    claimed_total += await engine.suspects(budget(), stop)
                    continue
            if may_claim and busy() <= ahead.refill_at and (ahead.ready or not in_flight):
                claimed = await refill()
                if not claimed and not in_flight and await _flushed(engine):
                    claimed = await refill()  # the links just written may be due pages
                if not claimed and not in_flight:  # pages lost with other workers meanwhile
                    claimed = await engine.suspects(budget(), stop)
                    claimed_total += claimed
                    if claimed:
                        continue  # processed and written: their links may be due pages
                if not claimed and not in_flight:
                    # Not done while a dead worker's claims are still to come back.
                    shared = engine.options.focus is None  # a site crawl waits for no one else
                    if await engine.recover() or await _await_others(lease, stop, shared):
                        continue
                    if await _await_held_back(engine, stop):
                        continue
                    if not plan.watch:
                        break
                    told = await _sleep_until_due(frontier, stop, lease.rules.lease_timeout, told)
                    await engine.recover()
                    continue
            if not in_flight:
                break
            done = await landed.wait(0.25)
            await finished(done)
            if not done and engine.stats.claimed:  # idle moment: push buffered writes out
                await engine.flush()
            if on_progress is not None and time.monotonic() - last_report > 0.5:
                last_report = time.monotonic()
                on_progress(engine.stats, len(in_flight))
        interrupted = stop.is_set()
        if in_flight:
            done, pending = await asyncio.wait(in_flight, timeout=grace if interrupted else None)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await engine.flush()
            if pending:
                await frontier.release([in_flight[t] for t in pending])
        await engine.flush()
        if on_progress is not None:
            on_progress(engine.stats, 0)
        return interrupted

    try:
        return await claiming()
    except DatabaseUnusable:
        for task in in_flight:  # nothing of theirs can be written: the next run takes them
            task.cancel()
        await asyncio.gather(*in_flight, return_exceptions=True)
        raise


def _suspects_due(stats: CrawlStats, claimed: int, max_pages: int) -> bool:
    """Whether a run that has claimed ``claimed`` pages is to try its suspects alone now."""
    written = stats.ok + stats.failed + stats.skipped
    return written > 0 and (written >= TRY_SUSPECTS_AFTER or 0 < max_pages <= 2 * claimed)


class Landing:
    """The tasks watched that finished since :meth:`wait` last returned them.

    The claim loop waits for the first of its ~64 pages in flight to finish, about once for
    every two pages: ``asyncio.wait(in_flight, FIRST_COMPLETED)`` added and removed a done
    callback on every task in flight each time (~9% of the event loop's CPU a kit page under
    cProfile, bench/README.md, issue 29, session 9); here each task gets one callback, once.
    """

    def __init__(self) -> None:
        self._done: set[asyncio.Task[None]] = set()
        self._waiter: asyncio.Future[None] | None = None

    def watch(self, task: asyncio.Task[None]) -> None:
        task.add_done_callback(self._landed)

    def _landed(self, task: asyncio.Task[None]) -> None:
        self._done.add(task)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, timeout: float) -> set[asyncio.Task[None]]:
        """The watched tasks that finished (cancelled ones included) since the last call, as
        soon as there is one, or none after ``timeout`` seconds."""
        if not self._done:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(timeout, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
        done, self._done = self._done, set()
        return done


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# A short claim is made again after this long even if few pages have finished: another
# worker may have released a host's lease, or new links been written.
_SHORT_CLAIM_WAIT_SEC = 0.25


class _ClaimAhead:
    """How many claims to hold: every fetcher busy plus about a quarter second of work waiting
    to start (at least half the concurrency), so the next claim, queued behind a batch write on
    the database thread, does not leave fetchers idle; yet a crash strands little beyond the
    pages being fetched (and the lease gives those back at once). ``ordered`` (a strategy's
    scores pick each next page): nothing waits beyond the fetchers, a claim per free slot."""

    def __init__(self, concurrency: int, ordered: bool = False) -> None:
        self.concurrency = concurrency
        self.ordered = ordered
        self.rate = 0.0  # pages finished per second, over the last second or so
        self._since = time.monotonic()
        self._done = 0
        # after a short claim: pages to finish before the next one (_SHORT_CLAIM_WAIT_SEC at most)
        self._short_wait = 0
        self._finished_since = 0
        self._claimed_at = 0.0
        self._none = False

    @property
    def found_none(self) -> bool:
        """Whether the last claim brought nothing: only then does this worker ask the others
        for a part of the hosts they hold in full (a worker that still finds pages of other
        hosts is busy enough, and sharing costs every holder statements and smaller batches:
        bench/README.md, issue 29 on PostgreSQL, session 8)."""
        return self._none

    def claimed(self, got: int, wanted: int, in_flight: int) -> None:
        """A claim that came back short (too few due pages, or no room left in their hosts:
        this worker's own pages, or other workers' leases) is made again once a few pages
        have finished (an eighth of the concurrency, or all in flight) or a moment has passed,
        not after every page: each is a statement that scans the due pages and, on PostgreSQL,
        takes the claims' lock (with 4 workers on one database, ~40% of the claims brought
        nothing; bench/README.md)."""
        short = got < wanted and not self.ordered
        self._none = got == 0
        self._short_wait = min(max(self.concurrency // 8, 1), in_flight) if short else 0
        self._finished_since = 0
        self._claimed_at = time.monotonic()

    @property
    def ready(self) -> bool:
        """Whether the next claim may be made (see :meth:`claimed`)."""
        return (
            self._finished_since >= self._short_wait
            or time.monotonic() - self._claimed_at >= _SHORT_CLAIM_WAIT_SEC
        )

    def finished(self, n: int) -> None:
        self._finished_since += n
        self._done += n
        elapsed = time.monotonic() - self._since
        if elapsed >= 1.0:
            self.rate, self._done, self._since = self._done / elapsed, 0, time.monotonic()

    @property
    def spare(self) -> int:
        if self.ordered:
            return 0
        return max(self.concurrency // 2, 2, int(self.rate / 4))

    @property
    def high_water(self) -> int:
        return self.concurrency + self.spare

    @property
    def refill_at(self) -> int:
        if self.ordered:
            return self.concurrency - 1
        return self.concurrency + self.spare // 2


async def _flushed(engine: Engine) -> bool:
    """Write what is buffered; whether anything was (its links may be due pages)."""
    before = engine.writer.written
    await engine.flush()
    return engine.writer.written > before


async def _await_others(lease: Lease, stop: asyncio.Event, shared: bool) -> bool:
    """Nothing due here, but other workers hold claims: wait (True) and look again. A live
    worker's pages may bring new links (``shared``: a crawl of the whole frontier, where they
    are this worker's work too; half a second); one that missed its heartbeats may be dead
    (a beat, until it beats again or its lease runs out). False when no claim is out there."""
    now = time.time()
    me = lease.frontier.worker_id
    others = [w for w in await lease.frontier.workers() if w.id != me and w.claims]
    doubtful = [w for w in others if lease.rules.overdue(w, now)]
    if doubtful:
        log.info(
            "waiting for %d claims of %d workers without a heartbeat for %.0fs "
            "(lease_timeout %.0fs)",
            sum(w.claims for w in doubtful),
            len(doubtful),
            now - max(w.heartbeat_at for w in doubtful),
            lease.rules.lease_timeout,
        )
        wait = lease.rules.beat_every
    elif others and shared:
        wait = min(0.5, lease.rules.beat_every)
    else:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=wait)
    return True


# A page a host's politeness holds back (a Retry-After, a Crawl-delay: its host passed over by
# the claims) is waited for when it is due within this long; a page due later (the re-crawl
# schedule's least interval is an hour) is left for the next run.
_HELD_BACK_SEC = 130.0  # two of the default 60 s back-offs after a 429 without Retry-After


async def _await_held_back(engine: Engine, stop: asyncio.Event) -> bool:
    """Nothing claimable, but a page is due (or soon will be) whose host is held back: wait a
    moment (True) and look again. False when nothing is due within ``_HELD_BACK_SEC``."""
    now = time.time()
    o = engine.options
    due = await engine.frontier.next_claimable(now, CLAIM_HORIZON_SEC, o.partition, o.focus)
    wait = None if due is None else due - now
    if wait is None or wait > _HELD_BACK_SEC:
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=min(max(wait, 0.25), 1.0))
    return True


async def _sleep_until_due(
    frontier: Frontier, stop: asyncio.Event, lease_timeout: float, told: float | None
) -> float | None:
    """Until the next page is due, but never longer than a lease: a worker that dies meanwhile
    (another process, another machine) leaves claims that only a recovery makes due again.
    Says what it waits for at INFO when that is not ``told`` (what it said last); returns it."""
    summary = await frontier.summary(int(time.time()), hosts=0)
    due = summary.next_due
    if due != told:
        if due is None:
            log.info("watching: no page is scheduled; looking again every minute")
        else:
            at = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(due))
            log.info("watching: next page due at %s (in %.0f s); waiting", at, due - time.time())
    wait = 60.0 if due is None else max(1.0, due - time.time())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=min(wait, 300.0, lease_timeout))
    return due
