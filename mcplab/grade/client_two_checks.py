"""The part-two client grader's 10 checks, judged from the recorder's frames of each run.

Each check has one line, judged on the runs it names (client_two_runs.py: ``legacy``, ``modern``,
and their ``-misfit`` twins, whose answer does not fit the form). A line about one era alone is left
off a card that did not grade that era: ``ping`` and ``undeclared`` are legacy (2026-07-28 has no
server→client requests), ``discover``, ``meta``, ``retry`` and ``request-state`` modern.

One mistake, one failed line. A run in which the client sent nothing (it crashed first, or a TODO
stopped it) leaves nothing to judge: its lines are skipped, and the first line, with the client's last
words on stderr, is the one that fails. The desk (desk.py) goes on whatever the client answers to
``ping`` and ``roots/list``, but two kinds of mistake stop a session short: a request of the desk's
that the client never answers (the desk waits for it, and the client's own call times out), and a
request of the client's that the desk refuses (a missing ``_meta``, a changed ``requestState``, an
answer that does not fit the form): the client then gets an error, usually exits with status 1, and
the rest of that run shows nothing. :func:`spoiled_by` names the check whose rule the mistake broke;
on that run the other lines are skipped with a pointer to it instead of failed (a pass stays a pass),
so the card points at the cause, not at its consequences.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from mcplab.grade.client_checks import _answer, _nothing, _requests, _sent
from mcplab.grade.report import JSONRPC_ERRORS, Line, failed, passed, quote, skipped, spec
from mcplab.i18n import N_, _
from mcplab.trace import Trace
from mcplab.wire.versions import LATEST_LEGACY as L, LATEST_MODERN as M, META_CLIENT_CAPABILITIES, \
    META_PROTOCOL_VERSION

LAB = N_("Lab 12")
TOOL = "book_table"
METHOD_NOT_FOUND = -32601
LEGACY_RUNS, MODERN_RUNS = ("legacy", "legacy-misfit"), ("modern", "modern-misfit")

Problem = tuple[str, str]  # (expected, got): what a run showed instead of the rule


def _from_server(trace: Trace) -> list[tuple[int, dict]]:
    found = []
    for frame in trace.frames:
        if frame.direction == "s2c" and frame.channel == "stdio":
            try:
                obj = json.loads(frame.raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                found.append((frame.seq, obj))
    return found


def _asked(trace: Trace, method: str) -> tuple[int, dict] | None:
    """The server's first request ``method`` to the client."""
    return next(((s, o) for s, o in _from_server(trace) if o.get("method") == method and "id" in o), None)


def _reply(trace: Trace, asked: tuple[int, dict]) -> dict | None:
    """The client's response to the server's request ``asked``."""
    return next((o for s, o in _sent(trace) if s > asked[0] and isinstance(o, dict) and "method" not in o
                 and o.get("id") == asked[1].get("id")), None)


def _calls(trace: Trace) -> list[tuple[int, dict]]:
    return [(s, o) for s, o in _requests(trace) if o.get("method") == "tools/call"]


def _input_required(trace: Trace) -> tuple[tuple[int, dict], dict] | None:
    """The first tools/call answered ``input_required``, and that result."""
    for call in _calls(trace):
        answer = _answer(trace, call)
        result = (answer[1].get("result") if answer else None) or {}
        if result.get("resultType") == "input_required":
            return call, result
    return None


def _retry(trace: Trace, asked: tuple[tuple[int, dict], dict]) -> tuple[int, dict] | None:
    """The tools/call the client sent after the input_required answer to ``asked``."""
    answer = _answer(trace, asked[0])
    return next(((s, o) for s, o in _calls(trace) if answer and s > answer[0]), None)


def refusal(run: Any) -> tuple[str, dict] | None:
    """The first error response the desk sent to one of the client's requests: (its method, the error)."""
    trace = run.trace
    for request in _requests(trace):
        answer = _answer(trace, request)
        if answer and isinstance(answer[1].get("error"), dict):
            return str(request[1].get("method")), answer[1]["error"]
    return None


