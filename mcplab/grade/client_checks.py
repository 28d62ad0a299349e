"""The client grader's 16 checks: what a student's client sent, and when, judged from the recorder's frames.

Each function takes the runs of client.py (one per scenario) and returns one report line. The order
of frames is the order the recorder saw them, so "after the answer arrived" means after the recorder
passed the answer on: a client that writes ``notifications/initialized`` before reading the result
is caught, whatever it does next.

The server the client talks to is ours, so when a run ended while it had not answered a request yet
(:func:`waiting_on`), the machine was too slow for the client's ``--timeout``: client.py runs the
scenario again with a longer one, and if the last run is still cut short, the lines that depend on
the session going on are "not judged in time" (a pass stays a pass). The lines about what the client
sent (:data:`ABOUT_SENT`) are judged whatever came back.

A client that writes without flushing sends its request only when it closes stdin (closing flushes):
the recorder sees the line and the end together (``NOTE_UNFLUSHED``). That is the client's fault, not
the machine's, so it is no reason to run again: the flush line fails, pointing at the lab's section
on writing, and the lines of a run it spoiled are skipped with a pointer to it, rather than failed
(or passed) for what the missing flush did.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from mcplab.wire import jsonrpc
from mcplab.grade import frames
from mcplab.grade.output import KEPT
from mcplab.grade.recorder import (FUTURE, NOTE_ANSWERED, NOTE_DRAINING, NOTE_EOF, NOTE_LEFT, NOTE_NOISE, NOTE_SIGTERM,
                                   NOTE_UNFLUSHED, NOTE_WAITED)
from mcplab.grade.report import PASS, Line, failed, late, passed, quote, skipped, spec
from mcplab.i18n import N_, _
from mcplab.trace import Trace
from mcplab.wire.versions import LATEST_LEGACY as L, LATEST_MODERN as M, LEGACY_VERSIONS

LAB = N_("Lab 10")
STDIO = spec(L, "basic/transports#stdio")
SHUTDOWN = (spec(L, "basic/lifecycle#shutdown"), spec(M, "basic/transports/stdio#shutdown"))
DEADLOCK = "https://docs.python.org/3/library/subprocess.html#subprocess.Popen.stderr"


def _sent(trace: Trace) -> list[tuple[int, Any]]:
    found = []
    for frame in trace.frames:
        if frame.direction == "c2s" and frame.channel == "stdio":
            try:
                found.append((frame.seq, json.loads(frame.raw)))
            except ValueError:
                found.append((frame.seq, None))
    return found


def _requests(trace: Trace) -> list[tuple[int, dict]]:
    return [(seq, obj) for seq, obj in _sent(trace) if isinstance(obj, dict) and "method" in obj and "id" in obj]


def _answer(trace: Trace, request: tuple[int, dict] | None) -> tuple[int, dict] | None:
    """The server's response to ``request`` (seq, message), as the recorder passed it on."""
    if request is None:
        return None
    request_id = request[1].get("id")
    for frame in trace.frames:
        if frame.direction == "s2c" and frame.channel == "stdio" and frame.seq > request[0]:
            try:
                obj = json.loads(frame.raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and "method" not in obj and obj.get("id") == request_id:
                return frame.seq, obj
    return None


def _note(trace: Trace, text: str) -> int | None:
    return next((f.seq for f in trace.frames if f.channel == "note" and f.raw.startswith(text)), None)


def _nothing(run: Any) -> str:
    tail = run.stderr_tail()
    return _("the client sent nothing (it never started the server)") + (
        _("; its stderr ends: {line}", line=quote(tail, 160)) if tail else "")


def _first(trace: Trace, method: str) -> tuple[int, dict] | None:
    return next(((s, o) for s, o in _requests(trace) if o.get("method") == method), None)


def size(count: int) -> str:
    """A byte count for a reader: ``size(268435456)`` → ``"256 MiB"``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift:
            return f"{count / (1 << shift):.4g} {unit}"
    return f"{count} B"


def cut(run: Any) -> str:
    """What the grader cut of a run's output, in words; "" when it kept all of it."""
    return "; ".join(_("its {stream} was cut: {total} in all, the first and last {kept} kept", stream=stream,
                       total=size(total), kept=size(KEPT)) for stream, total in run.cut.items())


# --- the plain run -----------------------------------------------------------------------------------

def runs_line(r: dict) -> Line:
    run, title = r["plain"], _("runs the whole session and exits with status 0")
    if run.returncode == 0:
        return passed("runs", title, cut(run))
    got = (_("still running when the grader stopped it") if run.stopped
           else _("exit status {code}", code=run.returncode))
    tail = run.stderr_tail()
    return failed("runs", title, _("exit status 0 after list, call and shutdown"),
                  got + (_("; its stderr ends: {line}", line=quote(tail, 160)) if tail else "")
                  + (f"; {cut(run)}" if run.cut else ""), _("{lab} §8 (your client)", lab=_(LAB)))


def unflushed(run: Any) -> str:
    """The method of a request that reached our server only as the client closed stdin, or ""."""
    return next((f.raw.split(": ", 1)[-1] for f in run.trace.frames
                 if f.channel == "note" and f.raw.startswith(NOTE_UNFLUSHED)), "")


def flush_line(r: dict) -> Line:
    title = _("flushes each line it writes, so the server reads a request while the client waits for its answer")
    for name in ("plain", "future", "noisy", "silent"):
        method = unflushed(r[name])
        if method:
            return failed("flush", title, _("write the line, then flush(): the request reaches the server at once"),
                          _("{method} reached the server only when the client closed its stdin: until then it sat in "
                            "the client's own buffer, and the client waited for an answer to a request nobody "
                            "had read", method=method), STDIO, _("{lab} §3 (write and flush)", lab=_(LAB)))
    return passed("flush", title)


def lines_line(r: dict) -> Line:
    title = _("writes one JSON-RPC request or notification per line, and no responses")
    for frame in r["plain"].trace.frames:
        if frame.direction != "c2s" or frame.channel != "stdio":
            continue
        seq = frame.seq
        try:
            message = jsonrpc.decode(frame.raw)
        except jsonrpc.JSONRPCError as exc:
            return failed("jsonrpc-lines", title, _("json.dumps of one message, then a newline"),
                          _("line {seq}: {raw} ({why})", seq=seq, raw=quote(frame.raw, 120), why=exc.message), STDIO,
                          _("{lab} §3 (write and flush)", lab=_(LAB)))
        if isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            return failed("jsonrpc-lines", title, _("requests and notifications only (the server asked nothing)"),
                          _("line {seq}: a response: {raw}", seq=seq, raw=quote(frame.raw, 120)), STDIO,
                          _("{lab} §3 (write and flush)", lab=_(LAB)))
    return passed("jsonrpc-lines", title)


def schema_line(r: dict) -> Line:
    trace = r["plain"].trace
    if not _sent(trace):
        return skipped(frames.CHECK, _(frames.TITLE), _("the client sent nothing"))
    first = _first(trace, "initialize")
    answer = _answer(trace, first)
    version = ((answer[1].get("result") or {}).get("protocolVersion") if answer else None)
    return frames.schema_line([("plain", trace, version if version in LEGACY_VERSIONS else L)],
                              where=(spec(L, "schema"), _("{lab} §8 (your client)", lab=_(LAB))))


def initialize_line(r: dict) -> Line:
    run, title = r["plain"], _("opens with initialize, asking for a published revision")
    expected = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"' + L + '",'
                '"capabilities":{},"clientInfo":{"name":...,"version":...}}}')
    where = (spec(L, "basic/lifecycle#initialization"), _("Lab 02 §2 (the handshake, byte by byte)"))
    sent = _sent(run.trace)
    if not sent:
        return failed("initialize", title, expected, _nothing(run), *where)
    seq, obj = sent[0]
    params = obj.get("params") if isinstance(obj, dict) else None
    if not isinstance(obj, dict) or obj.get("method") != "initialize" or "id" not in obj:
        return failed("initialize", title, expected, _("the first line: {raw}",
                                                       raw=quote(run.trace.frames[seq - 1].raw, 160)), *where)
    problem = (_("no params") if not isinstance(params, dict)
               else _("protocolVersion {version}, which is no published legacy revision ({versions})",
                      version=json.dumps(params.get('protocolVersion')), versions=", ".join(LEGACY_VERSIONS))
               if params.get("protocolVersion") not in LEGACY_VERSIONS
               else _("capabilities is not an object") if not isinstance(params.get("capabilities"), dict)
               else _("clientInfo is not an object") if not isinstance(params.get("clientInfo"), dict) else "")
    if problem:
        return failed("initialize", title, expected, problem, *where, spec(L, "basic/lifecycle#version-negotiation"))
    return passed("initialize", title, params["protocolVersion"])


