"""The legacy handshake as a state table: legal moves, illegal ones, and the checks on the answer.

(That the lifecycle package imports no I/O library is checked with the other sans-IO modules, in test_sans_io.py.)"""

from __future__ import annotations

import jsonschema
import pytest

from mcplab.wire import jsonrpc
from mcplab import lifecycle
from mcplab.wire.errors import LocalProtocolError, RemoteError, RemoteProtocolError
from mcplab.lifecycle import LegacyLifecycle, UnsupportedVersion
from mcplab.wire.versions import LEGACY_VERSIONS, at_least


def answer(version="2025-11-25", capabilities=None, request_id=1, **extra):
    result = {"protocolVersion": version, "capabilities": capabilities if capabilities is not None else {"tools": {}},
              "serverInfo": {"name": "s", "version": "1"}, **extra}
    return jsonrpc.Response(request_id, result)


def opened(**capabilities):
    session = LegacyLifecycle()
    session.initialize_request(1)
    session.accept_initialize(answer(capabilities=capabilities))
    session.initialized_notification()
    return session


def test_the_handshake_walks_idle_to_operating():
    session = LegacyLifecycle("2025-06-18")
    assert session.state == lifecycle.IDLE
    request = session.initialize_request(1)
    assert request == jsonrpc.Request(1, "initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": lifecycle.CLIENT_INFO})
    assert session.state == lifecycle.AWAITING_RESULT
    session.accept_initialize(answer("2025-06-18", {"tools": {"listChanged": True}}, instructions="be nice"))
    assert session.state == lifecycle.ACCEPTED
    assert session.initialized_notification() == jsonrpc.Notification("notifications/initialized")
    assert session.state == lifecycle.OPERATING
    assert (session.version, session.server_capabilities, session.instructions) == (
        "2025-06-18", {"tools": {"listChanged": True}}, "be nice")


@pytest.mark.parametrize("steps, event", [
    ((), lifecycle.SEND_REQUEST),                          # tools/list before initialize
    ((), lifecycle.SEND_INITIALIZED),                      # initialized before initialize
    (("init",), lifecycle.SEND_REQUEST),                   # a request before the answer came
    (("init",), lifecycle.SEND_INITIALIZE),                # initialize twice
    (("init", "accept"), lifecycle.SEND_REQUEST),          # a request before initialized
    (("init", "accept", "initialized"), lifecycle.SEND_INITIALIZED),
    (("init", "accept", "initialized", "close"), lifecycle.SEND_REQUEST),
])
def test_an_illegal_move_names_role_state_and_event(steps, event):
    session = LegacyLifecycle()
    for step in steps:
        {"init": lambda: session.initialize_request(1), "accept": lambda: session.accept_initialize(answer()),
         "initialized": session.initialized_notification, "close": session.close}[step]()
    state = session.state
    with pytest.raises(LocalProtocolError) as caught:
        session.move(event)
    message = str(caught.value)
    assert "client" in message and repr(state) in message and repr(event) in message
    assert session.state == state


def test_ping_is_allowed_while_waiting_for_the_answer():
    session = LegacyLifecycle()
    session.initialize_request(1)
    assert session.prepare("ping", None) is None
    with pytest.raises(LocalProtocolError, match="awaiting-result"):
        session.prepare("tools/list", None)


def test_every_state_can_close():
    for state in {s for s, _ in lifecycle.TRANSITIONS}:
        assert lifecycle.TRANSITIONS[(state, lifecycle.CLOSE)] == lifecycle.CLOSED


def test_a_version_the_client_does_not_speak_is_refused_naming_both():
    session = LegacyLifecycle("2025-06-18")
    session.initialize_request(1)
    with pytest.raises(UnsupportedVersion) as caught:
        session.accept_initialize(answer("2099-01-01"))
    assert "2025-06-18" in str(caught.value) and "2099-01-01" in str(caught.value)
    assert isinstance(caught.value, RemoteProtocolError)
    assert session.state == lifecycle.CLOSED


