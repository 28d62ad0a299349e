"""Arguments a tool's ``inputSchema`` admits, made up from the schema alone.

Theory of operation
-------------------
A grader knows nothing of a student's tools but what ``tools/list`` says: a JSON Schema per tool. So it
builds the arguments the way a careful client would, from the schema's own hints, first to last::

    const → default → examples[0] → enum → format → type

    {"type": "object", "properties": {"city": {"type": "string"},
                                      "days": {"type": "integer", "minimum": 1, "maximum": 7}},
     "required": ["city"]}
        typical   → {"city": "example"}
        unlikely  → {"city": "zz-unknown", "days": 7}

Three sets per tool. The **typical** one fills the required properties with the most ordinary value
each admits: it should just work. The **unlikely** one fills every property with a value the schema
still admits but a tool will rarely know (a name nobody has, a number out of its usual range): a
well-behaved tool answers that with a tool error (``isError: true``) the model can read, which is
one of the brief's requirements. The **empty** one is the typical one with every free string
empty (``""``, where ``minLength`` and ``format`` allow it): the mistake a tool meets first in real
use (an empty note, a blank name) and the natural place for its tool error. Numbers stay within ``minimum``/``maximum``; strings within
``minLength``/``maxLength``; ``$ref`` is followed inside the schema, ``anyOf``/``oneOf`` take their
first branch that is not ``null``.

Whatever comes out is checked against the schema before it is sent (:func:`admitted`); what cannot be
built (a ``pattern``, a ``not``) is reported as :class:`Unbuildable` with the property's path, so
the report card can say: give that property a ``default`` or ``examples``.
"""

from __future__ import annotations

import math
from typing import Any

from mcplab.i18n import _
from mcplab.server.schema import compile_validator

TYPICAL, UNLIKELY, EMPTY = "typical", "unlikely", "empty"
TEXT = {TYPICAL: "example", UNLIKELY: "zz-unknown", EMPTY: ""}
NUMBER = {TYPICAL: 1, UNLIKELY: 987_654, EMPTY: 1}
FORMATS = {"date": "2026-07-28", "date-time": "2026-07-28T09:00:00Z", "time": "09:00:00Z",
           "email": "student@example.com", "uri": "https://example.com/", "uri-reference": "https://example.com/",
           "uuid": "00000000-0000-4000-8000-000000000000", "hostname": "example.com", "ipv4": "192.0.2.1"}
MAX_DEPTH = 8  # nested objects and $refs: a cyclic schema must not recurse forever


