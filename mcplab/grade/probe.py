"""One graded session with a student's server: a minimal client that walks every primitive it offers.

Theory of operation
-------------------
:func:`walk` starts the server (one process per era, because a dual-era stdio server decides its era
on the first request it serves), opens it, and does what a client exploring an unknown server does,
writing down everything that came back in a :class:`Session`:

    legacy   initialize (2025-11-25) → notifications/initialized
    modern   server/discover, every request stamped with params._meta (2026-07-28 "basic", _meta)
    then     tools/list → tools/call each tool with typical, then unlikely arguments (arguments.py),
             and once more with its strings empty when it takes any
             → tools/call a tool that does not exist
             → resources/list, resources/templates/list → resources/read each (and one URI per template)
             → prompts/list → prompts/get each (argument values from completion/complete when offered)
             → a line that is not JSON, then a request to see it still serves (ping; server/discover)
             → close stdin, wait (pipes.Child.close)

It asks only for lists the server declared a capability for, as any client must (2025-11-25
"lifecycle", operation: only use what was negotiated). The walk judges nothing: server.py turns a
Session into report lines. A request that gets no answer within the timeout ends the walk there (the
session is ``stuck``), so a silent server costs one timeout, not one per request; a server that
exits mid-walk ends it too. Either way the session keeps where (``halt``: the request, and the
server's last stderr line when it exited), so the card can say the server crashed rather than that
the lists it never got to were empty.

The first request's timeout counts from the moment the server *read* it, not from our write: a
server still importing on a busy machine (seconds, with no bytecode cache) is slow to start, which
is no fault, while one that reads the request and stays silent does not answer, which is. Linux says
how much of our line is still in the pipe (``Child.wait_read`` looks every few hundredths of a
second: a pipe has no event for "read"); elsewhere the timeout counts from the write, as before.
A server that has not read its first request when the card's time runs out (or after
:data:`STARTING` seconds, when no card bounds the walk) is ``late`` there, and its session is not
``started``: its lines are "not judged in time", never failed.

A slow server costs no more than the card's time either: the walk is given the moment it must end
(``ends``, shared by both eras), and no request waits past it. A request the budget cut, and every
one after it, is :data:`LATE`; the session names the phases (:data:`PHASES`) it did not finish, so
that their lines say "not judged in time" rather than blame the server. The work per item is
bounded too: at most :data:`MAX_ITEMS` of each list, and :data:`MAX_COMPLETIONS` values asked of
completion/complete per template or prompt (a template of 40 variables is not 40 questions).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence
from urllib.parse import quote

from mcplab.wire import jsonrpc
from mcplab.grade import arguments as made_up
from mcplab.grade.in_process import start
from mcplab.grade.pipes import Ending
from mcplab.i18n import _
from mcplab.trace import Trace
from mcplab.wire.versions import (
    LATEST_LEGACY, LATEST_MODERN, LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION,
)

GRADER = {"name": "mcplab-grader", "version": "1.0.0"}
UNKNOWN_TOOL = "no_such_tool_zz"
NOT_JSON = '{"jsonrpc": "2.0", "id": 99, "method": "tools/list"'  # cut short: not JSON at all
MAX_ITEMS = 20   # tools, resources, prompts graded per session: a huge catalogue stays quick
MAX_PAGES = 20   # pages of one list followed through nextCursor
MAX_COMPLETIONS = 3  # values asked of completion/complete per template or prompt; the other arguments get EXAMPLE
PHASES = ("open", "tools", "resources", "prompts", "malformed")  # the walk's parts, in its order
EXAMPLE = "example"  # a template or prompt argument's value when nothing better is offered
STARTING = 120.0  # seconds a server may take to read its first request when no card's time bounds the walk


@dataclass(frozen=True)
class Reply:
    """What came back for one request: ``kind`` is result, error, timeout or gone (the process ended)."""
    kind: str
    result: Any = None
    code: int | None = None
    message: str = ""
    raw: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == "result" and isinstance(self.result, dict)

    def said(self) -> str:
        """The reply in a few words, for a report's "got"."""
        if self.kind == "timeout":
            return self.message or _("no answer")
        if self.kind == "gone":
            return _("the server exited")
        if self.kind == "skipped":
            return _("not sent (the session had stopped)")
        if self.kind == "late":
            return _("not judged in time")
        return self.raw


