"""My MCP client over stdio, with nothing but subprocess, json and the standard library: yours to write.

    python my_client.py [--call TOOL ARGUMENTS-JSON] [--timeout SECONDS] -- SERVER COMMAND...
    python build/my_client.py --call get_weather '{"city": "Beijing"}' -- python ../servers/weather.py

It starts the server as a child process, opens a legacy session (initialize → its result →
notifications/initialized), lists the tools, calls one, prints what it returned, and shuts the
server down the way the stdio transport says: close its stdin, wait, then signal. main() at the
bottom is written; the eight steps of StdioClient are yours (Lab 10 builds each one in a cell first).
Grade it with `mcplab grade client labs/build/my_client.py`, or in the lab: grade.client(...).
"""

from __future__ import annotations

import argparse
import itertools
import json  # noqa: F401
import queue
import subprocess
import sys
import threading  # noqa: F401
from collections import deque

PROTOCOL_VERSION = "2025-11-25"               # the revision we ask for: the latest we speak
SPEAKS = ("2025-03-26", "2025-06-18", "2025-11-25")   # the revisions this client understands
CLIENT_INFO = {"name": "my-client", "version": "0.1.0"}
SHUTDOWN_WAIT = 5.0                           # seconds a server gets to exit after its stdin closes


class ServerError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, error: dict) -> None:
        super().__init__(f"error {error.get('code')}: {error.get('message')}")
        self.code = error.get("code")


class StdioClient:
    """One server, started as a child process; one JSON-RPC message per line each way."""

    def __init__(self, command: list[str], timeout: float = 10.0) -> None:
        self.timeout = timeout
        self.ids = itertools.count(1)
        self.inbox: queue.Queue = queue.Queue()
        self.log: deque[str] = deque(maxlen=20)     # the server's last stderr lines
        self.process = self.start(command)

    def start(self, command: list[str]) -> subprocess.Popen:
        """Step 1 (Lab 10 §2): the server, with a pipe for each of its three streams, and two readers."""
        # subprocess.Popen(command, stdin=..., stdout=..., stderr=..., text=True, encoding="utf-8"), then
        # start _read_stdout and _drain_stderr in threads (daemon=True) and return the process.
        raise NotImplementedError("TODO 1: start the server with three pipes and two reader threads (Lab 10 §2)")

    def _read_stdout(self, process: subprocess.Popen) -> None:
        """Step 3 (Lab 10 §4): every line the server writes goes into the inbox; None when it ends."""
        raise NotImplementedError("TODO 3: put each stdout line in self.inbox, then None (Lab 10 §4)")

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        """Step 4 (Lab 10 §6): read stderr as it comes, keeping the last lines for error messages."""
        raise NotImplementedError("TODO 4: read stderr lines into self.log (Lab 10 §6)")

    # --- the wire ----------------------------------------------------------------------------
    def send(self, message: dict) -> None:
        """Step 2 (Lab 10 §3): one message, one line, flushed."""
        raise NotImplementedError("TODO 2: write the message as one line of JSON, and flush (Lab 10 §3)")

    def receive(self) -> dict:
        """Step 5 (Lab 10 §5): the next message from the inbox, or TimeoutError after self.timeout seconds."""
        # queue.Queue.get(timeout=...) raises queue.Empty when nothing came in time.
        raise NotImplementedError("TODO 5: the next message, or TimeoutError (Lab 10 §5)")

    def request(self, method: str, params: dict | None = None) -> dict:
        """Step 6 (Lab 10 §4, §5): send a request and return its result, skipping anything else."""
        # A fresh id (next(self.ids)); send; then receive until the reply with that id comes, skipping
        # notifications; an "error" raises ServerError; on TimeoutError, send notifications/cancelled first
        # (for any request but initialize, which a client must never cancel).
        raise NotImplementedError("TODO 6: send a request, return its result (Lab 10 §4, §5)")

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # --- the session -------------------------------------------------------------------------
    def initialize(self) -> dict:
        """Step 7 (Lab 02 §2 and §5): the handshake, refusing a version this client does not speak."""
        # initialize with PROTOCOL_VERSION, no capabilities and CLIENT_INFO; a protocolVersion not in
        # SPEAKS means disconnect (raise ValueError); else notifications/initialized, and the result.
        raise NotImplementedError("TODO 7: the initialize handshake (Lab 02 §2, §5)")

    def close(self) -> int:
        """Step 8 (Lab 10 §7): close stdin, wait; then SIGTERM, wait; then SIGKILL. The exit status."""
        raise NotImplementedError("TODO 8: close stdin, wait, then terminate, then kill (Lab 10 §7)")

    def __enter__(self) -> StdioClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def texts(result: dict) -> str:
    """The text blocks of a tool result, one after another."""
    return "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A hand-written MCP client over stdio.")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"), help="call TOOL with a JSON object")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- then the server's command")
    args = parser.parse_args(argv)
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        parser.error("give the server's command after --, e.g. -- python ../servers/weather.py")
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # the interpreter of this course's environment, not whatever is on PATH
    try:
        with StdioClient(command, args.timeout) as client:
            info = client.initialize()
            server = info.get("serverInfo", {})
            print(f"server: {server.get('name')} {server.get('version')} (protocol {info['protocolVersion']})")
            tools = client.request("tools/list")["tools"]
            print("tools:", ", ".join(tool["name"] for tool in tools))
            if args.call:
                name, arguments = args.call[0], json.loads(args.call[1])
                result = client.request("tools/call", {"name": name, "arguments": arguments})
                print(f"{name} →" + (" (the tool reports an error)" if result.get("isError") else ""))
                print(texts(result))
    except (OSError, ValueError, TimeoutError, ServerError, NotImplementedError) as exc:  # ConnectionError: an OSError
        print(f"my_client: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
