"""WatchedPipe on asyncio: one wait watches two pipes, a read end stays registered between waits, and
the loop never keeps watching a descriptor that nobody waits on or that was closed; and the short
poll a reader makes before it sleeps.

The stdio transport's own tests (test_client_stdio.py) run real servers through these pipes on
asyncio and trio; these tests pin what only the asyncio path can get wrong.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

import anyio
import pytest

from mcplab.transports.pipes import WatchedPipe


@pytest.fixture
def pipes():
    """Two (reader, write fd) pairs, closed afterwards."""
    made = []
    for _ in range(2):
        r, w = os.pipe()
        made.append((WatchedPipe(r), w))
    yield made
    for pipe, w in made:
        os.close(pipe.fd)  # no event loop runs any more to hear of a close(): the transport's end_now() does this too
        try:
            os.close(w)
        except OSError:
            pass  # a test closed it: the end of file


def test_a_wait_on_two_pipes_wakes_for_the_second_and_read_now_returns_its_bytes_once(pipes):
    (out, _), (err, err_w) = pipes

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, os.write, err_w, b"log line\n")
        await asyncio.wait_for(out.wait_readable(err), 5)
        assert out.read_now() is None
        assert err.read_now() == b"log line\n"
        assert err.read_now() is None

    asyncio.run(main())


def test_bytes_in_order_across_waits_and_the_end_of_file(pipes):
    (out, out_w), _ = pipes

    async def main() -> None:
        loop = asyncio.get_running_loop()
        got = []
        for chunk in (b"one\n", b"two\n"):
            loop.call_later(0.005, os.write, out_w, chunk)
            while (data := out.read_now()) is None:
                await asyncio.wait_for(out.wait_readable(), 5)
            got.append(data)
        assert got == [b"one\n", b"two\n"]
        loop.call_later(0.005, os.close, out_w)
        await asyncio.wait_for(out.wait_readable(), 5)
        assert out.read_now() == b""

    asyncio.run(main())


def test_bytes_that_come_while_nobody_waits_end_the_watch(pipes):
    (out, out_w), _ = pipes

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.005, os.write, out_w, b"reply\n")
        await asyncio.wait_for(out.wait_readable(), 5)
        assert out.read_now() == b"reply\n"
        os.write(out_w, b"a notification nobody waits for\n")
        await asyncio.sleep(0.02)  # a few turns: level-triggered, the loop would report it on each
        assert loop.remove_reader(out.fd) is False  # no longer watched: no busy loop
        await asyncio.wait_for(out.wait_readable(), 5)  # a later wait watches it again, and finds the bytes
        assert out.read_now() == b"a notification nobody waits for\n"

    asyncio.run(main())


def test_closing_wakes_the_wait_with_closed_resource_error_and_ends_the_watch():
    r, w = os.pipe()
    pipe = WatchedPipe(r)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.01, pipe.close)
        with pytest.raises(anyio.ClosedResourceError):
            await asyncio.wait_for(pipe.wait_readable(), 5)
        assert loop.remove_reader(r) is False
        with pytest.raises(anyio.ClosedResourceError):
            await pipe.wait_readable()

    try:
        asyncio.run(main())
    finally:
        os.close(w)


def test_a_cancelled_wait_leaves_a_pipe_that_still_works(pipes):
    (out, out_w), _ = pipes

    async def main() -> None:
        with anyio.move_on_after(0.01):
            await out.wait_readable()
        os.write(out_w, b"later\n")
        await asyncio.wait_for(out.wait_readable(), 5)
        assert out.read_now() == b"later\n"

    asyncio.run(main())


def test_a_wait_returns_at_once_when_a_watch_read_bytes_nobody_took(pipes):
    (out, out_w), (err, err_w) = pipes

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(0.005, os.write, err_w, b"log\n")
        await asyncio.wait_for(out.wait_readable(err), 5)  # the watch of err read b"log\n" to wake us
        await asyncio.wait_for(err.wait_readable(), 1)  # not taken yet: no wait, though the pipe is empty
        assert err.read_now() == b"log\n"

    asyncio.run(main())


# --- poll: the short look before a reader sleeps ------------------------------------------------

def test_poll_finds_bytes_that_land_within_the_window_and_read_now_returns_them(pipes):
    (out, out_w), _ = pipes
    writer = threading.Timer(0.02, os.write, (out_w, b'{"id":1}\n'))
    writer.start()
    try:
        assert out.poll(5.0) is True  # found long before the window ends
    finally:
        writer.join()
    assert out.read_now() == b'{"id":1}\n'
    assert out.read_now() is None


def test_poll_gives_up_after_its_window_with_nothing_read(pipes):
    (out, _), _ = pipes
    started = time.perf_counter()
    assert out.poll(0.02) is False
    assert 0.02 <= time.perf_counter() - started < 1
    assert out.read_now() is None


def test_poll_reports_the_end_of_file_for_read_now_to_say(pipes):
    (out, out_w), _ = pipes
    os.close(out_w)
    assert out.poll(1.0) is True
    assert out.read_now() == b""
