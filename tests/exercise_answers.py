"""Right and wrong answers to every exercise check, as tables: one right answer per check (the one in
labs/solutions/) and, per check, the wrong answers a student plausibly gives (wrong id, missing field,
right shape with a wrong value, partly right code, answers that fit only the examples shown, off by
one, the wrong type, the right answer to another question). test_exercises_wrong_answers.py runs
each through its check: the right one must pass, no wrong one may.

Answers that need a live server (a trace, a tool result) are ``Live("name")`` and are made once, for
real, by :func:`live_answers`.
"""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass

from conftest import ROOT
from mcplab.wire import jsonrpc
from mcplab.exercises import lab01, lab02, lab04, lab05, lab06, lab07
from mcplab.client.host import Rule
from mcplab.client.results import ResourceRead, ToolResult
from mcplab.trace import Trace

WEATHER = ["python", str(ROOT / "servers" / "weather.py")]
FILES = ["python", str(ROOT / "servers" / "files.py")]
OTHER_FILE = sorted(p.name for p in (ROOT / "servers" / "samples").iterdir() if p.is_file() and p.name != "notes.md")[0]


@dataclass(frozen=True)
class Live:
    """An answer made by talking to a real server (see :func:`live_answers`)."""
    name: str


def _tools_only(message):
    """Lab 02's own toy server: it echoes whatever version it is asked for."""
    if isinstance(message, jsonrpc.Request) and message.method == "initialize":
        return [jsonrpc.Response(message.id, {"protocolVersion": message.params["protocolVersion"],
                                              "capabilities": {"tools": {}},
                                              "serverInfo": {"name": "tools-only", "version": "0.1.0"}})]
    return []


def live_answers() -> dict[str, object]:
    """Real traces and results: the lab's solutions, and the plausible wrong ones."""
    import anyio

    from mcplab import Client
    from mcplab.transports.memory import MemoryTransport
    from mcplab.transports.stdio import stdio

    made: dict[str, object] = {}

    async def main() -> None:
        async with Client(stdio(WEATHER), version="2025-03-26") as client:
            made["weather_cities"] = await client.read_resource("weather://cities")
        made["handshake"] = client.trace
        made["client"] = client
        async with Client(stdio(WEATHER)) as client:  # structuredContent came with 2025-06-18
            made["forecast"] = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 5})
            made["forecast_3"] = await client.call_tool("get_forecast", {"city": "Tokyo", "days": 3})
            made["forecast_paris"] = await client.call_tool("get_forecast", {"city": "Paris", "days": 5})
            made["weather_tokyo"] = await client.call_tool("get_weather", {"city": "Tokyo"})
        made["handshake_latest"] = client.trace
        async with Client(stdio(WEATHER), version="2024-11-05") as client:
            pass
        made["handshake_2024"] = client.trace
        async with Client(MemoryTransport(_tools_only), version="2025-03-26") as client:
            pass
        made["handshake_toy"] = client.trace
        made.update(await _paged_traces(Client, stdio))
        async with Client(stdio(FILES)) as client:
            made["notes"] = await client.read_resource("file:///notes.md")
            made["notes_tool"] = await client.call_tool("read_file", {"path": "notes.md"})
            made["readme"] = await client.read_resource("file:///" + OTHER_FILE)

    anyio.run(main)
    return made


async def _paged_traces(Client, stdio) -> dict[str, object]:
    """Lab 03's tools/list paged by hand: the solution, and the ways a student pages it wrong, for real."""
    from mcplab.wire.errors import RemoteError

    made: dict[str, object] = {}

    async def paged(name: str, size: str | None, cursor_of, stop_after: int | None = None, again: bool = False):
        async with Client(stdio(FILES + (["--page-size", size] if size else []))) as client:
            params: dict = {}
            for number in range(1, 10):
                try:
                    page = await client.request("tools/list", params)
                except RemoteError:
                    break
                if "nextCursor" not in page or number == stop_after:
                    break
                params = {"cursor": cursor_of(page["nextCursor"])}
            if again:
                await client.request("tools/list", {})
        made[name] = client.trace

    await paged("paged", "1", lambda cursor: cursor)
    await paged("paged_one_page", None, lambda cursor: cursor)
    await paged("paged_stopped", "1", lambda cursor: cursor, stop_after=2)
    await paged("paged_changed", "1", lambda cursor: cursor.rstrip("=") + "x")
    await paged("paged_again", "1", lambda cursor: cursor, again=True)
    await paged("paged_pages_of_two", "2", lambda cursor: cursor)
    return made


# --- helpers for tables -------------------------------------------------------------------------------

def without(d: dict, *keys: str) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def changed(d: dict, path: str, value: object) -> dict:
    """A deep copy of ``d`` with the dotted ``path`` set to ``value`` (``DELETE`` removes it)."""
    out = copy.deepcopy(d)
    *parents, last = path.split(".")
    here = out
    for key in parents:
        here = here[key]
    if value is DELETE:
        del here[last]
    else:
        here[last] = value
    return out


DELETE = object()


def tool_result(structured=None, is_error=False, text="x"):
    return ToolResult.from_json({"content": [{"type": "text", "text": text}], "isError": is_error,
                                 **({"structuredContent": structured} if structured is not None else {})})


def _trace(*messages, channel="stdio"):
    trace = Trace()
    for direction, message in messages:
        trace.record(direction, channel, jsonrpc.encode(message), message)
    return trace


# --- Lab 01 -------------------------------------------------------------------------------------------

SEED_REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "/tmp/test.txt"}}}
LINE = lab01.SEED_REPLY_LINE
INSIDE = LINE.index("文".encode()) + 2
FIRST_BYTE = LINE.index("文".encode())
CODES = {"a": -32700, "b": -32601, "c": -32600, "d": -32602, "e": -32603}

# --- Lab 02 -------------------------------------------------------------------------------------------

SEED_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                              "clientInfo": {"name": "deep-pilot", "version": "0.8.0"}}}
NEGOTIATED = {"a": ("2025-11-25", "continue"), "b": ("2025-06-18", "continue"),
              "c": ("2025-03-26", "disconnect"), "d": ("2025-11-25", "continue")}

# --- Lab 03 -------------------------------------------------------------------------------------------

CONVERT_SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"},
                                                   "currency": {"type": "string", "default": "CNY"}},
                  "required": ["amount"]}
PRIMITIVES = {"a": "tool", "b": "resource", "c": "prompt", "d": "tool", "e": "resource"}
KINDS = {"a": "isError", "b": "protocol error", "c": "protocol error", "d": "isError", "e": "isError"}
AFTER_CANCEL = {"a": "stop, no response", "b": "ignore it", "c": "ignore it", "d": "ignore it", "e": "do not send it",
                "f": "do not send it", "g": "close the stream"}
TOO_EARLY = {"a": "error -32600", "b": "result", "c": "result", "d": "error -32602", "e": "HTTP 400",
             "f": "HTTP 400", "g": "result"}
NEXT_MOVE = {"a": "read the JSON body", "b": "keep reading", "c": "keep reading", "d": "take it and close the stream",
             "e": "nothing more to do", "f": "initialize again", "g": "fix the headers", "h": "nothing more to do"}
STRUCTURED = {"a": "use", "b": "reject", "c": "reject", "d": "not checked", "e": "use", "f": "reject"}
FORM_FITS = {"a": "fits", "b": "does not fit", "c": "does not fit", "d": "does not fit", "e": "does not fit",
             "f": "fits", "g": "does not fit"}
SERVER_NEXT = {"a": "notifications/progress", "b": "nothing", "c": "nothing", "d": "-32602", "e": "result",
               "f": "elicitation/create", "g": "input_required"}  # Lab 11 (build a server, part two)
_ASK = {"jsonrpc": "2.0", "method": "tools/list"}


