"""Servers the client tests talk to, and small helpers. Run as a script to start a server:

    python tests/client_helpers.py sdk              the official SDK's server (mcp==2.3.0) over stdio;
                                                    dual-era: it serves 2026-07-28 to a client that opens
                                                    with server/discover, legacy to one that initializes
    python tests/client_helpers.py mini [FLAGS]     a tiny hand-written legacy server that can misbehave

``mini`` speaks just enough MCP (initialize, ping, tools/list with two pages, tools/call) and
takes flags that make it misbehave the ways a real server can: ``--silent`` (never answers),
``--junk`` (prints a non-JSON line instead of answering initialize), ``--wrong-id`` (answers
initialize with another id), ``--answer-version V``, ``--cursor C`` (the nextCursor of the first
tools/list page, ``page-2`` unless told; ``""`` is a valid cursor), ``--capabilities JSON``, ``--ignore-eof``
(ignores end-of-file on stdin and SIGTERM), ``--stderr-flood BYTES`` (floods stderr while it
handles a tools/call), ``--exit-on-call CODE`` (crashes on tools/call), ``--quiet-before-init``
(ignores every request that comes before initialize, as some legacy servers do), ``--ping-delay S``
(sleeps S seconds before it answers a ping, as a live server on a busy machine may).
Its ``slow`` tool never answers; ``echo`` answers with its arguments; ``progress`` sends two
progress notifications and a log message first.

The SDK server's ``book_table`` tool asks for input the modern way (MRTR): an elicitation and the
client's roots in round one, a sampling request in round two, then it answers.

Helpers: :func:`command` builds the argv; :func:`node_bin` finds an npm reference server in
``.node/``; :func:`validate_frames` checks every frame of a trace against the official schema;
:func:`probe_and_rest` splits an ``era="auto"`` trace into the probe and the legacy session after it;
:class:`FakeServer` and :class:`FakeModernServer` are scripted servers for the memory transport.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

from mcplab.wire import jsonrpc

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()


def command(kind: str, *flags: str) -> list[str]:
    return [sys.executable, str(HERE), kind, *flags]


def node_bin(name: str) -> Path:
    return ROOT / ".node" / "node_modules" / ".bin" / name


def npm_server(name: str) -> str:
    """The path of an npm-installed MCP server (the official reference servers, pinned), or a skip via need()."""
    from conftest import need  # here, not at the top: this file also runs as a server script

    path = node_bin(name)
    need(path.exists(), f"{name} is not installed; run: npm install --prefix .node "
                        f"@modelcontextprotocol/server-filesystem@2026.8.31 "
                        f"@modelcontextprotocol/server-everything@2026.8.31")
    return str(path)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# --- checking frames against the official schema ------------------------------------------------

_RESULTS = {  # method → result definition, for the methods these tests send or answer
    "server/discover": "DiscoverResult", "initialize": "InitializeResult", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult", "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult", "roots/list": "ListRootsResult",
}
_REQUESTS = {
    "server/discover": "DiscoverRequest", "initialize": "InitializeRequest", "tools/list": "ListToolsRequest", "tools/call": "CallToolRequest",
    "resources/list": "ListResourcesRequest", "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest", "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest", "ping": "PingRequest", "completion/complete": "CompleteRequest",
    "logging/setLevel": "SetLevelRequest", "resources/subscribe": "SubscribeRequest",
    "roots/list": "ListRootsRequest",
}
_NOTIFICATIONS = {
    "notifications/initialized": "InitializedNotification", "notifications/cancelled": "CancelledNotification",
    "notifications/progress": "ProgressNotification", "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/roots/list_changed": "RootsListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
}


def validate_frames(trace, schema: dict, version: str) -> int:
    """Validate every stdio frame of ``trace`` against ``schema``: the JSON-RPC envelope and,
    where the method is known, the request, notification or result definition. Returns the
    number of frames checked, which callers assert; raises AssertionError naming the frame, and
    when there is no frame to check at all (an empty trace proves nothing).

    A definition the revision does not have is an error too, never a check quietly left out:
    it is a misspelt name in the tables above, or a method this revision does not define."""
    import jsonschema

    defs_key = "$defs" if "$defs" in schema else "definitions"
    cls = jsonschema.validators.validator_for(schema)
    validators: dict[str, object] = {}

    def check(definition: str, instance: object, frame) -> None:
        if definition not in schema[defs_key]:
            raise AssertionError(f"frame {frame.seq} ({frame.direction}) needs the definition {definition}, which "
                                 f"{version}'s schema does not have\n{frame.raw}")
        if definition not in validators:
            validators[definition] = cls({**schema, "$ref": f"#/{defs_key}/{definition}"})
        try:
            validators[definition].validate(instance)  # type: ignore[attr-defined]
        except jsonschema.ValidationError as exc:
            raise AssertionError(f"frame {frame.seq} ({frame.direction}) is not a valid {definition} "
                                 f"under {version}: {exc.message}\n{frame.raw}") from None

    methods: dict[object, str] = {}  # (direction, id) of each request → its method
    checked = 0
    for frame in trace:
        if frame.channel in ("stderr", "note") or not frame.raw.strip():  # stderr, a note, a 202, a GET, a priming event
            continue
        message = json.loads(frame.raw)
        check("JSONRPCMessage", message, frame)
        if "method" in message:
            if "id" in message:
                methods[(frame.direction, message["id"])] = message["method"]
            table = _REQUESTS if "id" in message else _NOTIFICATIONS
            if message["method"] in table:
                check(table[message["method"]], message, frame)
        elif "result" in message:
            asked_by = "c2s" if frame.direction == "s2c" else "s2c"
            method = methods.get((asked_by, message["id"]))
            result = message["result"]
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                check("InputRequiredResult", result, frame)  # MRTR: any of the three methods
            elif method in _RESULTS:
                check(_RESULTS[method], result, frame)
        checked += 1
    if not checked:
        raise AssertionError(f"no frame to validate against {version}: the trace holds no JSON-RPC message")
    return checked


def probe_and_rest(trace) -> tuple[list, list]:
    """The frames before ``initialize`` (an era="auto" probe) and the frames from it on."""
    frames = list(trace)
    for i, frame in enumerate(frames):
        if getattr(frame.message, "method", None) == "initialize":
            return frames[:i], frames[i:]
    return frames, []


# --- in-process fake servers, for MemoryTransport -----------------------------------------------

class FakeServer:
    """A scripted legacy server: ``handlers[method](params) → result``, or a list of messages to
    send instead of the default reply, or None to stay silent."""

    def __init__(self, *, capabilities=None, version=None, handlers=None, channel="stdio"):
        self.capabilities = {"tools": {}} if capabilities is None else capabilities
        self.version = version
        self.handlers = handlers or {}
        self.received: list = []
        from mcplab.transports.memory import MemoryTransport  # here: the script servers need no anyio

        self.transport = MemoryTransport(self, channel=channel)

    def __call__(self, message):
        self.received.append(message)
        if isinstance(message, jsonrpc.Request):
            if message.method == "initialize":
                return [jsonrpc.Response(message.id, {
                    "protocolVersion": self.version or message.params["protocolVersion"],
                    "capabilities": self.capabilities, "serverInfo": {"name": "fake", "version": "1"}})]
            handler = self.handlers.get(message.method)
            if handler is None:
                return [jsonrpc.ErrorResponse(message.id, -32601, f"no method {message.method}")]
            outcome = handler(message)
            if outcome is None or isinstance(outcome, list):
                return outcome
            return [jsonrpc.Response(message.id, outcome)]
        return []

    def methods(self):
        return [m.method for m in self.received if isinstance(m, (jsonrpc.Request, jsonrpc.Notification))]


META_VERSION = "io.modelcontextprotocol/protocolVersion"


class FakeModernServer:
    """A scripted modern server: answers server/discover, checks ``_meta`` on every request the
    way a 2026-07-28 server must, and answers ``handlers[method](request)`` like FakeServer (a
    result gets ``resultType: "complete"`` unless it has one). ``supported`` is what it serves;
    ``refuse_first`` answers the first request with -32022 whatever it asks; ``legacy_error``
    makes it a legacy server answering every request before initialize with that error code."""

    def __init__(self, *, capabilities=None, supported=("2026-07-28",), handlers=None, channel="stdio",
                 refuse_first=False, legacy_error=None):
        self.capabilities = {"tools": {}} if capabilities is None else capabilities
        self.supported = list(supported)
        self.handlers = handlers or {}
        self.refuse_first, self.legacy_error = refuse_first, legacy_error
        self.received: list = []
        from mcplab.transports.memory import MemoryTransport

        self.transport = MemoryTransport(self, channel=channel)

    def __call__(self, message):
        self.received.append(message)
        if not isinstance(message, jsonrpc.Request):
            return []
        if self.legacy_error is not None:
            return [jsonrpc.ErrorResponse(message.id, self.legacy_error, "Method not found")]
        meta = (message.params or {}).get("_meta") or {}
        if self.refuse_first or meta.get(META_VERSION) not in self.supported:
            self.refuse_first = False
            return [jsonrpc.ErrorResponse(message.id, -32022, "Unsupported protocol version",
                                          {"supported": self.supported, "requested": meta.get(META_VERSION)})]
        if "io.modelcontextprotocol/clientCapabilities" not in meta:
            return [jsonrpc.ErrorResponse(message.id, -32602, "missing _meta clientCapabilities")]
        if message.method == "server/discover":
            return [jsonrpc.Response(message.id, {
                "resultType": "complete", "supportedVersions": self.supported, "capabilities": self.capabilities,
                "ttlMs": 60000, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-modern", "version": "2"}}})]
        handler = self.handlers.get(message.method)
        if handler is None:
            return [jsonrpc.ErrorResponse(message.id, -32601, f"no method {message.method}")]
        outcome = handler(message)
        if outcome is None or isinstance(outcome, list):
            return outcome
        return [jsonrpc.Response(message.id, {"resultType": "complete", **outcome})]

    def requests(self, method=None):
        return [m for m in self.received if isinstance(m, jsonrpc.Request) and method in (None, m.method)]


# --- the official SDK's server ------------------------------------------------------------------

def sdk_app():
    """The official SDK's MCPServer the interop tests talk to, over stdio or (tests/http_helpers.py) HTTP."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import (
        CreateMessageRequest, CreateMessageRequestParams, ElicitRequest, ElicitRequestFormParams,
        InputRequiredResult, ListRootsRequest, SamplingMessage, TextContent,
    )

    app = MCPServer("sdk-weather", version="2.3.0")

    @app.tool()
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"{city}: sunny, 12 °C"

    @app.tool()
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    @app.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        """Today's notes."""
        return "buy milk"

    @app.resource("notes://day/{day}")
    def day(day: str) -> str:
        """Notes for one day."""
        return f"notes for {day}"

    @app.prompt()
    def review(code: str) -> str:
        """Review some code."""
        return f"Please review:\n{code}"

    def book_table(city, ctx):
        """Book a table: asks the user to confirm and for the roots, then the client's model for a name."""
        answers = ctx.input_responses or {}
        if "confirm" not in answers and "name" not in answers:
            form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
            return InputRequiredResult(input_requests={
                "confirm": ElicitRequest(params=ElicitRequestFormParams(message=f"Book a table in {city}?",
                                                                        requested_schema=form)),
                "where": ListRootsRequest()}, request_state="round-2")
        if "name" not in answers:
            if not answers["confirm"].content or not answers["confirm"].content.get("ok"):
                return "not booked"
            roots = ", ".join(str(root.uri) for root in answers["where"].roots)
            ask = SamplingMessage(role="user", content=TextContent(type="text", text=f"Name a table in {city}"))
            return InputRequiredResult(input_requests={"name": CreateMessageRequest(
                params=CreateMessageRequestParams(messages=[ask], max_tokens=20))}, request_state=f"roots={roots}")
        return f"booked {answers['name'].content.text} in {city} ({ctx.request_state})"

    # Real objects, not the strings `from __future__ import annotations` makes: the SDK reads them.
    book_table.__annotations__ = {"city": str, "ctx": Context, "return": str | InputRequiredResult}
    app.tool()(book_table)
    return app


