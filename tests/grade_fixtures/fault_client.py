"""A hand-written stdio client that the client grader must pass in full, and that breaks exactly one graded
rule when started with ``--fault NAME`` (tests/test_grade_client.py).

    python tests/grade_fixtures/fault_client.py [--fault NAME] [--drain-delay S] [--pause S] --call TOOL JSON --timeout S -- SERVER...

Written apart from the lab's solution on purpose: the grader is tested against clients it has never
seen. Each fault is named after the report-card line it must fail, and nothing else.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

FAULTS = ("runs", "jsonrpc-lines", "flush", "schema", "initialize", "initialized", "ids", "tools-list", "tools-call",
          "prints-result", "closes-stdin", "waits", "version-mismatch", "stderr", "timeout", "cancel")
SPEAKS = ("2025-06-18", "2025-11-25")


class Client:
    def __init__(self, command: list[str], timeout: float, fault: str | None, drain_delay: float = 0.0,
                 pause: float = 0.0) -> None:
        self.fault, self.timeout, self.next_id, self.pause = fault, timeout, 0, pause
        # bufsize=0 writes each line at once; the "flush" fault buffers them and never flushes (closing does)
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, bufsize=-1 if fault == "flush" else 0)
        self.lines: queue.Queue = queue.Queue()
        if fault != "timeout":
            threading.Thread(target=self._pump, daemon=True).start()
        if fault != "stderr":
            threading.Thread(target=self._drain, args=(drain_delay,), daemon=True).start()

    def _drain(self, delay: float) -> None:
        """Read stderr to its end; with a ``delay``, 4 KiB at a time and a pause between (a starved reader)."""
        while self.process.stderr.read(4096 if delay else -1):
            time.sleep(delay)

    def _pump(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def write(self, obj: dict | str) -> None:
        data = obj if isinstance(obj, str) else json.dumps(obj)
        self.process.stdin.write(data.encode() + b"\n")

    def read(self) -> dict:
        if self.fault == "timeout":
            line = self.process.stdout.readline()  # no timeout at all
        else:
            line = self.lines.get(timeout=self.timeout)
        if not line:
            raise ConnectionError("the server exited")
        return json.loads(line)

    def request(self, method: str, params: dict | None = None, *, same_id: bool = False) -> dict:
        if not same_id:
            self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})}
        time.sleep(self.pause)  # a client starved between its steps on a busy machine
        self.write(message)
        while True:
            try:
                reply = self.read()
            except queue.Empty:
                if self.fault != "cancel" and method != "initialize":  # initialize is never cancelled
                    self.write({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": message["id"], "reason": "timeout"}})
                raise TimeoutError(method) from None
            if reply.get("id") == message["id"] and "method" not in reply:
                return reply.get("result") or {}

    def close(self) -> None:
        if self.fault == "closes-stdin":
            self.process.send_signal(signal.SIGTERM)
        else:
            self.process.stdin.close()
            if self.fault == "waits":
                return
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def main(argv: list[str]) -> int:
    fault = argv[argv.index("--fault") + 1] if "--fault" in argv else None
    call = argv[argv.index("--call") + 1: argv.index("--call") + 3]
    timeout = float(argv[argv.index("--timeout") + 1])
    command = argv[argv.index("--") + 1:]
    drain_delay = float(argv[argv.index("--drain-delay") + 1]) if "--drain-delay" in argv else 0.0
    pause = float(argv[argv.index("--pause") + 1]) if "--pause" in argv else 0.0
    client = Client(command, timeout, fault, drain_delay, pause)
    status = 0
    try:
        info = {"name": "fault-client"} if fault == "schema" else {"name": "fault-client", "version": "1"}
        version = "2024-10-07" if fault == "initialize" else "2025-11-25"
        result = client.request("initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": info})
        if result.get("protocolVersion") not in SPEAKS and fault != "version-mismatch":
            raise ValueError(f"the server answered {result.get('protocolVersion')}")
        if fault != "initialized":
            client.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if fault == "jsonrpc-lines":
            client.write("hello, server")
        if fault != "tools-list":
            client.request("tools/list")
        if fault != "tools-call":
            answer = client.request("tools/call", {"name": call[0], "arguments": json.loads(call[1])},
                                    same_id=fault == "ids")
            if fault != "prints-result":
                print("\n".join(c.get("text", "") for c in answer.get("content", [])))
        status = 3 if fault == "runs" else 0
    except (TimeoutError, ConnectionError, ValueError) as exc:
        print(f"fault-client: {type(exc).__name__}: {exc}", file=sys.stderr)
        status = 1
    finally:
        client.close()
    sys.stdout.flush()
    os._exit(status)  # at once: a daemon thread still blocked on a pipe must not hold the exit up


if __name__ == "__main__":
    main(sys.argv[1:])
