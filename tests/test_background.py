"""The task group a connection owns for the tasks it starts for later (mcplab/transports/background.py),
on asyncio and on trio: started from synchronous code, each task a child of the group, closing
cancels and waits for every one, a failure is raised at close and not lost."""

from __future__ import annotations

import anyio
import pytest

from mcplab.transports.background import Background

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request) -> str:
    return request.param


async def test_a_job_started_from_synchronous_code_runs_and_says_when_it_is_done():
    owner, ran = Background(), []

    def click() -> object:  # what a widget's click handler can do: no await
        return owner.start_soon(lambda: _append(ran, "ran"))

    job = click()
    with anyio.fail_after(5):
        await job.wait()
    assert ran == ["ran"] and job.done()
    await owner.aclose()


async def test_closing_cancels_every_running_job_and_waits_for_each():
    owner, ended = Background(), []
    jobs = [owner.start_soon(lambda n=n: _sleep_then_note(ended, n)) for n in range(3)]
    await anyio.sleep(0.05)
    with anyio.fail_after(5):
        await owner.aclose()
    assert sorted(ended) == ["cancelled 0", "cancelled 1", "cancelled 2"] and all(job.done() for job in jobs)
    with pytest.raises(RuntimeError, match="closed"):
        owner.start_soon(lambda: anyio.sleep(0))


async def test_stopping_one_job_leaves_the_others_running():
    owner, ended = Background(), []
    first, second = (owner.start_soon(lambda n=n: _sleep_then_note(ended, n)) for n in range(2))
    await anyio.sleep(0.05)
    await first.stop()
    assert ended == ["cancelled 0"] and not second.done()
    await owner.aclose()
    assert ended == ["cancelled 0", "cancelled 1"]


async def test_a_job_stopped_or_closed_before_it_ever_ran_still_ends():
    owner, ended = Background(), []
    early = owner.start_soon(lambda: _sleep_then_note(ended, 0))
    with anyio.fail_after(5):
        await early.stop()  # the host has not even opened its group yet
        later = owner.start_soon(lambda: _sleep_then_note(ended, 1))
        await owner.aclose()  # nor has this one taken a step
    assert early.done() and later.done()


async def test_a_job_that_fails_ends_the_group_and_its_error_comes_out_of_close():
    owner, ended = Background(), []
    sleeper = owner.start_soon(lambda: _sleep_then_note(ended, 0))
    owner.start_soon(_fail)
    with anyio.fail_after(5):
        await sleeper.wait()  # the failure cancelled its sibling
    assert ended == ["cancelled 0"]
    with pytest.raises(BaseException) as raised:
        await owner.aclose()
    group = raised.value  # an exception group: an anyio task group's way of saying a child failed
    assert [str(e) for e in group.exceptions if isinstance(e, ValueError)] == ["the job broke"]


async def test_closing_a_background_that_never_started_anything_is_a_no_op():
    owner = Background()
    await owner.aclose()
    await owner.aclose()


async def _append(into: list, value: str) -> None:
    await anyio.sleep(0)
    into.append(value)


async def _sleep_then_note(into: list, n: int) -> None:
    try:
        await anyio.sleep(30)
    except anyio.get_cancelled_exc_class():
        into.append(f"cancelled {n}")
        raise


async def _fail() -> None:
    await anyio.sleep(0.01)
    raise ValueError("the job broke")