def initialized_line(r: dict) -> Line:
    trace, title = r["plain"].trace, _("sends notifications/initialized once the result has come, before other "
                                       "requests")
    where = (spec(L, "basic/lifecycle#initialization"), _("Lab 02 §2 (the handshake, byte by byte)"),
             _("{lab} §4 (read lines)", lab=_(LAB)))
    expected = _('{"jsonrpc":"2.0","method":"notifications/initialized"} (no id) after the initialize result')
    first = _first(trace, "initialize")
    answer = _answer(trace, first)
    if answer is None:
        return failed("initialized", title, expected, _("no initialize was answered") if first
                      else _nothing(r["plain"]), *where)
    sent = _sent(trace)
    notes = [(s, o) for s, o in sent if isinstance(o, dict) and o.get("method") == "notifications/initialized"]
    if not notes:
        return failed("initialized", title, expected, _("it was never sent"), *where)
    seq, obj = notes[0]
    if "id" in obj:
        return failed("initialized", title, expected, _("it was sent with an id, as a request: {raw}",
                                                        raw=quote(json.dumps(obj), 120)), *where)
    if seq < answer[0]:
        return failed("initialized", title, expected, _("it was sent before the initialize result arrived"), *where)
    early = [o["method"] for s, o in _requests(trace) if first[0] < s < seq and o.get("method") != "ping"]
    if early:
        return failed("initialized", title, expected, _("{method} was sent before it", method=early[0]), *where)
    return passed("initialized", title)


