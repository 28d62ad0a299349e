"""The instrumented server a client is graded against: a relay that records every frame, both ways.

    python -m mcplab.grade.recorder --log FRAMES.jsonl [--fault NAME] -- SERVER COMMAND...

Theory of operation
-------------------
The student's client starts this process as if it were the server. It starts the real server
(``servers/weather.py`` by default) as its own child, and relays lines: client → server on stdin,
server → client on stdout, the server's log on stderr. Every line is written to the log file as it
passes, one trace frame per line in the format ``mcplab.trace`` reads (so a killed run still leaves
what it saw, and a notebook can draw it). Notes record what no wire shows::

    the client closed the server's stdin          end-of-file on our stdin
    the client sent SIGTERM                       the client signalled instead of (or after) closing
    the client was still waiting                  half a second after the real server exited, the
    (or: the client had gone)                     client that started us is still our parent (it
                                                  waits for us, as it should), or it left already
    the server exited with status 0               written last
    the client's request came only with the end   a request and end-of-file were waiting together:
    of its stdin                                  the line sat in the client's buffer (no flush)

Like many real servers, this one logs (``notifications/message``) before each answer after
``initialize``, and says so in the capabilities it relays. A ``--fault`` makes it misbehave the
way servers do, one way per graded scenario:

    none            just that
    future-version  answers initialize with protocolVersion 2099-01-01, a revision no client speaks
    noisy           writes 256 KiB to stderr before answering initialize (more than a pipe holds)
    silent          never answers tools/call
    quiet           no fault and no log of its own: every line passes unchanged (Lab 12's desk.py
                    asks and pings by itself, and a 2026-07-28 client asked for no log)

No threads and no event loop: one selector watches our stdin and the server's two pipes. Writes
block on purpose, because a blocked server is exactly what a client that never reads stderr causes.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import selectors
import signal
import subprocess
import sys
import time
from typing import Any, BinaryIO, Sequence

from mcplab.wire import jsonrpc
from mcplab.wire.errors import JSONRPCError
from mcplab.trace import Trace

NOTE_EOF = "the client closed the server's stdin"
NOTE_SIGTERM = "the client sent SIGTERM"
NOTE_EXIT = "the server exited"
NOTE_WAITED = "the client was still waiting"
NOTE_LEFT = "the client had gone"
NOTE_NOISE = "wrote 256 KiB to stderr before answering initialize"
NOTE_ANSWERED = "the server answered initialize: writing 256 KiB to stderr first"
NOTE_DRAINING = "the client reads stderr: more of the log went through than the pipe holds"
NOTE_HELD = "held back the answer to tools/call"
NOTE_FUTURE = "answered initialize with protocolVersion 2099-01-01"
NOTE_UNFLUSHED = "the client's request came only with the end of its stdin"
FAULTS = ("none", "future-version", "noisy", "silent", "quiet")
FUTURE = "2099-01-01"
NOISE = (b"recorder: a very chatty server log line, padded to sixty-four bytes ........\n"[:64]) * 4096  # 256 KiB
LINGER = 0.5     # seconds between the real server's exit and our own
LIFETIME = 60.0  # seconds this relay lives at most, whatever the client does
CHUNK = 1 << 16
SLICE = 1 << 12  # bytes of the log per write: a slow reader is seen after one slice more than the pipe holds


class Relay:
    """The relay's state: the log, the real server, the requests the client is waiting on."""

    def __init__(self, log: BinaryIO, server: subprocess.Popen, fault: str) -> None:
        self.log = log
        self.trace = Trace()
        self.server = server
        self.fault = fault
        self.asked: dict[str, str] = {}  # JSON of a request id → its method

    def record(self, direction: str, channel: str, raw: str | bytes, message: Any = None) -> None:
        frame = self.trace.record(direction, channel, raw, message)  # type: ignore[arg-type]
        self.log.write((json.dumps(frame.to_json(), ensure_ascii=False) + "\n").encode("utf-8"))
        self.log.flush()

    def note(self, text: str) -> None:
        self.record("s2c", "note", text)

    def from_client(self, line: bytes) -> None:
        message = _decoded(line)
        self.record("c2s", "stdio", line, message)
        if isinstance(message, jsonrpc.Request):
            self.asked[json.dumps(message.id)] = message.method
        try:
            assert self.server.stdin is not None
            self.server.stdin.write(line + b"\n")
        except (BrokenPipeError, ValueError):
            pass  # the server is gone; its exit is noted when its stdout ends

    def from_server(self, line: bytes) -> None:
        message = _decoded(line)
        if isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)) and self.fault != "quiet":
            method = self.asked.pop(json.dumps(message.id), None)
            if method == "initialize" and isinstance(message, jsonrpc.Response):
                line = self._initialize_result(message)
                message = _decoded(line)
            elif method == "tools/call" and self.fault == "silent":
                self.note(f"{NOTE_HELD} (id {json.dumps(message.id)})")
                return
            elif method is not None:
                self._to_client(jsonrpc.encode(jsonrpc.Notification("notifications/message", {
                    "level": "info", "logger": "weather", "data": f"answering {method}"})).encode("utf-8"))
        self._to_client(line, message)

    def _initialize_result(self, response: jsonrpc.Response) -> bytes:
        result = dict(response.result) if isinstance(response.result, dict) else {}
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict):  # it logs, so it says so (MCP "server/utilities/logging")
            result["capabilities"] = {**capabilities, "logging": {}}
        if self.fault == "future-version":
            result["protocolVersion"] = FUTURE
            self.note(NOTE_FUTURE)
        if self.fault == "noisy":
            # Noted first: a client that gave up before this note waited on a slow server, not on a full pipe.
            self.note(NOTE_ANSWERED)
            self._write_noise()
            self.note(NOTE_NOISE)
        return jsonrpc.encode(jsonrpc.Response(response.id, result)).encode("utf-8")

    def _write_noise(self) -> None:
        """The 256 KiB log, a slice at a time. Each write blocks while nobody reads our stderr, as a
        real server's would; once more went through than the pipe holds, someone is reading, and we note
        it: a client that drains stderr but gives up on a busy machine is slow, not deadlocked."""
        holds, noted = _pipe_holds(2), False
        for start in range(0, len(NOISE), SLICE):
            _write_all(2, NOISE[start:start + SLICE])
            if not noted and start + SLICE > holds:  # more went through than the pipe holds: it was read
                self.note(NOTE_DRAINING)
                noted = True

    def _to_client(self, line: bytes, message: Any = None) -> None:
        self.record("s2c", "stdio", line, message if message is not None else _decoded(line))
        _write_all(1, line + b"\n")

    def log_line(self, line: bytes) -> None:
        self.record("s2c", "stderr", line)
        _write_all(2, line + b"\n")


