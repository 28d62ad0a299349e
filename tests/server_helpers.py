"""Helpers for the server tests: a recording peer for in-memory tests, a raw stdio client that
speaks framed JSON to a real server process (no client library), and the official-schema check
every server message goes through (legacy revisions and 2026-07-28 alike)."""

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

from conftest import need_schema
from mcplab.wire.versions import at_least

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"

RESULT_DEFINITIONS = {
    "initialize": "InitializeResult", "ping": "EmptyResult", "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult", "resources/unsubscribe": "EmptyResult",
    "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult", "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult",
    "server/discover": "DiscoverResult", "subscriptions/listen": "SubscriptionsListenResult",
}
"""Which definition of the official schema a request's result must match."""

MODERN = "2026-07-28"
MRTR_METHODS = ("tools/call", "resources/read", "prompts/get")
MODERN_ERRORS = {-32020: "HeaderMismatchError", -32021: "MissingRequiredClientCapabilityError",
                 -32022: "UnsupportedProtocolVersionError"}  # whole error responses
MODERN_ERROR_OBJECTS = {-32700: "ParseError", -32600: "InvalidRequestError", -32601: "MethodNotFoundError",
                        -32602: "InvalidParamsError", -32603: "InternalError"}  # just the error object


# --- the official schema as oracle --------------------------------------------------------------

