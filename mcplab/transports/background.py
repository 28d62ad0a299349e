"""A task group that outlives the call that opened it: the owner of the tasks a connection starts
for later (an HTTP transport's stream readers, the playground's button work).

Theory of operation
-------------------
anyio's rule is that every task lives in a task group, and a task group belongs to the task that
entered it: it is left when that task's ``async with`` ends. A connection here outlives every caller:
a notebook opens it in one cell and uses it in the next, and a widget's click handler returns before
the work it asked for starts. So the tasks such a connection starts cannot be children of the
caller's group. :class:`Background` is their owner instead::

    background = Background()
    job = background.start_soon(work)  # the first start begins a host task, which opens a task group;
                                       # work() runs as its child, and job.stop() cancels it and waits
    await background.aclose()          # cancels every child, waits for each, then the host ends

Every task is a child of the one group, so closing cancels all of them and waits for each; none
outlives its owner, none is forgotten. The host itself is the one task started outside a task
group, here and nowhere else, because anyio has no other way to begin one for a caller that will
not wait (``start_soon`` is synchronous, so a click handler can call it): on asyncio a task whose
reference the owner keeps, on trio a system task (trio's own name for a task that belongs to the
run rather than to a caller). The host never raises: a child that fails ends the group, and its
exception is raised by :meth:`Background.aclose`.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

__all__ = ["Background", "Job"]


class Job:
    """One task of a :class:`Background`: it can be cancelled and waited for, and says when it is done."""

    def __init__(self, body: Callable[[], Awaitable[Any]]) -> None:
        self.scope = anyio.CancelScope()
        self.finished = anyio.Event()
        self._body = body

    async def _run(self) -> None:
        try:
            with self.scope:
                await self._body()
        finally:
            self.finished.set()

    def done(self) -> bool:
        return self.finished.is_set()

    async def stop(self) -> None:
        """Cancel the task and wait until it has ended (at once if it has already)."""
        self.scope.cancel()
        await self.finished.wait()

    async def wait(self) -> None:
        await self.finished.wait()


class Background:
    """An anyio task group held open by a host task from the first :meth:`start_soon` until :meth:`aclose`."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._waiting: list[Job] = []     # started before the host had its group open (at most a few)
        self._hosted = False
        self._closing = anyio.Event()
        self._ended = anyio.Event()
        self._handle: Any = None          # asyncio keeps only weak references to tasks: this is the strong one
        self.failure: BaseException | None = None

    def start_soon(self, body: Callable[[], Awaitable[Any]]) -> Job:
        """Start ``body()`` as a child of the group (the first call starts the host); the :class:`Job`
        cancels it and waits for it. Synchronous, so a click handler can call it."""
        if self._closing.is_set():
            raise RuntimeError("this background was closed: nothing more can start in it")
        job = Job(body)
        if self._group is not None:
            self._group.start_soon(job._run)
        else:
            self._waiting.append(job)
            if not self._hosted:
                self._spawn_host()
        return job

    def _spawn_host(self) -> None:
        self._hosted = True
        try:
            import asyncio

            self._handle = asyncio.get_running_loop().create_task(self._host())
        except RuntimeError:  # no asyncio loop running, so trio
            import trio

            trio.lowlevel.spawn_system_task(self._host)

    async def _host(self) -> None:
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                for job in self._waiting:
                    group.start_soon(job._run)
                self._waiting.clear()
                await self._closing.wait()
                group.cancel_scope.cancel()
        except BaseException as exc:  # a child failed (or the run is ending): kept for aclose(), never raised here
            self.failure = exc
        finally:
            self._group = None
            for job in self._waiting:  # never started: say they are over, so nobody waits for them
                job.finished.set()
            self._waiting.clear()
            self._ended.set()

    def close_soon(self) -> None:
        """Ask the host to cancel what still runs and end, without waiting (a job may call it for its own
        background when it is the last work there); :meth:`aclose` waits."""
        self._closing.set()

    async def aclose(self) -> None:
        """Cancel every child, wait for all of them and for the host; raise what a child raised. Safe twice.
        Never from inside one of its own jobs: that job would wait for itself."""
        self._closing.set()
        if not self._hosted:
            return
        await self._ended.wait()
        failure, self.failure = self.failure, None
        if failure is not None and not isinstance(failure, anyio.get_cancelled_exc_class()):
            raise failure
