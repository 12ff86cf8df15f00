"""Worker processes fed through pipes by the event loop itself (no helper threads).

``concurrent.futures.ProcessPoolExecutor`` moves every task through a feeder thread, a lock-guarded
queue and a result-manager thread; in a crawler those threads compete with the event loop for the
GIL on every page (measured: ~1 ms of CPU per page on the benchmark site), and multiprocessing
makes every worker re-run the program's ``__main__`` (for the CLI: over a second of imports).
Here each worker is ``python -m litecrawl.index.pool module:function``: tasks go to its stdin,
results come back on its stdout, both as length-prefixed pickles, through asyncio's non-blocking
pipe transports. A worker leaves at the end of its input (the crawler finished, or died:
``kill -9`` leaves no orphans); a worker that dies fails only the tasks it held, and a new one
takes its place::

    async with WorkerPool("litecrawl.index.work:analyze", workers=2) as pool:
        result = await pool.run(url, body, ...)

The function is imported by the workers only, so the crawler process never loads what only the
workers need. Workers start in the background: ``run`` waits for the first one, the crawl does not.
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib
import itertools
import logging
import os
import pickle
import select
import signal
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, BinaryIO, Self, cast

__all__ = ["NoWorker", "WorkerDied", "WorkerPool"]

log = logging.getLogger("litecrawl.index")

_HEADER = struct.Struct("<Q")  # payload length
# tasks queued per worker: the next ones are already in the pipe when one finishes, so a worker
# can hold a result back while it works on the next (_BATCH)
_DEPTH = 4
_BATCH = 2  # results a worker sends in one write when its next task was already waiting
_READ = 1 << 16  # bytes a worker asks of its task pipe at a time (a pipe's default capacity)
_EXIT_GRACE = 10.0  # seconds a worker may take to finish its task after its input closed
_MAX_FAILED_STARTS = 3  # workers in a row that exit without one answer: stop starting them
# A worker is one core's work already (a pool has a worker a core): numpy's OpenBLAS on its
# default one thread a core spun its threads after every product large enough to share (the
# simhash's tally of a 95 KiB page): 800 -> ~50 us of CPU a Python-docs page (bench/README.md,
# issue 29, session 10)
_WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1"}  # over the environment at the start, not at import
# glibc keeps the memory a large page's parse freed for the process: the trees lxml and
# resiliparse build of LilyPond's 7 MB one-page manual (~290 MB) stayed in a worker's RSS for
# the rest of the crawl; after a task this large the worker gives them back (malloc_trim: 327 ->
# 91 MB for 28 ms of CPU after that page; docs/architecture.md#the-way-of-a-page)
_TRIM_AFTER = 1 << 20


class WorkerDied(Exception):
    """The worker process running the task exited (killed, out of memory, a crash in C code)."""


class NoWorker(Exception):
    """No worker is running and none is starting: they could not be started."""


def _serve(target: str, tasks: int, results: BinaryIO) -> None:
    """The worker's loop: read a task, run ``target``, write the result; leave at end of input.
    A result waits while the next task is already here (up to :data:`_BATCH` of them): the
    crawler then reads them in one wake-up instead of one each (docs/architecture.md)."""
    module, _, name = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), name)
    trim = _trimmer()
    inbox = _Inbox(tasks)
    held: list[bytes] = []
    while True:
        if held and (len(held) >= _BATCH or not inbox.ready()):
            results.write(b"".join(held))
            results.flush()
            held.clear()
        frame = inbox.next()
        if frame is None:  # the crawler closed the pipe (or is gone)
            if held:
                results.write(b"".join(held))
                results.flush()
            return
        task_id, args = pickle.loads(frame)
        try:
            reply = (task_id, True, fn(*args))
        except Exception as exc:  # fn is meant never to raise; report it if it does
            reply = (task_id, False, f"{type(exc).__name__}: {exc}")
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        held.append(_HEADER.pack(len(payload)) + payload)
        if trim is not None and len(frame) >= _TRIM_AFTER:
            del args, reply
            trim()


def _trimmer() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``, or None where there is none (musl, macOS)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    return lambda: trim(0)


class _Inbox:
    """The worker's end of the task pipe: whole frames, and whether one is waiting."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.data = bytearray()
        self.at = 0  # where the next frame starts in data

    def _end(self) -> int | None:
        """Where the next frame ends in data, if all of it is there."""
        data, at = self.data, self.at
        if len(data) - at < _HEADER.size:
            return None
        end = at + _HEADER.size + _HEADER.unpack_from(data, at)[0]
        return end if len(data) >= end else None

    def ready(self) -> bool:
        """A task (or the end of input) can be read now, without waiting for the crawler."""
        return self._end() is not None or bool(select.select([self.fd], [], [], 0)[0])

    def next(self) -> bytes | None:
        """The next task's pickle, waiting for it; None at the end of input."""
        while (end := self._end()) is None:
            if self.at:
                del self.data[: self.at]
                self.at = 0
            chunk = os.read(self.fd, _READ)
            if not chunk:
                return None
            self.data += chunk
        frame = bytes(self.data[self.at + _HEADER.size : end])
        self.at = end
        return frame