def ids_line(r: dict) -> Line:
    title = _("gives every request an id of its own: a string or an integer, never null, never reused")
    where = (spec(L, "basic#requests"), _("Lab 01 §5 (matching responses to requests)"))
    seen: dict[str, str] = {}
    for _seq, obj in _requests(r["plain"].trace):
        rid = obj["id"]
        if rid is None or isinstance(rid, (bool, float)) or not isinstance(rid, (str, int)):
            return failed("ids", title, _("ids such as 1, 2, 3"), _("{method} with id {id}", method=obj.get('method'),
                                                                     id=json.dumps(rid)), *where)
        key = json.dumps(rid)
        if key in seen:
            return failed("ids", title, _("ids such as 1, 2, 3"), _("id {id} used by {first} and again by {second}",
                                                                     id=key, first=seen[key],
                                                                     second=obj.get('method')), *where)
        seen[key] = str(obj.get("method"))
    if not seen:
        return failed("ids", title, _("ids such as 1, 2, 3"), _nothing(r["plain"]), *where)
    return passed("ids", title)


def tools_list_line(r: dict) -> Line:
    title = _("asks the server for its tools (tools/list)")
    if _first(r["plain"].trace, "tools/list"):
        return passed("tools-list", title)
    return failed("tools-list", title, '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
                  _("no tools/list was sent") if _sent(r["plain"].trace) else _nothing(r["plain"]),
                  spec(L, "server/tools#listing-tools"), _("Lab 03 §1 (tools: list, then call)"))