def _pages(*cursors_asked, next_cursors, method="tools/list", error_at=None):
    """A made-up paging trace: request n carries cursors_asked[n], response n gives next_cursors[n]."""
    messages = []
    for number, (asked, given) in enumerate(zip(cursors_asked, next_cursors), 2):
        params = {"cursor": asked} if asked is not None else None
        messages.append(("c2s", jsonrpc.Request(number, method, params)))
        if number == error_at:
            messages.append(("s2c", jsonrpc.ErrorResponse(number, -32602, "expected a cursor")))
            continue
        result = {"tools": [{"name": f"t{number}", "inputSchema": {"type": "object"}}]}
        messages.append(("s2c", jsonrpc.Response(number, {**result, **({"nextCursor": given} if given else {})})))
    return _trace(*messages)

# --- Lab 04 -------------------------------------------------------------------------------------------

TOOL = lab04.MCP_TOOL
OPENAI = {"type": "function", "function": {"name": TOOL["name"], "description": TOOL["description"],
                                           "parameters": TOOL["inputSchema"]}}
ANTHROPIC = {"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["inputSchema"]}
ROUTE = ("weather", {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}})
RULE = Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_forecast", {"city": "{city}"})
LAYERS = {"a": "distribution", "b": "mechanism", "c": "model", "d": "application", "e": "distribution"}

# --- Lab 05 -------------------------------------------------------------------------------------------

POST_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "Mcp-Session-Id": lab05.SESSION_ID, "MCP-Protocol-Version": "2025-11-25"}
REPLIES = {"a": 202, "b": "json", "c": "sse", "d": 400, "e": 404, "f": 403, "g": 405, "h": 413}
VERDICTS = ["allow", "refuse", "refuse", "refuse", "refuse"]  # another port is another origin
READING = {"endpoints": 2, "post_to": "/messages?session_id=5f2e", "result_on": lab05.OLD_CHOICES[1]}


def read_events(body: str) -> list[dict]:
    """The solution's reader (labs/solutions/05_streamable_http_solutions.ipynb)."""
    messages, data = [], []
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data and "\n".join(data).strip():
                messages.append(json.loads("\n".join(data)))
            data = []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value[1:] if value.startswith(" ") else value)
    return messages


def _reader(split, *, drop_unfinished=True, skip_empty=True):
    """A reader built like the solution, with one of its steps done a plausible wrong way."""
    def read(body):
        messages, data = [], []
        for line in split(body):
            if line == "":
                if data and ("\n".join(data).strip() or not skip_empty):
                    messages.append(json.loads("\n".join(data)) if "\n".join(data).strip() else {})
                data = []
            elif line.startswith(":"):
                continue
            else:
                name, _, value = line.partition(":")
                if name == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
        if data and not drop_unfinished:
            messages.append(json.loads("\n".join(data)))
        return messages
    return read


def _crlf_only(body):
    return body.replace("\r\n", "\n").split("\n")


def _lf_only(body):
    return body.split("\n")


def _any_line_end(body):
    return body.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _splitlines(body):
    lines = body.splitlines()
    return lines + ([""] if body.endswith(("\n", "\r")) else [])


async def _async_reader(body):
    return read_events(body)


def _reader_that_forgets_to_return(body):
    messages = read_events(body)  # noqa: F841 - the slip under test


# --- Labs 06 and 07 -----------------------------------------------------------------------------------

MODERN = changed(lab06.LEGACY_CALL, "params._meta", {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "my-agent", "version": "1.0.0"}})
ROUTING = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_forecast",
           "Mcp-Param-City": "=?base64?5YyX5Lqs?="}
PROXY = {"a": "ok", "b": "fails", "c": "ok", "d": "ok", "e": "fails"}
TAMPERED = {"kind": "error", "code": -32602, "next": lab07.NEXT_STEPS[1]}

# --- Lab 15 -------------------------------------------------------------------------------------------

WEATHER_PY = str((ROOT / "servers" / "weather.py").resolve())
DESKTOP = {"command": sys.executable, "args": [WEATHER_PY, "--era", "legacy"]}
BACKENDS = [(1, 200), (2, 200), (3, 200), (1, 404)]
SERVER_JSON = {"name": "io.github.ada/files",
               "description": "Files in one folder, read-only unless told otherwise: a teaching server.",
               "version": "1.0.0",
               "packages": [{"registryType": "pypi", "identifier": "mcplab", "version": "0.1.0",
                             "transport": {"type": "stdio"},
                             "packageArguments": [{"type": "positional", "value": "serve"},
                                                  {"type": "positional", "value": "files"}]}]}


def protocol_wins(n, m):
    return (n - 1) * (m - 1) > 1


def _wins_without_return(n, m):
    (n - 1) * (m - 1) > 1  # noqa: B015 - the slip under test


async def _async_protocol_wins(n, m):
    return (n - 1) * (m - 1) > 1


# --- the right answers (from labs/solutions/) -----------------------------------------------------------

RIGHT: dict[str, object] = {
    "check_tools_call_request": SEED_REQUEST,
    "check_notification": {"jsonrpc": "2.0", "method": "notifications/initialized"},
    "check_find_invalid": ("D", "id"),
    "check_error_code": CODES,
    "check_awkward_split": [LINE[:INSIDE], LINE[INSIDE:]],
    "check_initialize_request": SEED_INITIALIZE,
    "check_handshake_order": ["D", "B", "A", "C"],
    "check_negotiation": NEGOTIATED,
    "check_allowed_calls": {"a", "d", "f"},
    "check_live_handshake": Live("handshake"),
    "check_input_schema": CONVERT_SCHEMA,
    "check_primitive_choice": PRIMITIVES,
    "check_error_kinds": KINDS,
    "check_forecast": Live("forecast"),
    "check_notes_resource": Live("notes"),
    "check_paged_tools": Live("paged"),
    "check_structured_verdicts": STRUCTURED,
    "check_too_early": TOO_EARLY,
    "check_after_cancel": AFTER_CANCEL,
    "check_next_move": NEXT_MOVE,
    "check_form_answers": FORM_FITS,
    "check_server_next": SERVER_NEXT,
    "check_openai_tool": OPENAI,
    "check_anthropic_tool": ANTHROPIC,
    "check_tools_call_for": ROUTE,
    "check_rule": RULE,
    "check_layers": LAYERS,
    "check_post_headers": POST_HEADERS,
    "check_replies": REPLIES,
    "check_sse_reader": read_events,
    "check_rebinding": VERDICTS,
    "check_old_transport": READING,
    "check_modern_request": MODERN,
    "check_routing_headers": ROUTING,
    "check_matrix_failures": {2: "a", 5: "b"},
    "check_behind_proxy": PROXY,
    "check_tampered_state": TAMPERED,
    "check_adapter_counts": (5 * 8, 5 + 8),
    "check_when_protocol_wins": protocol_wins,
    "check_break_even_density": 1 / 100 + 1 / 10_000,
    "check_break_even_n": 7,
    "check_revision_cost": (0.1 * 20 * 500 * 0.5, (20 + 500) * 2),
    "check_desktop_entry": DESKTOP,
    "check_side_effects": {"a"},
    "check_backends": BACKENDS,
    "check_server_json": SERVER_JSON,
}

# --- the wrong answers: (what the slip is, the answer) --------------------------------------------------

