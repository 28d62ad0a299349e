"""The server grader: a student's stdio server, spawned in both eras, and a report card of 14 lines.

Theory of operation
-------------------
:func:`server` runs two sessions (probe.py), one legacy (``initialize`` at 2025-11-25) and one modern
(``server/discover`` and ``_meta`` at 2026-07-28), each in a fresh process (in the browser edition,
the file run afresh in the page: grade/in_process.py), and judges what they saw.
The checks, in the order the card prints them:

    legacy-open, modern-open   the server opens in each era
    stdout                     nothing but JSON-RPC messages on stdout (stdio transport, MUST)
    schema                     every frame, both directions, against the official schema of its revision
    tools, resources, prompts  each primitive listed and used with arguments its schema admits
    malformed-line             a line that is not JSON gets -32700, and the server keeps serving
    unknown-tool               an unknown tool is a protocol error, -32602, in every revision
    eof                        closing stdin ends the server, by itself and with status 0
    brief-tools, brief-resource, brief-prompt, brief-tool-error
                               the build lab's brief: two typed tools, a resource, a prompt, an isError

A failed line quotes what came and points at the spec section and the lab section that explain it.
Lines that need something the student did not offer (no prompts declared: nothing to get) are
skipped, not failed; the brief's lines are where a missing primitive fails.

The card has a time of its own, :data:`BUDGET` timeouts (60 s at the default 5 s, where the lab's
solution needs about one, and some ten at load 10 with no bytecode cache), so a server that answers
every request just inside the timeout cannot keep a student waiting for minutes. A server slow to
start costs no timeout: the first request's counts from the server's read of it (probe.py), and a
server that has not read it when the card's time runs out is "not judged in time", with a sentence
of its own. A line whose part of the walk the time cut is "not judged in
time" (:func:`in_time`), a skip that names the budget and how to grow it, never a failure; a failure
already seen in an answered call stays. The card then says, above its verdict, how many were cut.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from mcplab import place, portable
from mcplab.wire.errors import INVALID_PARAMS, PARSE_ERROR, RESOURCE_NOT_FOUND, JSONRPCError
from mcplab.grade import frames
from mcplab.grade.probe import PHASES, UNKNOWN_TOOL, Call, Reply, Session, excerpt, walk
from mcplab.grade.report import FAIL, JSONRPC_ERRORS, PASS, Line, Report, failed, late, passed, quote, skipped, spec
from mcplab.i18n import N_, _, ngettext
from mcplab.server.schema import load_jsonschema
from mcplab.wire.versions import LATEST_LEGACY as L, LATEST_MODERN as M

LAB = N_("Lab 09")
WHERE_TOOLS = (N_("Lab 09 §2 (tools) and §3 (return values)"), spec(L, "server/tools"))  # shown through _()
NOT_OPEN = N_("no session opened (see the first two lines)")
TYPED = ("type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf")
BUDGET = 12  # the card's time, in timeouts: a correct server's walk is some 40 answers of a few milliseconds
# The part of the walk (probe.PHASES) each line is judged on, and the era, for a line about one session.
PHASE_OF = {"legacy-open": "open", "modern-open": "open", "tools": "tools", "unknown-tool": "tools",
            "brief-tools": "tools", "brief-tool-error": "tools", "resources": "resources",
            "brief-resource": "resources", "prompts": "prompts", "brief-prompt": "prompts",
            "malformed-line": "malformed", "eof": "open"}  # a server still starting cannot see its stdin close
ERA_OF = {"legacy-open": "legacy", "modern-open": "modern"}
ERA_NAMES = {"legacy": N_("legacy"), "modern": N_("modern")}  # a card line names its era in the card's language
SEEN_FAILING = ("tools", "resources", "prompts")  # their failure names a call that was answered
SEEN_PASSING = ("brief-tools", "brief-resource", "brief-prompt", "brief-tool-error", "eof")  # a pass names a find


def era_name(session: Session) -> str:
    return _(ERA_NAMES[session.era])


def command(target: str | Path | Sequence[str]) -> list[str]:
    """``my_server.py`` → ``[sys.executable, "my_server.py"]``; a list is a command (``python`` = this one)."""
    if isinstance(target, (str, Path)):
        return [sys.executable, str(target)]
    return portable.command(target)


def server(target: str | Path | Sequence[str], *, timeout: float = 5.0, grace: float = 5.0,
           cwd: str | None = None) -> Report:
    """Grade the stdio server at ``target`` (a ``.py`` file or a command); the report card.

    ``timeout`` bounds each answer, and :data:`BUDGET` times it the whole walk of both sessions
    (closing them aside: ``grace`` and the signals after it come on top).

    >>> print(grade.server("build/my_server.py"))          # doctest: +SKIP
    Report card · server build/my_server.py
      ✓ opens a legacy session: ...
    """
    argv = command(target)
    # jsonschema is imported here, before the two threads: either could otherwise see it half-made.
    # The import statement (unlike a look in sys.modules) waits for an import another thread began.
    load_jsonschema()
    import jsonschema.validators  # noqa: F401
    budget = BUDGET * timeout
    ends = time.monotonic() + budget
    if place.IN_BROWSER:  # no threads in the page: one era after the other, each server a task there
        sessions = [walk(argv, era, timeout, grace, cwd, ends) for era in ("legacy", "modern")]
    else:  # two processes that mostly wait on pipes: walked side by side in threads, each on its own pipes
        with ThreadPoolExecutor(2) as pool:
            sessions = list(pool.map(lambda era: walk(argv, era, timeout, grace, cwd, ends), ("legacy", "modern")))
    shown = str(target) if isinstance(target, (str, Path)) else " ".join(map(str, target))
    schema = frames.schema_line([(s.era, s.trace, s.version) for s in sessions],
                                where=(spec(L, "schema"), spec(M, "schema"), _("{lab} §2 (tools)", lab=_(LAB))))
    lines = [opening(sessions[0]), opening(sessions[1]), stdout(sessions), schema, tools(sessions),
             resources(sessions), prompts(sessions), malformed(sessions), unknown_tool(sessions), eof(sessions),
             *brief(sessions)]
    why = _("the card's {budget:g} s, {times} times the timeout of {timeout:g} s, ran out before this check was "
            "done (that says how busy this machine is, not what your server does); a longer --timeout, or "
            "timeout= in Python, gives it more", budget=budget, times=BUDGET,
            timeout=timeout)
    starting = _("the server had not read its first request when the card's {budget:g} s ran out: it may still "
                 "have been starting on this busy machine (or it never reads its stdin); a longer --timeout, or "
                 "timeout= in Python, gives it more", budget=budget)
    timely = [in_time(line, sessions, why, starting) for line in lines]
    cut = sum(line is not judged for line, judged in zip(timely, lines))
    remarks = (ngettext("{n} check was not judged in time: the card's {budget:g} s ran out first; run it again "
                        "with a longer --timeout.",
                        "{n} checks were not judged in time: the card's {budget:g} s ran out first; run it "
                        "again with a longer --timeout.", cut, budget=budget),) if cut else ()
    return Report(_("server {target}", target=shown), tuple(timely), {s.era: s.trace for s in sessions}, remarks)


def in_time(line: Line, sessions: list[Session], why: str, starting: str = "") -> Line:
    """``line``, or "not judged in time" if the card's time ran out before the part of the walk it is judged on.

    What was seen stays seen: a tools, resources or prompts failure names a call that was answered,
    and a brief line that passes names what was found (an eof that passes, a server that exited).
    ``starting`` is the reason given when a session's server never read its first request.
    """
    phase, era = PHASE_OF.get(line.check), ERA_OF.get(line.check)
    concerned = [s for s in sessions if era in (None, s.era)]
    if not any(phase in s.unjudged for s in concerned):
        return line
    if (line.status == FAIL and line.check in SEEN_FAILING) or (line.status == PASS and line.check in SEEN_PASSING):
        return line
    return late(line.check, line.title, starting if starting and not all(s.started for s in concerned) else why)


def _open(sessions: list[Session]) -> list[Session]:
    return [s for s in sessions if s.opened]


def _said(session: Session, reply: Reply) -> str:
    """A reply in words; once the server crashed or stopped answering, the sentence that says so."""
    if session.halt and reply.kind == "gone":
        return session.halt
    if session.halt and reply.kind == "skipped":
        return _("not sent: {halt}", halt=session.halt)
    return quote(reply.said(), 160)


def _unsent(session: Session, reply: Reply) -> str:
    """"not sent: the server crashed at ..." for a request the walk never made because of a halt, else ""."""
    return _("not sent: {halt}", halt=session.halt) if session.halt and reply.kind == "skipped" else ""


def _halted_before(session: Session | None, phase: str) -> str:
    """The halt sentence if the walk stopped in ``phase`` or before it, else ""."""
    if session is None or not session.halt:
        return ""
    return session.halt if PHASES.index(session.halt_phase) <= PHASES.index(phase) else ""


# --- opening and the wire ----------------------------------------------------------------------------

def opening(session: Session) -> Line:
    if session.era == "legacy":
        check, title = "legacy-open", _("opens a legacy session: initialize is answered")
        expected = _("a result with protocolVersion ({version} as asked, or another legacy revision), capabilities "
                     "and serverInfo", version=L)
        where = (spec(L, "basic/lifecycle#initialization"), _("Lab 02 §2 (the handshake, byte by byte)"))
        missing = [k for k in ("protocolVersion", "capabilities", "serverInfo")
                   if session.opening.ok and k not in session.opening.result]
    else:
        check, title = "modern-open", _("opens a modern session: server/discover is answered")
        expected = _("a result with supportedVersions naming {version}, and capabilities", version=M)
        where = (spec(M, "server/discover"), _("Lab 06 §2 (server/discover)"))
        versions = session.opening.result.get("supportedVersions") if session.opening.ok else None
        missing = [k for k in ("supportedVersions", "capabilities") if session.opening.ok
                   and k not in session.opening.result]
        if session.opening.ok and not missing and (not isinstance(versions, list) or M not in versions):
            return failed(check, title, expected, f"supportedVersions {excerpt(versions)}", *where)
    if not session.opening.ok:
        return failed(check, title, expected, quote(session.opening.said() + _last_words(session)), *where)
    if missing:
        return failed(check, title, expected, _("a result without {missing}: {raw}", missing=", ".join(missing),
                                                raw=quote(session.opening.raw)), *where)
    if not session.opened:
        return failed(check, title, expected, _("protocolVersion {version}, which is no legacy revision",
                                                version=excerpt(session.opening.result.get('protocolVersion'))),
                      *where)
    return passed(check, title, session.version)


def _last_words(session: Session) -> str:
    """The server's last stderr line, when it left: often the traceback's last line says it all."""
    if session.opening.kind != "gone":
        return ""
    tail = [f.raw for f in session.trace.frames if f.channel == "stderr" and f.raw.strip()][-1:]
    return _("; its stderr ends: {line}", line=tail[0]) if tail else ""


def stdout(sessions: list[Session]) -> Line:
    title = _("writes nothing but JSON-RPC messages on stdout")
    for session in sessions:
        for frame in session.trace.frames:
            if frame.direction == "s2c" and frame.channel == "stdio" and isinstance(frame.message, JSONRPCError):
                return failed("stdout", title, _("one JSON-RPC message per line; logs go to stderr"),
                              _("{era} session, line {seq}: {raw}", era=era_name(session), seq=frame.seq,
                                raw=quote(frame.raw, 120)),
                              spec(M, "basic/transports/stdio"), spec(L, "basic/transports#stdio"),
                              _("{lab} §7 (run(): print() lands on stderr)", lab=_(LAB)))
    return passed("stdout", title)


# --- the primitives ----------------------------------------------------------------------------------

def _first_failure(calls: list[tuple[Session, Call, str]]) -> str:
    session, call, why = calls[0]
    more = _("; {count} more failed", count=len(calls) - 1) if len(calls) > 1 else ""
    return _("{era}: {said}", era=era_name(session), said=f"{why}{more}")


def tools(sessions: list[Session]) -> Line:
    check, title = "tools", _("calls each tool with arguments its inputSchema admits, and gets a result (both eras)")
    expected = _("a CallToolResult (content, and isError when the tool failed) for every call")
    with_tools = [s for s in _open(sessions) if s.tools is not None]
    bad = [(s, r) for s in with_tools for m, r in s.listing_errors if m == "tools/list"]
    if bad and _unsent(bad[0][0], bad[0][1]):
        return skipped(check, title, _unsent(bad[0][0], bad[0][1]))
    if bad:
        return failed(check, title, _("tools/list answered with a list of tools"),
                      _("{era}: {said}", era=era_name(bad[0][0]), said=_said(bad[0][0], bad[0][1])), *WHERE_TOOLS)
    if not any(s.tools for s in with_tools):
        return skipped(check, title, _("no tools listed"))
    wrong = []
    for s in with_tools:
        for call in s.calls:
            if call.reply.kind == "late" or _unsent(s, call.reply):
                continue  # not judged: see in_time; or never sent, after the call the server crashed on
            if call.unbuildable:
                wrong.append((s, call, _("no arguments could be made for {name}: {why}", name=call.name,
                                         why=call.unbuildable)))
            elif not call.reply.ok or not isinstance(call.reply.result.get("content"), list):
                wrong.append((s, call, f"tools/call {call.name} {excerpt(call.arguments)} → "
                                       f"{_said(s, call.reply)}"))
    if wrong:
        return failed(check, title, expected, _first_failure(wrong), *WHERE_TOOLS)
    names = sorted({c.name for s in with_tools for c in s.calls})
    return passed(check, title, f"{', '.join(names)}")


def resources(sessions: list[Session]) -> Line:
    check, title = "resources", _("reads each resource (and one URI per template) and gets its contents (both eras)")
    where = (_("{lab} §4 (resources)", lab=_(LAB)), spec(L, "server/resources"))
    with_res = [s for s in _open(sessions) if s.resources is not None]
    bad = [(s, m, r) for s in with_res for m, r in s.listing_errors if m.startswith("resources/")]
    if bad and _unsent(bad[0][0], bad[0][2]):
        return skipped(check, title, _unsent(bad[0][0], bad[0][2]))
    if bad:
        return failed(check, title, _("{method} answered with a list", method=bad[0][1]),
                      _("{era}: {said}", era=era_name(bad[0][0]), said=_said(bad[0][0], bad[0][2])), *where)
    if not any(s.reads for s in with_res):
        return skipped(check, title, _("no resources or templates listed"))
    wrong = []
    for s in with_res:
        missing = RESOURCE_NOT_FOUND if s.era == "legacy" else INVALID_PARAMS  # the revision's not-found code
        for read in s.reads:
            if read.reply.kind == "late":
                continue  # not judged: see in_time
            fine = read.reply.ok and isinstance(read.reply.result.get("contents"), list)
            if read.kind == "template" and read.reply.kind == "error" and read.reply.code == missing:
                fine = True  # a made-up value may name nothing: not found is the right answer then
            if not fine:
                wrong.append((s, read, f"resources/read {read.name} → {_said(s, read.reply)}"))
    if wrong:
        return failed(check, title, _("a ReadResourceResult with contents (for a template's made-up URI, "
                                      "contents or the revision's resource-not-found error)"),
                      _first_failure(wrong), *where)
    return passed(check, title, ", ".join(sorted({r.name for s in with_res for r in s.reads})))


def prompts(sessions: list[Session]) -> Line:
    check, title = "prompts", _("gets each prompt with arguments it admits (both eras)")
    where = (_("{lab} §5 (prompts)", lab=_(LAB)), spec(L, "server/prompts"))
    with_prompts = [s for s in _open(sessions) if s.prompts is not None]
    bad = [(s, r) for s in with_prompts for m, r in s.listing_errors if m == "prompts/list"]
    if bad and _unsent(bad[0][0], bad[0][1]):
        return skipped(check, title, _unsent(bad[0][0], bad[0][1]))
    if bad:
        return failed(check, title, _("prompts/list answered with a list"),
                      _("{era}: {said}", era=era_name(bad[0][0]), said=_said(bad[0][0], bad[0][1])), *where)
    if not any(s.gets for s in with_prompts):
        return skipped(check, title, _("no prompts listed"))
    wrong = [(s, g, f"prompts/get {g.name} {excerpt(g.arguments)} → {_said(s, g.reply)}")
             for s in with_prompts for g in s.gets
             if g.reply.kind != "late" and not (g.reply.ok and isinstance(g.reply.result.get("messages"), list))]
    if wrong:
        return failed(check, title, _("a GetPromptResult with messages (argument values come from "
                                      "completion/complete when the server offers it, else \"example\")"),
                      _first_failure(wrong), *where)
    return passed(check, title, ", ".join(sorted({g.name for s in with_prompts for g in s.gets})))


# --- errors and the end ------------------------------------------------------------------------------

def malformed(sessions: list[Session]) -> Line:
    check, title = "malformed-line", _("answers a line that is not JSON with -32700 and keeps serving (both eras)")
    expected = _('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,...}} (or with no "id"), then an answer '
                 'to the next request')
    where = (JSONRPC_ERRORS, spec(M, "basic/index#error-codes"), _("Lab 01 §8 (every way to be refused)"))
    tried = [s for s in sessions if s.malformed.kind != "skipped"]
    if not tried:
        halts = [s.halt for s in sessions if s.halt]
        return skipped(check, title, _("not sent: {halt}", halt=halts[0]) if halts
                       else _("the server answered nothing, so the line was not sent"))
    for s in tried:
        reply = s.malformed
        if reply.kind != "error" or reply.code != PARSE_ERROR:
            return failed(check, title, expected, _("{era}: {said}", era=era_name(s), said=quote(reply.said())), *where)
        if '"id":null' not in reply.raw.replace(" ", "") and '"id"' in reply.raw:
            return failed(check, title, expected, _("{era}: an id that names no request: {raw}", era=era_name(s),
                                                    raw=quote(reply.raw)), *where)
        if s.alive.kind not in ("result", "error"):  # any answer shows it still serves
            return failed(check, title, expected, _("{era}: after the -32700, {method} → {said}", era=era_name(s),
                          method='ping' if s.era == 'legacy' else 'server/discover', said=quote(s.alive.said())),
                          *where)
    return passed(check, title)


def unknown_tool(sessions: list[Session]) -> Line:
    check, title = "unknown-tool", _("answers a call to an unknown tool with the protocol error -32602 (both eras)")
    with_tools = [s for s in _open(sessions) if s.tools is not None]
    if not with_tools:
        return skipped(check, title, _("the server declares no tools"))
    for s in with_tools:
        reply = s.unknown_tool
        if _unsent(s, reply):
            return skipped(check, title, _unsent(s, reply))
        if not (reply.kind == "error" and reply.code == INVALID_PARAMS):
            hint = (_(" (isError is for a tool that ran and failed; a tool that does not exist is a protocol error)")
                    if reply.ok and reply.result.get("isError") else "")
            return failed(check, title, _("error -32602 for tools/call {tool!r}", tool=UNKNOWN_TOOL),
                          _("{era}: {said}", era=era_name(s), said=f"{_said(s, reply)}{hint}"),
                          spec(L, "server/tools#error-handling"), spec(M, "server/tools#error-handling"), _("Lab 03 §2 (isError against a protocol error)"))
    return passed(check, title)


def eof(sessions: list[Session]) -> Line:
    check, title = "eof", _("exits by itself, with status 0, when its stdin closes (both eras)")
    running = [s for s in sessions if s.ending is not None and not s.ending.already_exited]
    if not running:
        return skipped(check, title, _("the server had exited before its stdin was closed"))
    for s in running:
        end = s.ending
        if not end.by_itself or end.returncode != 0:
            got = (_("still running after stdin closed: it was stopped with {signal}", signal=end.signal)
                   if not end.by_itself else _("exited with status {code}", code=end.returncode))
            tail = [f.raw for f in s.trace.frames if f.channel == "stderr"][-1:]
            return failed(check, title, _("exit status 0 within a few seconds of end-of-file on stdin"),
                          _("{era}: {said}", era=era_name(s), said=got) + (_("; its last stderr line: {line}", line=quote(tail[0], 160))
                                               if tail else ""),
                          spec(L, "basic/lifecycle#shutdown"), spec(M, "basic/transports/stdio#shutdown"),
                          _("{lab} §7 (run() returns at end-of-file)", lab=_(LAB)))
    return passed(check, title)


# --- the brief ---------------------------------------------------------------------------------------

def _untyped(tool: dict) -> list[str]:
    """The tool's arguments whose schema gives no type; a tool with no arguments has none to type."""
    properties = (tool.get("inputSchema") or {}).get("properties") or {}
    return [name for name, p in properties.items() if not (isinstance(p, dict) and any(k in p for k in TYPED))]