def _decoded(line: bytes) -> Any:
    try:
        return jsonrpc.decode(line)
    except JSONRPCError as exc:
        return exc


def _pipe_holds(fd: int) -> int:
    """Bytes the pipe ``fd`` takes with nobody reading: Linux says; elsewhere the usual 64 KiB."""
    try:
        import fcntl

        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except (ImportError, AttributeError, OSError):  # not Linux, or not a pipe
        return 1 << 16


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # the client closed that pipe: there is nobody left to tell


def _readable(fd: int) -> bool:
    """Is something (data, or end-of-file) waiting on ``fd`` right now?"""
    return bool(select.select([fd], [], [], 0)[0])


def _rest(data: bytes) -> tuple[bytes, bool, bool]:
    """``data`` and whatever else is already waiting on our stdin; then whether end-of-file is waiting
    too, and whether we saw the pipe empty (from then on we are listening: see relay()).

    A client that writes a request without flushing it sends it only when it closes the pipe (closing
    flushes): the line and the end come together, and no answer could have reached it before. That is
    an event, the state of the pipe when the line came, not a clock: a client that flushes has its line
    read while it waits, and closes stdin later, after an answer or a timeout of its own."""
    os.set_blocking(0, False)
    try:
        while True:
            more = os.read(0, CHUNK)
            if not more:
                return data, True, False
            data += more
    except BlockingIOError:  # nothing more is waiting: the client is still there
        return data, False, True
    finally:
        os.set_blocking(0, True)


def _requests_held(framer: jsonrpc.LineFramer, data: bytes, state: Relay, judged: bool) -> None:
    """Relay the lines that came with end-of-file, noting each request among them as held if ``judged``
    (we were listening before they were written)."""
    for line in framer.lines(data):
        if isinstance(line, bytes):
            state.from_client(line)
            message = _decoded(line)
            if judged and isinstance(message, jsonrpc.Request):
                state.note(f"{NOTE_UNFLUSHED}: {message.method}")


