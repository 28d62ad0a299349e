"""The exercise checks of the client labs (mcplab/exercises/lab02.py, lab03.py, lab04.py): each
passes the worked answer, says "not answered" (and no hint) for the placeholder, and names what is wrong."""

from __future__ import annotations

import pytest

from mcplab import exercises
from mcplab.wire import jsonrpc
from mcplab.exercises import lab02, lab03, lab04
from mcplab.exercises._feedback import NOT_ANSWERED
from mcplab.client.host import Rule
from mcplab.client.results import ResourceRead, ToolResult
from mcplab.trace import Trace

SEED_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2024-11-05", "capabilities": {},
                              "clientInfo": {"name": "deep-pilot", "version": "0.8.0"}}}
CONVERT_SCHEMA = {"type": "object", "properties": {"amount": {"type": "number"},
                                                   "currency": {"type": "string", "default": "CNY"}},
                  "required": ["amount"]}


def handshake_trace(asked="2025-03-26", answered="2025-03-26"):
    trace = Trace()
    for direction, message in [
        ("c2s", jsonrpc.Request(1, "initialize", {"protocolVersion": asked, "capabilities": {},
                                                  "clientInfo": {"name": "mcplab", "version": "0.1.0"}})),
        ("c2s", None),  # a stderr line in between is fine
        ("s2c", jsonrpc.Response(1, {"protocolVersion": answered, "capabilities": {},
                                     "serverInfo": {"name": "weather", "version": "1.0.0"}})),
        ("c2s", jsonrpc.Notification("notifications/initialized")),
    ]:
        if message is None:
            trace.record("s2c", "stderr", "weather server ready")
        else:
            trace.record(direction, "stdio", jsonrpc.encode(message), message)
    return trace


def tool_result(structured=None, is_error=False):
    return ToolResult.from_json({"content": [{"type": "text", "text": "x"}], "isError": is_error,
                                 "structuredContent": structured})


FORECAST = tool_result({"city": "Tokyo", "days": [{"day": d} for d in range(1, 6)]})
NOTES = ResourceRead.from_json({"contents": [{"uri": "file:///notes.md", "text": "# MCP notes\n..."}]})
WORKED = [
    (lab02.check_initialize_request, SEED_INITIALIZE),
    (lab02.check_handshake_order, ["D", "B", "A", "C"]),
    (lab02.check_negotiation, {"a": ("2025-11-25", "continue"), "b": ("2025-06-18", "continue"),
                               "c": ("2025-03-26", "disconnect"), "d": ("2025-11-25", "continue")}),
    (lab02.check_allowed_calls, {"a", "d", "f"}),
    (lab02.check_live_handshake, handshake_trace()),
    (lab03.check_input_schema, CONVERT_SCHEMA),
    (lab03.check_primitive_choice, {"a": "tool", "b": "resource", "c": "prompt", "d": "tool", "e": "resource"}),
    (lab03.check_error_kinds, {"a": "isError", "b": "protocol error", "c": "protocol error", "d": "isError",
                               "e": "isError"}),
    (lab03.check_forecast, FORECAST),
    (lab03.check_notes_resource, NOTES),
    (lab04.check_openai_tool, {"type": "function", "function": {
        "name": "get_forecast", "description": lab04.MCP_TOOL["description"],
        "parameters": lab04.MCP_TOOL["inputSchema"]}}),
    (lab04.check_anthropic_tool, {"name": "get_forecast", "description": lab04.MCP_TOOL["description"],
                                  "input_schema": lab04.MCP_TOOL["inputSchema"]}),
    (lab04.check_tools_call_for, ("weather", {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}})),
    (lab04.check_rule, Rule(r"forecast for (?P<city>[A-Z][a-z]+)", "get_forecast", {"city": "{city}"})),
    (lab04.check_layers, {"a": "distribution", "b": "mechanism", "c": "model", "d": "application",
                          "e": "distribution"}),
]


def test_every_check_is_exported_from_the_exercises_package():
    for module in (lab02, lab03, lab04):
        for name in module.__all__:
            assert getattr(exercises, name) is getattr(module, name)


@pytest.mark.parametrize("check", [check for check, _ in WORKED], ids=lambda c: c.__name__)
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(check):
    feedback = check(...)
    assert not feedback and feedback.message.startswith(NOT_ANSWERED) and not feedback.hint


@pytest.mark.parametrize("check, answer", WORKED, ids=[check.__name__ for check, _ in WORKED])
def test_the_worked_answer_passes(check, answer):
    feedback = check(answer)
    assert feedback, repr(feedback)
    assert repr(feedback).startswith("✓")


