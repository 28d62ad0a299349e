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


FLAT = {"type": "object", "required": ["city"], "additionalProperties": False,
        "properties": {"city": {"type": "string", "description": "a city", "x-mcp-header": "City"},
                       "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
                       "days": {"type": "integer", "minimum": 1, "maximum": 7},
                       "ratio": {"type": "number", "maximum": 1.5},
                       "loud": {"type": "boolean"}}}
FLAT_VALUES = [
    {"city": "Paris"}, {"city": "Paris", "units": "imperial", "days": 7, "ratio": 1, "loud": False},
    {}, {"city": 3}, {"city": None}, {"city": ["Paris"]}, {"city": "Paris", "units": "kelvin"},
    {"city": "Paris", "units": "METRIC"}, {"city": "Paris", "days": 0}, {"city": "Paris", "days": 8},
    {"city": "Paris", "days": 2.0}, {"city": "Paris", "days": 2.5}, {"city": "Paris", "days": True},
    {"city": "Paris", "days": "3"}, {"city": "Paris", "ratio": float("nan")}, {"city": "Paris", "ratio": 2},
    {"city": "Paris", "ratio": float("inf")}, {"city": "Paris", "ratio": False}, {"city": "Paris", "loud": 1},
    {"city": "Paris", "loud": None}, {"city": "Paris", "extra": 1}, [], "Paris", None, 3,
    {"city": "Paris", "units": True}, {"city": "", "days": 1},
]


@pytest.mark.parametrize("value", FLAT_VALUES, ids=repr)
def test_the_plain_check_of_a_flat_schema_accepts_only_what_jsonschema_accepts(value: Any) -> None:
    from mcplab.server.schema import load_jsonschema, plainly_valid

    jsonschema = load_jsonschema()
    plain = plainly_valid(FLAT)
    assert plain is not None
    valid = jsonschema.Draft202012Validator(FLAT).is_valid(value)
    if plain(value):
        assert valid
    assert (compile_validator(FLAT)(value) is None) == valid  # the checker's verdict is jsonschema's, always


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"c": {"$ref": "#/$defs/c"}}, "$defs": {"c": {"type": "string"}}},
    {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}},
    {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}},
    {"type": "object", "properties": {"o": {"type": "object"}}},
    {"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}},
    {"type": "object", "properties": {"n": {"type": "integer", "exclusiveMaximum": 5}}},
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    {"type": "array"}, {"type": "object", "properties": {"e": {"type": "number", "enum": [1.5]}}}, True,
])
def test_a_schema_the_plain_check_does_not_know_goes_to_jsonschema(schema: Any) -> None:
    from mcplab.server.schema import plainly_valid

    assert plainly_valid(schema) is None


@pytest.mark.subprocess
def test_a_good_call_to_the_weather_server_does_not_load_jsonschema_and_a_bad_one_does() -> None:
    code = ("import sys; sys.path.insert(0, '.'); from servers.weather import server; "
            "check = server.tools['get_weather'].check; "
            "ok = check({'city': 'Beijing', 'units': 'metric'}); print(ok, 'jsonschema' in sys.modules); "
            "bad = check({'city': 'Beijing', 'units': 'kelvin'}); print(bad, 'jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.splitlines() == ["None False", "units: 'kelvin' is not one of ['metric', 'imperial'] True"]


@pytest.mark.subprocess
def test_server_modules_stay_sans_io_and_light() -> None:
    code = ("import sys; import mcplab.server.toolkit, mcplab.server.handlers, mcplab.server.schema, "
            "mcplab.server.catalogue, "
            "mcplab.server.content, mcplab.server.context; "
            "print(sorted({'anyio', 'asyncio', 'httpx', 'subprocess', 'socket', 'starlette', 'uvicorn', "
            "'jsonschema'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"