def test_a_counter_offer_the_client_speaks_is_accepted():
    session = LegacyLifecycle("2024-11-05")
    session.initialize_request(1)
    session.accept_initialize(answer("2025-06-18"))
    assert session.version == "2025-06-18" and session.requested_version == "2024-11-05"


def test_asking_for_an_unknown_version_fails_before_anything_is_sent():
    with pytest.raises(LocalProtocolError, match="1999-01-01"):
        LegacyLifecycle("1999-01-01")
    with pytest.raises(LocalProtocolError, match="2026-07-28"):
        LegacyLifecycle("2026-07-28")  # modern: no initialize


def test_an_error_answer_to_initialize_raises_remote_error_and_closes():
    session = LegacyLifecycle()
    session.initialize_request(1)
    with pytest.raises(RemoteError) as caught:
        session.accept_initialize(jsonrpc.ErrorResponse(1, -32602, "Unsupported protocol version",
                                                        {"supported": ["2024-11-05"]}))
    assert caught.value.code == -32602 and caught.value.data == {"supported": ["2024-11-05"]}
    assert session.state == lifecycle.CLOSED


@pytest.mark.parametrize("result, complaint", [
    ({"capabilities": {}, "serverInfo": {}}, "protocolVersion"),
    ({"protocolVersion": "2025-11-25", "serverInfo": {}}, "capabilities"),
    ({"protocolVersion": "2025-11-25", "capabilities": {}}, "serverInfo"),
    ({"protocolVersion": "2025-11-25", "capabilities": [], "serverInfo": {}}, "object"),
    ([], "object"),
])
def test_a_malformed_answer_is_a_remote_protocol_error(result, complaint):
    with pytest.raises(RemoteProtocolError, match=complaint):
        lifecycle.check_initialize_result(result, "2025-11-25")


@pytest.mark.parametrize("method, capabilities, allowed", [
    ("tools/list", {"tools": {}}, True),
    ("tools/call", {"resources": {}}, False),
    ("resources/read", {"resources": {}}, True),
    ("resources/subscribe", {"resources": {}}, False),
    ("resources/subscribe", {"resources": {"subscribe": True}}, True),
    ("prompts/get", {"tools": {}}, False),
    ("completion/complete", {"prompts": {}}, False),
    ("completion/complete", {"completions": {}}, True),
    ("logging/setLevel", {}, False),
    ("ping", {}, True),
    ("vendor/custom", {}, True),  # unknown methods are the server's to refuse
])
def test_a_method_needs_its_declared_capability(method, capabilities, allowed):
    session = opened(**capabilities)
    if allowed:
        assert session.prepare(method, {"x": 1}) == {"x": 1}
    else:
        with pytest.raises(LocalProtocolError, match="did not declare"):
            session.prepare(method, None)


def test_completion_needed_no_capability_in_2024_11_05():
    assert lifecycle.required_capability("completion/complete", "2024-11-05") is None
    assert lifecycle.required_capability("completion/complete", "2025-03-26") == ("completions", None)


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_the_initialize_request_is_valid_under_each_legacy_schema(version, spec_schema):
    schema = spec_schema(version)
    defs = "$defs" if "$defs" in schema else "definitions"
    capabilities = lifecycle.client_capabilities(sampling=True, elicitation=True, roots=True, version=version)
    request = lifecycle.initialize_request(7, version, capabilities=capabilities)
    jsonschema.validate(jsonrpc.to_dict(request), {**schema, "$ref": f"#/{defs}/InitializeRequest"})
    assert ("elicitation" in capabilities) == at_least(version, "2025-06-18")


def test_client_capabilities_declare_only_what_has_a_handler():
    assert lifecycle.client_capabilities() == {}
    assert lifecycle.client_capabilities(roots=True) == {"roots": {"listChanged": True}}
    assert lifecycle.client_capabilities(sampling=True, version="2024-11-05") == {"sampling": {}}


# --- the modern era: stamping ---------------------------------------------------------------------

from mcplab.client import eras  # noqa: E402
from mcplab.wire.errors import HTTPStatusError  # noqa: E402
from mcplab.lifecycle import ModernLifecycle  # noqa: E402