def _kind(tool: dict) -> str:
    untyped = _untyped(tool)
    if untyped:
        return _("an argument without a type: {names}", names=", ".join(untyped))
    return _("typed") if (tool.get("inputSchema") or {}).get("properties") else _("no arguments")


def brief(sessions: list[Session]) -> list[Line]:
    opened = _open(sessions)
    first = opened[0] if opened else None
    caps = first.capabilities if first else {}
    tools_ = first.tools if first else None
    lines = []
    title = _("brief: two tools or more, each argument with a type")
    if tools_ is None:
        got = _(NOT_OPEN) if first is None else _('no tools: the server declares no "tools" capability')
    else:
        # Each argument typed, in every tool: a tool with no arguments has nothing to type, and counts.
        got = "" if len(tools_) >= 2 and not any(_untyped(t) for t in tools_) else ", ".join(f"{t.get('name')} ({_kind(t)})" for t in tools_) or (
            _halted_before(first, "tools") or _("an empty tools/list"))
    lines.append(passed("brief-tools", title, _("{count} tools", count=len(tools_ or [])))
                 if tools_ is not None and not got
                 else failed("brief-tools", title, _("at least two tools whose inputSchema gives each argument a "
                             "JSON Schema type (Python type hints do it)"), got, _("{lab} §2 (tools)", lab=_(LAB)),
                             spec(L, "server/tools#listing-tools")))
    count = len(first.resources or []) + len(first.templates or []) if first else 0
    title = _("brief: a resource or a resource template")
    halted = _halted_before(first, "resources")
    lines.append(passed("brief-resource", title) if count else skipped("brief-resource", title, halted) if halted
                 else failed(
        "brief-resource", title, _("resources/list or resources/templates/list naming at least one"),
        _(NOT_OPEN) if first is None else _('no resources: the server declares no "resources" capability')
        if "resources" not in caps
        else _("both lists are empty"), _("{lab} §4 (resources)", lab=_(LAB)), spec(L, "server/resources")))
    title = _("brief: a prompt")
    halted = _halted_before(first, "prompts")
    lines.append(passed("brief-prompt", title) if first and first.prompts else skipped("brief-prompt", title, halted)
                 if halted else failed(
        "brief-prompt", title, _("prompts/list naming at least one prompt"),
        _(NOT_OPEN) if first is None else _('no prompts: the server declares no "prompts" capability')
        if "prompts" not in caps else _("an empty list"),
        _("{lab} §5 (prompts)", lab=_(LAB)), spec(L, "server/prompts")))
    title = _("brief: a tool reports a failure as a result with isError: true")
    calls = [c for s in opened for c in s.calls if c.reply.ok]
    erring = [c for c in calls if c.reply.result.get("isError") is True]
    lines.append(passed("brief-tool-error", title, f"{erring[0].name} {excerpt(erring[0].arguments)}") if erring
                 else failed("brief-tool-error", title,
                             _("a tools/call answered with isError: true and a text saying what went wrong (raise "
                               "ToolError for a request the tool cannot serve: a name or an id it does not know)"),
                             _halted_before(first, "tools") or
                             _("{count} calls, none with isError (each tool was called with typical and with "
                               "unlikely arguments, and with its strings empty)", count=len(calls)) if calls
                             else _(NOT_OPEN) if first is None else _halted_before(first, "tools")
                             or _("no tool was called"),
                             _("{lab} §3 (return values and errors)", lab=_(LAB)), spec(L, "server/tools#error-handling")))
    return lines
