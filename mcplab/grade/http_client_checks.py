"""The HTTP client grader's checks: what a student's client sent over Streamable HTTP, judged from the log.

Each function takes the runs of http_client_runs.py (by name: ``legacy``, ``modern``, ``legacy-sse``,
``modern-sse``; only the eras graded are there) and returns one report line, or None when its era was
not graded. The lines of the modern era alone are in http_modern_checks.py. The lines judge the HTTP requests as the recorder received them, before it repaired
anything (http_recorder.py), so one mistake fails one line: a missing session id fails the session
line, and the session still goes on to be judged for everything else.

Where the spec says it: 2025-11-25 "basic/transports" (Streamable HTTP: sending messages, session
management, the protocol version header) for the legacy era; 2026-07-28
"basic/transports/streamable-http" (sending messages, request metadata) and "basic/versioning" for
the modern one.
"""

from __future__ import annotations

from typing import Any

from mcplab.grade.http_recorder import response_in
from mcplab.grade.report import Line, failed, passed, quote, skipped, spec
from mcplab.i18n import N_, _
from mcplab.wire.versions import LATEST_LEGACY as L, LATEST_MODERN as M, META_PROTOCOL_VERSION

LAB = N_("Lab 10, §10.1–10.4 (a client over Streamable HTTP)")
MODERN_LAB = N_("Lab 10, §10.3 (2026-07-28 over HTTP)")
ACCEPTED = ("application/json", "text/event-stream")
SENDING = (spec(L, "basic/transports#sending-messages-to-the-server"),
           spec(M, "basic/transports/streamable-http#sending-messages"))
METADATA = spec(M, "basic/transports/streamable-http#request-metadata")


def _media(value: str | None) -> str:
    return (value or "").split(";")[0].strip().lower()


def _posts(run: Any) -> list[Any]:
    return [x for x in run.exchanges if x.method == "POST"]


def _nothing(run: Any) -> str:
    tail = run.stderr_tail()
    return _("the client sent nothing in the {run} run", run=run.name) + (
        _("; its stderr ends: {line}", line=quote(tail, 160)) if tail else "")


def _json_runs(runs: dict) -> list[Any]:
    return [runs[name] for name in ("legacy", "modern") if name in runs]


def _first(run: Any, method: str) -> Any:
    return next((x for x in _posts(run) if x.rpc_method == method), None)


