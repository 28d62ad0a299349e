"""mcplab.exercises.lab06: every check passes the worked answer, says "not answered" for the
placeholder, and names the slip behind each typical wrong answer."""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path

import pytest

from mcplab import exercises
from mcplab.exercises import lab06
from mcplab.exercises._feedback import NOT_ANSWERED, Feedback

ROOT = Path(__file__).resolve().parent.parent
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "lab06", "version": "1.0.0"}}


def modern(meta: dict | None = None, **top: object) -> dict:
    message = copy.deepcopy(lab06.LEGACY_CALL)
    message["params"]["_meta"] = dict(META if meta is None else meta)
    message.update(top)
    return message


RIGHT = {
    "check_modern_request": modern(),
    "check_routing_headers": {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                              "Mcp-Name": "get_forecast", "Mcp-Param-City": "=?base64?5YyX5Lqs?="},
    "check_matrix_failures": {2: "a", 5: "b"},
}


def test_all_lists_exactly_the_check_functions():
    checks = sorted(name for name in vars(lab06) if name.startswith("check_"))
    assert sorted(name for name in lab06.__all__ if name.startswith("check_")) == checks == sorted(RIGHT)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_each_check_is_re_exported_by_the_package(name):
    assert getattr(exercises, name) is getattr(lab06, name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_placeholder_is_not_answered_yet_and_gives_no_hint_away(name):
    feedback = getattr(lab06, name)(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert feedback.message.startswith(NOT_ANSWERED)
    assert not feedback.hint


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_the_worked_answer_passes(name):
    feedback = getattr(lab06, name)(RIGHT[name])
    assert feedback, feedback
    assert repr(feedback).startswith("✓")


@pytest.mark.parametrize("name, answer, says", [
    # 1. legacy → modern
    ("check_modern_request", {**copy.deepcopy(lab06.LEGACY_CALL), "_meta": META}, "beside params"),
    ("check_modern_request", copy.deepcopy(lab06.LEGACY_CALL), "params._meta"),
    ("check_modern_request", modern({k: v for k, v in META.items() if "Capabilities" not in k}), "clientCapabilities"),
    ("check_modern_request", modern({**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}), "-32022"),
    ("check_modern_request", modern(id=4), "id changed"),
    ("check_modern_request", modern(method="tools/list"), "method changed"),
    ("check_modern_request", "{not json", "not JSON"),
    ("check_modern_request", [1], "expected a JSON-RPC request, as a dict or as JSON text, got list"),
    # 2. headers
    ("check_routing_headers", {**RIGHT["check_routing_headers"], "Mcp-Name": "weather"}, "names the server"),
    ("check_routing_headers", {**RIGHT["check_routing_headers"], "Mcp-Param-City": "北京"}, "base64"),
    ("check_routing_headers", {k: v for k, v in RIGHT["check_routing_headers"].items() if k != "Mcp-Param-City"},
     "Mcp-Param-City is missing"),
    ("check_routing_headers", {**RIGHT["check_routing_headers"], "Mcp-Method": "tools/list"}, "-32020"),
    ("check_routing_headers", {**RIGHT["check_routing_headers"], "Mcp-Session-Id": "abc"}, "no sessions"),
    ("check_routing_headers", {**RIGHT["check_routing_headers"], "Mcp-Param-Days": "2"}, "mcp-param-days"),
    ("check_routing_headers", {"Mcp-Method": ..., "Mcp-Name": "get_forecast"}, "still ..."),
    # 3. the matrix
    ("check_matrix_failures", {2: "a"}, "row 5"),
    ("check_matrix_failures", {2: "a", 5: "b", 4: "a"}, "row 4 (dual-era client, legacy server) works"),
    ("check_matrix_failures", {2: "a", 5: "b", 1: "c"}, "both sides speak the same era"),
    ("check_matrix_failures", {2: "b", 5: "b"}, "not for that reason"),
    ("check_matrix_failures", {2: "d", 5: "b"}, "over stdio there is no session id"),
    ("check_matrix_failures", ["2", "5"], "expected a dict"),
])
def test_a_wrong_answer_names_the_slip_and_gives_a_hint(name, answer, says):
    feedback = getattr(lab06, name)(answer)
    assert not feedback
    assert says in feedback.message
    assert feedback.hint
    assert repr(feedback).startswith("✗") and "hint:" in repr(feedback)


def test_a_modern_request_without_client_info_passes_with_a_nudge():
    feedback = lab06.check_modern_request(modern({k: v for k, v in META.items() if "clientInfo" not in k}))
    assert feedback and "SHOULD send" in feedback.message


def test_editing_the_given_legacy_call_does_not_move_the_reference():
    saved = copy.deepcopy(lab06.LEGACY_CALL)
    try:
        lab06.LEGACY_CALL["params"]["_meta"] = dict(META)  # what a student may do in place
        assert lab06.check_modern_request(lab06.LEGACY_CALL)
    finally:
        lab06.LEGACY_CALL.clear()
        lab06.LEGACY_CALL.update(saved)


def test_the_forecast_schema_is_the_weather_servers_own():
    spec = importlib.util.spec_from_file_location("lab06_weather", ROOT / "servers" / "weather.py")
    weather = importlib.util.module_from_spec(spec)
    sys.modules["lab06_weather"] = weather
    try:
        spec.loader.exec_module(weather)
    finally:
        del sys.modules["lab06_weather"]
    city = weather.FORECAST_INPUT["properties"]["city"]
    assert city["x-mcp-header"] == lab06.FORECAST_SCHEMA["properties"]["city"]["x-mcp-header"]
    assert weather.FORECAST_INPUT["required"] == lab06.FORECAST_SCHEMA["required"]


def test_the_matrix_rows_are_the_spec_rows_of_mcplab_matrix():
    from mcplab.notebook.matrix import SPEC_ROWS

    assert [(r.client, r.server) for r in SPEC_ROWS] == [lab06.MATRIX_ROWS[n] for n in range(1, 8)]
    failing = {n for n, row in enumerate(SPEC_ROWS, 1) if row.spec == "fails"}
    assert failing == set(RIGHT["check_matrix_failures"])


def test_the_matrix_question_is_about_stdio_where_no_session_id_exists():
    assert "stdio" in lab06.check_matrix_failures.__doc__ and "stdio" in (lab06.check_matrix_failures({2: "a"}).hint)
