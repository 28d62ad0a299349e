"""The HTTP headers of a modern request: routing facts mirrored out of the body. Sans-IO.

Theory of operation
-------------------
In 2026-07-28 Streamable HTTP ("basic/transports", "Request Metadata") a gateway can route a
request without parsing its body, because the client copies a few body fields into headers::

    POST /mcp                                  {"jsonrpc":"2.0","id":3,"method":"tools/call",
    MCP-Protocol-Version: 2026-07-28     ◀──    "params":{"name":"execute_sql",
    Mcp-Method: tools/call               ◀──      "arguments":{"region":"us-west1","query":"…"},
    Mcp-Name: execute_sql                ◀──      "_meta":{"io.modelcontextprotocol/protocolVersion":
    Mcp-Param-Region: us-west1           ◀──               "2026-07-28", …}}}

``Mcp-Name`` is ``params.name`` (``tools/call``, ``prompts/get``) or ``params.uri``
(``resources/read``). ``Mcp-Param-{Name}`` headers come from the tool's ``inputSchema``: a
property marked ``"x-mcp-header": "Region"`` is mirrored when the call carries a value for it.
The body stays the source of truth; a server rejects a header that disagrees (-32020).

A value that is not plain visible ASCII (non-ASCII, a control character, leading or trailing
whitespace), or that looks like the sentinel itself, travels as ``=?base64?<UTF-8, base64>?=``
(:func:`encode_value`; :func:`decode_value` is the server's side).

The spec puts rules on the annotations, and a client on HTTP MUST drop a tool that breaks one:
:func:`header_annotations` finds every annotation or raises :class:`InvalidHeaderAnnotation`
saying which rule broke. stdio has no headers, so there the annotations may be ignored.
"""

from __future__ import annotations

import string
from typing import Any, Iterator

from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError
from mcplab.wire.versions import HEADER_METHOD, HEADER_NAME, HEADER_PARAM_PREFIX, HEADER_PROTOCOL_VERSION

__all__ = ["ANNOTATION", "InvalidHeaderAnnotation", "encode_value", "decode_value", "header_value",
           "header_annotations", "param_headers", "request_headers"]

ANNOTATION = "x-mcp-header"
SENTINEL_START, SENTINEL_END = "=?base64?", "?="  # base64 loads only for a value that is not plain ASCII
NAME_SOURCE = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
PRIMITIVES = frozenset({"string", "integer", "boolean"})   # "number" is not allowed
MAX_SAFE_INTEGER = 2**53 - 1                               # the JavaScript safe range
# RFC 9110 §5.6.2, tchar: the characters of a header field name.
TCHAR = frozenset("!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits)
# JSON Schema keywords holding subschemas. Only a chain of "properties" from the root is a place
# where an annotation may sit; anywhere under these others it makes the tool invalid.
ONE_SCHEMA = ("additionalProperties", "items", "contains", "not", "if", "then", "else", "propertyNames",
              "unevaluatedItems", "unevaluatedProperties", "additionalItems")
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("patternProperties", "$defs", "definitions", "dependentSchemas")


class InvalidHeaderAnnotation(RemoteProtocolError):
    """A tool's ``x-mcp-header`` breaks a rule of the spec; a client on HTTP drops the tool."""


def _plain(text: str) -> bool:
    return (all(" " <= ch <= "~" for ch in text) and text == text.strip(" ")
            and not (text.startswith(SENTINEL_START) and text.endswith(SENTINEL_END)))


def encode_value(text: str) -> str:
    """A header-safe form of ``text``: as is when plain visible ASCII, else the base64 sentinel.

    >>> encode_value("us-west1"), encode_value(" padded ")
    ('us-west1', '=?base64?IHBhZGRlZCA=?=')
    """
    if _plain(text):
        return text
    import base64

    return SENTINEL_START + base64.b64encode(text.encode("utf-8")).decode("ascii") + SENTINEL_END


def decode_value(value: str) -> str:
    """The text a header value stands for (what a server compares with the body)."""
    if value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END) and len(value) >= 11:
        import base64

        return base64.b64decode(value[len(SENTINEL_START):-len(SENTINEL_END)], validate=True).decode("utf-8")
    return value


