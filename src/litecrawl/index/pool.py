"""Worker processes fed through pipes by the event loop itself (no helper threads).

``concurrent.futures.ProcessPoolExecutor`` moves every task through a feeder thread, a lock-guarded
queue and a result-manager thread; in a crawler those threads compete with the event loop for the
GIL on every page (measured: ~1 ms of CPU per page on the benchmark site). Here each worker has two
pipes of its own: tasks go out through a non-blocking asyncio write transport, results come back
through an asyncio read protocol, both as length-prefixed pickles. A worker leaves when its task
pipe closes (the crawler finished, or died: ``kill -9`` leaves no orphans), and a worker that dies
fails only the tasks it held, then is replaced. The function is named ("module:function") and
imported by the workers only, so the crawler process never loads what only the workers need::

    async with WorkerPool("litecrawl.index.work:analyze", workers=2) as pool:
        result = await pool.run(url, body, ...)

Workers start in the background: ``run`` waits for the first one, the crawl does not.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from types import TracebackType
from typing import Any, Self

__all__ = ["WorkerDied", "WorkerPool"]

log = logging.getLogger("litecrawl.index")

_HEADER = struct.Struct("<Q")  # payload length
_DEPTH = 2  # tasks queued per worker: the next one is already in the pipe when one finishes


class WorkerDied(Exception):
    """The worker process running the task exited (killed, out of memory, a crash in C code)."""


def _serve(tasks: Connection, results: Connection, target: str) -> None:
    """The worker's loop: read a task, run ``target``, write the result; leave at end of input."""
    module, _, name = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), name)
    # Ctrl+C reaches the whole process group: the crawler decides, and closes the pipe when done
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rfile = os.fdopen(os.dup(tasks.fileno()), "rb")
    wfile = os.fdopen(os.dup(results.fileno()), "wb")
    tasks.close()
    results.close()
    while True:
        header = rfile.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the crawler closed the pipe (or is gone)
        task_id, args = pickle.loads(rfile.read(_HEADER.unpack(header)[0]))
        try:
            reply = (task_id, True, fn(*args))
        except Exception as exc:  # fn is meant never to raise; report it if it does
            reply = (task_id, False, f"{type(exc).__name__}: {exc}")
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        wfile.write(_HEADER.pack(len(payload)) + payload)
        wfile.flush()


@dataclass(eq=False)
class _Worker(asyncio.Protocol):
    """One worker process as the event loop sees it: its task transport and pending futures."""

    process: multiprocessing.process.BaseProcess
    on_exit: Callable[[_Worker], None]
    tasks: asyncio.WriteTransport | None = None
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    buffer: bytearray = field(default_factory=bytearray)

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        while len(buffer) >= _HEADER.size:
            size = _HEADER.unpack_from(buffer)[0]
            end = _HEADER.size + size
            if len(buffer) < end:
                return
            task_id, ok, value = pickle.loads(memoryview(buffer)[_HEADER.size : end])
            del buffer[:end]
            future = self.pending.pop(task_id, None)
            if future is not None and not future.done():
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(RuntimeError(value))

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_exit(self)


class WorkerPool:
    """``workers`` processes running ``target``, a module-level function named "module:function"."""

    def __init__(
        self,
        target: str,
        workers: int,
        context: ForkServerContext | SpawnContext | None = None,
    ) -> None:
        if ":" not in target:
            raise ValueError(f"target must be 'module:function', not {target!r}")
        self.target = target
        self.size = workers
        self.context = context or multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        self._ids = itertools.count()
        self._free: asyncio.Condition | None = None
        self._starting: set[asyncio.Task[None]] = set()
        self._closing = False

    async def __aenter__(self) -> Self:
        self._free = asyncio.Condition()
        self._starting = {asyncio.create_task(self._replace()) for _ in range(self.size)}
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing = True
        await asyncio.gather(*self._starting, return_exceptions=True)
        workers, self._workers = self._workers, []
        for worker in workers:
            if worker.tasks is not None:
                worker.tasks.close()  # end of input: the worker finishes its task and leaves
        for worker in workers:
            await asyncio.to_thread(worker.process.join, 10.0)
            if worker.process.is_alive():
                worker.process.kill()
                await asyncio.to_thread(worker.process.join)
            for future in worker.pending.values():
                future.cancel()

    async def run(self, *args: Any) -> Any:
        """``fn(*args)`` in a worker; raises :class:`WorkerDied` if that worker dies meanwhile."""
        if self._free is None or self._closing:
            raise RuntimeError("use 'async with WorkerPool(...)' before calling run()")
        async with self._free:
            await self._free.wait_for(
                lambda: self._least_busy() is not None or not (self._workers or self._starting)
            )
        worker = self._least_busy()
        if worker is None or worker.tasks is None:
            raise WorkerDied("no analysis worker could be started")
        task_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.pending[task_id] = future
        payload = pickle.dumps((task_id, args), protocol=pickle.HIGHEST_PROTOCOL)
        worker.tasks.write(_HEADER.pack(len(payload)) + payload)
        try:
            return await future
        finally:
            worker.pending.pop(task_id, None)
            async with self._free:
                self._free.notify()

    def _least_busy(self) -> _Worker | None:
        ready = [w for w in self._workers if w.tasks is not None and len(w.pending) < _DEPTH]
        return min(ready, key=lambda w: len(w.pending), default=None)

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        task_r, task_w = self.context.Pipe(duplex=False)
        result_r, result_w = self.context.Pipe(duplex=False)
        process = self.context.Process(
            target=_serve,
            args=(task_r, result_w, self.target),
            name="litecrawl-worker",
            daemon=True,
        )
        await asyncio.to_thread(process.start)
        task_r.close()
        result_w.close()
        worker = _Worker(process, self._exited)
        tasks_file = os.fdopen(os.dup(task_w.fileno()), "wb", buffering=0)
        results_file = os.fdopen(os.dup(result_r.fileno()), "rb", buffering=0)
        task_w.close()
        result_r.close()
        transport, _ = await loop.connect_write_pipe(asyncio.Protocol, tasks_file)
        worker.tasks = transport
        await loop.connect_read_pipe(lambda: worker, results_file)
        self._workers.append(worker)

    def _exited(self, worker: _Worker) -> None:
        """The worker's result pipe closed: it is gone. Fail its tasks; start a new one."""
        if worker.tasks is not None and not worker.tasks.is_closing():
            worker.tasks.abort()
        worker.tasks = None
        worker.process.join(0)  # reap it
        for future in worker.pending.values():
            if not future.done():
                future.set_exception(WorkerDied(f"worker {worker.process.pid} died"))
        if worker in self._workers:
            self._workers.remove(worker)
        if not self._closing:
            self._starting.add(asyncio.get_running_loop().create_task(self._replace()))

    async def _replace(self) -> None:
        """Start a worker; wake whoever waits for one (also when it could not be started)."""
        try:
            await self._start()
        except Exception:
            log.exception("could not start an analysis worker")
        finally:
            task = asyncio.current_task()
            if task is not None:
                self._starting.discard(task)
            if self._free is not None:
                async with self._free:
                    self._free.notify_all()
