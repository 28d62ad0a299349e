"""Reflection of Python functions into inputSchema, and argument checking (mcplab/server/schema.py)."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated, Any, Literal, Optional, Sequence

import pytest

from mcplab.server import Context
from mcplab.server.schema import compile_validator, parse_docstring, reflect, type_schema

from server_helpers import ROOT


@pytest.mark.parametrize("hint, schema", [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (Any, {}),
    (list, {"type": "array"}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (Sequence[str], {"type": "array", "items": {"type": "string"}}),
    (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    (Literal["metric", "imperial"], {"type": "string", "enum": ["metric", "imperial"]}),
    (Literal[1, "a"], {"enum": [1, "a"]}),
    (Optional[int], {"type": ["integer", "null"]}),
    (int | None, {"type": ["integer", "null"]}),
    (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    (Annotated[str, "A city"], {"type": "string", "description": "A city"}),
])
def test_type_hints_reflect_to_json_schema(hint: Any, schema: dict) -> None:
    assert type_schema(hint) == schema


def test_seed_shaped_function_reflects_to_the_seed_schema() -> None:
    def get_weather(city: str) -> str:
        """查询指定城市的当前天气"""
        return city

    schema, description, context_param = reflect(get_weather)
    assert schema == {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert description == "查询指定城市的当前天气"
    assert context_param is None


def test_defaults_are_optional_and_shown_as_default() -> None:
    def forecast(city: str, days: int = 3, note: str | None = None, tags: list[str] = []) -> None:  # noqa: B006
        ...

    schema, _, _ = reflect(forecast)
    assert schema["required"] == ["city"]
    assert schema["properties"]["days"] == {"type": "integer", "default": 3}
    assert "default" not in schema["properties"]["note"]
    assert schema["properties"]["tags"]["default"] == []


def test_docstring_args_describe_parameters_and_the_rest_describes_the_tool() -> None:
    def tool(city: str, units: str = "metric") -> None:
        """Current weather.

        Longer text stays in the description.

        Args:
            city: A city name,
                in English or Chinese.
            units (str): "metric" or "imperial".

        Returns:
            Nothing that matters here.
        """

    description, params = parse_docstring(tool)
    assert description == "Current weather.\n\nLonger text stays in the description."
    assert params == {"city": "A city name, in English or Chinese.", "units": '"metric" or "imperial".'}
    schema, _, _ = reflect(tool)
    assert schema["properties"]["city"]["description"] == "A city name, in English or Chinese."


def test_a_context_parameter_is_not_an_argument() -> None:
    async def slow(n: int, ctx: Context) -> None:
        ...

    schema, _, context_param = reflect(slow, skip=Context)
    assert context_param == "ctx"
    assert list(schema["properties"]) == ["n"]


def test_a_hint_json_schema_cannot_express_asks_for_an_explicit_schema() -> None:
    def tool(when: complex) -> None:
        ...

    with pytest.raises(TypeError, match="schema="):
        reflect(tool)


def test_validator_names_the_argument_and_the_rule() -> None:
    check = compile_validator({"type": "object", "properties": {"days": {"type": "integer", "maximum": 7}},
                               "required": ["city"]})
    assert check({"city": "x", "days": 3}) is None
    assert check({"city": "x", "days": 9}) == "days: 9 is greater than the maximum of 7"
    assert check({"days": 1}) == "'city' is a required property"
    assert "is not of type 'integer'" in check({"city": "x", "days": "three"})


def test_validator_follows_the_schema_dialect() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"n": {"type": "integer", "exclusiveMaximum": 5}}}
    assert compile_validator(draft7)({"n": 5}) is not None
    with_defs = {"type": "object", "$defs": {"c": {"type": "string"}}, "properties": {"c": {"$ref": "#/$defs/c"}}}
    assert compile_validator(with_defs)({"c": 1}) is not None


@pytest.mark.subprocess
def test_server_modules_stay_sans_io_and_light() -> None:
    code = ("import sys; import mcplab.server.toolkit, mcplab.server.handlers, mcplab.server.schema, "
            "mcplab.server.catalogue, "
            "mcplab.server.content, mcplab.server.context; "
            "print(sorted({'anyio', 'asyncio', 'httpx', 'subprocess', 'socket', 'starlette', 'uvicorn', "
            "'jsonschema'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"