def unanswered(run: Any) -> str:
    """The method of the first request the desk sent the client that got no response, or ""."""
    trace = run.trace
    for seq, obj in _from_server(trace):
        if "method" in obj and "id" in obj and _reply(trace, (seq, obj)) is None:
            return str(obj["method"])
    return ""


def _form_check(run: Any) -> str:
    return "schema" if run.scenario.endswith("misfit") else "accept"


def spoiled_by(run: Any) -> tuple[str, str]:
    """The check whose rule a mistake in ``run`` broke first, and what it spoiled; ("", "") if none.

    Three mistakes stop a session short: a request of the desk's left unanswered (the desk waits for
    it, and nothing after it comes), no elicitation capability (the desk cannot ask, and in 2026-07-28
    refuses the call with -32021), and a request of the client's that the desk refused.
    """
    method = unanswered(run)
    if method:
        check = {"ping": "ping", "roots/list": "undeclared"}.get(method, _form_check(run))
        return check, _("in the {scenario} run the server was still waiting for the client's response to "
                        "{method}: see the {line} line", scenario=run.scenario, method=method, line=check)
    if _calls(run.trace) and not _declared(run):
        return "accept", _("in the {scenario} run the client did not declare the elicitation capability, so the "
                           "server could not ask: see the accept line", scenario=run.scenario)
    found = refusal(run)
    if found is None:
        return "", ""
    method, error = found
    message = str(error.get("message"))
    check = ("discover" if method == "initialize" and run.scenario.startswith("modern")
             else "meta" if "_meta" in message or error.get("code") == -32022
             else "request-state" if "requestState" in message
             else _form_check(run) if "requestedSchema" in message or "elicitation" in message
             or "inputResponses" in message else "")
    return check, (_("in the {scenario} run the server refused {method} with error {code}: see the {line} line",
                     scenario=run.scenario, method=method, code=error.get("code"), line=check) if check else "")


def _line(check: str, title: str, runs: dict, names: tuple[str, ...], judge: Callable[[Any], Problem | None],
          *where: str) -> Line | None:
    """One line: failed on the first of ``names`` whose run breaks the rule, skipped where a run was
    spoiled by another check's mistake, passed otherwise; None when none of those runs was graded."""
    graded = [name for name in names if name in runs]
    if not graded:
        return None
    skips = []
    for name in graded:
        run = runs[name]
        if check != "runs" and not _sent(run.trace):  # it crashed first, or a TODO stopped it: see the first line
            skips.append(_("in the {scenario} run the client sent nothing; see the first line", scenario=name))
            continue
        problem = judge(run)
        if problem is None:
            continue
        culprit, why = spoiled_by(run)
        if culprit and culprit != check:
            skips.append(why)
            continue
        expected, got = problem
        return failed(check, title, expected, _("{got} (the {scenario} run)", got=got, scenario=name), *where)
    if skips:
        return skipped(check, title, skips[0])
    return passed(check, title)


def _section(number: int, name: str) -> str:
    return _("{lab} §{number} ({name})", lab=_(LAB), number=number, name=name)


# --- every run ---------------------------------------------------------------------------------------

def runs_line(runs: dict, fits: dict) -> Line | None:
    title = _("runs every session and exits with status 0")

    def judge(run: Any) -> Problem | None:
        if run.returncode == 0:
            return None
        tail = run.stderr_tail()
        got = (_("still running when the grader stopped it") if run.stopped
               else _("exit status {code}", code=run.returncode))
        return (_("exit status 0 after listing, calling and shutting down"),
                got + (_("; its stderr ends: {line}", line=quote(tail, 160)) if tail else ""))

    return _line("runs", title, runs, (*LEGACY_RUNS, *MODERN_RUNS), judge, _section(7, _("grade it")))