def tools_call_line(r: dict) -> Line:
    trace, title = r["plain"].trace, _("calls the tool it was asked to (tools/call with name and arguments)")
    where = (spec(L, "server/tools#calling-tools"), _("Lab 03 §1 (tools: list, then call)"))
    expected = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{...}}}'
    found = _first(trace, "tools/call")
    if found is None:
        return failed("tools-call", title, expected, _("no tools/call was sent") if _sent(trace)
                      else _nothing(r["plain"]), *where)
    params = found[1].get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str) \
            or not isinstance(params.get("arguments", {}), dict):
        return failed("tools-call", title, expected, quote(json.dumps(found[1], ensure_ascii=False), 160), *where)
    return passed("tools-call", title, params["name"])


def prints_line(r: dict) -> Line:
    run, title = r["plain"], _("shows the tool's result (its text on stdout)")
    found = _first(run.trace, "tools/call")
    answer = _answer(run.trace, found)
    if answer is None:
        return skipped("prints-result", title, _("no tools/call was answered"))
    content = (answer[1].get("result") or {}).get("content") or []
    text = next((c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"), "")
    if text[:12] and text[:12] in run.stdout:
        return passed("prints-result", title)
    if "stdout" in run.cut:  # the text may be in the middle the grader did not keep
        return skipped("prints-result", title, _("the result's text is not in the first or last {kept} of its "
                                                 "stdout, which was cut ({total} in all)", kept=size(KEPT),
                                                 total=size(run.cut["stdout"])))
    return failed("prints-result", title, _("the result's text on stdout, e.g. {text!r}", text=quote(text, 60)),
                  f"stdout: {quote(run.stdout[-160:], 160)!r}" if run.stdout.strip() else _("nothing on stdout"),
                  _("{lab} §8 (your client)", lab=_(LAB)))


def closes_line(r: dict) -> Line:
    trace, title = r["plain"].trace, _("shuts down by closing the server's stdin: no signal needed")
    eof, sigterm = _note(trace, NOTE_EOF), _note(trace, NOTE_SIGTERM)
    if eof is not None and sigterm is None:
        return passed("closes-stdin", title)
    got = (_("it sent SIGTERM without closing stdin first") if eof is None and sigterm is not None
           else _("it sent SIGTERM before the server had time to exit (wait a few seconds first)") if sigterm
           else _("the server was killed outright (SIGKILL): nothing reached it") if _sent(trace)
           else _nothing(r["plain"]))
    return failed("closes-stdin", title, _("close stdin, then wait for the server to exit"), got, *SHUTDOWN,
                  _("{lab} §7 (shut down)", lab=_(LAB)))


def waits_line(r: dict) -> Line:
    run, title = r["plain"], _("waits for the server to exit before exiting itself")
    if _note(run.trace, NOTE_WAITED) is not None:
        return passed("waits", title)
    got = (_("the client exited while its server was still running") if _note(run.trace, NOTE_LEFT) is not None
           else _("the server was killed before it could exit") if _sent(run.trace) else _nothing(run))
    return failed("waits", title, _("process.wait(timeout=...) after closing stdin"), got, *SHUTDOWN,
                  _("{lab} §7 (shut down)", lab=_(LAB)))


# --- the other scenarios -------------------------------------------------------------------------------

def mismatch_line(r: dict) -> Line:
    run = r["future"]
    title = _("disconnects when the server answers a revision it does not speak ({version})", version=FUTURE)
    where = (spec(L, "basic/lifecycle#version-negotiation"), _("Lab 02 §5 (version negotiation)"))
    expected = _("nothing more sent after that answer, stdin closed, a non-zero exit status")
    first = _first(run.trace, "initialize")
    answer = _answer(run.trace, first)
    if answer is None:
        return failed("version-mismatch", title, expected, _("no initialize was answered") if first
                      else _nothing(run), *where)
    after = [o for s, o in _sent(run.trace) if s > answer[0]]
    if after:
        method = after[0].get("method") if isinstance(after[0], dict) else None
        return failed("version-mismatch", title, expected, _("it went on: {method} after the {version} answer",
                                                             method=method or _("a line"), version=FUTURE), *where)
    if run.stopped or run.returncode == 0:
        return failed("version-mismatch", title, expected, _("still running when the grader stopped it")
                      if run.stopped else _("exit status 0, as if all went well"), *where)
    return passed("version-mismatch", title)


def stderr_line(r: dict) -> Line:
    run, title = r["noisy"], _("drains the server's stderr: a server that logs 256 KiB before answering gets through")
    noise = _note(run.trace, NOTE_NOISE)
    # Read on after the noise: anything but giving up (a cancellation) shows the answer got through.
    if noise is not None and any(s > noise and not (isinstance(o, dict) and o.get("method") == "notifications/cancelled")
                                 for s, o in _sent(run.trace)):
        return passed("stderr", title)
    # More of the log went through than the pipe holds: the client was reading stderr, and if it gave up
    # all the same, a busy machine was too slow for its --timeout (the runs line says so), no deadlock.
    if _note(run.trace, NOTE_DRAINING) is not None:
        return passed("stderr", title)
    got = (_("the server was still blocked writing its log when the client gave up: nobody read its stderr, so "
             "the pipe filled") if _sent(run.trace) else _nothing(run))
    return failed("stderr", title, _("a thread that reads stderr (or stderr not piped at all)"), got, DEADLOCK,
                  _("{lab} §6 (drain stderr)", lab=_(LAB)))


def timeout_line(r: dict, timeout: float) -> Line:
    run = r["silent"]
    # The title names the --timeout asked, even when a rerun gave more: a stored card reads the same on
    # every machine, and the rerun is one of the report's notes (client.py).
    title = _("gives up on a request the server never answers (--timeout {timeout:g} s)", timeout=timeout)
    where = (spec(L, "basic/lifecycle#timeouts"), _("{lab} §5 (a read timeout)", lab=_(LAB)))
    # The call went unanswered once the client sent it (the recorder holds the answer back, or our
    # server has not even given one yet): from then on, what the client does is its own.
    if _first(run.trace, "tools/call") is None:
        return skipped("timeout", title, _("no tools/call was sent, so no request went unanswered"))
    if run.stopped:
        return failed("timeout", title, _("an exit within a few seconds of the timeout"),
                      _("still waiting when the grader stopped it"), *where)
    return passed("timeout", title)


def cancel_line(r: dict) -> Line:
    run, title = r["silent"], _("tells the server it gave up: notifications/cancelled naming the request")
    call = _first(run.trace, "tools/call")
    if call is None or run.stopped:
        return skipped("cancel", title, _("the client did not give up on a request"))
    wanted = call[1].get("id")
    for seq, obj in _sent(run.trace):
        if isinstance(obj, dict) and obj.get("method") == "notifications/cancelled" and "id" not in obj \
                and (obj.get("params") or {}).get("requestId") == wanted:
            return passed("cancel", title)
    return failed("cancel", title, '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":'
                  f'{json.dumps(wanted)},"reason":...}}}}', _("no such notification"),
                  spec(L, "basic/utilities/cancellation"), spec(L, "basic/lifecycle#timeouts"),
                  _("{lab} §5 (a read timeout)", lab=_(LAB)))


CHECKS: tuple[Callable[[dict], Line], ...] = (
    runs_line, lines_line, flush_line, schema_line, initialize_line, initialized_line, ids_line, tools_list_line,
    tools_call_line, prints_line, closes_line, waits_line, mismatch_line, stderr_line)


SCENARIO_OF = {"version-mismatch": "future", "stderr": "noisy", "timeout": "silent", "cancel": "silent"}
"""The run each line is judged on (the others: the plain run)."""
ABOUT_SENT = ("jsonrpc-lines", "flush", "schema", "initialize", "ids")
"""Lines about the client's own lines: judged even in a run our server was too slow for."""


def waiting_on(run: Any) -> str:
    """The method of a request our server had not answered when the client stopped, or "".

    The client stops when it gives up on a request (``notifications/cancelled``), closes the
    server's stdin, signals it, or is stopped by the grader. The silent call is meant to go
    unanswered, and in the noisy run the answer to initialize waits behind the log: the recorder
    notes when the server gave it, so a client that never read stderr is not taken for a slow server
    (one that read more of the log than the pipe holds was reading: then our answer was just slow).
    """
    trace = run.trace
    if unflushed(run):
        return ""  # the client held its own request back: no server could have answered it
    ends = [s for s in (_note(trace, NOTE_EOF), _note(trace, NOTE_SIGTERM)) if s is not None] + [
        s for s, o in _sent(trace) if isinstance(o, dict) and o.get("method") == "notifications/cancelled"]
    end = min(ends, default=len(trace.frames) + 1)
    for seq, obj in _requests(trace):
        method = str(obj.get("method"))
        if seq > end or (run.scenario == "silent" and method == "tools/call"):
            continue
        if run.scenario == "noisy" and method == "initialize" and _note(trace, NOTE_ANSWERED) is not None \
                and _note(trace, NOTE_DRAINING) is None:
            continue  # the answer waits behind a log nobody reads: the client's deadlock, not our slowness
        answer = _answer(trace, (seq, obj))
        if answer is None or answer[0] > end:
            return method
    return ""


def _in_time(line: Line, run: Any) -> Line:
    """``line``, or "not judged in time" if our server was too slow for the client's run it is judged on."""
    if line.status == PASS or line.check in ABOUT_SENT:
        return line
    if run.stopped and not _sent(run.trace):
        return late(line.check, line.title, _(
            "the client had sent nothing when the grader stopped it, {start:g} s after it started: still starting "
            "on this busy machine, or stuck before its first line; close other work, or run it again",
            start=run.start))
    method = waiting_on(run)
    if not method:
        return line
    return late(line.check, line.title, _(
        "the server had not answered {method} when the client's last run ended (--timeout {timeout:g} s): this "
        "machine was too slow, which says nothing about your client; close other work, or pass a longer "
        "--timeout", method=method, timeout=run.timeout))


def _flushed(line: Line, run: Any) -> Line:
    """``line``, or skipped when its run was spoiled by a request the client never flushed."""
    if line.check in ABOUT_SENT or line.check in ("closes-stdin", "waits") or not unflushed(run):
        return line
    return skipped(line.check, line.title, _("a request reached the server only when the client "
                                             "closed its stdin (see the flush line)"))


def lines(runs: dict, timeout: float) -> list[Line]:
    """Every line of the client's report card, in order.

    A run in which the client sent nothing at all (it crashed first, or a TODO stopped it) leaves
    nothing to judge: its lines are skipped, and the first line, with the client's last words on
    stderr, is the one that fails (or, if the client was still starting when the grader stopped it,
    is not judged in time).
    """
    found = [check(runs) for check in CHECKS] + [timeout_line(runs, timeout), cancel_line(runs)]
    timely = [_flushed(_in_time(line, runs[SCENARIO_OF.get(line.check, "plain")]),
                       runs[SCENARIO_OF.get(line.check, "plain")]) for line in found]
    return [line if line.check == "runs" or _sent(runs[SCENARIO_OF.get(line.check, "plain")].trace)
            else skipped(line.check, line.title, _("the client sent nothing; see the first line")) for line in timely]
