"""Helpers for the server tests: a recording peer for in-memory tests, a raw stdio client that
speaks framed JSON to a real server process (no client library), and the official-schema check
every server message goes through."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jsonschema

from mcplab.versions import at_least

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
SPEC_DIR = ROOT.parent / "shared" / "mcp-spec"

RESULT_DEFINITIONS = {
    "initialize": "InitializeResult", "ping": "EmptyResult", "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult", "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult", "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult",
}
"""Which definition of the official schema a request's result must match."""


# --- the official schema as oracle --------------------------------------------------------------

@lru_cache(maxsize=None)
def _schema(version: str) -> dict:
    return json.loads((SPEC_DIR / version / "schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def definition_validator(version: str, name: str) -> jsonschema.protocols.Validator:
    document = _schema(version)
    defs = "$defs" if "$defs" in document else "definitions"
    if name not in document[defs]:
        raise KeyError(f"{version} has no definition {name}")
    root = {**document, "$ref": f"#/{defs}/{name}"}
    cls = jsonschema.validators.validator_for(document)
    return cls(root)


def check_definition(version: str, name: str, value: Any) -> None:
    errors = sorted(definition_validator(version, name).iter_errors(value), key=lambda e: e.path)
    if errors:
        raise AssertionError(f"not a valid {name} in {version}: {errors[0].message} at {list(errors[0].path)}\n"
                             f"{json.dumps(value, ensure_ascii=False)[:800]}")


def check_server_message(version: str, message: dict | list, method: str | None,
                         methods: dict | None = None) -> None:
    """Validate one message a server sent against ``version``'s official schema.

    ``method`` is the method of the request a response answers. A parse-error reply carries
    ``"id": null`` as JSON-RPC 2.0 §5 requires; MCP's schema has no way to say that (its ids are
    strings or integers), so such replies are checked for shape here instead.
    """
    modern_envelopes = at_least(version, "2025-11-25")
    if isinstance(message, list):  # a batch reply (2025-03-26 only)
        check_definition(version, "JSONRPCBatchResponse", message)
        for element in message:
            check_server_message(version, element, (methods or {}).get(element.get("id")))
        return
    if "method" in message and "id" in message:
        check_definition(version, "JSONRPCRequest", message)
        check_definition(version, "ServerRequest", message)
    elif "method" in message:
        check_definition(version, "JSONRPCNotification", message)
        check_definition(version, "ServerNotification", message)
    elif "error" in message:
        if message.get("id") is None:
            assert set(message) == {"jsonrpc", "id", "error"} and isinstance(message["error"]["code"], int)
            return
        check_definition(version, "JSONRPCErrorResponse" if modern_envelopes else "JSONRPCError", message)
    else:
        check_definition(version, "JSONRPCResultResponse" if modern_envelopes else "JSONRPCResponse", message)
        if method in RESULT_DEFINITIONS:
            check_definition(version, RESULT_DEFINITIONS[method], message["result"])


# --- in memory ------------------------------------------------------------------------------------

class RecordingPeer:
    """A Peer that records what the toolkit sends and answers server→client requests from a table."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.posted: list[Any] = []
        self.requests: list[tuple[str, Any]] = []
        self.cancelled: list[Any] = []
        self.answers = answers or {}

    def post(self, message: Any, *, related_to: Any = None) -> None:
        self.posted.append(message)

    async def request(self, method: str, params: Any = None, *, related_to: Any = None) -> Any:
        self.requests.append((method, params))
        answer = self.answers[method]
        return answer(params) if callable(answer) else answer

    def cancel(self, request_id: Any) -> None:
        self.cancelled.append(request_id)


# --- over a real pipe ----------------------------------------------------------------------------

def server_argv(name: str, *flags: str) -> list[str]:
    return [sys.executable, str(SERVERS / f"{name}.py"), *flags]


class RawServer:
    """A server process and a bare JSON-lines client: every line the server writes is parsed, and,
    when ``version`` is set, validated against that revision's official schema."""

    def __init__(self, argv: list[str], *, version: str | None = None,
                 answers: dict[str, Callable[[dict], Any]] | None = None) -> None:
        self.version = version
        self.answers = answers or {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []
        self.sent_methods: dict[Any, str] = {}
        self.next_id = 1000
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        cwd=ROOT, env=env)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, sink: Callable) -> None:
        for line in iter(stream.readline, b""):
            sink(line)
        sink(None)

    # --- sending -------------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        if "method" in message and "id" in message:
            self.sent_methods[message["id"]] = message["method"]
        self.send_raw(json.dumps(message, ensure_ascii=False).encode() + b"\n")

    def notify(self, method: str, params: dict | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})})

    # --- receiving -----------------------------------------------------------------------------------

    def recv(self, timeout: float = 10.0) -> dict:
        """The next message from the server, checked against the schema."""
        line = self.lines.get(timeout=timeout)
        if line is None:
            self.lines.put(None)
            raise EOFError("the server closed stdout; stderr:\n" + b"".join(l for l in self.stderr if l).decode())
        message = json.loads(line)
        if self.version:
            method = None if isinstance(message, list) else self.sent_methods.get(message.get("id"))
            check_server_message(self.version, message, method, self.sent_methods)
        return message

    def response(self, request_id: Any, timeout: float = 10.0) -> dict:
        """Read until the response to ``request_id``; notifications and server requests are kept/answered."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.recv(max(0.01, deadline - time.monotonic()))
            if "method" in message and "id" in message:
                self.server_requests.append(message)
                self._answer(message)
            elif "method" in message:
                self.notifications.append(message)
            elif message.get("id") == request_id:
                return message

    def _answer(self, request: dict) -> None:
        handler = self.answers.get(request["method"])
        if handler is None:
            self.send({"jsonrpc": "2.0", "id": request["id"],
                       "error": {"code": -32601, "message": f"client does not handle {request['method']}"}})
        else:
            self.send({"jsonrpc": "2.0", "id": request["id"], "result": handler(request.get("params", {}))})

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send a request and return the whole response message (result or error)."""
        self.next_id += 1
        request_id = self.next_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.response(request_id)

    def result(self, method: str, params: dict | None = None) -> Any:
        reply = self.request(method, params)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    def initialize(self, version: str, capabilities: dict | None = None) -> dict:
        result = self.result("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                            "clientInfo": {"name": "raw-test-client", "version": "0.0.1"}})
        self.notify("notifications/initialized")
        return result

    # --- ending ------------------------------------------------------------------------------------

    def close(self, timeout: float = 5.0) -> int:
        """Close stdin and wait for the server to exit by itself; return its exit status."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.process.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                pass


# --- in memory, with the same schema check ----------------------------------------------------------

def load_server_module(name: str) -> Any:
    """Import ``servers/<name>.py`` as a module (the servers folder is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"mcplab_test_servers.{name}", SERVERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class MemorySession:
    """Drive ``Server.handle`` directly: requests in, replies out, every message checked against the
    official schema of the negotiated version (once there is one)."""

    def __init__(self, server: Any, answers: dict[str, Any] | None = None) -> None:
        from mcplab.jsonrpc import to_dict

        self._to_dict = to_dict
        self.server = server
        self.peer = RecordingPeer(answers)
        self.connection = server.connect(self.peer)
        self.next_id = 0
        self.checked_posts = 0

    @property
    def version(self) -> str | None:
        return self.connection.version

    def _check(self, message: Any, method: str | None) -> dict:
        wire = self._to_dict(message)
        if self.version:
            check_server_message(self.version, wire, method)
        return wire

    @property
    def notifications(self) -> list[dict]:
        """Every notification the server posted so far (schema-checked)."""
        return [self._check(m, None) for m in self.peer.posted]

    async def request(self, method: str, params: Any = None) -> dict:
        from mcplab.jsonrpc import Request

        self.next_id += 1
        reply = await self.server.handle(Request(self.next_id, method, params), self.connection)
        assert reply is not None and reply.id == self.next_id
        return self._check(reply, method)

    async def result(self, method: str, params: Any = None) -> Any:
        reply = await self.request(method, params)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    async def error(self, method: str, params: Any = None) -> dict:
        reply = await self.request(method, params)
        assert "error" in reply, f"{method} did not fail: {reply}"
        return reply["error"]

    async def notify(self, method: str, params: Any = None) -> None:
        from mcplab.jsonrpc import Notification

        assert await self.server.handle(Notification(method, params), self.connection) is None

    async def initialize(self, version: str = "2025-06-18", capabilities: dict | None = None) -> dict:
        result = await self.result("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                                  "clientInfo": {"name": "memory-test", "version": "0"}})
        await self.notify("notifications/initialized")
        return result