@pytest.mark.parametrize("check, answer, complaint", [
    (lab02.check_initialize_request, {**SEED_INITIALIZE, "id": None}, "-32600"),
    (lab02.check_initialize_request, {k: v for k, v in SEED_INITIALIZE.items() if k != "id"}, "needs an \"id\""),
    (lab02.check_initialize_request, {**SEED_INITIALIZE, "params": {**SEED_INITIALIZE["params"],
                                                                    "protocolVersion": "2025-06-18"}}, "2024-11-05"),
    (lab02.check_initialize_request, {**SEED_INITIALIZE, "params": {**SEED_INITIALIZE["params"],
                                                                    "capabilities": None}}, "empty object"),
    (lab02.check_handshake_order, ["D", "A", "B", "C"], "waits for the server's answer"),
    (lab02.check_handshake_order, ["D", "B", "C", "A"], "only follow notifications/initialized"),
    (lab02.check_handshake_order, ["A", "B"], "exactly once"),
    (lab02.check_negotiation, {"a": ("2025-11-25", "continue"), "b": ("2025-11-25", "continue"),
                               "c": ..., "d": ...}, "case b: the server answers 2025-06-18"),
    (lab02.check_negotiation, {"a": ("2025-11-25", "continue"), "b": ("2025-06-18", "continue"),
                               "c": ("2025-03-26", "continue"), "d": ...}, "should disconnect"),
    (lab02.check_allowed_calls, {"a", "c", "d", "f"}, "c (resources/subscribe) is not allowed"),
    (lab02.check_allowed_calls, {"a", "d"}, "f (ping) is allowed too"),
    (lab02.check_live_handshake, handshake_trace(asked="2025-06-18"), "not 2025-03-26"),
    (lab02.check_live_handshake, Trace(), "three handshake frames"),
    (lab03.check_input_schema, {**CONVERT_SCHEMA, "required": ["amount", "currency"]}, "refuses {'amount': 3.5}"),
    (lab03.check_input_schema, {**CONVERT_SCHEMA, "required": []}, "amount is required"),
    (lab03.check_input_schema, {"type": "object", "properties": {"amount": {"type": "integer"}},
                                "required": ["amount"]}, "refuses {'amount': 3.5}"),
    (lab03.check_input_schema, {"type": "object", "properties": {"amount": {"type": "float"}}}, "not a valid"),
    (lab03.check_primitive_choice, {"a": "tool", "b": "tool", "c": "prompt", "d": "tool", "e": "resource"},
     "b: the editor"),
    (lab03.check_error_kinds, {"a": "protocol error", "b": "protocol error", "c": "protocol error",
                               "d": "isError", "e": "isError"}, "a: isError"),
    (lab03.check_forecast, tool_result({"city": "Tokyo", "days": [{}] * 3}), "3 days"),
    (lab03.check_forecast, tool_result(is_error=True), "reported an error"),
    (lab03.check_notes_resource, tool_result(), "came from a tool"),
    (lab04.check_openai_tool, {"name": "get_forecast", "description": "x", "input_schema": {}}, "missing"),
    (lab04.check_anthropic_tool, {"name": "get_forecast", "description": lab04.MCP_TOOL["description"],
                                  "input_schema": {"type": "object"}}, "'input_schema' is not right"),
    (lab04.check_tools_call_for, ("weather", {"name": "weather__get_forecast", "arguments": {}}), "without the prefix"),
    (lab04.check_tools_call_for, ("weather", {"name": "get_forecast",
                                              "arguments": '{"city": "Tokyo", "days": 2}'}), "still JSON text"),
    (lab04.check_tools_call_for, ("files", {}), "goes to 'weather'"),
    (lab04.check_rule, Rule(r"forecast for Tokyo", "get_forecast", {"city": "Tokyo"}), "Paris"),
    (lab04.check_rule, Rule(r"forecast", "get_weather", {}), "called get_weather({})"),
    (lab04.check_rule, Rule(r"forecast", "get_forecast_v2", {}), "made 0 calls"),
    (lab04.check_rule, "forecast", "expected a Rule"),
    (lab04.check_layers, {"a": "distribution", "b": "model", "c": "model", "d": "application",
                          "e": "distribution"}, "b: "),
])
def test_a_wrong_answer_says_what_is_wrong(check, answer, complaint):
    feedback = check(answer)
    assert not feedback and complaint in feedback.message and feedback.hint, repr(feedback)


def test_a_half_answered_negotiation_names_the_missing_case():
    feedback = lab02.check_negotiation({"a": ("2025-11-25", "continue"), "b": ..., "c": ..., "d": ...})
    assert not feedback and "case b is not answered yet" in feedback.message
    assert lab02.check_negotiation(dict.fromkeys(lab02.NEGOTIATIONS, ...)).message.startswith(NOT_ANSWERED)


@pytest.mark.parametrize("check, keys", [
    (lab02.check_negotiation, lab02.NEGOTIATIONS), (lab03.check_primitive_choice, lab03.SCENARIOS),
    (lab03.check_error_kinds, lab03.OUTCOMES), (lab04.check_layers, lab04.LAYER_STEPS),
])
def test_a_dict_of_placeholders_is_not_answered_yet(check, keys):
    assert check(dict.fromkeys(keys, ...)).message.startswith(NOT_ANSWERED)
