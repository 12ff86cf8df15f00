"""A host's concurrent slots in one worker: a semaphore whose size can change while it is held.

The size is this worker's share of the host's slots (its lease in the database), which moves
while pages of the host are in flight: it shrinks when more workers want the host and grows when
they leave (docs/scaling.md#workers). A smaller size stops new starts until enough fetches have
finished; fetches already running are never cut off, and the lease in the database is kept at
least as large as what may be held here until the new size applies (the larger of
:attr:`HostSlots.used` and :attr:`HostSlots.limit`), so all workers together never exceed the
host's slots.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["HostSlots"]


class HostSlots:
    """``await acquire()`` ... ``release()``, at most :attr:`limit` held at once."""

    __slots__ = ("_waiters", "limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        while self.used >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                self._waiters.remove(waiter)
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken, then cancelled: its turn goes to the next one
                raise
            self._waiters.remove(waiter)
        self.used += 1

    def release(self) -> None:
        self.used -= 1
        self._wake()

    def resize(self, limit: int) -> None:
        """A new size: larger wakes waiters at once, smaller holds back the next starts."""
        self.limit = limit
        self._wake()

    def _wake(self) -> None:
        free = self.limit - self.used
        for waiter in self._waiters:  # in turn; one woken and not yet run counts as taken
            if free <= 0:
                break
            if waiter.cancelled():
                continue
            if not waiter.done():
                waiter.set_result(None)
            free -= 1