WRONG: dict[str, list[tuple[str, object]]] = {
    "check_tools_call_request": [
        ("wrong id 2", changed(SEED_REQUEST, "id", 2)),
        ("id off by one (0)", changed(SEED_REQUEST, "id", 0)),
        ("id as the string '1'", changed(SEED_REQUEST, "id", "1")),
        ("id null", changed(SEED_REQUEST, "id", None)),
        ("id true", changed(SEED_REQUEST, "id", True)),
        ("no id: a notification", without(SEED_REQUEST, "id")),
        ("no jsonrpc", without(SEED_REQUEST, "jsonrpc")),
        ("jsonrpc 2.0 as a number", changed(SEED_REQUEST, "jsonrpc", 2.0)),
        ("method call_tool", changed(SEED_REQUEST, "method", "call_tool")),
        ("method tools/read_file", changed(SEED_REQUEST, "method", "tools/read_file")),
        ("tool name readFile", changed(SEED_REQUEST, "params.name", "readFile")),
        ("no arguments", changed(SEED_REQUEST, "params.arguments", DELETE)),
        ("argument named file", changed(SEED_REQUEST, "params.arguments", {"file": "/tmp/test.txt"})),
        ("another path", changed(SEED_REQUEST, "params.arguments.path", "test.txt")),
        ("arguments as JSON text", changed(SEED_REQUEST, "params.arguments", '{"path": "/tmp/test.txt"}')),
        ("params as an array", changed(SEED_REQUEST, "params", ["read_file", {"path": "/tmp/test.txt"}])),
        ("name and arguments beside params", {**without(SEED_REQUEST, "params"), "name": "read_file",
                                              "arguments": {"path": "/tmp/test.txt"}}),
        ("the reply instead", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
        ("a batch of one", [SEED_REQUEST]),
        ("two messages on two lines", json.dumps(SEED_REQUEST) + "\n" + json.dumps(SEED_REQUEST)),
        ("Python repr, not JSON", repr(SEED_REQUEST)),
        ("a set inside", changed(SEED_REQUEST, "params.arguments.path", {"/tmp/test.txt"})),
    ],
    "check_notification": [
        ("with an id", {"jsonrpc": "2.0", "id": 1, "method": "notifications/initialized"}),
        ("with id null", {"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"}),
        ("method initialized", {"jsonrpc": "2.0", "method": "initialized"}),
        ("method notifications/initialize", {"jsonrpc": "2.0", "method": "notifications/initialize"}),
        ("method capitalised", {"jsonrpc": "2.0", "method": "Notifications/Initialized"}),
        ("no jsonrpc", {"method": "notifications/initialized"}),
        ("jsonrpc 2", {"jsonrpc": 2, "method": "notifications/initialized"}),
        ("the initialize request", SEED_INITIALIZE),
        ("a result", {"jsonrpc": "2.0", "id": 1, "result": {}}),
        ("the method alone", "notifications/initialized"),
        ("params a string", {"jsonrpc": "2.0", "method": "notifications/initialized", "params": "x"}),
    ],
    "check_find_invalid": [
        ("A, a string id", ("A", "id")), ("B, no id", ("B", "id")), ("C, an error", ("C", "both")),
        ("E, a result", ("E", "neither")), ("D for params", ("D", "params")), ("D for jsonrpc", ("D", "jsonrpc")),
        ("lower-case d", ("d", "id")), ("a list", ["D", "id"]), ("the letter alone", "D"),
        ("three items", ("D", "id", "null")), ("rule capitalised", ("D", "ID")), ("a dict", {"D": "id"}),
    ],
    "check_error_code": [
        ("b and c swapped", {**CODES, "b": -32600, "c": -32601}),
        ("d as an internal error", {**CODES, "d": -32603}),
        ("e as invalid params", {**CODES, "e": -32602}),
        ("all -32600", dict.fromkeys(CODES, -32600)),
        ("codes as strings", {k: str(v) for k, v in CODES.items()}),
        ("codes as floats", {k: float(v) for k, v in CODES.items()}),
        ("positive codes", {k: -v for k, v in CODES.items()}),
        ("names, not codes", {"a": "Parse error", "b": "Method not found", "c": "Invalid Request",
                              "d": "Invalid params", "e": "Internal error"}),
        ("a missing", without(CODES, "a")),
        ("an extra key", {**CODES, "f": -32000}),
        ("a list in order", list(CODES.values())),
        ("one still ...", {**CODES, "e": ...}),
        ("HTTP statuses", {"a": 400, "b": 404, "c": 400, "d": 422, "e": 500}),
    ],
    "check_awkward_split": [
        ("no cut", [LINE]),
        ("a cut between characters", [LINE[:FIRST_BYTE], LINE[FIRST_BYTE:]]),
        ("a cut at the end", [LINE, b""]),
        ("a cut at the start", [b"", LINE]),
        ("a byte lost", [LINE[:INSIDE], LINE[INSIDE + 1:]]),
        ("the newline lost", [LINE[:INSIDE], LINE[INSIDE:-1]]),
        ("text, not bytes", [LINE.decode("utf-8", "replace")[:40], LINE.decode("utf-8", "replace")[40:]]),
        ("bytearrays", [bytearray(LINE[:INSIDE]), bytearray(LINE[INSIDE:])]),
        ("the bytes, not a list", LINE),
        ("an empty list", []),
        ("a generator", (c for c in [LINE[:INSIDE], LINE[INSIDE:]])),
        ("the line re-encoded", [LINE.decode()[:30].encode("utf-16"), LINE.decode()[30:].encode("utf-16")]),
    ],
    "check_initialize_request": [
        ("no id", without(SEED_INITIALIZE, "id")),
        ("id null", changed(SEED_INITIALIZE, "id", None)),
        ("method initialized", changed(SEED_INITIALIZE, "method", "initialized")),
        ("the latest version", changed(SEED_INITIALIZE, "params.protocolVersion", "2025-11-25")),
        ("no version", changed(SEED_INITIALIZE, "params.protocolVersion", DELETE)),
        ("version as a date-like number", changed(SEED_INITIALIZE, "params.protocolVersion", 20241105)),
        ("no capabilities", changed(SEED_INITIALIZE, "params.capabilities", DELETE)),
        ("capabilities null", changed(SEED_INITIALIZE, "params.capabilities", None)),
        ("capabilities claimed", changed(SEED_INITIALIZE, "params.capabilities", {"roots": {}})),
        ("no clientInfo", changed(SEED_INITIALIZE, "params.clientInfo", DELETE)),
        ("serverInfo, not clientInfo", changed(changed(SEED_INITIALIZE, "params.clientInfo", DELETE),
                                              "params.serverInfo", {"name": "deep-pilot", "version": "0.8.0"})),
        ("the client's name misspelt", changed(SEED_INITIALIZE, "params.clientInfo.name", "deep_pilot")),
        ("the client's version short", changed(SEED_INITIALIZE, "params.clientInfo.version", "0.8")),
        ("no params", without(SEED_INITIALIZE, "params")),
        ("params beside, not inside", {**without(SEED_INITIALIZE, "params"), **SEED_INITIALIZE["params"]}),
        ("a set for capabilities", changed(SEED_INITIALIZE, "params.capabilities", set())),
        ("the server's reply", {"jsonrpc": "2.0", "id": 1, "result": SEED_INITIALIZE["params"]}),
    ],
    "check_handshake_order": [
        ("initialized before the reply", ["D", "A", "B", "C"]),
        ("the server first", ["B", "D", "A", "C"]),
        ("tools/list before initialized", ["D", "B", "C", "A"]),
        ("reversed", ["C", "A", "B", "D"]),
        ("alphabetical", ["A", "B", "C", "D"]),
        ("lower case", ["d", "b", "a", "c"]),
        ("three letters", ["D", "B", "A"]),
        ("a letter twice", ["D", "B", "A", "C", "C"]),
        ("a set", {"D", "B", "A", "C"}),
        ("numbers", [4, 2, 1, 3]),
        ("a number among letters", ["D", "B", "A", 3]),
        ("a dict", {1: "D", 2: "B", 3: "A", 4: "C"}),
    ],
    "check_negotiation": [
        ("b echoes an unsupported version", {**NEGOTIATED, "b": ("2025-11-25", "continue")}),
        ("b the server's oldest", {**NEGOTIATED, "b": ("2024-11-05", "continue")}),
        ("c continues", {**NEGOTIATED, "c": ("2025-03-26", "continue")}),
        ("c the server's oldest", {**NEGOTIATED, "c": ("2024-11-05", "disconnect")}),
        ("d echoes the request", {**NEGOTIATED, "d": ("2025-06-18", "continue")}),
        ("d disconnects", {**NEGOTIATED, "d": ("2025-11-25", "disconnect")}),
        ("a disconnects", {**NEGOTIATED, "a": ("2025-11-25", "disconnect")}),
        ("pairs turned around", {k: (d, v) for k, (v, d) in NEGOTIATED.items()}),
        ("Continue capitalised", {k: (v, d.capitalize()) for k, (v, d) in NEGOTIATED.items()}),
        ("versions only", {k: v for k, (v, _d) in NEGOTIATED.items()}),
        ("d missing", without(NEGOTIATED, "d")),
        ("a list of pairs", list(NEGOTIATED.values())),
        ("one still ...", {**NEGOTIATED, "c": ...}),
        ("triples", {k: (v, d, "ok") for k, (v, d) in NEGOTIATED.items()}),
    ],
    "check_allowed_calls": [
        ("ping forgotten", {"a", "d"}),
        ("subscribe too", {"a", "c", "d", "f"}),
        ("prompts too", {"a", "b", "d", "f"}),
        ("logging too", {"a", "d", "e", "f"}),
        ("everything", set("abcdef")),
        ("nothing", set()),
        ("upper case", {"A", "D", "F"}),
        ("method names", {"tools/call", "resources/read", "ping"}),
        ("a dict of booleans", {"a": True, "d": True, "f": True}),
        ("a dict saying no", {"a": False, "d": False, "f": False}),
        ("an unhashable item", [["a"], "d", "f"]),
        ("numbers", {1, 4, 6}),
    ],
    "check_live_handshake": [
        ("Lab 02's own toy server", Live("handshake_toy")),
        ("the weather server at its default version", Live("handshake_latest")),
        ("the weather server at 2024-11-05", Live("handshake_2024")),
        ("the client, not its trace", Live("client")),
        ("an empty trace", Trace()),
        ("the printed trace", "initialize → result → initialized"),
        ("a list of frames", [1, 2, 3]),
        ("a hand-made trace with no params", _trace(("c2s", jsonrpc.Request(1, "initialize")),
                                                    ("s2c", jsonrpc.Response(1, {"protocolVersion": "2025-03-26"})),
                                                    ("c2s", jsonrpc.Notification("notifications/initialized")))),
        ("a trace whose reply is not an object", _trace(
            ("c2s", jsonrpc.Request(1, "initialize", {"protocolVersion": "2025-03-26"})),
            ("s2c", jsonrpc.Response(1, ["2025-03-26"])),
            ("c2s", jsonrpc.Notification("notifications/initialized")))),
    ],
    "check_input_schema": [
        ("a wrong default", changed(CONVERT_SCHEMA, "properties.currency.default", "USD")),
        ("a default of the wrong type", changed(CONVERT_SCHEMA, "properties.currency.default", 0)),
        ("a default for amount", changed(CONVERT_SCHEMA, "properties.amount.default", 0)),
        ("currency required too", changed(CONVERT_SCHEMA, "required", ["amount", "currency"])),
        ("nothing required", changed(CONVERT_SCHEMA, "required", [])),
        ("amount an integer", changed(CONVERT_SCHEMA, "properties.amount.type", "integer")),
        ("float, the Python name", changed(CONVERT_SCHEMA, "properties.amount.type", "float")),
        ("str, the Python name", changed(CONVERT_SCHEMA, "properties.currency.type", "str")),
        ("currency left out", changed(CONVERT_SCHEMA, "properties.currency", DELETE)),
        ("only the currencies of the examples", changed(CONVERT_SCHEMA, "properties.currency",
                                                        {"type": "string", "enum": ["CNY", "EUR"]})),
        ("no type at the root", without(CONVERT_SCHEMA, "type")),
        ("an array at the root", changed(CONVERT_SCHEMA, "type", "array")),
        ("required as a string", changed(CONVERT_SCHEMA, "required", "amount")),
        ("the whole tools/list entry", {"name": "convert", "inputSchema": CONVERT_SCHEMA}),
        ("a broken reference", changed(CONVERT_SCHEMA, "properties.amount", {"$ref": "#/$defs/money"})),
        ("JSON text", json.dumps(CONVERT_SCHEMA)),
    ],
    "check_primitive_choice": [
        ("b a tool", {**PRIMITIVES, "b": "tool"}), ("c a tool", {**PRIMITIVES, "c": "tool"}),
        ("e a prompt", {**PRIMITIVES, "e": "prompt"}), ("a a resource", {**PRIMITIVES, "a": "resource"}),
        ("d a prompt", {**PRIMITIVES, "d": "prompt"}), ("b and c swapped", {**PRIMITIVES, "b": "prompt", "c": "resource"}),
        ("capitalised", {k: v.capitalize() for k, v in PRIMITIVES.items()}),
        ("plural", {k: v + "s" for k, v in PRIMITIVES.items()}),
        ("all tools", dict.fromkeys(PRIMITIVES, "tool")), ("e missing", without(PRIMITIVES, "e")),
        ("a list", list(PRIMITIVES.values())), ("one still ...", {**PRIMITIVES, "a": ...}),
    ],
    "check_error_kinds": [
        ("a a protocol error", {**KINDS, "a": "protocol error"}), ("b isError", {**KINDS, "b": "isError"}),
        ("c isError", {**KINDS, "c": "isError"}), ("d a protocol error", {**KINDS, "d": "protocol error"}),
        ("e a protocol error (the old rule)", {**KINDS, "e": "protocol error"}),
        ("is_error spelt the Python way", {k: v.replace("isError", "is_error") for k, v in KINDS.items()}),
        ("error codes instead", {"a": "isError", "b": -32602, "c": -32002, "d": "isError", "e": "isError"}),
        ("booleans", {k: v == "isError" for k, v in KINDS.items()}),
        ("all isError", dict.fromkeys(KINDS, "isError")), ("c missing", without(KINDS, "c")),
        ("one still ...", {**KINDS, "e": ...}),
    ],
    "check_forecast": [
        ("3 days", Live("forecast_3")), ("Paris", Live("forecast_paris")), ("a tool error", tool_result(is_error=True, text="days must be 1-7")),
        ("today's weather, not the forecast", Live("weather_tokyo")),
        ("a resource", Live("weather_cities")),
        ("the structured content alone", {"city": "Tokyo", "days": [{}] * 5}),
        ("the text alone", '{"city": "Tokyo"}'),
        ("a result with no structured content", tool_result()),
        ("a result whose days is a number", tool_result({"city": "Tokyo", "days": 5})),
        ("a result whose content is a list", tool_result(["Tokyo"] * 5)),
    ],
    "check_notes_resource": [
        ("through the read_file tool", Live("notes_tool")), ("another file", Live("readme")),
        ("a weather resource", Live("weather_cities")), ("the text alone", "# MCP notes\n"),
        ("the URI alone", "file:///notes.md"),
        ("notes.md of another folder", ResourceRead.from_json({"contents": [{"uri": "file:///notes.md",
                                                                             "text": "shopping list"}]})),
        ("two contents", ResourceRead.from_json({"contents": [{"uri": "file:///notes.md", "text": "# MCP notes"},
                                                              {"uri": "file:///notes.md", "text": "# MCP notes"}]})),
        ("a list of resources", [{"uri": "file:///notes.md"}]),
    ],
    "check_paged_tools": [
        ("one page: the server was not started with --page-size 1", Live("paged_one_page")),
        ("stopped while nextCursor was still there", Live("paged_stopped")),
        ("a cursor changed before it was sent back", Live("paged_changed")),
        ("asked again after the last page", Live("paged_again")),
        ("two pages of two", Live("paged_pages_of_two")),
        ("resources paged instead of tools", _pages(None, "c1", "c2", next_cursors=("c1", "c2", None),
                                                    method="resources/list")),
        ("a cursor on the first request", _pages("c0", "c1", "c2", next_cursors=("c1", "c2", None))),
        ("every request without a cursor", _pages(None, None, None, next_cursors=("c1", "c1", "c1"))),
        ("the first cursor sent twice", _pages(None, "c1", "c1", next_cursors=("c1", "c2", None))),
        ("a refused page", _pages(None, "c1", "oops", next_cursors=("c1", "c2", None), error_at=4)),
        ("a request with no answer", _trace(("c2s", jsonrpc.Request(2, "tools/list", None)))),
        ("the last result alone", Live("forecast")),
    ],
    "check_structured_verdicts": [
        ("b used: a string is close enough", {**STRUCTURED, "b": "use"}),
        ("c used: the text is there", {**STRUCTURED, "c": "use"}),
        ("c not checked: nothing to check", {**STRUCTURED, "c": "not checked"}),
        ("d rejected", {**STRUCTURED, "d": "reject"}),
        ("e rejected: an extra property", {**STRUCTURED, "e": "reject"}),
        ("f used: city is there", {**STRUCTURED, "f": "use"}),
        ("a not checked", {**STRUCTURED, "a": "not checked"}),
        ("booleans", {k: v == "use" for k, v in STRUCTURED.items()}),
        ("accept instead of use", {k: v.replace("use", "accept") for k, v in STRUCTURED.items()}),
        ("f missing", without(STRUCTURED, "f")),
        ("all use", dict.fromkeys(STRUCTURED, "use")),
        ("one still ...", {**STRUCTURED, "b": ...}),
    ],
    "check_after_cancel": [
        ("a: an error response, so the client knows", {**AFTER_CANCEL, "a": "do not send it"}),
        ("a: the tool finishes anyway", {**AFTER_CANCEL, "a": "ignore it"}),
        ("b: stop the finished call", {**AFTER_CANCEL, "b": "stop, no response"}),
        ("c: stop whatever runs", {**AFTER_CANCEL, "c": "stop, no response"}),
        ("d: the late response is used", {**AFTER_CANCEL, "d": "stop, no response"}),
        ("e: initialize cancelled like any request", {**AFTER_CANCEL, "e": "stop, no response"}),
        ("f: a server cancels as in 2025-11-25", {**AFTER_CANCEL, "f": "stop, no response"}),
        ("g: a notification over HTTP too", {**AFTER_CANCEL, "g": "do not send it"}),
        ("g: the legacy answer", {**AFTER_CANCEL, "g": "stop, no response"}),
        ("b missing", without(AFTER_CANCEL, "b")),
        ("all ignored", dict.fromkeys(AFTER_CANCEL, "ignore it")),
        ("one still ...", {**AFTER_CANCEL, "d": ...}),
    ],
    "check_next_move": [
        ("a: JSON read as a stream", {**NEXT_MOVE, "a": "keep reading"}),
        ("b: the priming event taken for the response", {**NEXT_MOVE, "b": "take it and close the stream"}),
        ("c: the log line taken for the response", {**NEXT_MOVE, "c": "take it and close the stream"}),
        ("d: reading on after the response", {**NEXT_MOVE, "d": "keep reading"}),
        ("e: 202 read as JSON", {**NEXT_MOVE, "e": "read the JSON body"}),
        ("f: 404 retried with the same session", {**NEXT_MOVE, "f": "fix the headers"}),
        ("f: 404 taken as the end", {**NEXT_MOVE, "f": "nothing more to do"}),
        ("g: -32020 answered by a new session", {**NEXT_MOVE, "g": "initialize again"}),
        ("h: 405 answered by a new initialize", {**NEXT_MOVE, "h": "initialize again"}),
        ("h missing", without(NEXT_MOVE, "h")),
        ("all keep reading", dict.fromkeys(NEXT_MOVE, "keep reading")),
        ("a status for a move", {**NEXT_MOVE, "e": 202}),
        ("one still ...", {**NEXT_MOVE, "c": ...}),
    ],
    "check_form_answers": [
        ("b: a number in a string is a number", {**FORM_FITS, "b": "fits"}),
        ("c: no maximum is enforced", {**FORM_FITS, "c": "fits"}),
        ("d: a missing field is left empty", {**FORM_FITS, "d": "fits"}),
        ("e: true is 1", {**FORM_FITS, "e": "fits"}),
        ("f: only the form's fields", {**FORM_FITS, "f": "does not fit"}),
        ("g: an empty name is still a string", {**FORM_FITS, "g": "fits"}),
        ("a missing", without(FORM_FITS, "a")),
        ("every answer fits", dict.fromkeys(FORM_FITS, "fits")),
        ("accept and cancel instead", {k: "accept" if v == "fits" else "cancel" for k, v in FORM_FITS.items()}),
        ("one still ...", {**FORM_FITS, "c": ...}),
    ],
    "check_server_next": [
        ("a: progress without being asked? no: with a token it is sent", {**SERVER_NEXT, "a": "nothing"}),
        ("b: progress for every long call", {**SERVER_NEXT, "b": "notifications/progress"}),
        ("c: a result saying it was cancelled", {**SERVER_NEXT, "c": "result"}),
        ("c: an error response for the cancelled call", {**SERVER_NEXT, "c": "-32602"}),
        ("d: the first page again", {**SERVER_NEXT, "d": "result"}),
        ("e: a cursor handed back is refused", {**SERVER_NEXT, "e": "-32602"}),
        ("f: the modern way in a legacy session", {**SERVER_NEXT, "f": "input_required"}),
        ("g: a request in 2026-07-28", {**SERVER_NEXT, "g": "elicitation/create"}),
        ("g missing", without(SERVER_NEXT, "g")),
        ("a code as a number", {**SERVER_NEXT, "d": -32602}),
        ("one still ...", {**SERVER_NEXT, "b": ...}),
    ],
    "check_too_early": [
        ("a answered: the server is friendly", {**TOO_EARLY, "a": "result"}),
        ("b refused: nothing before initialize", {**TOO_EARLY, "b": "error -32600"}),
        ("c refused: initialize is always first", {**TOO_EARLY, "c": "error -32600"}),
        ("d -32600 as in a", {**TOO_EARLY, "d": "error -32600"}),
        ("e -32600 as over stdio", {**TOO_EARLY, "e": "error -32600"}),
        ("f answered: ping is allowed", {**TOO_EARLY, "f": "result"}),
        ("g refused: no session", {**TOO_EARLY, "g": "HTTP 400"}),
        ("404 for no session", {**TOO_EARLY, "e": "HTTP 404"}),
        ("bare codes", {**TOO_EARLY, "a": -32600}),
        ("g missing", without(TOO_EARLY, "g")),
        ("all results", dict.fromkeys(TOO_EARLY, "result")),
        ("one still ...", {**TOO_EARLY, "c": ...}),
    ],
    "check_openai_tool": [
        ("the Anthropic shape", ANTHROPIC), ("the MCP tool itself", TOOL),
        ("no type", without(OPENAI, "type")), ("type tool", changed(OPENAI, "type", "tool")),
        ("input_schema inside", changed(changed(OPENAI, "function.parameters", DELETE), "function.input_schema",
                                        TOOL["inputSchema"])),
        ("the host's prefixed name", changed(OPENAI, "function.name", "weather__get_forecast")),
        ("description shortened", changed(OPENAI, "function.description", "Forecast")),
        ("required dropped", changed(OPENAI, "function.parameters", without(TOOL["inputSchema"], "required"))),
        ("limits dropped", changed(OPENAI, "function.parameters.properties.days", {"type": "integer"})),
        ("flat", {"type": "function", "name": TOOL["name"], "description": TOOL["description"],
                  "parameters": TOOL["inputSchema"]}),
        ("JSON text", json.dumps(OPENAI)), ("a list of one", [OPENAI]),
    ],
    "check_anthropic_tool": [
        ("the OpenAI shape", OPENAI), ("the MCP tool itself", TOOL),
        ("parameters, OpenAI's name", {**without(ANTHROPIC, "input_schema"), "parameters": TOOL["inputSchema"]}),
        ("inputSchema, MCP's name", {**without(ANTHROPIC, "input_schema"), "inputSchema": TOOL["inputSchema"]}),
        ("no description", without(ANTHROPIC, "description")),
        ("the host's prefixed name", changed(ANTHROPIC, "name", "weather__get_forecast")),
        ("schema as JSON text", changed(ANTHROPIC, "input_schema", json.dumps(TOOL["inputSchema"]))),
        ("required dropped", changed(ANTHROPIC, "input_schema", without(TOOL["inputSchema"], "required"))),
        ("wrapped in type/function", {"type": "function", "function": ANTHROPIC}),
        ("JSON text", json.dumps(ANTHROPIC)),
    ],
    "check_tools_call_for": [
        ("the files server", ("files", ROUTE[1])),
        ("the prefixed name", ("weather", {**ROUTE[1], "name": "weather__get_forecast"})),
        ("arguments still JSON text", ("weather", {**ROUTE[1], "arguments": '{"city": "Tokyo", "days": 2}'})),
        ("days dropped", ("weather", {**ROUTE[1], "arguments": {"city": "Tokyo"}})),
        ("days as a string", ("weather", {**ROUTE[1], "arguments": {"city": "Tokyo", "days": "2"}})),
        ("no arguments", ("weather", {"name": "get_forecast"})),
        ("a whole request as params", ("weather", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                                   "params": ROUTE[1]})),
        ("server, name, arguments", ("weather", "get_forecast", {"city": "Tokyo", "days": 2})),
        ("a dict", {"server": "weather", "params": ROUTE[1]}), ("the function call itself", lab04.MODEL_CALL),
        ("the server alone", "weather"), ("params as JSON text", ("weather", json.dumps(ROUTE[1]))),
    ],
    "check_rule": [
        ("fits Tokyo only", Rule(r"forecast for Tokyo", "get_forecast", {"city": "Tokyo"})),
        ("the cities of the example", Rule(r"(?P<city>Tokyo|Paris|Seattle)", "get_forecast", {"city": "{city}"})),
        ("fires on any city", Rule(r"(?:for|in) (?P<city>[A-Z][a-z]+)", "get_forecast", {"city": "{city}"})),
        ("fires on any capitalised word", Rule(r"\b(?P<city>[A-Z][a-z]+)\b", "get_forecast", {"city": "{city}"})),
        ("the wrong tool", Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_weather", {"city": "{city}"})),
        ("a tool nobody offers", Rule(r"forecast", "get_forecast_v2", {})),
        ("no arguments", Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_forecast", {})),
        ("a days argument nobody asked for", Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_forecast",
                                                 {"city": "{city}", "days": "7"})),
        ("an unnamed group", Rule(r"forecast for ([A-Z][a-z]+)", "get_forecast", {"city": "{city}"})),
        ("a regex that does not compile", Rule(r"forecast for (?P<city>[A-Z][a-z]+", "get_forecast",
                                               {"city": "{city}"})),
        ("the group name misspelt", Rule(r"forecast for (?P<town>[A-Z][a-z]+)", "get_forecast", {"city": "{city}"})),
        ("arguments that are not text", Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_forecast", {"city": 1})),
        ("the pattern alone", r"forecast for (?P<city>[A-Z][a-z]+)"),
        ("a list of one rule", [RULE]),
    ],
    "check_layers": [
        ("b the model", {**LAYERS, "b": "model"}), ("a mechanism", {**LAYERS, "a": "mechanism"}),
        ("c the application", {**LAYERS, "c": "application"}), ("d distribution", {**LAYERS, "d": "distribution"}),
        ("e mechanism", {**LAYERS, "e": "mechanism"}), ("MCP, not distribution", {**LAYERS, "a": "MCP", "e": "MCP"}),
        ("capitalised", {k: v.capitalize() for k, v in LAYERS.items()}),
        ("all distribution", dict.fromkeys(LAYERS, "distribution")), ("e missing", without(LAYERS, "e")),
        ("one still ...", {**LAYERS, "d": ...}), ("a list", list(LAYERS.values())),
    ],
    "check_post_headers": [
        ("no Accept", without(POST_HEADERS, "Accept")),
        ("JSON only", {**POST_HEADERS, "Accept": "application/json"}),
        ("anything", {**POST_HEADERS, "Accept": "*/*"}),
        ("no Content-Type", without(POST_HEADERS, "Content-Type")),
        ("Content-Type text", {**POST_HEADERS, "Content-Type": "text/plain"}),
        ("no session id", without(POST_HEADERS, "Mcp-Session-Id")),
        ("another session id", {**POST_HEADERS, "Mcp-Session-Id": "5f2e"}),
        ("the session id upper-cased", {**POST_HEADERS, "Mcp-Session-Id": lab05.SESSION_ID.upper()}),
        ("no version", without(POST_HEADERS, "MCP-Protocol-Version")),
        ("an older version", {**POST_HEADERS, "MCP-Protocol-Version": "2025-06-18"}),
        ("the stateless revision's headers", {"Accept": POST_HEADERS["Accept"], "Content-Type": "application/json",
                                              "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}),
        ("a list of pairs", list(POST_HEADERS.items())),
        ("a value that is not a string", {**POST_HEADERS, "MCP-Protocol-Version": 20251125}),
        ("one still ...", {**POST_HEADERS, "Accept": ...}),
    ],
    "check_replies": [
        ("a notification gets 200", {**REPLIES, "a": 200}), ("a plain result as sse", {**REPLIES, "b": "sse"}),
        ("progress as json", {**REPLIES, "c": "json"}), ("no session: 404", {**REPLIES, "d": 404}),
        ("an ended session: 400", {**REPLIES, "e": 400}), ("a foreign Origin: 401", {**REPLIES, "f": 401}),
        ("PUT: 404", {**REPLIES, "g": 404}), ("too large: 400", {**REPLIES, "h": 400}),
        ("200 for the results", {**REPLIES, "b": 200, "c": 200}),
        ("statuses as strings", {k: str(v) for k, v in REPLIES.items()}),
        ("statuses as floats", {k: float(v) if isinstance(v, int) else v for k, v in REPLIES.items()}),
        ("JSON capitalised", {**REPLIES, "b": "JSON", "c": "SSE"}),
        ("h missing", without(REPLIES, "h")), ("one still ...", {**REPLIES, "h": ...}),
        ("a list", list(REPLIES.values())),
    ],
    "check_sse_reader": [
        ("LF only", _reader(_lf_only)),
        ("CRLF and LF, not a bare CR", _reader(_crlf_only)),
        ("str.splitlines, which splits inside a JSON string too", _reader(_splitlines)),
        ("keeps the unfinished last event", _reader(_any_line_end, drop_unfinished=False)),
        ("keeps the priming event", _reader(_any_line_end, skip_empty=False)),
        ("cuts a fixed 'data: ' prefix", lambda body: [json.loads(line[6:]) for line in _any_line_end(body)
                                                       if line.startswith("data")]),
        ("one message per data line", lambda body: [json.loads(line.partition(":")[2]) for line in
                                                    _any_line_end(body) if line.startswith("data:")
                                                    and line.partition(":")[2].strip()]),
        ("returns the data text, not dicts", lambda body: [line[5:].strip() for line in _any_line_end(body)
                                                           if line.startswith("data:")]),
        ("raises", lambda body: 1 / 0),
        ("forgets to return", _reader_that_forgets_to_return),
        ("written with async def", _async_reader),
        ("takes no argument", lambda: []),
        ("the answer for one stream", lambda body: [{"jsonrpc": "2.0", "id": 1, "result": {}}]),
        ("a list, not a function", [{"jsonrpc": "2.0", "id": 1, "result": {}}]),
    ],
    "check_rebinding": [
        ("all allowed", ["allow"] * 5), ("all refused", ["refuse"] * 5),
        ("no Origin refused, and a page on another local port allowed", ["refuse", "allow", "refuse", "refuse", "refuse"]),
        ("a page on another local port allowed: the host alone compared", ["allow", "allow", "refuse", "refuse", "refuse"]),
        ("rebinding allowed: the Origin matches the Host", ["allow", "refuse", "allow", "refuse", "refuse"]),
        ("a foreign page allowed: the Host is loopback", ["allow", "refuse", "refuse", "allow", "refuse"]),
        ("null allowed", ["allow", "refuse", "refuse", "refuse", "allow"]),
        ("capitalised", [v.capitalize() for v in VERDICTS]), ("booleans", [True, True, False, False, False]),
        ("four verdicts", VERDICTS[:4]), ("a dict", dict(enumerate(VERDICTS))), ("one still ...", VERDICTS[:4] + [...]),
    ],
    "check_old_transport": [
        ("one endpoint", {**READING, "endpoints": 1}), ("two as text", {**READING, "endpoints": "2"}),
        ("two as a float", {**READING, "endpoints": 2.0}),
        ("POST to the path without its query", {**READING, "post_to": "/messages"}),
        ("POST to the stream", {**READING, "post_to": "/sse"}),
        ("POST to the modern endpoint", {**READING, "post_to": "/mcp"}),
        ("the result on the POST", {**READING, "result_on": lab05.OLD_CHOICES[0]}),
        ("the choice's number", {**READING, "result_on": 1}),
        ("the choice in own words", {**READING, "result_on": "GET /sse"}),
        ("a key missing", without(READING, "result_on")), ("one still ...", {**READING, "post_to": ...}),
        ("a tuple", tuple(READING.values())),
    ],
    "check_modern_request": [
        ("_meta beside params", {**lab06.LEGACY_CALL, "_meta": MODERN["params"]["_meta"]}),
        ("the legacy call unchanged", lab06.LEGACY_CALL),
        ("a legacy version", changed(MODERN, "params._meta", {**MODERN["params"]["_meta"],
                                                             "io.modelcontextprotocol/protocolVersion": "2025-11-25"})),
        ("a version that does not exist", changed(MODERN, "params._meta", {
            **MODERN["params"]["_meta"], "io.modelcontextprotocol/protocolVersion": "2026-07-29"})),
        ("no capabilities", changed(MODERN, "params._meta", without(MODERN["params"]["_meta"],
                                                                    "io.modelcontextprotocol/clientCapabilities"))),
        ("capabilities null", changed(MODERN, "params._meta", {
            **MODERN["params"]["_meta"], "io.modelcontextprotocol/clientCapabilities": None})),
        ("keys without their prefix", changed(MODERN, "params._meta", {"protocolVersion": "2026-07-28",
                                                                       "clientCapabilities": {}})),
        ("_meta as a list", changed(MODERN, "params._meta", list(MODERN["params"]["_meta"].items()))),
        ("the id changed", changed(MODERN, "id", 1)), ("the method changed", changed(MODERN, "method", "server/discover")),
        ("the arguments changed", changed(MODERN, "params.arguments", {"city": "北京"})),
        ("an initialize inside", changed(MODERN, "method", "initialize")),
        ("not JSON", "{'jsonrpc': '2.0'}"), ("a list", [MODERN]),
    ],
    "check_routing_headers": [
        ("Mcp-Name names the server", {**ROUTING, "Mcp-Name": "weather"}),
        ("the city unencoded", {**ROUTING, "Mcp-Param-City": "北京"}),
        ("the city in English", {**ROUTING, "Mcp-Param-City": "Beijing"}),
        ("base64 without the sentinel", {**ROUTING, "Mcp-Param-City": "5YyX5Lqs"}),
        ("no method", without(ROUTING, "Mcp-Method")), ("another method", {**ROUTING, "Mcp-Method": "tools/list"}),
        ("no version", without(ROUTING, "MCP-Protocol-Version")),
        ("a legacy version", {**ROUTING, "MCP-Protocol-Version": "2025-11-25"}),
        ("a session id too", {**ROUTING, "Mcp-Session-Id": "abc"}),
        ("days too, though unmarked", {**ROUTING, "Mcp-Param-Days": "2"}),
        ("no param header", without(ROUTING, "Mcp-Param-City")),
        ("a value that is not a string", {**ROUTING, "Mcp-Param-Days": 2}),
        ("one still ...", {**ROUTING, "Mcp-Name": ...}), ("a list of pairs", list(ROUTING.items())),
    ],
    "check_matrix_failures": [
        ("reasons swapped", {2: "b", 5: "a"}), ("the HTTP reason", {2: "d", 5: "d"}),
        ("row 5 forgotten", {2: "a"}), ("a working row too", {2: "a", 5: "b", 7: "c"}),
        ("a dual-era row", {2: "a", 4: "a", 5: "b"}), ("a row that does not exist", {2: "a", 5: "b", 8: "c"}),
        ("rows as strings", {"2": "a", "5": "b"}), ("letters capitalised", {2: "A", 5: "B"}),
        ("the version reason", {2: "a", 5: "c"}), ("the rows alone", {2, 5}), ("a list", ["a", "b"]),
        ("one still ...", {2: "a", 5: ...}), ("rows off by one", {1: "a", 4: "b"}),
    ],
    "check_behind_proxy": [
        ("the session survives", {**PROXY, "b": "ok"}), ("the sealed state survives", {**PROXY, "e": "ok"}),
        ("initialize fails", {**PROXY, "a": "fails"}), ("modern fails", {**PROXY, "c": "fails"}),
        ("the stateless retry fails", {**PROXY, "d": "fails"}), ("all ok", dict.fromkeys(PROXY, "ok")),
        ("fail, not fails", {k: v.replace("fails", "fail") for k, v in PROXY.items()}),
        ("booleans", {k: v == "ok" for k, v in PROXY.items()}), ("e missing", without(PROXY, "e")),
        ("one still ...", {**PROXY, "e": ...}), ("a list", list(PROXY.values())),
    ],
    "check_tampered_state": [
        ("a result", {**TAMPERED, "kind": "result"}), ("a tool error", {**TAMPERED, "kind": "isError"}),
        ("Error capitalised", {**TAMPERED, "kind": "Error"}), ("an internal error", {**TAMPERED, "code": -32603}),
        ("the code as text", {**TAMPERED, "code": "-32602"}), ("the code as a float", {**TAMPERED, "code": -32602.0}),
        ("HTTP 400", {**TAMPERED, "code": 400}), ("retry as it was", {**TAMPERED, "next": lab07.NEXT_STEPS[0]}),
        ("cancel", {**TAMPERED, "next": lab07.NEXT_STEPS[2]}), ("the step's number", {**TAMPERED, "next": 1}),
        ("the step in own words", {**TAMPERED, "next": "send the original request again"}),
        ("a key missing", without(TAMPERED, "next")), ("one still ...", {**TAMPERED, "code": ...}),
    ],
    "check_adapter_counts": [
        ("swapped", (13, 40)), ("added twice", (13, 13)), ("multiplied twice", (40, 40)),
        ("off by one", (39, 13)), ("one too many implementations", (40, 14)), ("both directions", (80, 13)),
        ("not whole", (40, 13.5)), ("text", ("40", "13")), ("one number", 40), ("three numbers", (40, 13, 27)),
        ("the saving", (27, 13)), ("a boolean", (True, 13)), ("not a number", (float("nan"), 13)),
    ],
    "check_when_protocol_wins": [
        ("not strictly fewer", lambda n, m: n + m <= n * m), ("both sides above one", lambda n, m: n > 1 and m > 1),
        ("always", lambda n, m: True), ("never", lambda n, m: False), ("many pairs", lambda n, m: n * m > 10),
        ("fits only the hint's cases", lambda n, m: (n, m) in {(3, 4)}),
        ("right on the grid only", lambda n, m: (n - 1) * (m - 1) > 1 if n <= 30 and m <= 30 else False),
        ("one argument", lambda n: True), ("raises", lambda n, m: 1 / 0), ("returns text", lambda n, m: "no"),
        ("forgets to return", _wins_without_return), ("written with async def", _async_protocol_wins),
        ("the truth table, not a function", {(2, 3): True}),
    ],
    "check_break_even_density": [
        ("a percentage", 1.01), ("1/N only", 0.01), ("1/M only", 0.0001), ("the reciprocal", 1 / 0.0101),
        ("the tools per app", 101), ("the share left unwired", 1 - 0.0101), ("close but off", 0.0102),
        ("text", "0.0101"), ("not a number", float("nan")), ("infinite", float("inf")), ("a tuple", (0.0101,)),
        ("zero", 0), ("a boolean", True),
    ],
    "check_break_even_n": [
        ("where the lines cross", 20 / 3), ("one too few", 6), ("one too many", 8), ("priced like an adapter", 2),
        ("twice too many", 14), ("zero", 0), ("negative", -7), ("not whole", 7.5), ("text", "7"),
        ("a boolean", True), ("a list", [7]),
    ],
    "check_revision_cost": [
        ("swapped", (1040, 500)), ("every pair touched", (5000, 1040)), ("adapters counted, not priced", (1000, 1040)),
        ("implementations counted, not priced", (500, 520)), ("density applied to the protocol", (500, 104)),
        ("an implementation at an adapter's price", (500, 260)), ("off by one pair", (500.5, 1040)),
        ("text", ("500", "1040")), ("one number", 1540), ("the total", (1540,)), ("not a number", (float("inf"), 1040)),
    ],
    "check_desktop_entry": [
        ("python by name", {**DESKTOP, "command": "python"}),
        ("a relative script", {**DESKTOP, "args": ["servers/weather.py", "--era", "legacy"]}),
        ("no era flag", {**DESKTOP, "args": [WEATHER_PY]}),
        ("the modern era", {**DESKTOP, "args": [WEATHER_PY, "--era", "modern"]}),
        ("both eras", {**DESKTOP, "args": [WEATHER_PY, "--era", "dual-era"]}),
        ("the flag as one argument", {**DESKTOP, "args": [WEATHER_PY, "--era legacy"]}),
        ("a working folder", {**DESKTOP, "cwd": str(ROOT)}),
        ("args as one string", {**DESKTOP, "args": f"{WEATHER_PY} --era legacy"}),
        ("the files server", {**DESKTOP, "args": [str(ROOT / "servers" / "files.py"), "--era", "legacy"]}),
        ("through a shell", {"command": "/bin/sh", "args": ["-c", f"python {WEATHER_PY} --era legacy"]}),
        ("through env", {"command": "/usr/bin/env", "args": ["python", WEATHER_PY, "--era", "legacy"]}),
        ("an interpreter that is not there", {**DESKTOP, "command": "/nonexistent/python3"}),
        ("a program that is not Python", {**DESKTOP, "command": "/bin/false"}),
        ("env values that are not text", {**DESKTOP, "env": {"PYTHONUNBUFFERED": 1}}),
        ("env as a list", {**DESKTOP, "env": ["PYTHONUNBUFFERED=1"]}),
        ("the whole mcpServers file", {"mcpServers": {"weather": DESKTOP}}),
        ("JSON text", json.dumps(DESKTOP)),
    ],
    "check_side_effects": [
        ("every tool", {"a", "d", "f"}), ("the file tools", {"a", "f"}), ("nothing", set()),
        ("the resource read", {"b"}), ("the prompt", {"a", "c"}), ("an unknown letter", {"a", "g"}),
        ("everything", set("abcdef")), ("a number", {1}), ("a dict", {"a": True}), ("None inside", {None}),
        ("the tool's name", {"write_file"}),
    ],
    "check_backends": [
        ("sticky", [(1, 200), (2, 200), (3, 200), (3, 200)]), ("the session survives", [(1, 200), (2, 200), (3, 200), (1, 200)]),
        ("by client", [(1, 200), (1, 200), (2, 200), (2, 404)]), ("all on one", [(1, 200)] * 4),
        ("off by one", [(2, 200), (3, 200), (1, 200), (2, 404)]), ("a 400", [(1, 200), (2, 200), (3, 200), (1, 400)]),
        ("three pairs", BACKENDS[:3]), ("text", [(str(b), str(s)) for b, s in BACKENDS]),
        ("floats that round down", [(b + 0.9, s) for b, s in BACKENDS]),
        ("booleans for backend 1", [(True, 200), (2, 200), (3, 200), (True, 404)]),
        ("backends only", [1, 2, 3, 1]), ("a dict", dict(BACKENDS[:3])), ("triples", [(b, s, "ok") for b, s in BACKENDS]),
    ],
    "check_server_json": [
        ("a bare name", {**SERVER_JSON, "name": "files"}),
        ("two slashes", {**SERVER_JSON, "name": "io.github.ada/mcplab/files"}),
        ("a long description", {**SERVER_JSON, "description": "x" * 101}),
        ("a version range", {**SERVER_JSON, "version": "^1.0.0"}),
        ("version latest", {**SERVER_JSON, "version": "latest"}),
        ("no version", without(SERVER_JSON, "version")),
        ("no packages", without(SERVER_JSON, "packages")),
        ("an empty package list", {**SERVER_JSON, "packages": []}),
        ("package version latest", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "version": "latest"}])),
        ("package version a number", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "version": 1}])),
        ("over HTTP", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0],
                                                         "transport": {"type": "streamable-http"}}])),
        ("transport as a word", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "transport": "stdio"}])),
        ("on npm", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "registryType": "npm"}])),
        ("another package", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "identifier": "mcp-files"}])),
        ("arguments reversed", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0], "packageArguments": [
            {"type": "positional", "value": "files"}, {"type": "positional", "value": "serve"}]}])),
        ("arguments as plain strings", changed(SERVER_JSON, "packages", [{**SERVER_JSON["packages"][0],
                                                                          "packageArguments": ["serve", "files"]}])),
        ("the package as a list", changed(SERVER_JSON, "packages", [list(SERVER_JSON["packages"][0].items())])),
        ("the package a string", changed(SERVER_JSON, "packages", ["mcplab"])),
        ("no identifier", changed(SERVER_JSON, "packages", [without(SERVER_JSON["packages"][0], "identifier")])),
        ("JSON text", json.dumps(SERVER_JSON)),
    ],
}

