"""Checks for Lab 06 (the stateless revision, 2026-07-28): turn a legacy request into a modern one,
write the routing headers of a tools/call, and read the compatibility matrix.

The checks ask the real code: your request goes through the server's own ``_meta`` reader
(:mod:`mcplab.server.modern`), and your headers are compared with what :mod:`mcplab.wire.headers` makes
the client send. Lab 07's checks (a round-robin proxy, a tampered ``requestState``) are in
:mod:`mcplab.exercises.lab07`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Texts, _
from mcplab.wire.versions import LATEST_MODERN, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION

__all__ = [
    "check_modern_request", "check_routing_headers", "check_matrix_failures",
    "LEGACY_CALL", "FORECAST_CALL", "FORECAST_SCHEMA", "MATRIX_ROWS", "WHY_IT_FAILS",
]

# --- 1. from legacy to modern ---------------------------------------------------------------------

LEGACY_CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "get_weather", "arguments": {"city": "Beijing"}}}
"""The seed's tools/call, as a legacy client sends it inside an initialized session."""
_LEGACY = copy.deepcopy(LEGACY_CALL)  # the check's reference, whatever a notebook does to LEGACY_CALL


@check(N_("a JSON-RPC request, as a dict or as JSON text"), (dict, str))
def check_modern_request(answer: Any) -> Feedback:
    """LEGACY_CALL made modern: the same call, carrying what ``initialize`` used to say once."""
    hint = _('add "_meta" inside "params", with "{version_key}": "{version}" and "{capabilities_key}": {{}} '
             '(required), and "{info_key}" (recommended)', version_key=META_PROTOCOL_VERSION, version=LATEST_MODERN,
             capabilities_key=META_CLIENT_CAPABILITIES, info_key=META_CLIENT_INFO)
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except ValueError:
            return failed(_("this string is not JSON"), hint)
    if not isinstance(answer, dict):
        return failed(_("expected the message as a dict, got {kind}", kind=type(answer).__name__), hint)
    if "_meta" in answer:
        return failed(_("_meta sits beside params here, as in seed 2's abbreviated example; the spec puts it "
                        "inside params (params._meta), where a server looks for it"), hint)
    for key in ("jsonrpc", "id", "method"):
        if answer.get(key) != _LEGACY[key]:
            return failed(_("{key} changed ({value!r}); only params gains something", key=key,
                            value=answer.get(key)), hint)
    params = answer.get("params")
    if not isinstance(params, dict):
        return failed(_("params is missing or not an object"), hint)
    if {k: v for k, v in params.items() if k != "_meta"} != _LEGACY["params"]:
        return failed(_("the name and arguments of the call must stay exactly as they were"), hint)
    from mcplab.wire.errors import JSONRPCError
    from mcplab.wire.jsonrpc import Request
    from mcplab.server.modern import check_version, read_meta

    try:  # the server's own reader and version check
        meta = read_meta(Request(answer["id"], answer["method"], params))
        check_version(meta, "modern")
    except JSONRPCError as exc:
        return failed(_("a modern server answers {code}: {message}", code=exc.code, message=exc.message), hint)
    if meta.client_info is None:
        return passed(_("a modern server accepts it. One more thing a client SHOULD send: "
                        "{info_key} ({{\"name\", \"version\"}}), the identity initialize used to carry",
                        info_key=META_CLIENT_INFO))
    return passed(_("version, capabilities and identity now travel with the request itself: any server process "
                    "can answer it without having seen an initialize"))


# --- 2. the routing headers -----------------------------------------------------------------------

FORECAST_SCHEMA = {  # get_forecast's inputSchema in servers/weather.py (the part that matters here)
    "type": "object",
    "properties": {"city": {"type": "string", "x-mcp-header": "City"},
                   "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city"],
}
FORECAST_CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                 "params": {"name": "get_forecast", "arguments": {"city": "北京", "days": 2},
                            "_meta": {META_PROTOCOL_VERSION: LATEST_MODERN, META_CLIENT_CAPABILITIES: {}}}}
"""A modern tools/call of get_forecast, whose "city" is marked ``"x-mcp-header": "City"``."""

_TRANSPORT_HEADERS = {"accept", "content-type", "content-length", "host", "user-agent"}


def _expected_headers() -> dict[str, str]:
    from mcplab.wire.headers import header_annotations, request_headers

    params = FORECAST_CALL["params"]
    return request_headers("tools/call", params, LATEST_MODERN, header_annotations(FORECAST_SCHEMA))