MODERN = "2026-07-28"
META_KEYS = ("io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
             "io.modelcontextprotocol/clientInfo")


def modern_schema_check(spec_schema, definition, instance):
    schema = spec_schema(MODERN)
    jsonschema.validate(instance, {**schema, "$ref": f"#/$defs/{definition}"})


def discovered(**capabilities):
    session = ModernLifecycle(capabilities=lifecycle.client_capabilities(elicitation=True, version=MODERN))
    session.accept_discover({"resultType": "complete", "supportedVersions": [MODERN], "capabilities": capabilities,
                             "ttlMs": 0, "cacheScope": "private"})
    return session


@pytest.mark.parametrize("method, params, definition", [
    ("tools/list", None, "ListToolsRequest"),
    ("tools/list", {"cursor": "p2"}, "ListToolsRequest"),
    ("tools/call", {"name": "get_weather", "arguments": {"city": "Paris"}}, "CallToolRequest"),
    ("tools/call", {"name": "slow", "_meta": {"progressToken": 7}}, "CallToolRequest"),
    ("resources/read", {"uri": "file:///a.txt"}, "ReadResourceRequest"),
    ("prompts/get", {"name": "review", "arguments": {"code": "x"}}, "GetPromptRequest"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "review"},
                             "argument": {"name": "code", "value": "x"}}, "CompleteRequest"),
])
def test_every_modern_request_is_stamped_and_valid_under_2026_07_28(method, params, definition, spec_schema):
    session = discovered(tools={}, resources={}, prompts={}, completions={})
    stamped = session.prepare(method, params)
    assert all(key in stamped["_meta"] for key in META_KEYS)
    assert stamped["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {}}
    if params and "_meta" in params:
        assert stamped["_meta"]["progressToken"] == 7  # the caller's _meta keys stay
    modern_schema_check(spec_schema, definition, jsonrpc.to_dict(jsonrpc.Request(3, method, stamped)))


def test_the_discover_request_carries_only_meta_and_is_valid(spec_schema):
    request = ModernLifecycle().discover_request(1)
    assert list(request.params) == ["_meta"]
    modern_schema_check(spec_schema, "DiscoverRequest", jsonrpc.to_dict(request))


def test_a_log_level_is_stamped_only_when_asked_for():
    session = ModernLifecycle()
    assert "io.modelcontextprotocol/logLevel" not in session.prepare("tools/list", None)["_meta"]
    session.log_level = "debug"
    assert session.prepare("tools/list", None)["_meta"]["io.modelcontextprotocol/logLevel"] == "debug"


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "initialize"])
def test_what_the_modern_era_removed_is_refused_before_sending(method):
    with pytest.raises(LocalProtocolError, match="does not exist in protocol version 2026-07-28"):
        ModernLifecycle().prepare(method, None)


def test_a_modern_client_never_answers_a_server_request_and_cannot_send_removed_notifications():
    session = ModernLifecycle()
    with pytest.raises(LocalProtocolError, match="never sends responses"):
        session.prepare_response()
    with pytest.raises(LocalProtocolError):
        session.prepare_notification("notifications/roots/list_changed")
    session.prepare_notification(lifecycle.CANCELLED)  # still how a stdio client cancels


def test_capabilities_are_checked_once_discover_has_answered():
    assert ModernLifecycle().prepare("prompts/list", None)  # nothing known yet: the server decides
    session = discovered(tools={})
    with pytest.raises(LocalProtocolError, match="prompts"):
        session.prepare("prompts/list", None)
    session.close()
    with pytest.raises(LocalProtocolError, match="closed"):
        session.prepare("tools/list", None)


def test_modern_capabilities_drop_roots_list_changed_and_validate(spec_schema):
    capabilities = lifecycle.client_capabilities(sampling=True, elicitation=True, roots=True, version=MODERN)
    assert capabilities == {"roots": {}, "sampling": {}, "elicitation": {}}
    modern_schema_check(spec_schema, "ClientCapabilities", capabilities)