@dataclass(eq=False)
class _Worker(asyncio.SubprocessProtocol):
    """One worker process as the event loop sees it: its pipes and the tasks it holds."""

    on_exit: Callable[[_Worker], None]
    process: asyncio.SubprocessTransport | None = None
    tasks: asyncio.WriteTransport | None = None
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    buffer: bytearray = field(default_factory=bytearray)
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    answered: int = 0  # results received: a worker that never answered may not start at all
    outbox: list[bytes] = field(default_factory=list)  # tasks to write at the loop's next turn

    def send(self, frame: bytes) -> None:
        """Queue a task for the worker: the tasks queued in one turn of the event loop go in one
        write (one system call, one wake-up of the worker)."""
        if not self.outbox:
            asyncio.get_running_loop().call_soon(self._write_outbox)
        self.outbox.append(frame)

    def _write_outbox(self) -> None:
        frames, self.outbox = self.outbox, []
        if self.tasks is not None and not self.tasks.is_closing():  # else _exited failed them
            self.tasks.write(frames[0] if len(frames) == 1 else b"".join(frames))

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return  # stderr is inherited, not piped
        buffer = self.buffer
        buffer += data
        at = 0  # the results in this data are read in place, and cut from the buffer once
        while len(buffer) - at >= _HEADER.size:
            end = at + _HEADER.size + _HEADER.unpack_from(buffer, at)[0]
            if len(buffer) < end:
                break
            with memoryview(buffer) as view:
                task_id, ok, value = pickle.loads(view[at + _HEADER.size : end])
            at = end
            self.answered += 1
            future = self.pending.pop(task_id, None)
            if future is not None and not future.done():
                if ok:
                    future.set_result(value)
                else:
                    future.set_exception(RuntimeError(value))
        del buffer[:at]

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        # The end of stdout, not process_exited (which may come before the last results are
        # read): every result the worker wrote has been delivered by now.
        if fd == 1:
            self.on_exit(self)

    def process_exited(self) -> None:
        self.exited.set()


class WorkerPool:
    """``workers`` processes running ``target``, a module-level function named "module:function"."""

    def __init__(self, target: str, workers: int) -> None:
        if ":" not in target:
            raise ValueError(f"target must be 'module:function', not {target!r}")
        self.target = target
        self.size = workers
        self._workers: list[_Worker] = []
        self._ids = itertools.count()
        self._free: asyncio.Condition | None = None
        self._starting: set[asyncio.Task[None]] = set()
        self._failed_starts = 0
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
            try:
                await asyncio.wait_for(worker.exited.wait(), _EXIT_GRACE)
            except TimeoutError:
                if worker.process is not None:
                    worker.process.kill()
                await worker.exited.wait()
            if worker.process is not None:
                worker.process.close()
            for future in worker.pending.values():
                future.cancel()

    async def run(self, *args: Any) -> Any:
        """``fn(*args)`` in a worker; raises :class:`WorkerDied` if that worker dies meanwhile,
        :class:`NoWorker` if none can be started. A worker that dies before its first answer
        most likely failed to start: the task goes to the next one."""
        if self._free is None or self._closing:
            raise RuntimeError("use 'async with WorkerPool(...)' before calling run()")
        task_id = next(self._ids)
        payload = pickle.dumps((task_id, args), protocol=pickle.HIGHEST_PROTOCOL)
        frame = _HEADER.pack(len(payload)) + payload
        while True:
            worker = await self._ready_worker()
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            worker.pending[task_id] = future
            worker.send(frame)
            try:
                return await future
            except WorkerDied:
                if worker.answered:
                    raise
            finally:
                worker.pending.pop(task_id, None)
                async with self._free:
                    self._free.notify()

    async def _ready_worker(self) -> _Worker:
        assert self._free is not None
        async with self._free:
            await self._free.wait_for(
                lambda: self._least_busy() is not None or not (self._workers or self._starting)
            )
        worker = self._least_busy()
        if worker is None:
            raise NoWorker("no worker could be started (see the log)")
        return worker

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers."""
        return [w.process.get_pid() for w in self._workers if w.process is not None]

    def _least_busy(self) -> _Worker | None:
        ready = [w for w in self._workers if w.tasks is not None and len(w.pending) < _DEPTH]
        return min(ready, key=lambda w: len(w.pending), default=None)

    async def _start(self) -> None:
        loop = asyncio.get_running_loop()
        worker = _Worker(self._exited)
        process, _ = await loop.subprocess_exec(
            lambda: worker,
            sys.executable,
            "-m",
            __name__,
            self.target,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=None,  # warnings from the work go where the crawler's go
            env={**os.environ, **_WORKER_ENV},
        )
        worker.process = process
        # a WriteTransport in behaviour (uvloop's is not a subclass of asyncio's)
        worker.tasks = cast("asyncio.WriteTransport", process.get_pipe_transport(0))
        self._workers.append(worker)

    def _exited(self, worker: _Worker) -> None:
        """The worker's output ended (it exited or died): fail the tasks it held, start another."""
        worker.tasks = None
        for future in worker.pending.values():
            if not future.done():
                pid = worker.process.get_pid() if worker.process is not None else "?"
                future.set_exception(WorkerDied(f"worker {pid} died"))
        if worker in self._workers:
            self._workers.remove(worker)
            if worker.process is not None:
                worker.process.close()
        self._failed_starts = 0 if worker.answered else self._failed_starts + 1
        if self._failed_starts >= _MAX_FAILED_STARTS:
            log.error(
                "%d analysis workers in a row exited before their first answer", self._failed_starts
            )
        elif not self._closing:
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


def _main() -> None:
    """``python -m litecrawl.index.pool module:function``: one worker, until end of input."""
    # Ctrl+C reaches the whole process group: the crawler decides, and closes our input when done
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # stdout is the result channel: anything else printing there (a library's print) goes to
    # stderr instead
    results = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _serve(sys.argv[1], sys.stdin.fileno(), results)


if __name__ == "__main__":
    _main()