def pages_line(runs: dict, fits: dict) -> Line | None:
    title = _("reads every page of tools/list: asks again with each nextCursor, unchanged, until a page has none")
    expected = _("tools/list, then tools/list with {params} for each page that has a nextCursor (3 pages here)",
                 params='{"cursor": <nextCursor>}')

    def judge(run: Any) -> Problem | None:
        asked = [(s, o) for s, o in _requests(run.trace) if o.get("method") == "tools/list"]
        if not asked:
            return expected, _("no tools/list was sent") if _sent(run.trace) else _nothing(run)
        wanted, pages = None, 0
        for seq, obj in asked:
            params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
            if params.get("cursor") != wanted:
                return expected, _("tools/list number {n} carried cursor {got}, not the nextCursor {wanted}",
                                   n=pages + 1, got=json.dumps(params.get("cursor")), wanted=json.dumps(wanted))
            answer = _answer(run.trace, (seq, obj))
            result = answer[1].get("result") if answer else None
            if not isinstance(result, dict):
                return expected, _("tools/list number {n} got no result", n=pages + 1)
            pages, wanted = pages + 1, result.get("nextCursor")
            if wanted is None:
                return None
        return expected, _("it stopped after page {n}, whose nextCursor it never sent back", n=pages)

    return _line("pages", title, runs, ("legacy", "modern"), judge, spec(L, "server/utilities/pagination"),
                 _section(4, _("lists in pages")))


# --- the legacy era: the server asks -----------------------------------------------------------------

def _asked_problem(run: Any, method: str, expected: str) -> Problem:
    if not _sent(run.trace):
        return expected, _nothing(run)
    if not _calls(run.trace):
        return expected, _("no {method} reached the client: it never called {tool}", method=method, tool=TOOL)
    return expected, _("no {method} reached the client", method=method)


def ping_line(runs: dict, fits: dict) -> Line | None:
    title = _("answers the server's ping with an empty result")
    expected = '{"jsonrpc":"2.0","id":<the ping\'s id>,"result":{}}'

    def judge(run: Any) -> Problem | None:
        asked = _asked(run.trace, "ping")
        if asked is None:
            return _asked_problem(run, "ping", expected)
        reply = _reply(run.trace, asked)
        if reply is None:
            return expected, _("no response to the ping (id {id})", id=json.dumps(asked[1].get("id")))
        result = reply.get("result")
        if not isinstance(result, dict) or set(result) - {"_meta"}:
            return expected, quote(json.dumps(reply, ensure_ascii=False), 160)
        return None

    return _line("ping", title, runs, ("legacy",), judge, spec(L, "basic/utilities/ping"),
                 _section(2, _("answer the server")))


def undeclared_line(runs: dict, fits: dict) -> Line | None:
    title = _("answers a request it did not declare (roots/list) with error -32601")
    expected = '{"jsonrpc":"2.0","id":<its id>,"error":{"code":-32601,"message":...}}'

    def judge(run: Any) -> Problem | None:
        asked = _asked(run.trace, "roots/list")
        if asked is None:
            return _asked_problem(run, "roots/list", expected)
        reply = _reply(run.trace, asked)
        if reply is None:
            return expected, _("no response to roots/list (id {id})", id=json.dumps(asked[1].get("id")))
        error = reply.get("error")
        if not isinstance(error, dict) or error.get("code") != METHOD_NOT_FOUND:
            return expected, quote(json.dumps(reply, ensure_ascii=False), 160)
        return None

    return _line("undeclared", title, runs, ("legacy",), judge, JSONRPC_ERRORS,
                 spec(L, "basic/lifecycle#capability-negotiation"), _section(2, _("answer the server")))


# --- the form, in both eras ---------------------------------------------------------------------------

def _declared(run: Any) -> bool:
    """Did the client declare elicitation (at initialize, or in the _meta of its tools/call)?"""
    for _seq, obj in _requests(run.trace):
        params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        declared = params.get("capabilities") if obj.get("method") == "initialize" else (
            meta.get(META_CLIENT_CAPABILITIES) if obj.get("method") == "tools/call" else None)
        if isinstance(declared, dict) and "elicitation" in declared:
            return True
    return False