@pytest.mark.parametrize("result, complaint", [
    ([], "object"), ({"capabilities": {}}, "supportedVersions"),
    ({"supportedVersions": "2026-07-28", "capabilities": {}}, "supportedVersions"),
    ({"supportedVersions": [MODERN]}, "capabilities"),
])
def test_a_malformed_discover_result_is_a_remote_protocol_error(result, complaint):
    with pytest.raises(RemoteProtocolError, match=complaint):
        lifecycle.check_discover_result(result)


def test_server_info_comes_from_the_result_meta():
    session = ModernLifecycle()
    session.accept_discover({"supportedVersions": [MODERN], "capabilities": {}, "instructions": "hi",
                             "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}})
    assert (session.server_info, session.instructions) == ({"name": "s", "version": "1"}, "hi")


# --- which era: the decisions of a dual-era client --------------------------------------------------

def refused(status, body=""):
    return HTTPStatusError("refused", status=status, body=body)


def error(code, data=None):
    return jsonrpc.ErrorResponse(1, code, "x", data)


DISCOVER_RESULT = jsonrpc.Response(1, {"resultType": "complete", "supportedVersions": [MODERN, "2025-11-25"],
                                       "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private"})

# answer to server/discover (asked with 2026-07-28), HTTP status → era, next step, version
PROBE_ANSWERS = [
    ("a DiscoverResult", DISCOVER_RESULT, None, ("modern", eras.USE, MODERN)),
    ("-32022 naming our version", error(-32022, {"supported": [MODERN], "requested": MODERN}), None,
     ("modern", eras.DISCOVER, MODERN)),
    ("-32022 naming only legacy versions", error(-32022, {"supported": ["2025-06-18", "2025-11-25"]}), 400,
     ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("-32022 naming nothing we speak", error(-32022, {"supported": ["2099-01-01"]}), None,
     (None, eras.FAIL, None)),
    ("-32021", error(-32021, {"requiredCapabilities": {"sampling": {}}}), 400, ("modern", eras.FAIL, None)),
    ("-32020 over HTTP", error(-32020), 400, ("modern", eras.FAIL, None)),
    ("-32601 on stdio", error(-32601), None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("-32601 with HTTP 200", error(-32601), 200, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("-32601 with HTTP 404", error(-32601), 404, ("modern", eras.FAIL, None)),
    ("-32602", error(-32602), None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("-32600", error(-32600), None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("-32000", error(-32000), None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("a result that is no DiscoverResult", jsonrpc.Response(1, {}), None,
     ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("silence", None, None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("HTTP 400, empty body", refused(400), 400, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("HTTP 400, -32000 with a null id", refused(400, '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,'
                                                     '"message":"Bad Request: No valid session ID"}}'), 400,
     ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("HTTP 400, -32022 without an id", refused(400, '{"jsonrpc":"2.0","error":{"code":-32022,"message":"x",'
                                                    '"data":{"supported":["2026-07-28"]}}}'), 400,
     ("modern", eras.DISCOVER, MODERN)),
    ("HTTP 400, -32020 with no jsonrpc member", refused(400, '{"error":{"code":-32020,"message":"x"}}'), 400,
     ("modern", eras.FAIL, None)),
    ("HTTP 404, HTML", refused(404, "<html>Not Found</html>"), 404, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("HTTP 405", refused(405), 405, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("HTTP 500", refused(500, "boom"), 500, (None, eras.FAIL, None)),
    ("HTTP 401", refused(401), 401, (None, eras.FAIL, None)),
]


@pytest.mark.parametrize("answer, status, expected", [case[1:] for case in PROBE_ANSWERS],
                         ids=[case[0] for case in PROBE_ANSWERS])
def test_what_a_probe_answer_says_about_the_server(answer, status, expected):
    verdict = eras.judge_discover(answer, MODERN, status=status)
    assert (verdict.era, verdict.step, verdict.version) == expected
    assert verdict.reason.startswith("server/discover (2026-07-28) got")


def test_a_second_minus_32022_for_the_same_version_gives_up_instead_of_looping():
    again = eras.judge_discover(error(-32022, {"supported": [MODERN]}), MODERN, attempt=2)
    assert (again.era, again.step) == ("modern", eras.FAIL) and "twice" in again.reason


def test_the_reason_names_the_answer_and_the_decision():
    verdict = eras.judge_discover(error(-32601), MODERN)
    assert verdict.reason == ("server/discover (2026-07-28) got error -32601 (Method not found): not a modern "
                              "answer, so the server is legacy; fall back to initialize")


@pytest.mark.parametrize("era, version, expected", [
    ("legacy", None, ("legacy", eras.INITIALIZE, "2025-11-25")),
    ("legacy", "2024-11-05", ("legacy", eras.INITIALIZE, "2024-11-05")),
    ("modern", None, ("modern", eras.DISCOVER, MODERN)),
    ("auto", None, (None, eras.DISCOVER, MODERN)),
    ("auto", MODERN, (None, eras.DISCOVER, MODERN)),
    ("auto", "2025-06-18", ("legacy", eras.INITIALIZE, "2025-06-18")),  # a legacy version: no probe
])
def test_the_first_step_follows_the_era_and_version_asked_for(era, version, expected):
    step = eras.first_step(era, version)
    assert (step.era, step.step, step.version) == expected


@pytest.mark.parametrize("era, version", [("modern", "2025-11-25"), ("legacy", MODERN), ("both", None)])
def test_an_era_and_a_version_that_disagree_are_refused(era, version):
    with pytest.raises(ValueError):
        eras.first_step(era, version)


def test_initialize_refused_with_a_modern_version_turns_the_client_modern():
    turn = eras.judge_initialize_refusal(error(-32022, {"supported": [MODERN], "requested": "2025-11-25"}))
    assert (turn.era, turn.step, turn.version) == ("modern", eras.DISCOVER, MODERN)
    assert eras.judge_initialize_refusal(error(-32602, {"supported": ["2024-11-05"]})) is None
    assert eras.judge_initialize_refusal(error(-32601)) is None


def test_the_cache_remembers_per_server_and_steers_the_next_first_step():
    cache = eras.EraCache()

    class Stdio:
        argv, cwd = ["python", "server.py"], None

    class HTTP:
        url = "http://127.0.0.1:8000/mcp"

    cache.remember(eras.server_key(Stdio()), "legacy", "2025-11-25")
    cache.remember(eras.server_key(HTTP()), "modern", MODERN)
    assert eras.server_key(object()) is None and cache.get(None) is None
    legacy = eras.first_step("auto", None, cache.get(eras.server_key(Stdio())))
    assert (legacy.era, legacy.step, legacy.version) == ("legacy", eras.INITIALIZE, "2025-11-25")
    assert "remembered" in legacy.reason
    modern = eras.first_step("auto", None, cache.get(eras.server_key(HTTP())))
    assert (modern.era, modern.step) == ("modern", eras.DISCOVER)
    assert eras.first_step("legacy", None, cache.get(eras.server_key(HTTP()))).era == "legacy"  # asked wins
    cache.forget(eras.server_key(HTTP()))
    assert len(cache) == 1


@pytest.mark.parametrize("module", ["mcplab.lifecycle", "mcplab.client.eras", "mcplab.wire.headers", "mcplab.client.mrtr",
                                    "mcplab.client.results"])
def test_the_decision_modules_import_no_io_library(module):
    import json as json_module
    import subprocess
    import sys

    probe = ("import importlib, json, sys; importlib.import_module(sys.argv[1]); "
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in sys.argv[2:])))")
    done = subprocess.run([sys.executable, "-c", probe, module, "anyio", "asyncio", "httpx", "trio", "subprocess",
                           "socket"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json_module.loads(done.stdout) == []


def test_client_info_is_handed_out_as_a_copy_never_the_shared_default():
    first = lifecycle.initialize_request(1, "2025-06-18")
    first.params["clientInfo"]["name"] = "changed by a caller"
    assert lifecycle.initialize_request(2, "2025-06-18").params["clientInfo"]["name"] == "mcplab"
    assert lifecycle.CLIENT_INFO["name"] == "mcplab"