@lru_cache(maxsize=None)
def definition_validator(version: str, name: str) -> jsonschema.protocols.Validator:
    document = need_schema(version)  # skips the test (fails it under CI=true) without the schemas
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

    ``method`` is the method of the request a response answers. A reply to a message whose id could
    not be read leaves the id out from 2025-11-25 on (schema-valid); before, it carries JSON-RPC 2.0's
    ``"id": null``, which those schemas cannot express, so it is checked for shape here instead.
    """
    modern_envelopes = at_least(version, "2025-11-25")
    if version == MODERN:
        check_modern_message(message, method)
        return
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
        if "id" in message and message["id"] is None:
            # Up to 2025-06-18 an error response must carry an id, and none could be read: JSON-RPC
            # 2.0 §5's "id": null. From 2025-11-25 the id is optional and never null: left out.
            assert not modern_envelopes, f"{version} leaves an unreadable request's id out, never null: {message}"
            assert set(message) == {"jsonrpc", "id", "error"} and isinstance(message["error"]["code"], int)
            return
        check_definition(version, "JSONRPCErrorResponse" if modern_envelopes else "JSONRPCError", message)
    else:
        check_definition(version, "JSONRPCResultResponse" if modern_envelopes else "JSONRPCResponse", message)
        if method in RESULT_DEFINITIONS:
            check_definition(version, RESULT_DEFINITIONS[method], message["result"])


def check_modern_message(message: dict, method: str | None) -> None:
    """A 2026-07-28 server message: never a request; every result typed by ``resultType``."""
    assert not isinstance(message, list), "2026-07-28 has no batches"
    if "method" in message:
        assert "id" not in message, f"a 2026-07-28 server sends no requests: {message}"
        check_definition(MODERN, "JSONRPCNotification", message)
        check_definition(MODERN, "ServerNotification", message)
    elif "error" in message:
        assert message.get("id", 0) is not None, f"2026-07-28 never sends a null id: {message}"
        check_definition(MODERN, "JSONRPCErrorResponse", message)
        code = message["error"]["code"]
        if code in MODERN_ERRORS:
            check_definition(MODERN, MODERN_ERRORS[code], message)
        elif code in MODERN_ERROR_OBJECTS:
            check_definition(MODERN, MODERN_ERROR_OBJECTS[code], message["error"])
        assert code not in (-32002, -32042), f"2026-07-28 servers MUST NOT send {code}"
    else:
        check_definition(MODERN, "JSONRPCResultResponse", message)
        result = message["result"]
        assert result.get("resultType") in ("complete", "input_required"), f"resultType: {result}"
        if result["resultType"] == "input_required":
            assert method in MRTR_METHODS, f"{method} must not answer input_required"
            check_definition(MODERN, "InputRequiredResult", result)
            assert "inputRequests" in result or "requestState" in result
        elif method in RESULT_DEFINITIONS:
            check_definition(MODERN, RESULT_DEFINITIONS[method], result)
        if method in RESULT_DEFINITIONS:
            _pydantic_oracle("result", method, result)
    if "method" in message and "id" not in message:
        _pydantic_oracle("notification", message["method"], message.get("params"))


def _pydantic_oracle(kind: str, method: str, body: Any) -> None:
    """The official pydantic wire models (mcp-types) as a second oracle, when they are installed."""
    try:
        from mcp_types import methods
    except ImportError:  # pragma: no cover - the test extra is missing
        return
    if kind == "result":
        methods.parse_server_result(method, MODERN, body)
    else:
        methods.parse_server_notification(method, MODERN, body)


def envelope(capabilities: dict | None = None, version: str = MODERN, **extra: Any) -> dict:
    """The ``_meta`` every 2026-07-28 request carries."""
    return {"io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
            "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "0"}, **extra}


def modern_params(params: dict | None = None, capabilities: dict | None = None, **meta: Any) -> dict:
    params = dict(params or {})
    params["_meta"] = {**envelope(capabilities), **meta, **params.get("_meta", {})}
    return params


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


class HoldingPeer(RecordingPeer):
    """A RecordingPeer that can hold a request open (``subscriptions/listen``) until released."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        super().__init__(answers)
        self.held: dict[Any, Any] = {}

    async def hold(self, request_id: Any) -> None:
        import anyio

        self.held[request_id] = anyio.Event()
        await self.held[request_id].wait()

    def release(self, request_id: Any) -> None:
        self.held.pop(request_id).set()


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
        # Every line both ways, for the end-of-session schema walk (tests/wire_log.py): the server's
        # lines are checked, ours are what a test chose to send and only fix the revision.
        from mcplab.trace import Trace
        import wire_log

        self.trace = Trace()
        wire_log.keep(self.trace, "raw stdio: " + " ".join(Path(a).name for a in argv), server=True, client=False)
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
        for line in data.splitlines():
            if line.strip():
                self._record("c2s", line)
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def _record(self, direction: str, line: bytes) -> None:
        from mcplab.wire import jsonrpc
        from mcplab.wire.errors import JSONRPCError

        try:  # a test may send what MCP forbids (a null id); the server must not
            parsed: Any = jsonrpc.decode(line, mcp=direction == "s2c", allow_batch=True)
        except JSONRPCError as exc:
            parsed = exc
        self.trace.record(direction, "stdio", line, None if isinstance(parsed, list) else parsed)

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
        self._record("s2c", line.rstrip(b"\r\n"))
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
        from mcplab.wire.jsonrpc import to_dict

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
        from mcplab.wire.jsonrpc import Request

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
        from mcplab.wire.jsonrpc import Notification

        assert await self.server.handle(Notification(method, params), self.connection) is None

    async def initialize(self, version: str = "2025-06-18", capabilities: dict | None = None) -> dict:
        result = await self.result("initialize", {"protocolVersion": version, "capabilities": capabilities or {},
                                                  "clientInfo": {"name": "memory-test", "version": "0"}})
        await self.notify("notifications/initialized")
        return result