def _drain(framer: jsonrpc.LineFramer, handle: Any) -> None:
    """Every whole line already waiting on our stdin, without blocking."""
    os.set_blocking(0, False)
    try:
        while data := os.read(0, CHUNK):
            for line in framer.lines(data):
                if isinstance(line, bytes):
                    handle(line)
    except OSError:  # BlockingIOError: nothing more is waiting
        pass


def relay(server_argv: Sequence[str], log_path: str, fault: str) -> int:
    """Run the relay until the server has exited; its exit status."""
    log = open(log_path, "ab")
    server = subprocess.Popen(list(server_argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, bufsize=0)
    state = Relay(log, server, fault)
    client = os.getppid()  # the student's client started us: while it waits for us, it stays our parent

    def after_sigterm() -> int:
        _drain(framers["client"], state.from_client)  # what the client wrote before signalling still counts
        state.note(NOTE_SIGTERM)
        server.terminate()
        try:
            code = server.wait(1.0)
        except subprocess.TimeoutExpired:
            server.kill()
            code = server.wait()
        state.note(NOTE_WAITED if os.getppid() == client else NOTE_LEFT)
        state.note(f"{NOTE_EXIT} with status {code}")
        return 128 + signal.SIGTERM

    framers = {name: jsonrpc.LineFramer() for name in ("client", "server", "log")}
    # SIGTERM is handled in the loop, not in a handler: a handler could run between reading the client's
    # last line and recording it, and that line (a notifications/cancelled, say) would be lost.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    handlers = {"client": state.from_client, "server": state.from_server, "log": state.log_line}
    selector.register(sys.stdin.buffer, selectors.EVENT_READ, "client")
    selector.register(server.stdout, selectors.EVENT_READ, "server")  # type: ignore[arg-type]
    selector.register(server.stderr, selectors.EVENT_READ, "log")  # type: ignore[arg-type]
    selector.register(wake_read, selectors.EVENT_READ, "signal")
    deadline = time.monotonic() + LIFETIME
    # Listening: we have seen our stdin empty, so whatever comes now was written after we were ready to
    # read it. A client that wrote while we were still starting (a busy machine) and gave up before we
    # read is not judged on its flushing: its line and its end were waiting together through no fault of its.
    listening = not _readable(0)
    # Until the server's stdout ends: it has exited (or closed it), and nothing more can come.
    while any(key.data == "server" for key in selector.get_map().values()):
        if time.monotonic() > deadline:
            state.note(f"the relay stopped after {LIFETIME:g} s")
            server.kill()
            break
        events = sorted(selector.select(1.0), key=lambda event: event[0].data == "signal")  # the signal last
        for key, _ in events:
            if key.data == "signal":
                if signal.SIGTERM in os.read(wake_read, CHUNK):
                    os._exit(after_sigterm())
                continue
            data = os.read(key.fileobj.fileno(), CHUNK)  # type: ignore[union-attr]
            ended, was_listening = False, listening
            if data and key.data == "client":
                was_listening = listening
                data, ended, listening = _rest(data)
            if not data or ended:
                if data:
                    _requests_held(framers["client"], data, state, judged=was_listening)
                selector.unregister(key.fileobj)
                if key.data == "client":
                    state.note(NOTE_EOF)
                    try:
                        server.stdin.close()  # type: ignore[union-attr]
                    except OSError:
                        pass
                continue
            for line in framers[key.data].lines(data):
                if isinstance(line, bytes):
                    handlers[key.data](line)
    code = server.wait()
    time.sleep(LINGER)  # a client that closed stdin and left without waiting has surely gone by now
    state.note(NOTE_WAITED if os.getppid() == client else NOTE_LEFT)
    state.note(f"{NOTE_EXIT} with status {code}")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mcplab.grade.recorder", description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, help="the trace file to append every frame to (JSONL)")
    parser.add_argument("--fault", choices=FAULTS, default="none", help="how the server misbehaves")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- then the server's command")
    args = parser.parse_args(argv)
    server = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not server:
        parser.error("expected the server's command after --")
    return relay(server, args.log, args.fault)


if __name__ == "__main__":
    raise SystemExit(main())
