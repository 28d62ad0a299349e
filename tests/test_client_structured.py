"""A validating client's check of structuredContent against a tool's outputSchema (mcplab/client/structured.py).

One row per rule the check enforces, each with the sentence it must give; the exercise's expected
verdicts (mcplab/exercises/lab03_pages.py) are this check's own conclusions.
"""

from __future__ import annotations

import pytest

from mcplab.client import structured
from mcplab.client.results import Tool, ToolResult
from mcplab.exercises import lab03_pages

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"},
                                           "days": {"type": "array", "items": {"type": "object", "properties": {
                                               "high_c": {"type": "integer"}}, "required": ["high_c"]}}},
          "required": ["city", "days"]}
TOOL = {"name": "forecast", "inputSchema": {"type": "object"}, "outputSchema": SCHEMA}
TEXT = [{"type": "text", "text": "{}"}]


def result(**fields):
    return {"content": TEXT, **fields}


def test_a_conforming_object_is_checked_and_used():
    verdict = structured.check(TOOL, result(structuredContent={"city": "Tokyo", "days": [{"high_c": 21}]}))
    assert verdict.ok and verdict.checked and not verdict.problems
    assert str(verdict) == "✓ forecast's structuredContent conforms to its outputSchema"


@pytest.mark.parametrize("sent, problems, summary", [
    (result(structuredContent={"city": "Tokyo", "days": [{"high_c": "21"}]}),
     ["days[0].high_c: '21' is not of type 'integer'"], "does not conform to its outputSchema"),
    (result(structuredContent={"city": "Tokyo"}), ["(the object): 'days' is a required property"],
     "does not conform to its outputSchema"),
    (result(structuredContent={"city": 7, "days": [{}]}),
     ["city: 7 is not of type 'string'", "days[0]: 'high_c' is a required property"],
     "does not conform to its outputSchema"),
    (result(structuredContent=["Tokyo"]), ["(the object): ['Tokyo'] is not of type 'object'"],
     "does not conform to its outputSchema"),
    (result(), ["no structuredContent in the result"], "carries no structuredContent: the server broke its MUST"),
])
def test_each_broken_promise_is_rejected_with_where_and_why(sent, problems, summary):
    verdict = structured.check(TOOL, sent)
    assert not verdict and verdict.checked
    assert list(verdict.problems) == problems
    assert summary in verdict.summary and str(verdict).startswith("✗ forecast")


@pytest.mark.parametrize("tool, sent, summary", [
    ({**TOOL, "outputSchema": None}, result(structuredContent={"anything": 1}), "declares no outputSchema"),
    ({"name": "plain", "inputSchema": {"type": "object"}}, result(), "declares no outputSchema"),
    (TOOL, result(isError=True), "reported an error (isError: true)"),
])
def test_nothing_is_checked_without_a_schema_or_for_an_error_result(tool, sent, summary):
    verdict = structured.check(tool, sent)
    assert verdict.ok and not verdict.checked and summary in verdict.summary


def test_the_typed_tool_and_result_of_the_client_are_read_as_their_json():
    verdict = structured.check(Tool.from_json(TOOL), ToolResult.from_json(result(structuredContent={"city": "x"})))
    assert not verdict and verdict.problems == ("(the object): 'days' is a required property",)


@pytest.mark.parametrize("tool, sent, expected", [
    ("forecast", result(), "expected a tool from tools/list (a Tool or its descriptor dict), got str"),
    ({**TOOL, "outputSchema": "object"}, result(), "expected the tool's outputSchema to be a JSON object, got str"),
    (TOOL, "{}", "expected a tools/call result (a ToolResult or its dict), got str"),
])
def test_what_is_not_a_tool_or_a_result_is_refused_by_name(tool, sent, expected):
    with pytest.raises(TypeError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        structured.check(tool, sent)


def test_the_exercise_s_verdicts_are_the_check_s_own():
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": lab03_pages.STRUCTURED_SCHEMA}
    for key, sent in lab03_pages.STRUCTURED_RESULTS.items():
        verdict = structured.check(tool, sent)
        concluded = "not checked" if not verdict.checked else "use" if verdict.ok else "reject"
        assert concluded == lab03_pages._VERDICT[key], key
