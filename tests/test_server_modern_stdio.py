"""The bundled servers in the modern era (2026-07-28) over a real stdio pipe, in raw framed JSON: the
first request decides a dual-era process's era, every method works with its envelope (and MRTR where
a tool asks), notifications stream before the result, subscriptions/listen holds, and every line the
server writes validates against the 2026-07-28 schema (tests/server_helpers.RawServer)."""

from __future__ import annotations

import json

import pytest

from server_helpers import (
    ASKS_WHICH_CITY, MODERN, PROMPT_ARGUMENTS, TOOL_ARGUMENTS, RawServer, modern_params, server_argv,
)

pytestmark = pytest.mark.subprocess

ALL = {"elicitation": {}, "sampling": {}, "roots": {}}
SUB = "io.modelcontextprotocol/subscriptionId"
INITIALIZE = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}

# What to call each tool and prompt with: the shared table, with get_forecast asking which city (MRTR).
ARGUMENTS = {**TOOL_ARGUMENTS, **PROMPT_ARGUMENTS, "get_forecast": ASKS_WHICH_CITY}
FORMS = {"string": "x", "boolean": True, "integer": 1, "number": 1.5, "array": []}


def answer(request: dict) -> dict:
    """A client's answer to one input request: a form filled from the schema, a model reply, a root."""
    if request["method"] == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}
    if request["method"] == "roots/list":
        return {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}
    fields = request["params"]["requestedSchema"]["properties"]
    return {"action": "accept", "content": {name: field["enum"][0] if "enum" in field else field["oneOf"][0]["const"]
                                            if "oneOf" in field else FORMS[field["type"]]
                                            for name, field in fields.items()}}


def modern_call(server: RawServer, method: str, params: dict | None = None, capabilities: dict | None = None,
                **meta: object) -> dict:
    """One modern request, retried through input_required until complete; the final response."""
    extra: dict = {}
    for _ in range(5):
        reply = server.request(method, modern_params({**(params or {}), **extra}, capabilities, **meta))
        result = reply.get("result", {})
        if result.get("resultType") != "input_required":
            return reply
        extra = {"inputResponses": {k: answer(r) for k, r in result["inputRequests"].items()}}
        extra.update({"requestState": result["requestState"]} if "requestState" in result else {})
    raise AssertionError(f"{method} kept asking: {result}")


def walk(server: RawServer, method: str, key: str) -> list:
    items, cursor = [], None
    while True:
        page = modern_call(server, method, {"cursor": cursor} if cursor else {})["result"]
        items += page[key]
        cursor = page.get("nextCursor")
        if not cursor:
            return items


@pytest.mark.parametrize("era", ["dual", "modern"])
@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
def test_every_method_in_the_modern_era(name: str, era: str) -> None:
    with RawServer(server_argv(name, "--era", era), version=MODERN) as server:
        discovered = modern_call(server, "server/discover")["result"]
        assert MODERN in discovered["supportedVersions"] and discovered["capabilities"]["tools"]["listChanged"]
        for tool in walk(server, "tools/list", "tools"):
            call = {"name": tool["name"], "arguments": ARGUMENTS.get(tool["name"], {})}
            reply = modern_call(server, "tools/call", call, ALL)
            assert "result" in reply, (tool["name"], reply)
            assert reply["result"]["isError"] is (tool["name"] == "test_error_handling"), (tool["name"], reply)
        for resource in walk(server, "resources/list", "resources"):
            assert modern_call(server, "resources/read", {"uri": resource["uri"]})["result"]["contents"]
        assert walk(server, "resources/templates/list", "resourceTemplates")
        for prompt in walk(server, "prompts/list", "prompts"):
            got = modern_call(server, "prompts/get", {"name": prompt["name"], "arguments": ARGUMENTS.get(prompt["name"],
                                                                                                         {})}, ALL)
            assert got["result"]["messages"], prompt["name"]
        with_arguments = next(p for p in walk(server, "prompts/list", "prompts") if p.get("arguments"))
        completion = modern_call(server, "completion/complete", {
            "ref": {"type": "ref/prompt", "name": with_arguments["name"]},
            "argument": {"name": with_arguments["arguments"][0]["name"], "value": ""}})["result"]
        assert completion["completion"]["values"]
        assert server.request("ping", modern_params())["error"]["code"] == -32601
        assert server.request("initialize", INITIALIZE)["error"]["data"]["supported"] == [MODERN]
        assert server.server_requests == []  # a modern server never sends a request
        assert server.close() == 0
        assert not [line for line in server.stderr if line and b"Traceback" in line]


