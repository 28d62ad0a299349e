"""Servers the client tests talk to, and small helpers. Run as a script to start a server:

    python tests/client_helpers.py sdk              the official SDK's server (mcp==2.3.0) over stdio
    python tests/client_helpers.py mini [FLAGS]     a tiny hand-written legacy server that can misbehave

``mini`` speaks just enough MCP (initialize, ping, tools/list with two pages, tools/call) and
takes flags that make it misbehave the ways a real server can: ``--silent`` (never answers),
``--junk`` (prints a non-JSON line instead of answering initialize), ``--wrong-id`` (answers
initialize with another id), ``--answer-version V``, ``--capabilities JSON``, ``--ignore-eof``
(ignores end-of-file on stdin and SIGTERM), ``--stderr-flood BYTES`` (floods stderr while it
handles a tools/call), ``--exit-on-call CODE`` (crashes on tools/call).
Its ``slow`` tool never answers; ``echo`` answers with its arguments; ``progress`` sends two
progress notifications and a log message first.

Helpers: :func:`command` builds the argv; :func:`node_bin` finds an npm reference server in
``.node/``; :func:`validate_frames` checks every frame of a trace against the official schema.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from mcplab import jsonrpc

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()


def command(kind: str, *flags: str) -> list[str]:
    return [sys.executable, str(HERE), kind, *flags]


def node_bin(name: str) -> Path:
    return ROOT / ".node" / "node_modules" / ".bin" / name


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
    "initialize": "InitializeResult", "tools/list": "ListToolsResult", "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult", "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult", "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult", "roots/list": "ListRootsResult",
}
_REQUESTS = {
    "initialize": "InitializeRequest", "tools/list": "ListToolsRequest", "tools/call": "CallToolRequest",
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
    number of frames checked; raises jsonschema.ValidationError naming the frame."""
    import jsonschema

    defs_key = "$defs" if "$defs" in schema else "definitions"
    cls = jsonschema.validators.validator_for(schema)
    validators: dict[str, object] = {}

    def check(definition: str, instance: object, frame) -> None:
        if definition not in schema[defs_key]:
            return
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
        if frame.channel == "stderr":
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
            if method in _RESULTS:
                check(_RESULTS[method], message["result"], frame)
        checked += 1
    return checked


# --- an in-process fake server, for MemoryTransport ------------------------------------------------

class FakeServer:
    """A scripted legacy server: ``handlers[method](params) → result``, or a list of messages to
    send instead of the default reply, or None to stay silent."""

    def __init__(self, *, capabilities=None, version=None, handlers=None):
        self.capabilities = {"tools": {}} if capabilities is None else capabilities
        self.version = version
        self.handlers = handlers or {}
        self.received: list = []
        from mcplab.transports.memory import MemoryTransport  # here: the script servers need no anyio

        self.transport = MemoryTransport(self)

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


# --- the official SDK's server ------------------------------------------------------------------

def run_sdk_server() -> None:
    from mcp.server.mcpserver import MCPServer

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

    app.run()


# --- a tiny hand-written legacy server that can misbehave --------------------------------------

def run_mini(flags: list[str]) -> None:
    def flag(name: str, default: str | None = None) -> str | None:
        return flags[flags.index(name) + 1] if name in flags else default

    capabilities = json.loads(flag("--capabilities", '{"tools": {"listChanged": true}}'))
    answer_version = flag("--answer-version")
    if "--ignore-eof" in flags:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    out = sys.stdout

    def send(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    tools = [{"name": name, "description": f"the {name} tool", "inputSchema": {"type": "object"}}
             for name in ("echo", "slow", "progress", "fail")]
    print("mini server ready", file=sys.stderr, flush=True)
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
        if method == "initialize":
            if "--junk" in flags:
                out.write("Hello! I am a server that prints to stdout.\n")
                out.flush()
                continue
            result = {"protocolVersion": answer_version or params["protocolVersion"],
                      "capabilities": capabilities, "serverInfo": {"name": "mini", "version": "0.0.1"}}
            send({"jsonrpc": "2.0", "id": rid + 100 if "--wrong-id" in flags else rid, "result": result})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif method == "tools/list":  # two pages, to exercise nextCursor
            page = 1 if params.get("cursor") == "page-2" else 0
            result = {"tools": tools[page * 2:page * 2 + 2]}
            if page == 0:
                result["nextCursor"] = "page-2"
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
