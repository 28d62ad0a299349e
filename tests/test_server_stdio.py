"""The bundled servers over a real stdio pipe, spoken to in raw framed JSON (no client library).

Every line a server writes is validated against the official schema of the negotiated revision
(tests/server_helpers.RawServer)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from mcplab.wire.versions import LEGACY_VERSIONS

from server_helpers import ROOT, RawServer, fill_form, server_argv

pytestmark = pytest.mark.subprocess

SAMPLING_ANSWER = {"role": "assistant", "content": {"type": "text", "text": "a test reply"}, "model": "test-model",
                   "stopReason": "endTurn"}
ANSWERS = {"sampling/createMessage": lambda params: SAMPLING_ANSWER,
           "elicitation/create": lambda params: {"action": "accept", "content": fill_form(params["requestedSchema"])},
           "roots/list": lambda params: {"roots": []}}
CLIENT_CAPABILITIES = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}

# What to call each tool and prompt with; a tool or prompt missing here fails the test.
ARGUMENTS = {
    "weather": {"get_weather": {"city": "Beijing", "units": "imperial"}, "get_forecast": {"city": "Seattle", "days": 7},
                "weather_report": {"city": "Tokyo", "style": "detailed"}},
    "files": {"read_file": {"path": "logo.png"}, "list_directory": {"path": "src"}, "search_files": {"pattern": "*.md"},
              "get_file_info": {"path": "data.json"}, "summarize_file": {"path": "notes.md"},
              "review_code": {"path": "src/greet.py", "focus": "bugs"}},
    "conformance": {"test_simple_text": {}, "test_image_content": {}, "test_audio_content": {},
                    "test_embedded_resource": {}, "test_multiple_content_types": {}, "test_error_handling": {},
                    "test_tool_with_progress": {}, "test_tool_with_logging": {},
                    "test_sampling": {"prompt": "Say hi"}, "test_elicitation": {"message": "Who are you?"},
                    "test_elicitation_sep1034_defaults": {}, "test_elicitation_sep1330_enums": {},
                    "json_schema_2020_12_tool": {"name": "Ada", "contactMethod": "email", "email": "ada@example.org"},
                    "test_simple_prompt": {}, "test_prompt_with_arguments": {"arg1": "hello", "arg2": "world"},
                    "test_prompt_with_embedded_resource": {"resourceUri": "test://example-resource"},
                    "test_prompt_with_image": {},
                    "test_input_required_result_elicitation": {}, "test_input_required_result_sampling": {},
                    "test_input_required_result_list_roots": {}, "test_input_required_result_request_state": {},
                    "test_input_required_result_multiple_inputs": {}, "test_input_required_result_multi_round": {},
                    "test_input_required_result_tampered_state": {}, "test_input_required_result_capabilities": {},
                    "test_missing_capability": {}, "test_streaming_elicitation": {}, "test_logging_tool": {},
                    "test_trigger_tool_change": {}, "test_trigger_prompt_change": {},
                    "test_header_param": {"region": "us-west1"}, "test_input_required_result_prompt": {}},
}
TEMPLATE_URI = {"weather": "weather://city/Tokyo", "files": "file:///src/greet.py",
                "conformance": "test://template/123/data"}
EXPECTED_TOOL_ERRORS = {  # (server, tool) → the first revision where the call succeeds
    ("conformance", "test_error_handling"): None,
    ("conformance", "test_audio_content"): "2025-03-26",
    ("conformance", "test_elicitation"): "2025-06-18",
    ("conformance", "test_elicitation_sep1034_defaults"): "2025-11-25",
    ("conformance", "test_elicitation_sep1330_enums"): "2025-11-25",
    **{("conformance", f"test_input_required_result_{kind}"): "2025-06-18"  # these elicit: 2025-06-18 and later
       for kind in ("elicitation", "request_state", "multiple_inputs", "multi_round", "tampered_state")},
    ("conformance", "test_streaming_elicitation"): "2025-06-18",
}


def walk(server: RawServer, method: str, key: str) -> list:
    items, cursor = [], None
    while True:
        page = server.result(method, {"cursor": cursor} if cursor else {})
        items += page[key]
        cursor = page.get("nextCursor")
        if not cursor:
            return items


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
def test_every_method_at_every_version(name: str, version: str) -> None:
    from mcplab.wire.versions import at_least

    with RawServer(server_argv(name), version=version, answers=ANSWERS) as server:
        assert server.result("ping") == {}  # allowed before initialize
        info = server.initialize(version, CLIENT_CAPABILITIES)
        assert info["protocolVersion"] == version
        assert server.result("ping") == {}
        if "logging" in info["capabilities"]:  # only a server that logs declares it (deprecated in 2026-07-28)
            assert server.result("logging/setLevel", {"level": "debug"}) == {}
        else:
            assert server.request("logging/setLevel", {"level": "debug"})["error"]["code"] == -32601

        for tool in walk(server, "tools/list", "tools"):
            arguments = ARGUMENTS[name][tool["name"]]
            result = server.result("tools/call", {"name": tool["name"], "arguments": arguments,
                                                  "_meta": {"progressToken": f"p-{tool['name']}"}})
            since = EXPECTED_TOOL_ERRORS.get((name, tool["name"]), "2024-11-05")
            assert result["isError"] is (since is None or not at_least(version, since)), result

        resources = walk(server, "resources/list", "resources")
        assert resources
        for resource in resources:
            assert server.result("resources/read", {"uri": resource["uri"]})["contents"]
        templates = walk(server, "resources/templates/list", "resourceTemplates")
        assert [t for t in templates if "{" in t["uriTemplate"]]
        contents = server.result("resources/read", {"uri": TEMPLATE_URI[name]})["contents"]
        assert contents[0]["uri"] == TEMPLATE_URI[name]
        missing = server.request("resources/read", {"uri": TEMPLATE_URI[name].split(":")[0] + "://no/such/thing"})
        assert missing["error"]["code"] in (-32002, -32602)
        assert server.result("resources/subscribe", {"uri": resources[0]["uri"]}) == {}
        assert server.result("resources/unsubscribe", {"uri": resources[0]["uri"]}) == {}

        prompts = walk(server, "prompts/list", "prompts")
        for prompt in prompts:
            result = server.result("prompts/get", {"name": prompt["name"], "arguments": ARGUMENTS[name][prompt["name"]]})
            assert result["messages"]
        with_arguments = next(p for p in prompts if p.get("arguments"))
        completion = server.result("completion/complete", {
            "ref": {"type": "ref/prompt", "name": with_arguments["name"]},
            "argument": {"name": with_arguments["arguments"][0]["name"], "value": ""}})
        assert completion["completion"]["values"]

        server.notify("notifications/cancelled", {"requestId": 123456, "reason": "nothing to cancel"})
        assert server.result("ping") == {}
        assert server.close() == 0
        assert not [line for line in server.stderr if line and b"Traceback" in line]


def test_conformance_tools_send_progress_logs_and_client_requests() -> None:
    with RawServer(server_argv("conformance"), version="2025-11-25", answers=ANSWERS) as server:
        server.initialize("2025-11-25", CLIENT_CAPABILITIES)
        server.result("logging/setLevel", {"level": "debug"})
        server.result("tools/call", {"name": "test_tool_with_progress", "_meta": {"progressToken": "progress-test-1"}})
        progress = [n["params"] for n in server.notifications if n["method"] == "notifications/progress"]
        assert [(p["progressToken"], p["progress"], p["total"]) for p in progress] == [
            ("progress-test-1", 0, 100), ("progress-test-1", 50, 100), ("progress-test-1", 100, 100)]
        server.result("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
        logs = [n["params"] for n in server.notifications if n["method"] == "notifications/message"]
        assert [(log["level"], log["data"]) for log in logs] == [
            ("info", "Tool execution started"), ("info", "Tool processing data"), ("info", "Tool execution completed")]
        answer = server.result("tools/call", {"name": "test_sampling", "arguments": {"prompt": "Test prompt"}})
        assert answer["content"][0]["text"] == "LLM response: a test reply"
        sampling = server.server_requests[-1]
        assert sampling["method"] == "sampling/createMessage"
        assert sampling["params"] == {"messages": [{"role": "user", "content": {"type": "text", "text": "Test prompt"}}],
                                      "maxTokens": 100}
        server.result("tools/call", {"name": "test_elicitation_sep1330_enums"})
        schema = server.server_requests[-1]["params"]["requestedSchema"]["properties"]
        assert set(schema) == {"untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"}


# --- bad input: each gets its error, and the server still answers ping afterwards -----------------------

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


BAD_INPUT = [  # (case, initialize first?, bytes to send, expected error code, expected id, words in the message)
    ("malformed JSON", True, b'{"jsonrpc": "2.0", "id": 7, "method": \n', -32700, None, "does not parse"),
    ("random bytes", True, bytes(range(128, 256)) + b"\x00\xff\xfe" + b"\n", -32700, None, "UTF-8"),
    ("a 5 MiB line", True, b'{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"' + b"x" * (5 << 20) + b'"}}\n',
     -32700, None, "at most"),
    ("an unknown method", True, line({"jsonrpc": "2.0", "id": 9, "method": "tools/execute"}), -32601, 9, "tools/call"),
    ("wrong argument types", True, line({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
                                         "params": {"name": "get_forecast", "arguments": {"city": 7, "days": "two"}}}),
     -32602, 10, "is not of type"),
    ("arguments that are not an object", True, line({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                                                      "params": {"name": "get_weather", "arguments": ["Beijing"]}}),
     -32602, 11, "params.arguments"),
    ("an unknown tool", True, line({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                                    "params": {"name": "get_rain", "arguments": {}}}), -32602, 12, "Unknown tool"),
    ("a request before initialize", False, line({"jsonrpc": "2.0", "id": 13, "method": "tools/list"}),
     -32600, 13, "initialize first"),
    ("a second initialize", True, line({**INIT, "id": 14}), -32600, 14, "already"),
    ("a notification sent with an id", True, line({"jsonrpc": "2.0", "id": 15, "method": "notifications/initialized"}),
     -32601, 15, "without an \"id\""),
    ("a null id", True, line({"jsonrpc": "2.0", "id": None, "method": "ping"}), -32600, None, "null"),
    ("the wrong jsonrpc version", True, line({"jsonrpc": "1.0", "id": 16, "method": "ping"}), -32600, 16, "2.0"),
    ("a JSON array", True, line([{"jsonrpc": "2.0", "id": 17, "method": "ping"}]), -32600, None, "array"),
    ("params that are a string", True, b'{"jsonrpc":"2.0","id":18,"method":"ping","params":"x"}\n', -32600, 18, "params"),
]


@pytest.mark.parametrize("case, initialize, data, code, error_id, words", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_gets_its_error_and_the_server_keeps_serving(case: str, initialize: bool, data: bytes, code: int,
                                                               error_id: object, words: str) -> None:
    with RawServer(server_argv("weather"), version="2025-06-18") as server:
        if initialize:
            server.send(INIT)
            server.response(1)
            server.notify("notifications/initialized")
        server.send_raw(data)
        reply = server.recv()
        assert reply["id"] == error_id and reply["error"]["code"] == code, reply
        assert words in reply["error"]["message"], reply["error"]["message"]
        assert server.result("ping") == {}
        assert server.close() == 0


def test_batches_are_answered_in_a_2025_03_26_session_only() -> None:
    ping = {"jsonrpc": "2.0", "method": "ping"}
    with RawServer(server_argv("weather"), version="2025-03-26") as server:
        server.initialize("2025-03-26")
        batch = [{**ping, "id": "a"}, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                 {"jsonrpc": "2.0", "id": "b", "method": "tools/list"}, {"jsonrpc": "2.0", "id": "c"},
                 {**INIT, "id": "d"}]
        for element in batch:
            if "method" in element and "id" in element:
                server.sent_methods[element["id"]] = element["method"]
        server.send_raw(line(batch))
        replies = server.recv()
        assert [(r["id"], "result" in r) for r in replies] == [("a", True), ("b", True), ("c", False), ("d", False)]
        assert "batch" in replies[3]["error"]["message"]
        server.send_raw(line([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]))
        assert server.result("ping") == {}  # an all-notification batch gets no reply at all
        server.send_raw(b"[]\n")
        assert server.recv()["error"]["code"] == -32600
    with RawServer(server_argv("weather"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send_raw(line([{**ping, "id": 1}]))
        assert server.recv()["error"]["code"] == -32600


def test_a_line_ending_mid_message_at_eof_is_dropped_quietly() -> None:
    with RawServer(server_argv("weather")) as server:
        server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"pi')
        assert server.close() == 0
        assert b"inside a message" in b"".join(l for l in server.stderr if l)


# --- concurrency, cancellation, output discipline -------------------------------------------------------

def test_a_slow_tool_does_not_block_ping() -> None:
    with RawServer(server_argv("conformance"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "test_tool_with_logging"}})
        server.send({"jsonrpc": "2.0", "id": "quick", "method": "ping"})
        order = [m["id"] for m in (server.recv(), server.recv(), server.recv(), server.recv(), server.recv())
                 if "id" in m]
        assert order[0] == "quick"


def test_an_id_still_running_is_refused_and_the_first_request_still_answers() -> None:
    with RawServer(server_argv("conformance"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "test_tool_with_logging"}})
        server.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
        replies = [m for m in (server.recv() for _ in range(5)) if "id" in m]
        refusal, answer = replies[0], replies[1]
        assert refusal["id"] == 7 and refusal["error"]["code"] == -32600
        assert refusal["error"]["message"] == "expected a fresh request id: 7 belongs to a request still running"
        assert answer["id"] == 7 and "result" in answer  # the slow tool's own reply still comes
        assert server.result("ping") == {}


def leftover_replies(server: RawServer) -> list[dict]:
    """What a closed server wrote that no test step read."""
    leftovers = []
    while not server.lines.empty():
        item = server.lines.get()
        if item:
            leftovers.append(json.loads(item))
    return leftovers


def test_a_cancelled_request_gets_no_response() -> None:
    with RawServer(server_argv("conformance"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send({"jsonrpc": "2.0", "id": 50, "method": "tools/call", "params": {"name": "test_tool_with_logging"}})
        server.notify("notifications/cancelled", {"requestId": 50, "reason": "changed my mind"})
        assert server.result("ping") == {}
        time.sleep(0.3)  # the tool would have finished by now
        assert server.result("ping") == {}
        server.close()
        assert not [m for m in leftover_replies(server) if m.get("id") == 50]


WEATHER_CALL = {"name": "get_weather", "arguments": {"city": "Beijing"}}


def test_a_plain_tool_cancelled_in_the_same_write_gets_no_response() -> None:
    """A cancellation read in the same chunk as its request, before the request's task ran, stops it."""
    with RawServer(server_argv("weather"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send_raw(b"".join(line(m) for m in (  # one write: the server reads it in one chunk
            {"jsonrpc": "2.0", "id": 60, "method": "tools/call", "params": WEATHER_CALL},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 60, "reason": "no"}},
            {"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": WEATHER_CALL})))
        assert server.recv()["id"] == 61  # the next reply is the second call's: none came for 60
        assert server.result("ping") == {}
        server.close()
        assert not [m for m in leftover_replies(server) if m.get("id") == 60]