def test_a_dual_era_process_that_opens_with_initialize_stays_legacy() -> None:
    with RawServer(server_argv("weather"), version="2025-11-25") as server:
        server.initialize("2025-11-25")
        reply = server.request("tools/list", modern_params())
        assert reply["error"]["code"] == -32600 and "initialize" in reply["error"]["message"]
        assert server.result("tools/list")["tools"]
        assert server.close() == 0


def test_a_legacy_only_process_answers_discover_with_method_not_found() -> None:
    with RawServer(server_argv("weather", "--era", "legacy"), version="2025-11-25") as server:
        assert server.request("server/discover", modern_params())["error"]["code"] == -32601
        server.initialize("2025-11-25")
        assert server.request("server/discover", modern_params())["error"]["code"] == -32601


def test_the_first_request_decides_even_when_initialize_is_pipelined_behind_it() -> None:
    with RawServer(server_argv("weather"), version=MODERN) as server:
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": modern_params()}
        initialize = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": INITIALIZE}
        server.sent_methods.update({1: "server/discover", 2: "initialize"})
        server.send_raw(json.dumps(discover).encode() + b"\n" + json.dumps(initialize).encode() + b"\n")
        assert "supportedVersions" in server.response(1)["result"]
        assert server.response(2)["error"]["code"] == -32601


def test_a_failed_probe_leaves_the_process_free_to_fall_back_to_initialize() -> None:
    with RawServer(server_argv("weather")) as server:
        probe = server.request("server/discover", modern_params(**{"io.modelcontextprotocol/protocolVersion": "2099"}))
        assert probe["error"]["code"] == -32022 and "2025-11-25" in probe["error"]["data"]["supported"]
        assert server.initialize("2025-11-25")["protocolVersion"] == "2025-11-25"


def test_progress_and_requested_logs_stream_before_the_result() -> None:
    with RawServer(server_argv("conformance", "--era", "modern"), version=MODERN) as server:
        reply = modern_call(server, "tools/call", {"name": "test_tool_with_progress"}, progressToken="p-1",
                            **{"io.modelcontextprotocol/logLevel": "info"})
        assert reply["result"]["resultType"] == "complete"
        assert [n["params"]["progress"] for n in server.notifications] == [0, 50, 100]
        server.notifications.clear()
        modern_call(server, "tools/call", {"name": "test_logging_tool"})
        assert server.notifications == []  # no logLevel, no log messages
        modern_call(server, "tools/call", {"name": "test_logging_tool"}, **{"io.modelcontextprotocol/logLevel": "info"})
        assert [n["params"]["data"] for n in server.notifications] == [
            "Tool execution started", "Tool processing data", "Tool execution completed"]


