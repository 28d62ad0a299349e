"""The routing headers of a 2026-07-28 request, checked against its body on the server. Sans-IO.

Theory of operation
-------------------
Over Streamable HTTP a modern client mirrors a few body fields into headers, so that a gateway can
route a request without parsing it (spec "basic/transports", "Request Metadata" and "Custom Headers
from Tool Parameters")::

    MCP-Protocol-Version    params._meta["io.modelcontextprotocol/protocolVersion"]   every request
    Mcp-Method              method                                                     every request
    Mcp-Name                params.name (tools/call, prompts/get), params.uri (resources/read)
    Mcp-Param-{Name}        the tools/call argument whose schema says "x-mcp-header": "{Name}"

The body stays the source of truth, and a server MUST reject a request whose headers disagree with
it: :func:`check_headers` raises -32020 HeaderMismatch (HTTP 400) when a header is

* missing while the body has the value (an ``Mcp-Param-*`` also when the body has *no* value: a
  gateway would route on something the body never said);
* sent twice (a gateway reading the first copy and a server reading the last would disagree);
* carrying characters a header cannot hold as is, or a malformed ``=?base64?…?=`` sentinel;
* not equal to the body after decoding the sentinel. Names ignore case, values do not; integers
  compare as numbers (``42`` = ``42.0``), booleans are ``true``/``false``.

An ``Mcp-Param-*`` that no parameter of the tool declares is left alone: intermediaries forward
headers they do not know. The client's side of the same rules is ``mcplab/wire/headers.py``, whose
sentinel codec this module reuses.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Iterable

from mcplab.wire.errors import HeaderMismatch
from mcplab.wire.headers import NAME_SOURCE, decode_value, header_value
from mcplab.wire.jsonrpc import Request
from mcplab.wire.versions import (
    HEADER_METHOD, HEADER_NAME, HEADER_PARAM_PREFIX, HEADER_PROTOCOL_VERSION, META_PROTOCOL_VERSION,
)

__all__ = ["check_headers", "check_param"]

_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_HEADER_TEXT = re.compile(r"[\t -~]*")  # what a header value carries as is: tab and visible ASCII, space included


def _fold(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Header name (lower case: names ignore case) → every value it was sent with."""
    folded: dict[str, list[str]] = {}
    for name, value in pairs:
        folded.setdefault(name.lower(), []).append(value)
    return folded


def _one(folded: dict[str, list[str]], name: str) -> str | None:
    values = folded.get(name.lower())
    if values is None:
        return None
    if len(values) > 1:  # a gateway reading the first copy and a server reading the last would disagree
        raise HeaderMismatch(f"Header mismatch: {name} was sent {len(values)} times; send it once")
    if not _HEADER_TEXT.fullmatch(values[0]):
        raise HeaderMismatch(f"Header mismatch: {name} holds characters a header value cannot carry as is; "
                             f"encode the value as =?base64?…?=")
    return values[0]


def _decoded(name: str, value: str) -> str:
    try:
        return decode_value(value)
    except ValueError:  # binascii.Error and UnicodeDecodeError are both ValueErrors
        raise HeaderMismatch(f"Header mismatch: {name} holds a malformed =?base64?…?= value: {value!r}") from None


def _agrees(body: Any, text: str) -> bool:
    """Does a decoded ``Mcp-Param-*`` value stand for the body's argument? Integers compare as numbers."""
    if isinstance(body, bool):
        return text == ("true" if body else "false")
    if isinstance(body, (int, float)):
        if not _DECIMAL.fullmatch(text):
            return False
        try:
            return Decimal(text) == Decimal(repr(body) if isinstance(body, float) else body)
        except InvalidOperation:
            return False
    return isinstance(body, str) and text == body


def _renderable(value: Any) -> bool:
    try:
        return header_value(value) is not None
    except ValueError:  # an integer outside ±(2**53 - 1)
        return False


def _at(tree: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def check_headers(pairs: Iterable[tuple[str, str]], request: Request, version: str,
                  tool: Any | None = None) -> None:
    """Raise -32020 HeaderMismatch unless the routing headers of ``request`` agree with its body.

    ``pairs`` are the headers as sent (name, value); ``version`` is the body's ``_meta`` version;
    ``tool`` is the catalogue entry a ``tools/call`` names (its ``headers`` map each ``Mcp-Param-*``
    name to the argument it mirrors), or None.

    >>> check_headers([("Mcp-Method", "tools/list")], Request(1, "tools/list"), "2026-07-28")
    Traceback (most recent call last):
    mcplab.wire.errors.HeaderMismatch: Header mismatch: MCP-Protocol-Version is missing; ...
    """
    folded = _fold(pairs)
    sent_version = _one(folded, HEADER_PROTOCOL_VERSION)
    if sent_version is None:
        raise HeaderMismatch(f"Header mismatch: {HEADER_PROTOCOL_VERSION} is missing; a 2026-07-28 request sends "
                             f"it, equal to _meta[\"{META_PROTOCOL_VERSION}\"] ({version!r} here)")
    if sent_version != version:
        raise HeaderMismatch(f"Header mismatch: {HEADER_PROTOCOL_VERSION} header value {sent_version!r} does not "
                             f"match body value {version!r} (params._meta)")
    method = _one(folded, HEADER_METHOD)
    if method is None:
        raise HeaderMismatch(f"Header mismatch: {HEADER_METHOD} is missing; body method is {request.method!r}")
    if method != request.method:
        raise HeaderMismatch(f"Header mismatch: {HEADER_METHOD} header value {method!r} does not match body value "
                             f"{request.method!r} (values are case-sensitive)")
    params = request.params if isinstance(request.params, dict) else {}
    source = NAME_SOURCE.get(request.method)
    name = _one(folded, HEADER_NAME)
    if source is not None and isinstance(params.get(source), str):
        if name is None:
            raise HeaderMismatch(f"Header mismatch: {HEADER_NAME} is missing; body params.{source} is "
                                 f"{params[source]!r}")
        if _decoded(HEADER_NAME, name) != params[source]:
            raise HeaderMismatch(f"Header mismatch: {HEADER_NAME} header value {name!r} does not match body value "
                                 f"{params[source]!r} (params.{source})")
    for header, path in (getattr(tool, "headers", None) or {}).items():
        check_param(folded, HEADER_PARAM_PREFIX + header, path, params.get("arguments"))


def check_param(folded: dict[str, list[str]], header: str, path: tuple[str, ...], arguments: Any) -> None:
    """One ``Mcp-Param-*`` header against the argument it mirrors: present together and equal, or both absent."""
    sent, body, where = _one(folded, header), _at(arguments, path), "arguments." + ".".join(path)
    if not _renderable(body):  # absent, null, or no value a header can carry: no header either
        if sent is not None:  # a gateway would route on a value the body never carried
            raise HeaderMismatch(f"Header mismatch: {header} is present but the body has no {where}")
        return
    if sent is None:
        raise HeaderMismatch(f"Header mismatch: {header} is missing; body {where} is {body!r}")
    if not _agrees(body, _decoded(header, sent)):
        raise HeaderMismatch(f"Header mismatch: {header} header value {sent!r} does not match body value "
                             f"{body!r} ({where})")