def test_a_plain_tool_answers_in_order_and_its_id_is_taken_until_it_has() -> None:
    with RawServer(server_argv("weather"), version="2025-06-18") as server:
        server.initialize("2025-06-18")
        server.send_raw(b"".join(line(m) for m in (  # one write: the server reads it in one chunk
            {"jsonrpc": "2.0", "id": 70, "method": "tools/call", "params": WEATHER_CALL},
            {"jsonrpc": "2.0", "id": 70, "method": "ping"},
            {"jsonrpc": "2.0", "id": 71, "method": "tools/call", "params": {**WEATHER_CALL, "name": "nope"}},
            {"jsonrpc": "2.0", "id": 72, "method": "ping"})))
        replies = [server.recv() for _ in range(4)]
        assert replies[0]["id"] == 70 and replies[0]["error"]["code"] == -32600  # id 70 is still running
        assert replies[1]["id"] == 70 and "Beijing: sunny" in replies[1]["result"]["content"][0]["text"]
        assert replies[2]["id"] == 71 and replies[2]["error"]["code"] == -32602
        assert replies[3] == {"jsonrpc": "2.0", "id": 72, "result": {}}


def test_print_in_a_tool_goes_to_stderr_not_to_the_client(tmp_path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text("from mcplab.server import Server, run\n"
                      "server = Server('noisy')\n"
                      "@server.tool\n"
                      "def shout() -> str:\n"
                      "    print('this is not an MCP message')\n"
                      "    return 'done'\n"
                      "run(server)\n")
    with RawServer([sys.executable, str(script)], version="2025-06-18") as server:
        server.initialize("2025-06-18")
        assert server.result("tools/call", {"name": "shout"})["content"][0]["text"] == "done"
        server.close()
        assert b"this is not an MCP message" in b"".join(l for l in server.stderr if l)


# --- starting and stopping ---------------------------------------------------------------------------

def test_piped_requests_are_all_answered_before_the_server_exits() -> None:
    data = line(INIT) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + \
        line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_weather",
                                                                           "arguments": {"city": "北京"}}})
    done = subprocess.run(server_argv("weather"), input=data, capture_output=True, timeout=10, cwd=ROOT)
    replies = [json.loads(l) for l in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"].startswith("Beijing: sunny (晴), 12 °C")


@pytest.mark.parametrize("busy", [False, True])
def test_the_server_exits_within_a_second_of_stdin_closing(busy: bool) -> None:
    with RawServer(server_argv("conformance")) as server:
        server.initialize("2025-06-18")
        if busy:
            server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "test_tool_with_logging"}})
        started = time.monotonic()
        assert server.close(timeout=2) == 0
        assert time.monotonic() - started < 1.0