def form_answer(run: Any) -> tuple[Any, str]:
    """The client's answer to the desk's form, or (None, why there is none to judge)."""
    trace = run.trace
    if run.scenario.startswith("modern"):
        found = _input_required(trace)
        if found is not None:
            retry = _retry(trace, found)
            if retry is None:
                return None, _("it never retried the tools/call that was answered input_required")
            params = retry[1].get("params") if isinstance(retry[1].get("params"), dict) else {}
            answers = params.get("inputResponses") if isinstance(params.get("inputResponses"), dict) else {}
            key = next(iter(found[1].get("inputRequests") or {}), "")
            return (answers[key], "") if key in answers else (None, _("its retry has no inputResponses.{key}", key=key))
    else:
        asked = _asked(trace, "elicitation/create")
        if asked is not None:
            reply = _reply(trace, asked)
            if reply is None:
                return None, _("no response to elicitation/create")
            return reply.get("result", reply.get("error")), ""
    if not _sent(trace):
        return None, _nothing(run)
    if not _calls(trace):
        return None, _("it never called {tool}, so the server never asked", tool=TOOL)
    if not _declared(run):
        return None, _("the server never asked: the client did not declare the elicitation capability")
    return None, _("the server never asked")


def accept_line(runs: dict, fits: dict) -> Line | None:
    title = _("accepts the form with the user's answer when it fits the requested schema")
    expected = json.dumps({"action": "accept", "content": fits})

    def judge(run: Any) -> Problem | None:
        answer, why = form_answer(run)
        if why:
            return expected, why
        if not isinstance(answer, dict) or answer.get("action") != "accept" or answer.get("content") != fits:
            return expected, quote(json.dumps(answer, ensure_ascii=False), 160)
        return None

    return _line("accept", title, runs, ("legacy", "modern"), judge, spec(L, "client/elicitation"),
                 _section(3, _("the form and its schema")))


def schema_line(runs: dict, fits: dict) -> Line | None:
    title = _("never accepts an answer that does not fit the requested schema: it declines or cancels")
    expected = '{"action": "cancel"} ' + _("or") + ' {"action": "decline"}'

    def judge(run: Any) -> Problem | None:
        answer, why = form_answer(run)
        if why:
            return expected, why
        if not isinstance(answer, dict) or answer.get("action") not in ("decline", "cancel"):
            return expected, _("{answer}, for a form that asks for an integer seats from 1 to 8",
                               answer=quote(json.dumps(answer, ensure_ascii=False), 120))
        return None

    return _line("schema", title, runs, ("legacy-misfit", "modern-misfit"), judge, spec(L, "client/elicitation"),
                 _section(3, _("the form and its schema")))


# --- 2026-07-28 --------------------------------------------------------------------------------------

def discover_line(runs: dict, fits: dict) -> Line | None:
    title = _("opens 2026-07-28 with server/discover, and no initialize")
    expected = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{...}}}'

    def judge(run: Any) -> Problem | None:
        requests = _requests(run.trace)
        if not requests:
            return expected, _nothing(run)
        if any(o.get("method") == "initialize" for _s, o in requests):
            return expected, _("it sent initialize, which 2026-07-28 no longer has")
        if requests[0][1].get("method") != "server/discover":
            return expected, _("its first request was {method}", method=requests[0][1].get("method"))
        return None

    return _line("discover", title, runs, MODERN_RUNS, judge, spec(M, "server/discover"),
                 _section(5, _("2026-07-28: discover and _meta")))