def run_sdk_server() -> None:
    sdk_app().run()


# --- a tiny hand-written legacy server that can misbehave --------------------------------------

def _chatter() -> None:
    for n in range(1000):
        print(f"still thinking ({n})", file=sys.stderr, flush=True)
        time.sleep(0.05)


def run_mini(flags: list[str]) -> None:
    def flag(name: str, default: str | None = None) -> str | None:
        return flags[flags.index(name) + 1] if name in flags else default

    capabilities = json.loads(flag("--capabilities", '{"tools": {"listChanged": true}}'))
    answer_version = flag("--answer-version")
    next_cursor = flag("--cursor", "page-2")
    if "--ignore-eof" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = sys.stdout

    def send(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    tools = [{"name": name, "description": f"the {name} tool", "inputSchema": {"type": "object"}}
             for name in ("echo", "slow", "progress", "fail")]
    print("mini server ready", file=sys.stderr, flush=True)
    initialized = False
    while True:
        line = sys.stdin.readline()
        if not line:
            if "--ignore-eof" in flags:
                signal.pause()
            return
        message = json.loads(line)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if "--silent" in flags or rid is None or method is None:
            continue
        if "--quiet-before-init" in flags and method != "initialize" and not initialized:
            continue
        if method == "initialize":
            initialized = True
            if "--junk" in flags:
                out.write("Hello! I am a server that prints to stdout.\n")
                out.flush()
                continue
            result = {"protocolVersion": answer_version or params["protocolVersion"],
                      "capabilities": capabilities, "serverInfo": {"name": "mini", "version": "0.0.1"}}
            send({"jsonrpc": "2.0", "id": rid + 100 if "--wrong-id" in flags else rid, "result": result})
        elif method == "ping":
            if flag("--ping-delay"):  # a live server on a busy machine, slow to get round to answering
                time.sleep(float(flag("--ping-delay")))
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":  # two pages, to exercise nextCursor
            page = 1 if "cursor" in params and params["cursor"] == next_cursor else 0
            result = {"tools": tools[page * 2:page * 2 + 2]}
            if page == 0:
                result["nextCursor"] = next_cursor
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call":
            if flag("--exit-on-call"):
                print("mini server: crashing on purpose", file=sys.stderr, flush=True)
                os._exit(int(flag("--exit-on-call")))
            if flag("--stderr-flood"):
                sys.stderr.write("x" * int(flag("--stderr-flood")) + "\n")
                sys.stderr.flush()
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "slow":
                continue
            if flag("--reply-delay"):
                time.sleep(float(flag("--reply-delay")))
            if name == "chatty":  # never answers, but says something on stderr every 50 ms
                threading.Thread(target=_chatter, daemon=True).start()
                continue
            if name == "progress":
                token = params.get("_meta", {}).get("progressToken")
                for step in (1, 2):
                    send({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": token, "progress": step, "total": 2}})
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "progress done"}})
            if name == "fail":
                send({"jsonrpc": "2.0", "id": rid, "result": {
                    "content": [{"type": "text", "text": "it broke"}], "isError": True}})
                continue
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": json.dumps(args, sort_keys=True)}]}})
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    if sys.argv[1] == "sdk":
        run_sdk_server()
    else:
        run_mini(sys.argv[2:])