def test_twenty_starts_and_stops_leave_no_process_behind() -> None:
    pids = []
    for _ in range(20):
        server = RawServer(server_argv("weather"))
        server.initialize("2025-06-18")
        pids.append(server.process.pid)
        assert server.close(timeout=2) == 0
    assert not [pid for pid in pids if alive(pid)]


def test_a_server_whose_parent_is_killed_exits_by_itself() -> None:
    # The parent starts the server with a pipe it holds, prints the server's pid, and waits forever;
    # SIGKILL (what nbval does to a kernel) closes the pipe, and the server sees EOF.
    parent_code = ("import subprocess, sys, time\n"
                   f"p = subprocess.Popen({server_argv('weather')!r}, stdin=subprocess.PIPE, "
                   "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
                   "print(p.pid, flush=True)\n"
                   "time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, cwd=ROOT)
    child = int(parent.stdout.readline())
    time.sleep(0.3)  # let the server start reading
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if not alive(child):
            return
        time.sleep(0.02)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the server outlived its parent by 3 s")


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie waiting for an orphan-reaping init to collect it."""
    if not os.path.isdir("/proc"):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
def test_mcplab_serve_starts_each_bundled_server(name: str) -> None:
    with RawServer([sys.executable, "-m", "mcplab.cli", "serve", name], version="2025-11-25") as server:
        assert server.initialize("2025-11-25")["serverInfo"]["name"] in (name, "mcplab-conformance")
        assert server.result("tools/list")["tools"]
        assert server.close() == 0


def test_importing_a_server_stays_light_no_jsonschema_until_a_tool_call() -> None:
    code = ("import sys; sys.path.insert(0, 'servers'); import weather, files, conformance; "
            "print(sorted({'jsonschema', 'anyio', 'httpx'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


# --- the reply to a line whose id cannot be read, per revision ----------------------------------------

UNREADABLE = [  # (case, server flags, session revision or None, the revisions whose schema it must satisfy)
    ("dual-era, nothing agreed yet: the newest form", [], None, ("2025-11-25", "2026-07-28")),
    ("legacy-only, nothing agreed yet: the newest legacy form", ["--era", "legacy"], None, ("2025-11-25",)),
    ("modern-only", ["--era", "modern"], None, ("2026-07-28",)),
    ("a 2025-11-25 session", [], "2025-11-25", ("2025-11-25",)),
]


@pytest.mark.parametrize("case, flags, session, revisions", UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_an_unreadable_line_is_answered_without_an_id_from_2025_11_25_on(case, flags, session, revisions,
                                                                        spec_schema) -> None:
    # JSON-RPC 2.0 answers an unreadable request with "id": null; MCP 2025-11-25 and 2026-07-28 make the
    # id optional and never null (schema: JSONRPCErrorResponse), so the reply leaves it out.
    from server_helpers import check_definition

    for revision in revisions:
        spec_schema(revision)
    with RawServer(server_argv("weather", *flags)) as server:
        if session:
            server.initialize(session)
        server.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": \n')
        reply = server.recv()
        assert reply["error"]["code"] == -32700 and "id" not in reply, reply
        for revision in revisions:
            check_definition(revision, "JSONRPCErrorResponse", reply)
        assert server.close() == 0


def test_in_a_2025_06_18_session_an_unreadable_line_keeps_the_json_rpc_null_id() -> None:
    # Up to 2025-06-18 an error response must carry an id (schema: JSONRPCError requires it) and no
    # id can be read, so JSON-RPC 2.0 §5 decides: "id": null.
    with RawServer(server_argv("weather")) as server:
        server.initialize("2025-06-18")
        server.send_raw(b"not json\n")
        reply = server.recv()
        assert reply["error"]["code"] == -32700 and reply["id"] is None
        assert server.close() == 0


# --- errors that must not hide a bug ----------------------------------------------------------------

BUGGY_RESOURCES = ("from mcplab.server import Server, run\n"
                   "server = Server('buggy')\n"
                   "NOTES = {'today': 'buy milk'}\n"
                   "@server.resource('notes://{day}')\n"
                   "def day(day: str) -> str:\n"
                   "    if day == 'missing':\n"
                   "        raise LookupError(day)  # the toolkit's 'not there'\n"
                   "    if day == 'bug':\n"
                   "        return NOTES['tomorow']  # a typo: a KeyError is a bug, not a missing resource\n"
                   "    return NOTES[day]\n"
                   "@server.prompt\n"
                   "def greet(who: str) -> str:\n"
                   "    return f'Say hello to {who}'\n"
                   "run(server)\n")


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_a_key_error_in_a_resource_function_is_an_internal_error_with_its_traceback_on_stderr(tmp_path,
                                                                                               version) -> None:
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY_RESOURCES)
    with RawServer([sys.executable, str(script)], version=version) as server:
        server.initialize(version)
        missing = server.request("resources/read", {"uri": "notes://missing"})
        assert missing["error"]["code"] == -32002 and missing["error"]["data"] == {"uri": "notes://missing"}
        bug = server.request("resources/read", {"uri": "notes://bug"})
        assert bug["error"]["code"] == -32603, bug
        assert "KeyError" in bug["error"]["message"]
        subscribed = server.request("resources/subscribe", {"uri": "notes://bug"})
        assert subscribed["error"]["code"] == -32603, subscribed
        assert server.result("resources/read", {"uri": "notes://today"})["contents"][0]["text"] == "buy milk"
        server.close()
    stderr = b"".join(l for l in server.stderr if l).decode()
    assert "Traceback" in stderr and "KeyError: 'tomorow'" in stderr


@pytest.mark.parametrize("method", ["prompts/get", "tools/call"])
@pytest.mark.parametrize("name, came", [(["greet"], "an array"), (7, "a number"), ({"n": 1}, "an object"),
                                        (None, "nothing"), (True, "a boolean")])
def test_a_name_that_is_not_a_string_is_invalid_params_naming_what_came(tmp_path, method, name, came) -> None:
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY_RESOURCES.replace("run(server)", "@server.tool\ndef echo() -> str:\n"
                                                             "    return 'echo'\nrun(server)"))
    with RawServer([sys.executable, str(script)], version="2025-11-25") as server:
        server.initialize("2025-11-25")
        params = {"name": name} if name is not None else {}
        reply = server.request(method, params)
        assert reply["error"]["code"] == -32602, reply
        message = reply["error"]["message"]
        assert "expected params.name" in message and "(a string)" in message and f"got {came}" in message
        assert server.result("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}})["messages"]


def test_a_flood_cut_anywhere_by_the_pipe_reaches_the_framer_whole_and_in_order() -> None:
    """The runner's reading: one reader feeding LineFramer. Lines of varied lengths, many times a pipe's
    buffer, written while the reader takes its time: every message arrives, in order."""
    import threading

    import anyio

    from mcplab.pipes import CHUNK, Reader
    from mcplab.wire.jsonrpc import LineFramer

    sent, size = [], 0
    while size < CHUNK * 24:
        sent.append({"jsonrpc": "2.0", "method": "notifications/message",
                     "params": {"level": "info", "data": "x" * (len(sent) % 300)}})
        size += len(line(sent[-1]))
    payload = b"".join(map(line, sent))
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, payload), os.close(write_end)))

    async def main() -> list:
        reader, framer, got = Reader(read_end), LineFramer(), []
        writer.start()
        await anyio.sleep(0.1)  # the writer fills the pipe and waits for room
        while data := await reader.read():
            got += framer.feed(data)
            await anyio.sleep(0)
        return got

    try:
        got = anyio.run(main)
    finally:
        writer.join(5)
        os.close(read_end)
    assert [(m.method, m.params) for m in got] == [(m["method"], m["params"]) for m in sent]


# --- plain tools: in order, each in a context of its own ------------------------------------------------

PLAIN_TOOLS = ("import contextvars\n"
           "import anyio\n"
           "from mcplab.server import Server, run\n"
           "server = Server('plain-tools')\n"
           "SEEN = contextvars.ContextVar('seen', default='nothing')\n"
           "BEGAN = []\n"
           "@server.tool\n"
           "def remember(word: str) -> str:\n"
           "    '''Set a context variable; say what it held before.'''\n"
           "    before = SEEN.get()\n"
           "    SEEN.set(word)\n"
           "    return before\n"
           "@server.tool\n"
           "async def remember_later(word: str) -> str:\n"
           "    '''Set a context variable after a wait; say what it held before.'''\n"
           "    await anyio.sleep(0)\n"
           "    before = SEEN.get()\n"
           "    SEEN.set(word)\n"
           "    return before\n"
           "@server.tool\n"
           "async def slow() -> str:\n"
           "    '''Note that it began, then take a while.'''\n"
           "    BEGAN.append('slow')\n"
           "    await anyio.sleep(0.2)\n"
           "    return 'done'\n"
           "@server.tool\n"
           "def began() -> str:\n"
           "    '''What had begun when this ran.'''\n"
           "    return ','.join(BEGAN) or 'nothing'\n"
           "run(server)\n")


def plain_tools_server(tmp_path, extra: str = "") -> RawServer:
    script = tmp_path / "plain_tools.py"
    script.write_text(PLAIN_TOOLS.replace("run(server)\n", extra + "run(server)\n"))
    return RawServer([sys.executable, str(script)], version="2025-11-25")


def tool_text(reply: dict) -> str:
    return reply["result"]["content"][0]["text"]


def test_each_plain_tool_call_runs_in_a_context_of_its_own(tmp_path) -> None:
    """Each call runs in a copy of the context, as a task does: a variable one call sets is gone in the next."""
    with plain_tools_server(tmp_path) as server:
        server.initialize("2025-11-25")
        for word in ("first", "second"):  # one request per write: each chunk is answered at once
            assert tool_text(server.request("tools/call", {"name": "remember", "arguments": {"word": word}})) \
                == "nothing"
        server.send_raw(b"".join(line({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call",
                                       "params": {"name": "remember", "arguments": {"word": str(n)}}})
                                 for n in range(3)))  # three in one chunk
        assert [tool_text(server.recv()) for _ in range(3)] == ["nothing"] * 3


def test_each_async_tool_call_runs_in_a_context_of_its_own_too(tmp_path) -> None:
    """A task per request: a context variable an async tool sets is gone in the next call, however the
    calls come (one per write, or three in one chunk)."""
    with plain_tools_server(tmp_path) as server:
        server.initialize("2025-11-25")
        for word in ("first", "second"):
            assert tool_text(server.request("tools/call", {"name": "remember_later", "arguments": {"word": word}})) \
                == "nothing"
        server.send_raw(b"".join(line({"jsonrpc": "2.0", "id": 20 + n, "method": "tools/call",
                                       "params": {"name": "remember_later", "arguments": {"word": str(n)}}})
                                 for n in range(3)))
        assert [tool_text(server.recv()) for _ in range(3)] == ["nothing"] * 3


def test_a_plain_request_never_begins_before_an_earlier_one_of_its_chunk(tmp_path) -> None:
    """Requests begin in the order they came: a plain tool read in the same chunk after an async one
    runs after that one has begun (its reply may still come first)."""
    with plain_tools_server(tmp_path) as server:
        server.initialize("2025-11-25")
        server.send_raw(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}})
                        + line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "began"}}))
        replies = {reply["id"]: tool_text(reply) for reply in (server.recv(), server.recv())}
        assert replies == {1: "done", 2: "slow"}




@pytest.mark.subprocess
def test_an_answer_that_crosses_the_server_s_cancellation_is_ignored_in_silence_and_the_session_goes_on():
    with RawServer(server_argv("weather", "--ask-timeout", "0.3")) as server:
        server.initialize("2025-11-25", {"elicitation": {}})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "get_forecast", "arguments": {"city": "China"}}})
        question = server.recv()
        assert question["method"] == "elicitation/create"
        cancelled = server.recv()   # the server gave up waiting for the user
        assert cancelled["method"] == "notifications/cancelled"
        assert cancelled["params"]["requestId"] == question["id"]
        answer = server.recv()
        assert answer["id"] == 2 and answer["result"]["isError"] is True
        server.send({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept",
                                                                         "content": {"city": "Beijing"}}})
        assert server.request("ping")["result"] == {}
        assert server.close() == 0
    assert b"".join(line for line in server.stderr if line) == b""