SKIPPED = Reply("skipped")
LATE = Reply("late")  # not sent, or not answered, before the card's time ran out


@dataclass(frozen=True)
class Call:
    """One request the walk made about one catalogue entry."""
    name: str                 # tool or prompt name, or resource URI
    arguments: Any            # what was sent (None when no arguments could be made)
    reply: Reply
    kind: str = ""            # typical/unlikely for tools; "resource"/"template" for reads
    unbuildable: str = ""     # why no arguments could be made from the schema


@dataclass
class Session:
    """Everything one session saw; ``None`` lists were not declared by the server."""
    era: str
    version: str
    opening: Reply = SKIPPED
    capabilities: dict[str, Any] = field(default_factory=dict)
    tools: list[dict] | None = None
    resources: list[dict] | None = None
    templates: list[dict] | None = None
    prompts: list[dict] | None = None
    listing_errors: list[tuple[str, Reply]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    reads: list[Call] = field(default_factory=list)
    gets: list[Call] = field(default_factory=list)
    unknown_tool: Reply = SKIPPED
    malformed: Reply = SKIPPED
    alive: Reply = SKIPPED
    ending: Ending | None = None
    stray: list[str] = field(default_factory=list)  # responses that answered no request of ours
    trace: Trace = field(default_factory=Trace)
    unjudged: tuple[str, ...] = ()  # the phases the card's time ran out in, or before
    halt: str = ""  # why the walk stopped short (the server exited, or stopped answering), and where
    halt_phase: str = ""  # the phase (PHASES) it stopped in
    started: bool = True  # False: the server had not read its first request when the time ran out

    @property
    def opened(self) -> bool:
        return self.opening.ok and (self.era == "modern" or self.opening.result.get("protocolVersion")
                                    in LEGACY_VERSIONS)


class Probe:
    """A tiny synchronous client over a ``pipes.Child`` (or ``in_process.InProcessChild``), stamping ``_meta``."""

    def __init__(self, argv: Sequence[str], era: str, timeout: float, cwd: str | None = None,
                 ends: float = math.inf) -> None:
        self.child = start(argv, cwd=cwd)  # a child process, or in the page the file run there
        self.era = era
        self.timeout = timeout
        self.ends = ends  # time.monotonic() at which the card's time runs out
        self.ids = jsonrpc.IdAllocator()
        self.stuck = False
        self.phase = PHASES[0]
        self.late_in = ""  # the phase in which the card's time ran out
        self.started = False  # the server has read a request of ours (or we cannot tell: see _read)
        self.completions: dict[str, int] = {}  # asked per template or prompt
        self.stray: list[str] = []
        self.asking = ""  # the request being answered, in words, for a halt
        self.halted: tuple[str, str, str] | None = None  # (kind: gone or timeout, request, phase)

    def _late(self) -> Reply:
        self.late_in = self.late_in or self.phase
        return LATE

    def _stopped(self) -> Reply | None:
        """SKIPPED once a request went unanswered, LATE once the card's time is out; else None: go on."""
        if self.stuck:
            return SKIPPED
        if self.late_in or time.monotonic() >= self.ends:
            return self._late()
        return None

    def request(self, method: str, params: dict[str, Any] | None = None) -> Reply:
        if (stopped := self._stopped()) is not None:
            return stopped
        if self.era == "modern":
            params = {**(params or {}), "_meta": {META_PROTOCOL_VERSION: LATEST_MODERN,
                                                   META_CLIENT_CAPABILITIES: {}, META_CLIENT_INFO: GRADER}}
        request_id = self.ids()
        named = (params or {}).get("name") or (params or {}).get("uri")
        self.asking = f"{method} {named}" if isinstance(named, str) else method
        self.child.send(jsonrpc.encode(jsonrpc.Request(request_id, method, params)))
        if not self.started and not self._read():
            return self._late()
        return self._await(lambda m: getattr(m, "id", None) == request_id)

    def _read(self) -> bool:
        """Wait until the server has read what we sent: past its start-up (or gone, or we cannot tell).

        False if the card's time (or :data:`STARTING`) ran out first."""
        self.started = self.child.wait_read(min(self.ends, time.monotonic() + STARTING))
        return self.started

    def notify(self, method: str) -> None:
        if not self.stuck and not self.late_in:
            self.child.send(jsonrpc.encode(jsonrpc.Notification(method)))

    def send_malformed(self) -> Reply:
        """Send a line that is not JSON; the reply to it can carry no id (JSON-RPC 2.0 §5)."""
        if (stopped := self._stopped()) is not None:
            return stopped
        self.child.send(NOT_JSON)
        self.asking = _("a line that is not JSON")
        return self._await(lambda m: True)

    def _await(self, wanted: Callable[[Any], bool]) -> Reply:
        own = time.monotonic() + self.timeout
        deadline = min(own, self.ends)
        while True:
            event = self.child.next(deadline)
            if event.kind == "timeout" and deadline < own:
                return self._late()  # the card's time ran out, not the answer's: no fault of the server
            if event.kind in ("timeout", "eof"):
                self.stuck = True
                self.halted = (event.kind, self.asking, self.phase)
                return (Reply("timeout", message=_("no answer within {timeout:g} s", timeout=self.timeout))
                        if event.kind == "timeout"
                        else Reply("gone"))
            message = event.message
            if event.kind != "stdout" or not isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
                continue  # a log line, a notification, or a line that is not JSON-RPC (judged later)
            raw = event.line.decode("utf-8", errors="replace")
            if not wanted(message):
                self.stray.append(raw)
                continue
            if isinstance(message, jsonrpc.ErrorResponse):
                return Reply("error", None, message.error.get("code"), str(message.error.get("message", "")), raw)
            return Reply("result", message.result, raw=raw)

    def listing(self, session: Session, method: str, key: str) -> list[dict]:
        items: list[dict] = []
        cursor = None
        for _ in range(MAX_PAGES):
            reply = self.request(method, {"cursor": cursor} if cursor else {})
            if reply.kind == LATE.kind:
                break
            page = reply.result.get(key) if reply.ok else None
            if not isinstance(page, list):
                session.listing_errors.append((method, reply))
                break
            items += [item for item in page if isinstance(item, dict)]
            cursor = reply.result.get("nextCursor")
            if not cursor or len(items) >= MAX_ITEMS:
                break
        return items[:MAX_ITEMS]

    def completion(self, session: Session, ref: dict[str, str], argument: str) -> str:
        """The first value the server offers for ``argument``, else a made-up one."""
        item = json.dumps(ref, sort_keys=True)
        if "completions" not in session.capabilities or self.completions.get(item, 0) >= MAX_COMPLETIONS:
            return EXAMPLE
        self.completions[item] = self.completions.get(item, 0) + 1
        reply = self.request("completion/complete", {"ref": ref, "argument": {"name": argument, "value": ""}})
        values = (reply.result.get("completion") or {}).get("values") if reply.ok else None
        return str(values[0]) if isinstance(values, list) and values else EXAMPLE


def walk(argv: Sequence[str], era: str, timeout: float = 5.0, grace: float = 5.0,
         cwd: str | None = None, ends: float = math.inf) -> Session:
    """Start the server, explore it in ``era`` (``"legacy"`` or ``"modern"``) until ``ends``; close it; what it saw."""
    session = Session(era, LATEST_LEGACY if era == "legacy" else LATEST_MODERN)
    probe = Probe(argv, era, timeout, cwd, ends)
    session.trace = probe.child.trace
    try:
        _open(probe, session)
        if session.opened:
            _explore(probe, session)
        probe.phase = "malformed"
        session.malformed = probe.send_malformed()
        if session.malformed.kind not in ("timeout", "gone", "skipped", "late"):
            session.alive = probe.request("ping" if era == "legacy" else "server/discover")
    finally:
        session.ending = probe.child.close(grace)  # not cut by the budget: the server gets its grace
        session.stray = probe.stray
        session.unjudged = _unjudged(probe, session)
        session.started = probe.started or not probe.late_in
        if probe.halted and session.opened:  # a server that never opened has its own sentence (server_checks)
            session.halt, session.halt_phase = _halt(probe, session), probe.halted[2]
    return session


def _halt(probe: Probe, session: Session) -> str:
    """Why the walk stopped short, in a sentence: where, and the server's last stderr line if it exited."""
    kind, request, _phase = probe.halted or ("", "", "")
    if kind == "timeout":
        return _("the server stopped answering at {request} (no answer within {timeout:g} s)", request=request,
                 timeout=probe.timeout)
    tail = [f.raw for f in session.trace.frames if f.channel == "stderr" and f.raw.strip()][-1:]
    code = session.ending.returncode if session.ending is not None else None
    return _("the server crashed at {request} (exit status {code})", request=request, code=code) + (
        _("; its stderr ends: {line}", line=tail[0][:160]) if tail else "")


def _unjudged(probe: Probe, session: Session) -> tuple[str, ...]:
    """The phase the card's time ran out in and those after it (a primitive the server did not declare has none)."""
    if not probe.late_in:
        return ()
    return tuple(phase for phase in PHASES[PHASES.index(probe.late_in):]
                 if phase in ("open", "malformed") or not session.opened or phase in session.capabilities)


def _open(probe: Probe, session: Session) -> None:
    if session.era == "legacy":
        session.opening = probe.request("initialize", {"protocolVersion": session.version, "capabilities": {},
                                                       "clientInfo": GRADER})
        if session.opened:
            session.version = session.opening.result["protocolVersion"]
            probe.notify("notifications/initialized")
    else:
        session.opening = probe.request("server/discover")
    if session.opening.ok and isinstance(session.opening.result.get("capabilities"), dict):
        session.capabilities = session.opening.result["capabilities"]


def _explore(probe: Probe, session: Session) -> None:
    caps = session.capabilities
    if "tools" in caps:
        probe.phase = "tools"
        session.tools = probe.listing(session, "tools/list", "tools")
        for tool in session.tools:
            for kind in (made_up.TYPICAL, made_up.UNLIKELY, made_up.EMPTY):
                call = _call_tool(probe, tool, kind)
                if call is not None:
                    session.calls.append(call)
        session.unknown_tool = probe.request("tools/call", {"name": UNKNOWN_TOOL, "arguments": {}})
    if "resources" in caps:
        probe.phase = "resources"
        session.resources = probe.listing(session, "resources/list", "resources")
        session.templates = probe.listing(session, "resources/templates/list", "resourceTemplates")
        for resource in session.resources:
            uri = str(resource.get("uri"))
            session.reads.append(Call(uri, {"uri": uri}, probe.request("resources/read", {"uri": uri}), "resource"))
        for template in session.templates:
            uri = expand(probe, session, str(template.get("uriTemplate", "")))
            session.reads.append(Call(uri, {"uri": uri}, probe.request("resources/read", {"uri": uri}), "template"))
    if "prompts" in caps:
        probe.phase = "prompts"
        session.prompts = probe.listing(session, "prompts/list", "prompts")
        for prompt in session.prompts:
            name = str(prompt.get("name"))
            given = {a["name"]: probe.completion(session, {"type": "ref/prompt", "name": name}, a["name"])
                     for a in prompt.get("arguments") or [] if isinstance(a, dict) and a.get("required")}
            session.gets.append(Call(name, given, probe.request("prompts/get", {"name": name, "arguments": given})))


def _call_tool(probe: Probe, tool: dict, kind: str) -> Call | None:
    """One call of ``tool`` with ``kind`` arguments; None for empty strings where it takes no free string."""
    name = str(tool.get("name"))
    schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
    try:
        given = made_up.admitted(schema, kind)
    except made_up.Unbuildable as exc:
        return None if kind == made_up.EMPTY else Call(name, None, SKIPPED, kind, str(exc))
    if kind == made_up.EMPTY:
        try:
            if given == made_up.admitted(schema, made_up.TYPICAL):
                return None  # nothing to empty: the typical call already asked this
        except made_up.Unbuildable:
            return None
    return Call(name, given, probe.request("tools/call", {"name": name, "arguments": given}), kind)


_VARIABLE = re.compile(r"\{([+#./;?&]?)([^}]+)\}")


def expand(probe: Probe, session: Session, template: str) -> str:
    """One URI of a template (RFC 6570, simple and reserved expansion), values from completion."""
    def value(match: re.Match) -> str:
        operator, names = match.group(1), match.group(2).split(",")
        values = [probe.completion(session, {"type": "ref/resource", "uri": template}, n.rstrip("*")) for n in names]
        return (operator if operator in "#./;?&" and operator else "") + ",".join(
            quote(v, safe="/" if operator in ("+", "#") else "") for v in values)
    return _VARIABLE.sub(value, template)


def excerpt(value: Any) -> str:
    """A JSON value as one compact line."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
