"""My MCP client over stdio, with nothing but subprocess, json and the standard library (solved).

    python my_client.py [--call TOOL ARGUMENTS-JSON] [--timeout SECONDS] -- SERVER COMMAND...
    python my_client.py --call get_weather '{"city": "Beijing"}' -- python ../../servers/weather.py

It starts the server as a child process, opens a legacy session (initialize → its result →
notifications/initialized), lists the tools, calls one, prints what it returned, and shuts the
server down the way the stdio transport says: close its stdin, wait, then signal. Lab 10 builds
it step by step; `mcplab grade client build/my_client.py` grades it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import queue
import subprocess
import sys
import threading
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
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")
        # Threads, because a pipe read blocks: one puts stdout lines in the inbox (so a read can time
        # out), the other drains stderr (so the server never blocks on a full pipe).
        threading.Thread(target=self._read_stdout, args=(process,), daemon=True).start()
        threading.Thread(target=self._drain_stderr, args=(process,), daemon=True).start()
        return process

    def _read_stdout(self, process: subprocess.Popen) -> None:
        """Step 3 (Lab 10 §4): every line the server writes goes into the inbox; None when it ends."""
        for line in process.stdout:
            if line.strip():
                self.inbox.put(line)
        self.inbox.put(None)

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        """Step 4 (Lab 10 §6): read stderr as it comes, keeping the last lines for error messages."""
        for line in process.stderr:
            self.log.append(line.rstrip("\n"))

    # --- the wire ----------------------------------------------------------------------------
    def send(self, message: dict) -> None:
        """Step 2 (Lab 10 §3): one message, one line, flushed."""
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict:
        """Step 5 (Lab 10 §5): the next message from the inbox, or TimeoutError after self.timeout seconds."""
        try:
            line = self.inbox.get(timeout=self.timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from the server within {self.timeout:g} s") from None
        if line is None:
            raise ConnectionError(f"the server exited; its stderr ends: {list(self.log)[-3:]}")
        return json.loads(line)

    def request(self, method: str, params: dict | None = None) -> dict:
        """Step 6 (Lab 10 §4, §5): send a request and return its result, skipping anything else."""
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            try:
                reply = self.receive()
            except TimeoutError:
                # Stop waiting, and tell the server (lifecycle "timeouts"); but never about initialize,
                # which a client must not cancel (utilities "cancellation"): it just gives up.
                if method != "initialize":
                    self.notify("notifications/cancelled", {"requestId": request_id, "reason": "timed out"})
                raise
            if reply.get("id") != request_id or "method" in reply:
                continue  # a notification (a log line, a list change), or a reply to someone else
            if "error" in reply:
                raise ServerError(reply["error"])
            return reply["result"]

    def notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    # --- the session -------------------------------------------------------------------------
    def initialize(self) -> dict:
        """Step 7 (Lab 02 §2 and §5): the handshake, refusing a version this client does not speak."""
        result = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                             "clientInfo": CLIENT_INFO})
        if result.get("protocolVersion") not in SPEAKS:
            raise ValueError(f"the server answered protocol version {result.get('protocolVersion')!r}; this "
                             f"client speaks {', '.join(SPEAKS)}, so it disconnects")
        self.notify("notifications/initialized")
        return result

    def close(self) -> int:
        """Step 8 (Lab 10 §7): close stdin, wait; then SIGTERM, wait; then SIGKILL. The exit status."""
        try:
            self.process.stdin.close()
        except OSError:
            pass  # the server is already gone
        try:
            return self.process.wait(timeout=SHUTDOWN_WAIT)
        except subprocess.TimeoutExpired:
            self.process.terminate()
        try:
            return self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

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
