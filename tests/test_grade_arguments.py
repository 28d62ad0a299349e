"""Arguments made up from a tool's inputSchema (mcplab.grade.arguments): each set must pass the schema it
came from, typical and unlikely alike, and what cannot be made is reported with the property's path."""

from __future__ import annotations

from typing import Literal

import pytest

from mcplab.grade.arguments import EMPTY, TYPICAL, UNLIKELY, Unbuildable, admitted
from mcplab.server.schema import compile_validator, reflect

OBJ = "object"


def tool(properties: dict, required: list[str] | None = None, **extra) -> dict:
    return {"type": OBJ, "properties": properties, "required": required if required is not None else list(properties), **extra}


# (schema, typical arguments, unlikely arguments)
TABLE = [
    (tool({"city": {"type": "string"}}), {"city": "example"}, {"city": "zz-unknown"}),
    (tool({"n": {"type": "integer"}}), {"n": 1}, {"n": 987_654}),
    (tool({"days": {"type": "integer", "minimum": 1, "maximum": 7}}), {"days": 1}, {"days": 7}),
    (tool({"x": {"type": "number", "exclusiveMinimum": 5}}), {"x": 5.5}, {"x": 987_654}),
    (tool({"n": {"type": "integer", "minimum": 10, "multipleOf": 4}}), {"n": 12}, {"n": 987_656}),
    (tool({"on": {"type": "boolean"}}), {"on": True}, {"on": False}),
    (tool({"units": {"type": "string", "enum": ["metric", "imperial"]}}), {"units": "metric"},
     {"units": "imperial"}),
    (tool({"mode": {"const": "fast"}}), {"mode": "fast"}, {"mode": "fast"}),
    (tool({"city": {"type": "string", "default": "Paris"}}, []), {}, {"city": "zz-unknown"}),
    (tool({"city": {"type": "string", "examples": ["Tokyo"]}}), {"city": "Tokyo"}, {"city": "Tokyo"}),
    (tool({"code": {"type": "string", "minLength": 12}}), {"code": "examplexxxxx"}, {"code": "zz-unknownxx"}),
    (tool({"code": {"type": "string", "maxLength": 3}}), {"code": "exa"}, {"code": "zz-"}),
    (tool({"day": {"type": "string", "format": "date"}}), {"day": "2026-07-28"}, {"day": "2026-07-28"}),
    (tool({"tags": {"type": "array", "items": {"type": "string"}}}), {"tags": ["example"]}, {"tags": []}),
    (tool({"where": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]}}),
     {"where": {"lat": 1}}, {"where": {"lat": 987_654}}),
    (tool({"note": {"type": ["string", "null"]}}), {"note": "example"}, {"note": "zz-unknown"}),
    (tool({"v": {"anyOf": [{"type": "null"}, {"type": "integer"}]}}), {"v": 1}, {"v": 987_654}),
    ({"type": OBJ, "properties": {"p": {"$ref": "#/$defs/Point"}}, "required": ["p"],
      "$defs": {"Point": {"type": OBJ, "properties": {"x": {"type": "integer"}}, "required": ["x"]}}},
     {"p": {"x": 1}}, {"p": {"x": 987_654}}),
    ({"type": OBJ}, {}, {}),
]


@pytest.mark.parametrize("schema, typical, unlikely", TABLE)
def test_made_up_arguments_are_the_expected_ones_and_pass_their_schema(schema, typical, unlikely) -> None:
    check = compile_validator(schema)
    for kind, expected in ((TYPICAL, typical), (UNLIKELY, unlikely)):
        made = admitted(schema, kind)
        assert made == expected, kind
        assert check(made) is None, kind


def test_unique_array_items_are_made_distinct() -> None:
    schema = tool({"tags": {"type": "array", "items": {"type": "string"}, "minItems": 3, "uniqueItems": True}})
    made = admitted(schema, TYPICAL)
    assert len(set(made["tags"])) == 3


def test_a_reflected_python_signature_always_gets_arguments() -> None:
    def add_task(title: str, priority: Literal["low", "high"] = "low", due: int | None = None,
                 tags: list[str] | None = None) -> str:
        return title

    schema, _, _ = reflect(add_task)
    assert admitted(schema) == {"title": "example"}
    assert admitted(schema, UNLIKELY) == {"title": "zz-unknown", "priority": "high", "due": 987_654, "tags": []}


@pytest.mark.parametrize("schema, says", [
    (tool({"zip": {"type": "string", "pattern": "^[0-9]{5}$"}}), 'zip: it has a "pattern"'),
    (tool({"x": {"not": {"type": "string"}}}), 'x: it has a "not"'),
    (tool({"p": {"$ref": "#/$defs/Missing"}}), "p: its $ref '#/$defs/Missing' leads nowhere"),
    (tool({"p": {"$ref": "https://example.com/s.json"}}), "outside the schema"),
    (tool({"p": {"type": "decimal"}}), "unknown JSON Schema type 'decimal'"),
    ({"type": "string"}, "an inputSchema must describe an object"),
    (tool({"n": {"type": "integer", "minimum": 5, "maximum": 3}}), "do not pass it"),
])
def test_what_cannot_be_made_says_which_property_and_why(schema, says) -> None:
    with pytest.raises(Unbuildable) as refused:
        admitted(schema)
    assert says in str(refused.value)


def test_a_pattern_with_examples_is_fine() -> None:
    schema = tool({"zip": {"type": "string", "pattern": "^[0-9]{5}$", "examples": ["75001"]}})
    assert admitted(schema) == {"zip": "75001"}


def test_a_cyclic_schema_stops_with_a_reason() -> None:
    schema = {"type": OBJ, "properties": {"node": {"$ref": "#"}}, "required": ["node"]}
    with pytest.raises(Unbuildable) as refused:
        admitted(schema)
    assert "nests deeper than the grader follows" in str(refused.value)


# (schema, the "empty" arguments): the typical ones with every free string empty
EMPTIED = [
    (tool({"note": {"type": "string"}}), {"note": ""}),
    (tool({"note": {"type": "string", "minLength": 2}}), {"note": "xx"}),
    (tool({"day": {"type": "string", "format": "date"}}), {"day": "2026-07-28"}),
    (tool({"units": {"type": "string", "enum": ["metric", "imperial"]}}), {"units": "metric"}),
    (tool({"n": {"type": "integer"}, "on": {"type": "boolean"}}), {"n": 1, "on": True}),
    (tool({"tags": {"type": "array", "items": {"type": "string"}}}), {"tags": [""]}),
]


@pytest.mark.parametrize("schema, expected", EMPTIED)
def test_the_empty_set_empties_every_free_string_and_still_passes_the_schema(schema, expected) -> None:
    assert admitted(schema, EMPTY) == expected
    assert compile_validator(schema)(expected) is None
