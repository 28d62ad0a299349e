"""A wiretap for stdio: record what any MCP client and any MCP server say to each other.

    python -m mcplab.ecosystem.wiretap TRACE.jsonl -- COMMAND [ARG ...]

mcplab's own client records every frame it sends and receives; another client (the official SDK's,
a desktop host, an editor) keeps its traffic to itself. The wiretap goes between: give the client
this command instead of the server's, and it starts COMMAND as its child, passes every line the
client writes on to the server's stdin and every line the server writes back to the client,
unchanged, and records each as a trace frame (``c2s``, ``s2c``, and the server's ``stderr``) in
TRACE.jsonl, the JSONL mcplab's :class:`~mcplab.trace.Trace` loads. A frame is written and flushed
as it passes, so the file is readable while the connection runs and after a crash.

Neither side can tell it is there: bytes are forwarded as they came (a line too long, or not JSON,
goes through as well and is recorded as refused), and the tap exits with the server's exit code
when the server's output ends. When the client closes the tap's stdin, the server's stdin is closed
too, as the client would have done; SIGTERM is passed on to the server.

Three threads, because three pipes block independently (client → server, server → client, server
stderr) and a thread per pipe is the simplest correct way to copy each as soon as it has a line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from typing import IO, Sequence

from mcplab.wire import jsonrpc
from mcplab.trace import Channel, Direction, Trace

__all__ = ["main", "tap"]


class _Recorder:
    """Frames into a trace and, one JSON line each, into the file; a lock keeps lines whole."""

    def __init__(self, out: IO[str]) -> None:
        self.trace, self.out, self.lock = Trace(), out, threading.Lock()

    def record(self, direction: Direction, channel: Channel, line: bytes) -> None:
        raw = line.rstrip(b"\r\n").decode("utf-8", errors="replace")
        message = None
        if channel != "stderr" and raw.strip():
            message = jsonrpc.decode_as_sent(raw)
        with self.lock:
            frame = self.trace.record(direction, channel, raw, message)
            self.out.write(json.dumps(frame.to_json(), ensure_ascii=False) + "\n")
            self.out.flush()


def _pump(source: IO[bytes], sink: IO[bytes] | None, record) -> None:
    """Copy ``source`` to ``sink`` line by line, recording each; close ``sink`` at end of file."""
    try:
        for line in iter(source.readline, b""):
            record(line)
            if sink is not None:
                try:
                    sink.write(line)
                    sink.flush()
                except (BrokenPipeError, ValueError):
                    sink = None  # the other side is gone; keep recording what still comes
    finally:
        if sink is not None:
            try:
                sink.close()
            except OSError:
                pass


def tap(trace_path: str, command: Sequence[str]) -> int:
    """Run ``command`` behind the tap, recording into ``trace_path``; return the server's exit code."""
    with open(trace_path, "w", encoding="utf-8") as out:
        recorder = _Recorder(out)
        server = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        signal.signal(signal.SIGTERM, lambda *_: server.terminate())
        client_in, client_out = os.fdopen(0, "rb", buffering=0), os.fdopen(1, "wb", buffering=0)
        pumps = [
            threading.Thread(target=_pump, args=(client_in, server.stdin,
                                                 lambda l: recorder.record("c2s", "stdio", l)), daemon=True),
            threading.Thread(target=_pump, args=(server.stdout, client_out,
                                                 lambda l: recorder.record("s2c", "stdio", l))),
            threading.Thread(target=_pump, args=(server.stderr, None,
                                                 lambda l: recorder.record("s2c", "stderr", l))),
        ]
        for pump in pumps:
            pump.start()
        code = server.wait()
        for pump in pumps[1:]:  # the client → server pump may still wait on a client that says nothing
            pump.join()
        return code


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        raise SystemExit("usage: python -m mcplab.ecosystem.wiretap TRACE.jsonl -- COMMAND [ARG ...]")
    raise SystemExit(tap(args[0], args[2:]))


if __name__ == "__main__":
    main()