def test_mrtr_over_stdio_with_a_tampered_state() -> None:
    with RawServer(server_argv("conformance"), version=MODERN) as server:
        call = {"name": "test_input_required_result_tampered_state", "arguments": {}}
        first = server.result("tools/call", modern_params(call, ALL))
        assert first["resultType"] == "input_required" and first["requestState"]
        tampered = server.request("tools/call", modern_params({
            **call, "requestState": first["requestState"] + "-TAMPERED",
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}}}, ALL))
        assert tampered["error"]["code"] == -32602 and "integrity" in tampered["error"]["message"]
        good = server.result("tools/call", modern_params({
            **call, "requestState": first["requestState"],
            "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}}}, ALL))
        assert good["content"][0]["text"] == "sealed: confirmed=True"


def test_subscriptions_listen_holds_until_cancelled_and_ends_gracefully_at_eof() -> None:
    with RawServer(server_argv("conformance"), version=MODERN) as server:
        for listen_id, wanted in ((101, {"toolsListChanged": True}), (102, {"promptsListChanged": True})):
            server.sent_methods[listen_id] = "subscriptions/listen"
            server.send({"jsonrpc": "2.0", "id": listen_id, "method": "subscriptions/listen",
                         "params": modern_params({"notifications": wanted})})
            ack = server.recv()
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            assert ack["params"]["_meta"][SUB] == listen_id
        modern_call(server, "tools/call", {"name": "test_trigger_tool_change"})
        changed = [n for n in server.notifications if n["method"] == "notifications/tools/list_changed"]
        assert [n["params"]["_meta"][SUB] for n in changed] == [101]
        server.notify("notifications/cancelled", {"requestId": 101})
        server.process.stdin.close()  # EOF: the open subscription 102 ends with its result
        ended = server.recv()
        assert ended["id"] == 102 and ended["result"]["resultType"] == "complete"
        assert ended["result"]["_meta"][SUB] == 102 and set(ended["result"]) == {"resultType", "_meta"}
        torn_down = server.recv()  # cancellation.mdx: the server MUST say so with notifications/cancelled
        assert torn_down["method"] == "notifications/cancelled" and torn_down["params"]["requestId"] == 102
        with pytest.raises(EOFError):
            server.recv()  # and nothing for 101, which the client cancelled
        assert server.process.wait(5) == 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("how", ["stdin closes", "SIGTERM"])
def test_a_listen_stream_the_server_ends_gets_its_result_and_notifications_cancelled(how: str, backend: str,
                                                                                     monkeypatch) -> None:
    # 2026-07-28 cancellation: "A server MUST send notifications/cancelled referencing a
    # subscriptions/listen request ID when it tears down that subscription stream" (on stdio, the
    # schema says); subscriptions: it SHOULD answer the listen request first, a graceful end.
    import signal

    from mcplab.server.runner import BACKEND_VARIABLE

    monkeypatch.setenv(BACKEND_VARIABLE, backend)  # the stdio runner is anyio's: on trio it ends the same way
    with RawServer(server_argv("weather", "--era", "modern"), version=MODERN) as server:
        server.sent_methods["listen"] = "subscriptions/listen"
        server.send({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
                     "params": modern_params({"notifications": {"toolsListChanged": True}})})
        assert server.recv()["method"] == "notifications/subscriptions/acknowledged"
        assert "supportedVersions" in modern_call(server, "server/discover")["result"]
        if how == "SIGTERM":
            server.process.send_signal(signal.SIGTERM)
        else:
            server.process.stdin.close()
        ended, torn_down = server.recv(), server.recv()
        assert ended["id"] == "listen" and ended["result"]["_meta"][SUB] == "listen"
        assert torn_down == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": "listen", "reason": torn_down["params"]["reason"]}}
        assert "stopping" in torn_down["params"]["reason"] or "closed" in torn_down["params"]["reason"]
        assert server.process.wait(5) == 0


def test_a_modern_request_can_be_cancelled() -> None:
    with RawServer(server_argv("conformance", "--era", "modern"), version=MODERN) as server:
        server.sent_methods[5] = "tools/call"
        server.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                     "params": modern_params({"name": "test_tool_with_progress"}, progressToken="slow")})
        server.notify("notifications/cancelled", {"requestId": 5, "reason": "changed my mind"})
        assert "supportedVersions" in modern_call(server, "server/discover")["result"]
        assert server.close() == 0
        assert all(n["method"] == "notifications/progress" for n in server.notifications)