def _shown(run: Any) -> tuple[bool, str]:
    """Did the client print the tool's result in ``run``? (yes/no, and the text it should have shown)."""
    call = _first(run, "tools/call")
    if call is None or call.status is None:
        return False, ""
    message = call.message
    answer = response_in(_media((call.answer_headers or {}).get("content-type")), call.answer.encode(),
                         message.get("id") if isinstance(message, dict) else None)
    content = ((answer or {}).get("result") or {}).get("content") or []
    text = next((c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"), "") or ""
    return bool(text[:12]) and text[:12] in run.stdout, text


def _meta(x: Any) -> Any:
    message = x.message
    params = message.get("params") if isinstance(message, dict) else None
    return params.get("_meta") if isinstance(params, dict) else None


# --- every run ---------------------------------------------------------------------------------------

def exit_line(runs: dict) -> Line:
    title = _("runs the whole exchange and exits with status 0")
    for run in _json_runs(runs):
        if run.returncode != 0:
            got = (_("still running in the {run} run when the grader stopped it (nothing sent for a while)",
                     run=run.name)
                   if run.stopped else _("exit status {code} in the {run} run", code=run.returncode, run=run.name))
            tail = run.stderr_tail()
            return failed("exit", title, _("exit status 0 after the tool's call and the end of the session"),
                          got + (_("; its stderr ends: {line}", line=quote(tail, 160)) if tail else ""), _(LAB))
    return passed("exit", title)


def accept_line(runs: dict) -> Line:
    title = _("says Accept: application/json, text/event-stream on every POST")
    for run in runs.values():
        for x in _posts(run):
            listed = {_media(part) for part in x.headers.get("accept", "").split(",")}
            if not set(ACCEPTED) <= listed:
                return failed("accept", title, "Accept: application/json, text/event-stream",
                              _("{method} in the {run} run with Accept: {value}", method=x.rpc_method or "POST",
                                run=run.name, value=x.headers.get("accept", _("(none)"))), *SENDING, _(LAB))
    return passed("accept", title)


def content_type_line(runs: dict) -> Line:
    title = _("sends each message as Content-Type: application/json")
    for run in runs.values():
        for x in _posts(run):
            if _media(x.headers.get("content-type")) != "application/json":
                return failed("content-type", title, "Content-Type: application/json",
                              _("{method} in the {run} run with Content-Type: {value}", method=x.rpc_method or "POST",
                                run=run.name, value=x.headers.get("content-type", _("(none)"))), *SENDING, _(LAB))
    return passed("content-type", title)


def _answer_line(runs: dict, names: tuple[str, ...], check: str, title: str, expected: str) -> Line:
    for name in names:
        if name not in runs:
            continue
        run = runs[name]
        if not run.exchanges:
            return failed(check, title, expected, _nothing(run), *SENDING, _(LAB))
        shown, text = _shown(run)
        if not shown:
            got = (_("no tools/call was answered in the {run} run", run=name) if not text
                   else _("the tool's result is not on its stdout in the {run} run", run=name))
            tail = run.stderr_tail()
            return failed(check, title, expected, got + (_("; its stderr ends: {line}", line=quote(tail, 160))
                                                         if tail else ""), *SENDING, _(LAB))
    return passed(check, title)


def json_answer_line(runs: dict) -> Line:
    return _answer_line(runs, ("legacy", "modern"), "json-answer",
                        _("reads an application/json answer: the tool's result shows"),
                        _("the result of tools/call, read from the JSON body, on stdout"))


def sse_answer_line(runs: dict) -> Line:
    return _answer_line(runs, ("legacy-sse", "modern-sse"), "sse-answer",
                        _("reads a text/event-stream answer to its response, past the events before it"),
                        _("the result of tools/call, read from the event that holds the response (after an event "
                          "with no message and a notifications/message), on stdout"))


# --- the legacy era ----------------------------------------------------------------------------------

def _session(run: Any) -> tuple[Any, str | None, str | None]:
    """The initialize exchange, the session id the server assigned, and the revision agreed."""
    opening = _first(run, "initialize")
    if opening is None:
        return None, None, None
    answer = response_in(_media((opening.answer_headers or {}).get("content-type")), opening.answer.encode(),
                         (opening.message or {}).get("id"))
    version = ((answer or {}).get("result") or {}).get("protocolVersion")
    return opening, (opening.answer_headers or {}).get("mcp-session-id"), version


def initialized_line(runs: dict) -> Line | None:
    if "legacy" not in runs:
        return None
    run, title = runs["legacy"], _("sends notifications/initialized after the initialize answer, before other requests")
    where = (spec(L, "basic/lifecycle#initialization"), _("Lab 02 §2 (the handshake, byte by byte)"))
    expected = _('a POST of {"jsonrpc":"2.0","method":"notifications/initialized"} (no id), before other requests')
    opening, _id, _version = _session(run)
    if opening is None:
        return failed("initialized", title, expected, _("no initialize was sent") if run.exchanges
                      else _nothing(run), *where)
    later = [x for x in _posts(run) if x.seq > opening.seq]
    note = next((x for x in later if x.rpc_method == "notifications/initialized"), None)
    if note is None:
        return failed("initialized", title, expected, _("it was never sent"), *where)
    if "id" in (note.message or {}):
        return failed("initialized", title, expected, _("it was sent with an id, as a request"), *where)
    early = [x.rpc_method for x in later if x.seq < note.seq and x.rpc_method not in ("ping", "")]
    if early:
        return failed("initialized", title, expected, _("{method} was sent before it", method=early[0]), *where)
    return passed("initialized", title)


def session_line(runs: dict) -> Line | None:
    if "legacy" not in runs:
        return None
    run = runs["legacy"]
    title = _("sends back the Mcp-Session-Id the server assigned on every request after initialize")
    where = (spec(L, "basic/transports#session-management"), _(LAB))
    expected = _("Mcp-Session-Id: the value from the initialize answer's headers")
    opening, assigned, _version = _session(run)
    if opening is None or assigned is None:
        return skipped("session", title, _("no session was assigned") if opening else _("no initialize was sent"))
    for x in run.exchanges:
        if x.seq > opening.seq and x.headers.get("mcp-session-id") != assigned:
            sent = x.headers.get("mcp-session-id")
            return failed("session", title, expected, _("{method} without it", method=x.rpc_method or x.method)
                          if sent is None else _("{method} with another id: {value}",
                                                 method=x.rpc_method or x.method, value=quote(sent, 60)), *where)
    return passed("session", title)


def protocol_version_line(runs: dict) -> Line:
    title = _("sends MCP-Protocol-Version on every request (legacy: after initialize, the revision agreed)")
    where = (spec(L, "basic/transports#protocol-version-header"), METADATA)
    if "legacy" in runs:
        opening, _id, version = _session(runs["legacy"])
        for x in runs["legacy"].exchanges:
            if opening is not None and version and x.seq > opening.seq \
                    and x.headers.get("mcp-protocol-version") != version:
                return failed("protocol-version", title, f"MCP-Protocol-Version: {version}",
                              _("{method} in the legacy run with MCP-Protocol-Version: {value}",
                                method=x.rpc_method or x.method,
                                value=x.headers.get("mcp-protocol-version", _("(none)"))),
                              *where, _(LAB))
    if "modern" in runs:
        for x in _posts(runs["modern"]):
            meta = _meta(x)
            wanted = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta else M
            if x.headers.get("mcp-protocol-version") != wanted:
                return failed("protocol-version", title, f"MCP-Protocol-Version: {wanted}",
                              _("{method} in the modern run with MCP-Protocol-Version: {value}",
                                method=x.rpc_method or "POST",
                                value=x.headers.get("mcp-protocol-version", _("(none)"))),
                              *where, _(MODERN_LAB))
    return passed("protocol-version", title)


# --- the end -----------------------------------------------------------------------------------------

def ends_line(runs: dict) -> Line:
    title = _("ends cleanly: DELETE of its legacy session; in 2026-07-28 POSTs only, no session and no GET stream")
    if "legacy" in runs:
        run = runs["legacy"]
        opening, assigned, _version = _session(run)
        where = (spec(L, "basic/transports#session-management"), _(LAB))
        expected = _("DELETE with Mcp-Session-Id, after its last request")
        if assigned is not None:
            deletes = [x for x in run.exchanges if x.method == "DELETE"]
            last = max((x.seq for x in _posts(run)), default=0)
            if not deletes:
                return failed("ends", title, expected, _("the legacy session was never deleted"), *where)
            if not any(x.seq > last and x.headers.get("mcp-session-id") == assigned for x in deletes):
                return failed("ends", title, expected, _("its DELETE came before its last request, or without the "
                                                         "session id"), *where)
    if "modern" in runs:
        for x in runs["modern"].exchanges:
            if x.method != "POST" or "mcp-session-id" in x.headers:
                what = (_("a request with Mcp-Session-Id") if x.method == "POST"
                        else _("an HTTP {method}", method=x.method))
                return failed("ends", title, _("POSTs only, and then close the connection"),
                              _("{what} in the modern run: 2026-07-28 has no sessions and no GET stream", what=what),
                              spec(M, "basic/transports/streamable-http"), _(MODERN_LAB))
    return passed("ends", title)
