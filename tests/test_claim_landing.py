"""The claim loop's wait for finished pages (litecrawl.claiming.Landing): what
``asyncio.wait(in_flight, FIRST_COMPLETED)`` returned, without a callback on every task in
flight at every wait."""

from __future__ import annotations

import asyncio

from litecrawl.claiming import Landing


async def _after(delay: float, fail: bool = False) -> None:
    await asyncio.sleep(delay)
    if fail:
        raise ValueError("page failed")


def test_a_task_that_finished_before_the_wait_is_returned_at_once() -> None:
    async def main() -> None:
        landed = Landing()
        task = asyncio.create_task(_after(0))
        landed.watch(task)
        await asyncio.sleep(0.01)
        assert await landed.wait(60) == {task}
        slow = asyncio.create_task(_after(60))
        landed.watch(slow)
        assert await landed.wait(0.01) == set()  # nothing new: each task is returned once
        slow.cancel()
        assert await landed.wait(60) == {slow}  # a cancelled task has finished too

    asyncio.run(main())


def test_the_wait_ends_with_the_first_task_to_finish_and_returns_all_finished_by_then() -> None:
    async def main() -> None:
        landed = Landing()
        tasks = [asyncio.create_task(_after(d, fail=d == 0.02)) for d in (0.02, 0.02, 60)]
        for task in tasks:
            landed.watch(task)
        done = await landed.wait(60)
        assert tasks[0] in done and tasks[2] not in done
        done |= await landed.wait(60) if len(done) < 2 else set()
        assert done == set(tasks[:2])
        assert isinstance(tasks[0].exception(), ValueError)  # the loop reads it as before
        tasks[2].cancel()
        await asyncio.gather(tasks[2], return_exceptions=True)

    asyncio.run(main())


def test_a_wait_with_nothing_finished_returns_nothing_after_its_timeout() -> None:
    async def main() -> None:
        landed = Landing()
        task = asyncio.create_task(_after(60))
        landed.watch(task)
        assert await landed.wait(0.01) == set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
