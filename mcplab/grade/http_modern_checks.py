"""The HTTP client grader's lines for 2026-07-28 alone: no handshake, ``_meta`` and the routing headers.

A modern client opens with ``server/discover`` (2026-07-28 "basic/versioning"), stamps every request's
``params._meta`` with the protocol version and its capabilities, and copies the request's method and
name into ``Mcp-Method`` and ``Mcp-Name`` so that a gateway can route it without reading the body
("basic/transports/streamable-http", Request Metadata). Each line is judged on the ``modern`` run
(every answer a JSON body), as the recorder received it; None when the modern era was not graded.
"""

from __future__ import annotations

from mcplab.grade.http_client_checks import METADATA, MODERN_LAB, _meta, _nothing, _posts
from mcplab.grade.report import Line, failed, passed, skipped, spec
from mcplab.i18n import _
from mcplab.wire.headers import NAME_SOURCE, encode_value
from mcplab.wire.versions import LATEST_MODERN as M, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION


def _requests(run: Any) -> list[Any]:
    return [x for x in _posts(run) if isinstance(x.message, dict) and "id" in x.message and x.rpc_method]


def discover_line(runs: dict) -> Line | None:
    if "modern" not in runs:
        return None
    run, title = runs["modern"], _("opens 2026-07-28 with server/discover, and no initialize")
    where = (spec(M, "basic/versioning"), _(MODERN_LAB))
    expected = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{...}}}'
    requests = _requests(run)
    if not requests:
        return failed("discover", title, expected, _nothing(run), *where)
    if any(x.rpc_method == "initialize" for x in requests):
        return failed("discover", title, expected, _("it sent initialize, which 2026-07-28 no longer has"), *where)
    if requests[0].rpc_method != "server/discover":
        return failed("discover", title, expected, _("its first request was {method}", method=requests[0].rpc_method),
                      *where)
    return passed("discover", title)


def meta_line(runs: dict) -> Line | None:
    if "modern" not in runs:
        return None
    run, title = runs["modern"], _("puts _meta on every request: the protocol version and the client's capabilities")
    where = (spec(M, "basic/versioning"), METADATA, _(MODERN_LAB))
    expected = ('"_meta": {"' + META_PROTOCOL_VERSION + '": "' + M + '", "' + META_CLIENT_CAPABILITIES + '": {}, ...}')
    if not _requests(run):
        return skipped("meta", title, _nothing(run))  # nothing sent is nothing judged, never a pass
    for x in _requests(run):
        meta = _meta(x)
        problem = (_("no _meta") if not isinstance(meta, dict)
                   else _("no {key}", key=META_PROTOCOL_VERSION) if meta.get(META_PROTOCOL_VERSION) != M
                   else _("no {key} object", key=META_CLIENT_CAPABILITIES)
                   if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict) else "")
        if problem:
            return failed("meta", title, expected, _("{method}: {problem}", method=x.rpc_method, problem=problem),
                          *where)
    return passed("meta", title)


def method_header_line(runs: dict) -> Line | None:
    if "modern" not in runs:
        return None
    run, title = runs["modern"], _("copies each request's method into the Mcp-Method header")
    if not _requests(run):
        return skipped("mcp-method", title, _nothing(run))
    for x in _requests(run):
        if x.headers.get("mcp-method") != x.rpc_method:
            return failed("mcp-method", title, f"Mcp-Method: {x.rpc_method}",
                          _("{method} with Mcp-Method: {value}", method=x.rpc_method,
                            value=x.headers.get("mcp-method", _("(none)"))), METADATA, _(MODERN_LAB))
    return passed("mcp-method", title)


def name_header_line(runs: dict) -> Line | None:
    if "modern" not in runs:
        return None
    run, title = runs["modern"], _("copies the tool's name into the Mcp-Name header of tools/call")
    named = [x for x in _requests(run) if x.rpc_method in NAME_SOURCE]
    if not named:
        return failed("mcp-name", title, "Mcp-Name: get_weather", _("no tools/call was sent") if run.exchanges
                      else _nothing(run), METADATA, _(MODERN_LAB))
    for x in named:
        source = (x.message.get("params") or {}).get(NAME_SOURCE[x.rpc_method])
        wanted = encode_value(source) if isinstance(source, str) else None
        if wanted is None or x.headers.get("mcp-name") != wanted:
            return failed("mcp-name", title, f"Mcp-Name: {wanted}",
                          _("{method} with Mcp-Name: {value}", method=x.rpc_method,
                            value=x.headers.get("mcp-name", _("(none)"))), METADATA, _(MODERN_LAB))
    return passed("mcp-name", title)
