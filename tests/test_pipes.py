"""Reader and Writer (mcplab/pipes.py): bytes in order, nothing lost to a cancel, a blocking
descriptor left blocking, a thread where the loop cannot watch, half a message never abandoned.

Each runs on asyncio and trio, and the reading ones through the threads of the Windows column too.
"""

from __future__ import annotations

import os

import anyio
import pytest

from mcplab import portable
from mcplab.pipes import CHUNK, Reader, Writer

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param


@pytest.fixture(params=["watched", "threads"])
def column(request, monkeypatch):
    monkeypatch.setattr(portable, "WATCHES_PIPES", request.param == "watched")
    return request.param


@pytest.fixture
def pipe():
    read, write = os.pipe()
    ends = {"write": write, "read": read}
    yield ends
    for fd in ends.values():  # the write end first: a reading thread then meets end of file
        try:
            os.close(fd)
        except OSError:
            pass


def reader_of(pipe: dict, column: str) -> Reader:
    if column == "watched":
        os.set_blocking(pipe["read"], False)  # as the stdio transport makes its own ends
        return Reader(pipe["read"])
    return Reader(pipe.pop("read"))  # a thread will own it and close it at end of file: not ours to close


async def read_all(reader: Reader) -> bytes:
    got = b""
    while data := await reader.read():
        got += data
    return got


async def test_bytes_come_in_order_then_the_end_of_file(column, pipe):
    reader = reader_of(pipe, column)
    os.write(pipe["write"], b"one\n")
    assert await reader.read() == b"one\n"
    os.write(pipe["write"], b"two\n")
    os.close(pipe.pop("write"))
    with anyio.fail_after(10):
        assert await read_all(reader) == b"two\n"
        assert await reader.read() == b""  # and again: the end stays the end


async def test_a_read_cancelled_while_it_waits_loses_nothing(column, pipe):
    reader = reader_of(pipe, column)
    for _ in range(3):
        with anyio.move_on_after(0.05) as waited:
            await reader.read()
        assert waited.cancelled_caught
    os.write(pipe["write"], b"late\n")
    with anyio.fail_after(10):
        assert await reader.read() == b"late\n"


async def test_read_now_never_waits_and_takes_what_has_come(column, pipe):
    reader = reader_of(pipe, column)
    assert reader.read_now() is None
    os.write(pipe["write"], b"here\n")
    with anyio.fail_after(10):
        while (data := reader.read_now()) is None:  # a thread delivers a moment later
            await anyio.sleep(0.01)
    assert data == b"here\n"


async def test_a_blocking_descriptor_stays_blocking_and_is_read_once_readable(pipe):
    reader = Reader(pipe["read"], name="stdin")  # a server's stdin: its O_NONBLOCK is the shell's too
    async with anyio.create_task_group() as group:
        got = []

        async def read() -> None:
            got.append(await reader.read())
        group.start_soon(read)
        await anyio.sleep(0.05)
        assert got == []  # it waits in the loop, which goes on turning
        os.write(pipe["write"], b"ping\n")
    assert got == [b"ping\n"] and os.get_blocking(pipe["read"])


async def test_a_regular_file_the_loop_cannot_watch_is_read_by_a_thread(tmp_path, caplog):
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n' * 5000)  # more than one chunk
    fd = os.open(path, os.O_RDONLY)
    caplog.set_level("DEBUG", logger="mcplab.pipes")
    with anyio.fail_after(10):
        assert await read_all(Reader(fd, name="stdin")) == path.read_bytes()
    assert "reading stdin in a thread" in caplog.text  # asyncio's epoll refuses a regular file


async def test_closing_wakes_a_waiting_read_with_closed_resource_error(pipe):
    os.set_blocking(pipe["read"], False)
    reader, woken = Reader(pipe.pop("read")), []

    async def read() -> None:
        try:
            await reader.read()
        except anyio.ClosedResourceError as exc:
            woken.append(exc)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await anyio.sleep(0.05)
            reader.close()
    assert len(woken) == 1


async def test_a_big_message_goes_out_whole_while_the_reader_takes_its_time(column, pipe):
    writer = Writer(pipe["write"]) if column == "watched" else portable.ThreadWrites(pipe["write"])
    message = b"x" * (CHUNK * 8) + b"\n"  # many times what the pipe holds
    got = []

    def read_slowly() -> None:  # the server's side, in a thread of its own
        while sum(map(len, got)) < len(message):
            got.append(os.read(pipe["read"], 4096))
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, read_slowly)
            await writer.write(message, stall=10)
    assert b"".join(got) == message and writer.written == len(message)


async def test_half_a_message_is_finished_though_the_caller_gave_up_and_stalls_are_named(pipe):
    writer = Writer(pipe["write"])
    message = b"y" * (CHUNK * 4) + b"\n"
    with anyio.move_on_after(0.1):  # the caller gives up while half of it is out
        with pytest.raises(TimeoutError):  # nobody reads: after the stall bound, it says so
            await writer.write(message, stall=0.5)
    assert 0 < writer.written < len(message)


async def test_a_thread_write_the_caller_gave_up_on_goes_out_whole_before_the_next(pipe):
    writer = portable.ThreadWrites(pipe["write"])
    first, second = b"a" * (CHUNK * 4) + b"\n", b"b" * 10 + b"\n"
    with anyio.move_on_after(0.1) as gave_up:  # nobody reads yet: the caller gives up, its thread goes on
        await writer.write(first, stall=10)
    assert gave_up.cancelled_caught
    got = []

    def read_both() -> None:
        while sum(map(len, got)) < len(first) + len(second):
            got.append(os.read(pipe["read"], CHUNK))
    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, read_both)
            await writer.write(second, stall=10)
    assert b"".join(got) == first + second


async def test_a_thread_write_nobody_reads_is_a_timeout_after_the_stall_bound(pipe):
    writer = portable.ThreadWrites(pipe["write"])
    with anyio.fail_after(10), pytest.raises(TimeoutError):
        await writer.write(b"z" * (CHUNK * 4) + b"\n", stall=0.3)
