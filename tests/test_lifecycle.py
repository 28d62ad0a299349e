"""The legacy handshake as a state table: legal moves, illegal ones, and the checks on the answer.

(That lifecycle.py imports no I/O library is checked with the other sans-IO modules, in test_sans_io.py.)"""

from __future__ import annotations

import jsonschema
import pytest

from mcplab import jsonrpc, lifecycle
from mcplab.errors import LocalProtocolError, RemoteError, RemoteProtocolError
from mcplab.lifecycle import LegacyLifecycle, UnsupportedVersion
from mcplab.versions import LEGACY_VERSIONS, at_least


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