class Unbuildable(ValueError):
    """No value could be made for a property: ``path`` names it."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(f"{path or _('the arguments')}: {why}")
        self.path = path


def arguments(schema: dict[str, Any], kind: str = TYPICAL) -> dict[str, Any]:
    """Arguments for a tool with this ``inputSchema`` (``kind`` is ``"typical"``, ``"unlikely"`` or ``"empty"``)."""
    value = _value(schema, schema, kind, "", 0)
    if not isinstance(value, dict):
        raise Unbuildable("", _("an inputSchema must describe an object (\"type\": \"object\")"))
    return value


def admitted(schema: dict[str, Any], kind: str = TYPICAL) -> dict[str, Any]:
    """:func:`arguments`, checked against the schema; Unbuildable says why not."""
    value = arguments(schema, kind)
    problem = compile_validator(schema)(value)
    if problem:
        raise Unbuildable("", _("the arguments made up from the schema do not pass it ({problem})", problem=problem))
    return value


def _value(node: Any, root: dict[str, Any], kind: str, path: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unbuildable(path, _("the schema nests deeper than the grader follows"))
    if not isinstance(node, dict):
        return TEXT[kind]  # `true` or a bare {}: anything goes
    if "$ref" in node:
        return _value(_resolve(node["$ref"], root, path), root, kind, path, depth + 1)
    for key in ("pattern", "not"):
        if key in node and not any(k in node for k in ("const", "default", "examples", "enum")):
            raise Unbuildable(path, _("it has a \"{key}\" the grader cannot satisfy; give it a \"default\" "
                                      "or \"examples\"", key=key))
    if "const" in node:
        return node["const"]
    if kind != UNLIKELY and "default" in node:
        return node["default"]
    if isinstance(node.get("examples"), list) and node["examples"]:
        return node["examples"][0]
    if isinstance(node.get("enum"), list) and node["enum"]:
        return node["enum"][-1] if kind == UNLIKELY else node["enum"][0]
    for union in ("anyOf", "oneOf"):
        if isinstance(node.get(union), list) and node[union]:
            branches = [b for b in node[union] if not (isinstance(b, dict) and b.get("type") == "null")]
            return _value((branches or node[union])[0], root, kind, path, depth + 1)
    if isinstance(node.get("allOf"), list):
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            merged.update(_resolve(part["$ref"], root, path) if isinstance(part, dict) and "$ref" in part else part)
        return _value({**{k: v for k, v in node.items() if k != "allOf"}, **merged}, root, kind, path, depth + 1)
    kinds = node.get("type", "object" if "properties" in node else "string")
    kind_of = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    return _by_type(kind_of, node, root, kind, path, depth)


def _by_type(type_: str, node: dict[str, Any], root: dict[str, Any], kind: str, path: str, depth: int) -> Any:
    if type_ == "object":
        properties = node.get("properties") or {}
        wanted = [n for n in properties if kind == UNLIKELY or n in (node.get("required") or [])]
        wanted += [n for n in node.get("required") or [] if n not in wanted]
        return {name: _value(properties.get(name, {}), root, kind, f"{path}.{name}".lstrip("."), depth + 1)
                for name in wanted}
    if type_ == "array":
        count = max(int(node.get("minItems", 0)), 0 if kind == UNLIKELY else 1)
        item = node.get("items", {})
        values = [_value(item, root, kind, f"{path}[{i}]", depth + 1) for i in range(count)]
        if node.get("uniqueItems") and count > 1:
            values = [f"{v}-{i}" if isinstance(v, str) else v for i, v in enumerate(values)]
        return values
    if type_ in ("integer", "number"):
        return _number(node, kind, type_ == "integer")
    if type_ == "boolean":
        return kind != UNLIKELY
    if type_ == "null":
        return None
    if type_ == "string":
        text = FORMATS.get(node.get("format", ""), TEXT[kind])  # an empty string has no format
        low, high = int(node.get("minLength", 0)), node.get("maxLength")
        text = text + "x" * max(0, low - len(text))
        return text[: int(high)] if high is not None else text
    raise Unbuildable(path, _("unknown JSON Schema type {type!r}", type=type_))


def _number(node: dict[str, Any], kind: str, integer: bool) -> int | float:
    value: float = NUMBER[kind]
    low, high = node.get("minimum"), node.get("maximum")
    if node.get("exclusiveMinimum") is not None and not isinstance(node["exclusiveMinimum"], bool):
        low = node["exclusiveMinimum"] + (1 if integer else 0.5)
    if node.get("exclusiveMaximum") is not None and not isinstance(node["exclusiveMaximum"], bool):
        high = node["exclusiveMaximum"] - (1 if integer else 0.5)
    if high is not None and value > high:
        value = high
    if low is not None and value < low:
        value = low
    step = node.get("multipleOf")
    if step:
        value = math.ceil(value / step) * step
        if high is not None and value > high:
            value = math.floor(high / step) * step
    return int(value) if integer else value


def _resolve(ref: str, root: dict[str, Any], path: str) -> Any:
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        raise Unbuildable(path, _("it refers to {ref!r} outside the schema", ref=ref))
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise Unbuildable(path, _("its $ref {ref!r} leads nowhere in the schema", ref=ref))
        node = node[part]
    return node
