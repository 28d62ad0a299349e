"""Reflection: a Python function becomes a tool's ``inputSchema``; arguments are checked against it.

Theory of operation
-------------------
A tool is described to the model by JSON Schema, the same shape ``tools/list`` returns::

    def get_weather(city: str, units: Literal["metric", "imperial"] = "metric") -> str:
        '''Current weather.

        Args:
            city: A city name, e.g. "Beijing".
        '''
    →  {"type": "object",
        "properties": {"city": {"type": "string", "description": "A city name, e.g. \\"Beijing\\"."},
                       "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"}},
        "required": ["city"]}

:func:`reflect` reads three things and nothing else: the parameters (a parameter without a default is
``required``), their type hints (:func:`type_schema`: ``str int float bool``, ``list[T]``,
``dict[str, T]``, ``Literal[...]`` → ``enum``, ``T | None`` → nullable, ``Annotated[T, "a description"]``,
``Annotated[T, {"more": "keywords"}]``), and the docstring's ``Args:`` section (one
``name: description`` per parameter; the text above it describes the tool). A hint it cannot express
raises ``TypeError`` telling the author to pass an explicit schema instead.

``x-mcp-header`` (MCP 2026-07-28, Streamable HTTP): a property schema may ask clients to copy the
argument into an ``Mcp-Param-<Name>`` header, so a gateway can route on it without reading the body::

    def get_weather(city: Annotated[str, {"x-mcp-header": "City"}]) -> str: ...

:func:`header_parameters` checks the spec's rules when a tool is registered (a client must drop a
tool that breaks them) and tells a transport which argument each header mirrors.
A parameter annotated with the toolkit's ``Context`` class is not an argument: the toolkit passes the
request context there (``skip=``).

:func:`compile_validator` checks arguments with ``jsonschema``. Importing jsonschema is slow (its
optional format checkers pull in a grammar compiler), so it happens when a value first needs it, not
at server start, and the optional format-checker packages are hidden while it loads: mcplab never
asks for format checking, so they would only cost start-up time. A flat schema's valid values never
need it (:func:`plainly_valid`): the bundled servers' calls with good arguments skip jsonschema.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import sys
import types
import typing
from typing import Any, Callable, Literal, Union

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_schema(hint: Any) -> dict[str, Any]:
    """The JSON Schema for one Python type hint: ``list[int]`` → ``{"type":"array","items":{"type":"integer"}}``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:  # Annotated[T, "description"] or Annotated[T, {"keyword": value}]
        schema = type_schema(args[0])  # (first: an Annotated holding a dict cannot be hashed below)
        for extra in args[1:]:
            schema = {**schema, **extra} if isinstance(extra, dict) else schema
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {**schema, "description": notes[0]} if notes else schema
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    if hint in JSON_TYPES:
        return {"type": JSON_TYPES[hint]}
    if hint is list:
        return {"type": "array"}
    if hint is dict:
        return {"type": "object"}
    if origin is Literal:
        schema: dict[str, Any] = {"enum": list(args)}
        kinds = {JSON_TYPES.get(type(a)) for a in args}
        if len(kinds) == 1 and None not in kinds:
            schema = {"type": kinds.pop(), **schema}
        return schema
    if origin in (Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        inner = type_schema(members[0]) if len(members) == 1 else {"anyOf": [type_schema(m) for m in members]}
        if len(members) == len(args):
            return inner
        if isinstance(inner.get("type"), str):  # Optional[int] → {"type": ["integer", "null"]}
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin in (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable):
        return {"type": "array", "items": type_schema(args[0])} if args else {"type": "array"}
    if origin in (dict, collections.abc.Mapping):
        return {"type": "object", "additionalProperties": type_schema(args[1])} if args else {"type": "object"}
    raise TypeError(f"cannot express {hint!r} as JSON Schema; pass schema={{...}} to the decorator instead")


_ARGS_SECTION = re.compile(r"^(?:Args|Arguments|Parameters):[ \t]*$", re.M)
_ARG_LINE = re.compile(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)")  # "city: ..." or "city (str): ..."


def parse_docstring(fn: Callable) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a docstring with a Google-style ``Args:`` section."""
    doc = inspect.cleandoc(fn.__doc__ or "")
    section = _ARGS_SECTION.search(doc)
    if section is None:
        return doc, {}
    params: dict[str, str] = {}
    name, indent = None, None
    for line in doc[section.end():].splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        if depth == 0:
            break  # the next section ("Returns:", ...) ends the argument list
        indent = depth if indent is None else indent
        match = _ARG_LINE.fullmatch(line.strip())
        if depth == indent and match:
            name = match.group(1)
            params[name] = match.group(2)
        elif name:  # a deeper line continues the description above it
            params[name] = f"{params[name]} {line.strip()}".strip()
    return doc[:section.start()].strip(), params


def reflect(fn: Callable, *, skip: type | None = None,
            types: bool = True) -> tuple[dict[str, Any], str, str | None]:
    """``(inputSchema, description, context parameter name)`` for a function, from hints and docstring.

    ``types=False`` skips the hints (for a caller that brings its own schema).
    """
    description, notes = parse_docstring(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_param = None
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name, param.annotation)
        if skip is not None and hint is skip:
            context_param = name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = type_schema(hint) if types else {}
        if name in notes and "description" not in schema:
            schema["description"] = notes[name]
        if param.default is param.empty:
            required.append(name)
        elif param.default is not None and _is_json(param.default):
            schema["default"] = param.default
        properties[name] = schema
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return input_schema, description, context_param


OBJECT_OUTPUT_FROM, OBJECT_OUTPUT_UNTIL = "2025-06-18", "2025-11-25"


def check_output_schema(schema: Any, tool: str = "tool") -> None:
    """ValueError unless every revision that has ``outputSchema`` can carry ``schema``.

    2025-06-18 and 2025-11-25 require an object schema (``"type": "object"`` at the root) and an
    object ``structuredContent``; 2026-07-28 allows any JSON Schema and any JSON value. A toolkit
    server speaks every revision, so it registers only what all of them can express (the older
    revisions drop ``outputSchema`` and send the JSON as text).
    """
    if isinstance(schema, dict) and schema.get("type") == "object":
        return
    got = f"{type(schema).__name__} {schema!r}" if not isinstance(schema, dict) else \
        f'a schema with "type": {schema.get("type")!r}' if "type" in schema else "a schema with no \"type\""
    raise ValueError(f'{tool}: an outputSchema must be a JSON Schema object with "type": "object" at its root: '
                     f"MCP {OBJECT_OUTPUT_FROM} and {OBJECT_OUTPUT_UNTIL} allow nothing else (server/tools, "
                     f"\"Output Schema\"), and this server speaks them; got {got}. Wrap the value instead: "
                     f'{{"type": "object", "properties": {{"result": <your schema>}}, "required": ["result"]}}, '
                     f'and return {{"result": value}}')


HEADER_KEYWORD = "x-mcp-header"
HEADER_TYPES = ("string", "integer", "boolean")  # spec: primitives only, and not "number"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 tchar: a header name's characters


def header_parameters(schema: dict[str, Any], tool: str = "tool") -> dict[str, tuple[str, ...]]:
    """Each ``x-mcp-header`` name → the path of the argument it mirrors, e.g. ``{"City": ("city",)}``.

    ValueError when a declaration breaks a rule of 2026-07-28 ("Custom headers"): the name must be a
    non-empty RFC 9110 token, unique whatever its case; the property must be a string, integer or
    boolean reached from the root through ``properties`` alone (not items, anyOf, $ref ...).
    """
    found: dict[str, tuple[str, ...]] = {}

    def walk(node: Any, path: tuple[str, ...], reachable: bool) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, path, False)
            return
        if not isinstance(node, dict):
            return
        if HEADER_KEYWORD in node:
            name, where = node[HEADER_KEYWORD], ".".join(path) or "the root"
            problem = ("it is not reached from the root through properties alone" if not reachable or not path
                       else "its name must be a non-empty token (letters, digits, !#$%&'*+-.^_`|~)"
                       if not isinstance(name, str) or not _TOKEN.fullmatch(name)
                       else f"only {', '.join(HEADER_TYPES)} properties may carry it"
                       if node.get("type") not in HEADER_TYPES
                       else f"another property already uses {name!r} (header names ignore case)"
                       if name.lower() in {n.lower() for n in found} else None)
            if problem:
                raise ValueError(f"{tool}: {HEADER_KEYWORD} {name!r} on {where}: {problem}")
            found[name] = path
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, path + (prop,), reachable)
            elif key != HEADER_KEYWORD:
                walk(value, path, False)

    walk(schema, (), True)
    return found


def without_header_annotations(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of an input schema without ``x-mcp-header`` keywords (for legacy clients, who never had them)."""
    copy = {k: v for k, v in schema.items() if k != HEADER_KEYWORD}
    if isinstance(schema.get("properties"), dict):
        copy["properties"] = {k: without_header_annotations(v) if isinstance(v, dict) else v
                              for k, v in schema["properties"].items()}
    return copy


def _is_json(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


# --- validation (jsonschema, loaded on first use) -------------------------------------------------

# Optional packages jsonschema imports only to check "format" keywords (iri, duration, color, ...).
# In a Jupyter venv they are installed and cost seconds (rfc3987_syntax compiles a grammar at import).
_FORMAT_CHECKER_PACKAGES = ("rfc3987_syntax", "rfc3987", "rfc3986_validator", "rfc3339_validator", "fqdn",
                            "idna", "webcolors", "jsonpointer", "uri_template", "isoduration")


def load_jsonschema() -> Any:
    """jsonschema, imported on first use with its optional format-checker packages hidden."""
    if "jsonschema" in sys.modules:
        return sys.modules["jsonschema"]
    hidden = [name for name in _FORMAT_CHECKER_PACKAGES if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` raise ImportError
    try:
        import jsonschema
    finally:
        for name in hidden:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]
    return jsonschema


def compile_validator(schema: dict[str, Any]) -> Callable[[Any], str | None]:
    """A checker for one schema: ``check(value)`` → ``None`` when valid, else one readable sentence.

    The dialect is the schema's ``$schema`` if it names one, else JSON Schema 2020-12 (the MCP default).
    A flat schema (what type hints give: an object of strings, numbers, booleans, enums, bounds) is
    first checked by :func:`plainly_valid`, which only ever says "valid" when jsonschema would too;
    jsonschema (loaded on first need) judges everything else and words every refusal.
    """
    plain = plainly_valid(schema)
    validator: Any = None

    def check(value: Any) -> str | None:
        nonlocal validator
        if plain is not None and plain(value):
            return None
        jsonschema = load_jsonschema()
        if validator is None:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            validator = cls(schema)
        if validator.is_valid(value):
            return None
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
        return f"{where}: {error.message}" if where else error.message

    return check


# Keywords that never make a value invalid (annotations), and the plain types of a flat schema.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly",
                          "writeOnly", "$comment"})
_PLAIN_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,  # 2.0 is an integer to JSON Schema too: jsonschema decides that one
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
}


def plainly_valid(schema: Any) -> Callable[[Any], bool] | None:
    """For a flat object schema, a quick test that is True only for values jsonschema accepts; else None.

    Why: jsonschema walks a schema through generic machinery, several µs per ``tools/call``, and takes
    a tenth of a second to import. A False answer means "ask jsonschema", never "invalid". Recognised:
    ``type: object`` with ``properties`` (each: one plain ``type``, ``enum`` of strings, integers or
    booleans, ``minimum``/``maximum``, annotations and ``x-`` keywords), ``required``, and
    ``additionalProperties`` true or false. Anything else (``$ref``, nested objects, formats, …) gets None.
    """
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    if any(k not in ("type", "properties", "required", "additionalProperties") and k not in _ANNOTATIONS
           for k in schema):
        return None
    properties, required = schema.get("properties", {}), schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or not isinstance(extra, bool):
        return None
    tests = {}
    for name, prop in properties.items():
        test = _plain_property(prop)
        if test is None:
            return None
        tests[name] = test

    def valid(value: Any) -> bool:
        if type(value) is not dict or any(name not in value for name in required):
            return False
        for name, item in value.items():
            test = tests.get(name)
            if test is None:
                if not extra:
                    return False
            elif not test(item):
                return False
        return True

    return valid


def _plain_property(prop: Any) -> Callable[[Any], bool] | None:
    if not isinstance(prop, dict):
        return None
    keywords = {k for k in prop if k not in _ANNOTATIONS and not k.startswith("x-")}
    is_type = _PLAIN_TYPES.get(prop["type"]) if isinstance(prop.get("type"), str) else None
    if not keywords <= {"type", "enum", "minimum", "maximum"} or is_type is None:
        return None
    enum = prop.get("enum")
    if enum is not None and not (isinstance(enum, list) and all(type(e) in (str, int, bool) for e in enum)):
        return None
    low, high = prop.get("minimum"), prop.get("maximum")
    if any(b is not None and type(b) not in (int, float) for b in (low, high)):
        return None

    def test(v: Any) -> bool:
        if not is_type(v):
            return False
        if enum is not None and not any(type(e) is type(v) and e == v for e in enum):
            return False
        if low is not None and not v >= low:  # NaN fails every comparison: jsonschema decides
            return False
        return high is None or v <= high

    return test