# --- what any check may be handed by mistake -------------------------------------------------------------


async def _coroutine_function(*args):
    return None


def _raising_function(*args):
    raise RuntimeError("boom")


class _Unprintable:
    def __repr__(self):
        raise ValueError("no repr")

    def __eq__(self, other):
        raise TypeError("no comparison")

    __hash__ = object.__hash__


HOSTILE: list[tuple[str, object]] = [
    ("None", None), ("an int", 42), ("a float", 3.5), ("nan", float("nan")), ("an empty string", ""),
    ("a word", "answer"), ("bytes that are not UTF-8", b"\xff\xfe"), ("an empty list", []), ("an empty dict", {}),
    ("an empty set", set()), ("an object", object()), ("an object that cannot be compared", _Unprintable()),
    ("an async function", _coroutine_function), ("a function that raises", _raising_function),
    ("a class", dict), ("a deep list", [[[[[[]]]]]]), ("a long string", "x" * 100_000),
]


# --- Labs 13 and 14: their tables live in test_exercises_lab13_14.py (each row with the sentence it must get);
# the same answers run here through the guard's checks (no traceback, a hint after each wrong try). ---------

def _labs13_14() -> None:
    import test_exercises_lab13_14 as security_tables

    RIGHT.update(security_tables.RIGHT)
    for name, answer, says in security_tables.WRONG:
        WRONG.setdefault(name, []).append((says, answer))


_labs13_14()
