"""litecrawl.index.pool: worker processes fed through pipes by the event loop."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from litecrawl.index.pool import NoWorker, WorkerPool


def test_results_come_back_to_the_task_that_sent_them() -> None:
    async def run() -> list[object]:
        async with WorkerPool("operator:mul", workers=2) as pool:
            return list(await asyncio.gather(*(pool.run(i, "ab") for i in range(20))))

    assert asyncio.run(run()) == ["ab" * i for i in range(20)]


def test_what_a_worker_prints_does_not_corrupt_its_results(
    capfd: pytest.CaptureFixture[str],
) -> None:
    async def run() -> list[object]:
        async with WorkerPool("builtins:print", workers=1) as pool:
            return [await pool.run("hello from the worker"), await pool.run("again")]

    assert asyncio.run(run()) == [None, None]
    assert "hello from the worker" in capfd.readouterr().err


def test_an_exception_in_the_function_is_raised_in_the_caller() -> None:
    async def run() -> object:
        async with WorkerPool("operator:truediv", workers=1) as pool:
            return await pool.run(1, 0)

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        asyncio.run(run())


def test_workers_that_cannot_start_are_given_up_on(caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> object:
        async with WorkerPool("litecrawl.no_such_module:fn", workers=1) as pool:
            return await asyncio.wait_for(pool.run(1), 60)

    with caplog.at_level(logging.ERROR, logger="litecrawl"), pytest.raises(NoWorker):
        asyncio.run(run())
    assert any("before their first answer" in r.getMessage() for r in caplog.records)


def test_bad_target() -> None:
    with pytest.raises(ValueError, match="module:function"):
        WorkerPool("operator.mul", workers=1)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_worker_runs_numpys_blas_on_one_thread() -> None:
    # numpy's OpenBLAS starts a thread a core at import and spins them after each product it
    # shares out: in a worker (one core's work already) it must not
    async def run() -> str:
        async with WorkerPool("numpy:ones", workers=1) as pool:
            await pool.run(3)
            return Path(f"/proc/{pool.pids[0]}/status").read_text()

    threads = re.search(r"Threads:\s+(\d+)", asyncio.run(run()))
    assert threads is not None and int(threads.group(1)) == 1