class ModernSession:
    """Drive ``Server.handle`` with 2026-07-28 requests: each carries its own envelope, every reply and
    notification is checked against the 2026-07-28 schema, and :meth:`complete` runs the MRTR loop."""

    def __init__(self, server: Any, *, era: str = "dual", capabilities: dict | None = None,
                 peer: Any = None) -> None:
        from mcplab.wire.jsonrpc import to_dict

        self._to_dict = to_dict
        self.server = server
        self.peer = peer if peer is not None else RecordingPeer()
        self.connection = server.connect(self.peer, era)
        self.capabilities = capabilities if capabilities is not None else {}
        self.next_id = 0

    @property
    def notifications(self) -> list[dict]:
        wire = [self._to_dict(m) for m in self.peer.posted]
        for message in wire:
            check_modern_message(message, None)
        return wire

    async def send(self, method: str, params: Any) -> dict:
        """Send ``params`` exactly as given (no envelope added); the checked reply."""
        from mcplab.wire.jsonrpc import Request

        self.next_id += 1
        reply = await self.server.handle(Request(self.next_id, method, params), self.connection)
        assert reply is not None and reply.id == self.next_id
        wire = self._to_dict(reply)
        check_modern_message(wire, method)
        return wire

    async def request(self, method: str, params: dict | None = None, *, capabilities: dict | None = None,
                      **meta: Any) -> dict:
        caps = self.capabilities if capabilities is None else capabilities
        return await self.send(method, modern_params(params, caps, **meta))

    async def result(self, method: str, params: dict | None = None, **kwargs: Any) -> Any:
        reply = await self.request(method, params, **kwargs)
        assert "result" in reply, f"{method} failed: {reply}"
        return reply["result"]

    async def error(self, method: str, params: dict | None = None, **kwargs: Any) -> dict:
        reply = await self.request(method, params, **kwargs)
        assert "error" in reply, f"{method} did not fail: {reply}"
        return reply["error"]

    async def complete(self, method: str, params: dict | None, answer: Callable[[str, dict], Any],
                       max_rounds: int = 5, **kwargs: Any) -> tuple[dict, list[dict]]:
        """Retry through ``input_required`` answering each input request with ``answer(key, request)``;
        returns the final result and the input_required results along the way."""
        rounds: list[dict] = []
        extra: dict = {}
        for _ in range(max_rounds):
            result = await self.result(method, {**(params or {}), **extra}, **kwargs)
            if result["resultType"] == "complete":
                return result, rounds
            rounds.append(result)
            extra = {"inputResponses": {key: answer(key, request)
                                        for key, request in result.get("inputRequests", {}).items()}}
            if "requestState" in result:
                extra["requestState"] = result["requestState"]
        raise AssertionError(f"{method} still wants input after {max_rounds} rounds: {rounds[-1]}")


# What every interop and era test calls each bundled tool and prompt with ({} when not listed): one table,
# so that the drivers agree. "London" is one city; ASKS_WHICH_CITY ("China": four cities) makes
# get_forecast ask the user which one, for the tests that exercise the question (elicitation or MRTR).
TOOL_ARGUMENTS = {
    "get_weather": {"city": "Beijing"}, "get_forecast": {"city": "London", "days": 2},
    "read_file": {"path": "notes.md"}, "list_directory": {}, "search_files": {"pattern": "*.py"},
    "get_file_info": {"path": "logo.png"}, "write_file": {"path": "scratch.txt", "content": "hello"},
    "test_sampling": {"prompt": "Test prompt for sampling"},
    "test_elicitation": {"message": "Please provide your information"},
    "json_schema_2020_12_tool": {"name": "Ada", "phone": "123", "contactMethod": "phone"},
    "test_header_param": {"region": "us-west1"},
}
PROMPT_ARGUMENTS = {
    "weather_report": {"city": "Seattle"}, "summarize_file": {"path": "README.txt"},
    "review_code": {"path": "src/greet.py"}, "test_prompt_with_arguments": {"arg1": "testValue1", "arg2": "testValue2"},
    "test_prompt_with_embedded_resource": {"resourceUri": "test://example-resource"},
}
ASKS_WHICH_CITY = {"city": "China", "days": 2}


def fill_form(schema: dict) -> dict:
    """What a careful user would submit for an elicitation form: every field, valid for its schema."""
    content: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        if "default" in field:
            content[name] = field["default"]
        elif field.get("enum"):
            content[name] = field["enum"][0]
        elif field.get("oneOf"):
            content[name] = field["oneOf"][0]["const"]
        elif field.get("type") == "array":
            items = field.get("items") or {}
            content[name] = [items["enum"][0] if items.get("enum") else items.get("anyOf", [{"const": "x"}])[0]["const"]]
        else:
            content[name] = {"integer": 1, "number": 1.5, "boolean": True}.get(
                field.get("type"), "ada@example.org" if "mail" in name else "ada")
    return content