def meta_line(runs: dict, fits: dict) -> Line | None:
    title = _("puts _meta on every request: the protocol version and the client's capabilities")
    expected = '"_meta": {"' + META_PROTOCOL_VERSION + '": "' + M + '", "' + META_CLIENT_CAPABILITIES + '": {...}}'

    def judge(run: Any) -> Problem | None:
        requests = _requests(run.trace)
        if not requests:
            return expected, _nothing(run)
        for _seq, obj in requests:
            params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
            meta = params.get("_meta")
            problem = (_("no _meta") if not isinstance(meta, dict)
                       else _("no {key}", key=META_PROTOCOL_VERSION) if meta.get(META_PROTOCOL_VERSION) != M
                       else _("no {key} object", key=META_CLIENT_CAPABILITIES)
                       if not isinstance(meta.get(META_CLIENT_CAPABILITIES), dict) else "")
            if problem:
                return expected, _("{method}: {problem}", method=obj.get("method"), problem=problem)
        return None

    return _line("meta", title, runs, MODERN_RUNS, judge, spec(M, "basic/index#_meta"),
                 _section(5, _("2026-07-28: discover and _meta")))


def _retry_problem(run: Any, expected: str) -> tuple[Any, Any, Problem | None]:
    """The input_required exchange and the retry, or what is missing instead."""
    found = _input_required(run.trace)
    if found is None:
        _unused, why = form_answer(run)
        return None, None, (expected, why or _("no tools/call was answered input_required"))
    retry = _retry(run.trace, found)
    if retry is None:
        return found, None, (expected, _("it never retried the tools/call that was answered input_required"))
    return found, retry, None


def retry_line(runs: dict, fits: dict) -> Line | None:
    title = _("retries an input_required call with a new id, the same tool and arguments, and inputResponses")
    expected = _("tools/call again with a new id, the same name and arguments, and inputResponses answering "
                 "each key of inputRequests")

    def judge(run: Any) -> Problem | None:
        found, retry, problem = _retry_problem(run, expected)
        if problem:
            return problem
        (_seq, first), result = found
        again = retry[1]
        if again.get("id") == first.get("id"):
            return expected, _("the retry reused id {id}", id=json.dumps(first.get("id")))
        before, after = first.get("params") or {}, again.get("params") or {}
        if (before.get("name"), before.get("arguments")) != (after.get("name"), after.get("arguments")):
            return expected, _("the retry called {got}, not {wanted}",
                               got=quote(json.dumps([after.get("name"), after.get("arguments")]), 80),
                               wanted=quote(json.dumps([before.get("name"), before.get("arguments")]), 80))
        keys, answered = set(result.get("inputRequests") or {}), after.get("inputResponses")
        if not isinstance(answered, dict) or not keys <= set(answered):
            return expected, _("inputResponses {got} for the keys {keys}", got=quote(json.dumps(answered), 80),
                               keys=", ".join(sorted(keys)))
        return None

    return _line("retry", title, runs, ("modern",), judge, spec(M, "basic/patterns/mrtr"),
                 _section(6, _("input required: the retry")))


def request_state_line(runs: dict, fits: dict) -> Line | None:
    title = _("sends requestState back exactly as the server wrote it, byte for byte")
    expected = _('"requestState": the string of the input_required result, unchanged')

    def judge(run: Any) -> Problem | None:
        found, retry, problem = _retry_problem(run, expected)
        if problem:
            return problem
        wanted = found[1].get("requestState")
        params = retry[1].get("params") if isinstance(retry[1].get("params"), dict) else {}
        if wanted is None:
            return None if "requestState" not in params else (
                _("no requestState: the server sent none"), _("the retry carried one"))
        if "requestState" not in params:
            return expected, _("the retry carried no requestState")
        if params["requestState"] != wanted:
            return expected, _("{got} instead of {wanted}", got=quote(json.dumps(params["requestState"]), 60),
                               wanted=quote(json.dumps(wanted), 60))
        return None

    return _line("request-state", title, runs, ("modern",), judge, spec(M, "basic/patterns/mrtr"),
                 _section(6, _("input required: the retry")))


CHECKS: tuple[Callable[[dict, dict], Line | None], ...] = (
    runs_line, pages_line, ping_line, undeclared_line, accept_line, schema_line, discover_line, meta_line,
    retry_line, request_state_line)


def lines(runs: dict, fits: dict) -> list[Line]:
    """Every line of the card, in order, for the eras graded (``fits``: the answer that fits the form)."""
    return [line for check in CHECKS if (line := check(runs, fits)) is not None]