@check(N_("a dict of header name → value"), dict)
def check_routing_headers(answer: Any) -> Feedback:
    """The MCP headers of the POST that carries FORECAST_CALL (Accept and Content-Type may be left out)."""
    hint = _("four headers: the version, the method, the name of what is called, and one Mcp-Param-* for the "
             "argument marked x-mcp-header; a value that is not plain ASCII travels as =?base64?…?=")
    if isinstance(answer, dict) and any(v is ... for v in answer.values()):
        return failed(_("some values are still ..."), hint)
    if not isinstance(answer, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in answer.items()):
        return failed(_("expected a dict of header name → value, both strings"), hint)
    given = {name.lower(): value for name, value in answer.items()}  # names ignore case; values do not
    expected = _expected_headers()
    want = {name.lower(): value for name, value in expected.items()}
    spelled = {name.lower(): name for name in expected}
    if "mcp-session-id" in given:
        return failed(_("2026-07-28 has no sessions: there is no Mcp-Session-Id to send"), hint)
    if given.get("mcp-name") == "weather":
        return failed(_("Mcp-Name: weather names the server, as seed 2's example does; the spec's Mcp-Name "
                        "carries params.name, the tool being called"), hint)
    for name, value in want.items():
        shown = spelled[name]
        if name not in given:
            return failed(_("{header} is missing", header=shown), hint)
        if given[name] != value:
            if name == "mcp-param-city" and given[name] == "北京":
                return failed(_("北京 is not plain ASCII, so the header carries its UTF-8 bytes in base64 between "
                                "=?base64? and ?= (mcplab.wire.headers.encode_value does it)"), hint)
            return failed(_("{header}: {value!r} does not match the body; a server answers 400 with "
                            "-32020 (HeaderMismatch)", header=shown, value=given[name]), hint)
    extra = sorted(set(given) - set(want) - _TRANSPORT_HEADERS)
    if extra:
        return failed(_("not an MCP header of this request: {headers}", headers=", ".join(extra)), hint)
    return passed(_("a gateway can now route this call by method, tool and city without parsing the body, and "
                    "the server checks that every header matches it"))


# --- 3. the compatibility matrix ------------------------------------------------------------------

MATRIX_ROWS = {1: ("modern", "modern"), 2: ("modern", "legacy"), 3: ("dual-era", "modern"),
               4: ("dual-era", "legacy"), 5: ("legacy", "modern"), 6: ("legacy", "dual-era"),
               7: ("legacy", "legacy")}
"""The spec's seven rows: number → (client era, server era). The question is about stdio, where no
session id exists: over HTTP the same rows fail on other checks first (a legacy server wants its
session, a modern one its headers), which the lab's HTTP table shows."""

WHY_IT_FAILS = Texts({
    "a": "the server has never heard of server/discover, and this client will not fall back to initialize",
    "b": "the server has no initialize: the handshake is gone, and this client knows no other way in",
    "c": "the two sides agree on no protocol version, so -32022 ends it",
    "d": "the server expects a session id, which the client never got",
})
_FAILS = {2: "a", 5: "b"}


@check(N_("a dict of row number → letter"), dict)
def check_matrix_failures(answer: Any) -> Feedback:
    """{row number: letter of WHY_IT_FAILS} for every row of MATRIX_ROWS that fails over stdio."""
    hint = _("two rows fail: find the two pairs where one side speaks only the era the other lacks, and read "
             "their first request and its answer in the stdio table")
    if not all(isinstance(k, int) and not isinstance(k, bool) for k in answer):
        return failed(_("expected a dict {row number: letter}, e.g. {2: \"a\"}"), hint)
    if any(v is ... for v in answer.values()):
        return failed(_("some reasons are still ..."), hint)
    unknown = sorted(set(answer) - set(MATRIX_ROWS))
    if unknown:
        return failed(_("there is no row {row}: the rows are numbered 1 to {last}", row=unknown[0],
                        last=len(MATRIX_ROWS)), hint)
    works = sorted(set(answer) - set(_FAILS))
    if works:
        client, server = MATRIX_ROWS.get(works[0], ("?", "?"))
        why = (_("a dual-era side adapts: the client falls back, or the server answers either way")
               if "dual-era" in (client, server) else _("both sides speak the same era"))
        return failed(_("row {row} ({client} client, {server} server) works: {why}", row=works[0], client=client,
                        server=server, why=why), hint)
    missing = sorted(set(_FAILS) - set(answer))
    if missing:
        client, server = MATRIX_ROWS[missing[0]]
        return failed(_("row {row} ({client} client, {server} server) fails too", row=missing[0], client=client,
                        server=server), hint)
    for row, letter in _FAILS.items():
        if answer[row] == "d":
            return failed(_("row {row}: over stdio there is no session id at all. That is the HTTP table's row "
                            "(a legacy HTTP server refuses a POST without its session); this question is about "
                            "stdio", row=row), hint)
        if answer[row] != letter:
            return failed(_("row {row} fails, but not for that reason: look at the first request the client "
                            "sends and what the server does with it (run the matrix and read 'on the wire')",
                            row=row), hint)
    return passed(_("rows 2 and 5: a single-era side meets the other era and neither can adapt. The dual-era "
                    "client and the dual-era server are what make a mixed world work"))