def header_value(value: Any) -> str | None:
    """A parameter value as header text: ``True`` → ``true``, ``42`` → ``42``; None means "no header"."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise LocalProtocolError(f"{value} is outside the safe integer range a header may carry "
                                     f"(±(2**53 - 1))")
        return str(value)
    if isinstance(value, str):
        return encode_value(value)
    return None  # not a primitive: the schema says it cannot be mirrored, the server will say why


def _walk(schema: Any, path: tuple[str, ...], chain: bool) -> Iterator[tuple[tuple[str, ...], bool, Any]]:
    """Every subschema: (property path, still on a pure ``properties`` chain?, the subschema)."""
    if not isinstance(schema, dict):
        return
    yield path, chain, schema
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for key, sub in properties.items():
            yield from _walk(sub, path + (key,), chain)
    for keyword in ONE_SCHEMA:
        yield from _walk(schema.get(keyword), path + (keyword,), False)
    for keyword in SCHEMA_LISTS:
        subs = schema.get(keyword)
        for i, sub in enumerate(subs if isinstance(subs, list) else ()):
            yield from _walk(sub, path + (f"{keyword}[{i}]",), False)
    for keyword in SCHEMA_MAPS:
        subs = schema.get(keyword)
        for key, sub in (subs.items() if isinstance(subs, dict) else ()):
            yield from _walk(sub, path + (keyword, key), False)


def header_annotations(schema: Any) -> dict[tuple[str, ...], str]:
    """Property path → header name for every ``x-mcp-header`` in ``schema``; raise if one breaks a rule.

    >>> header_annotations({"type": "object", "properties": {"region": {"type": "string",
    ...                     "x-mcp-header": "Region"}}})
    {('region',): 'Region'}
    """
    found: dict[tuple[str, ...], str] = {}
    seen: dict[str, str] = {}
    for path, chain, sub in _walk(schema, (), True):
        if ANNOTATION not in sub:
            continue
        name, where = sub[ANNOTATION], ".".join(path) or "the schema root"
        if not chain or not path:
            raise InvalidHeaderAnnotation(f"{ANNOTATION} on {where}: it may only mark a property reached "
                                          f"through 'properties' alone (not items, oneOf, $ref, …)")
        if not isinstance(name, str) or not name:
            raise InvalidHeaderAnnotation(f"{ANNOTATION} on {where} is {name!r}: it must be a non-empty name")
        if not set(name) <= TCHAR:
            bad = "".join(sorted({ch for ch in name if ch not in TCHAR}))
            raise InvalidHeaderAnnotation(f"{ANNOTATION} {name!r} on {where} has characters a header name "
                                          f"cannot hold: {bad!r}")
        types = sub.get("type")
        types = [types] if isinstance(types, str) else types
        if not isinstance(types, list) or not types or not set(types) <= PRIMITIVES:
            raise InvalidHeaderAnnotation(f"{ANNOTATION} {name!r} on {where}, whose type is {sub.get('type')!r}: "
                                          f"only string, integer and boolean parameters may be mirrored")
        if name.lower() in seen:
            raise InvalidHeaderAnnotation(f"{ANNOTATION} {name!r} on {where} repeats {seen[name.lower()]!r} "
                                          f"(names must differ, ignoring case)")
        seen[name.lower()] = name
        found[path] = name
    return found


def param_headers(annotations: dict[tuple[str, ...], str], arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for one call: one per annotated property that has a value."""
    headers: dict[str, str] = {}
    for path, name in annotations.items():
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        text = header_value(value)
        if text is not None:
            headers[HEADER_PARAM_PREFIX + name] = text
    return headers


def request_headers(method: str, params: Any, version: str,
                    annotations: dict[tuple[str, ...], str] | None = None) -> dict[str, str]:
    """Every header a modern request mirrors from its body.

    >>> request_headers("resources/read", {"uri": "file:///a%20b.txt"}, "2026-07-28")
    {'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'resources/read', 'Mcp-Name': 'file:///a%20b.txt'}
    """
    headers = {HEADER_PROTOCOL_VERSION: version, HEADER_METHOD: method}
    params = params if isinstance(params, dict) else {}
    source = NAME_SOURCE.get(method)
    if source is not None and isinstance(params.get(source), str):
        headers[HEADER_NAME] = encode_value(params[source])
    if annotations:
        headers.update(param_headers(annotations, params.get("arguments")))
    return headers
