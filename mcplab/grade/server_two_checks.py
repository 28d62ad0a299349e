"""The part-two server grader (Lab 11): a report card of 7 lines, each judged in both eras and both transports.

Theory of operation
-------------------
:func:`server_two` walks the student's server once per era and transport (server_two_runs.py) and
judges what each run saw. The checks, in the order the card prints them:

    stdio, http   the server opens a session in each era over stdio, and over Streamable HTTP when
                  started with --http (on 127.0.0.1, private to the user who started it: the toolkit's)
    progress      notifications/progress carry the request's progressToken, and progress increases
    cancel        after the cancellation no response comes for that id, and steps_done stands still
    pages         resources/list in pages: more than one, no item twice, 25 items or more, opaque cursors
    bad-cursor    a cursor the server never issued is -32602 Invalid params
    ask           the question is asked (elicitation/create; or input_required with a requestState)
                  and the user's answer is in the result

A line passes when every run passes it; a failing line names each run that failed it and what came.
A run a deadline cut (a loaded machine) makes its lines "not judged in time", never a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from mcplab.grade.report import Line, Report, failed, late, passed, quote, skipped, spec
from mcplab.grade.server_two_runs import ERAS, LONG_STEPS, TRANSPORTS, Run, argv_for, text_of, walk_all
from mcplab.i18n import N_, _
from mcplab.wire.errors import INVALID_PARAMS
from mcplab.wire.versions import LATEST_LEGACY as L, LATEST_MODERN as M

MIN_ITEMS = 25  # the brief's long list: 25 items or more, so that pages of 10 make three pages at least
TRANSPORT_NAMES = {"stdio": N_("stdio"), "http": N_("HTTP")}
ERA_NAMES = {"legacy": N_("legacy"), "modern": N_("modern")}
Judge = Callable[[Run], "str | None"]  # a run → None if it passes, else what it saw


def server_two(target: str | Path | Sequence[str], *, eras: Sequence[str] = ERAS,
               transports: Sequence[str] = TRANSPORTS, timeout: float = 30.0, cwd: str | None = None) -> Report:
    """Grade the part-two server at ``target`` (a ``.py`` file or a command); the report card.

    ``timeout`` bounds each wait for an answer or a notification (sized for a loaded machine: a
    correct server needs well under a second for each).

    >>> print(grade.server_two("build/my_server_two.py"))          # doctest: +SKIP
    Report card · server (part two) build/my_server_two.py
      ✓ opens a session over stdio in each era ...
    """
    for given, known, what in ((eras, ERAS, "eras"), (transports, TRANSPORTS, "transports")):
        if not given or set(given) - set(known):
            raise ValueError(f"expected {what} among {', '.join(known)}, got {', '.join(map(str, given)) or 'none'}")
    runs = walk_all(argv_for(target), eras, transports, timeout, cwd)
    shown = str(target) if isinstance(target, (str, Path)) else " ".join(map(str, target))
    lines = [opens(runs, "stdio", transports), opens(runs, "http", transports), progress(runs), cancel(runs),
             pages(runs), bad_cursor(runs), ask(runs)]
    return Report(_("server (part two) {target}", target=shown), tuple(lines))


def run_name(run: Run) -> str:
    return _("{era} over {transport}", era=_(ERA_NAMES[run.era]), transport=_(TRANSPORT_NAMES[run.transport]))


def _line(check: str, title: str, runs: list[Run], judge: Judge, expected: str, *where: str, step: str) -> Line:
    """Pass if every opened run passes ``judge``; else fail naming each run and what it saw."""
    opened = [run for run in runs if run.opened]
    if not opened:
        return skipped(check, title, _("no session opened (see the first two lines)"))
    problems: dict[str, list[Run]] = {}  # what was seen → the runs that saw it (often all four alike)
    for run in opened:
        if step in run.errors:
            problems.setdefault(quote(run.errors[step], 160), []).append(run)
        elif step not in run.late and step not in run.unjudged and (problem := judge(run)) is not None:
            problems.setdefault(problem, []).append(run)
    if problems:
        got = "; ".join(f"{_runs(seen)}: {problem}" for problem, seen in problems.items())
        return failed(check, title, expected, got, *where)
    if unjudged := [run.unjudged[step] for run in opened if step in run.unjudged]:
        return skipped(check, title, unjudged[0])
    if any(step in run.late for run in opened):
        return late(check, title, _("a wait for the server ran out first (this machine is busy; that says nothing "
                                    "about your server): a longer --timeout gives it more"))
    return passed(check, title, _runs(opened))


def _runs(runs: list[Run]) -> str:
    return ", ".join(run_name(run) for run in runs)


def _missing(run: Run, *tools: str) -> str | None:
    absent = [name for name in tools if name not in run.tools]
    return _("no tool {names} (the brief names it); the tools are: {tools}", names=", ".join(absent),
             tools=", ".join(run.tools) or _("none")) if absent else None


# --- the lines --------------------------------------------------------------------------------------

def opens(runs: list[Run], transport: str, transports: Sequence[str]) -> Line:
    title = (_("opens a session over stdio in each era") if transport == "stdio" else
             _("serves Streamable HTTP on 127.0.0.1 in each era (started with --http)"))
    if transport not in transports:
        return skipped(transport, title, _("--transport {chosen} was asked for", chosen=", ".join(transports)))
    mine = [run for run in runs if run.transport == transport]
    bad: dict[str, list[Run]] = {}
    for run in mine:
        if run.open_error:
            bad.setdefault(quote(run.open_error, 200), []).append(run)
    if bad:
        where = ((spec(L, "basic/transports#stdio"), _("Lab 09 §1")) if transport == "stdio" else
                 (spec(L, "basic/transports#streamable-http"), spec(M, "basic/transports/streamable-http"),
                  _("Lab 11 §6")))
        return failed(transport, title, _("a session in each era: initialize (2025-11-25), and requests with _meta "
                                          "(2026-07-28)"),
                      "; ".join(f"{_runs(seen)}: {error}" for error, seen in bad.items()), *where)
    if any("open" in run.late for run in mine):
        return late(transport, title, _("the server had not started when the wait ran out (this machine is busy): "
                                        "a longer --timeout gives it more"))
    return passed(transport, title, _runs(mine))


def _progress(run: Run) -> str | None:
    if (absent := _missing(run, "crunch")) is not None:
        return absent
    notes = run.progress or []
    if not notes:
        return _("no notifications/progress came while crunch(steps=4) ran with a progressToken")
    tokens = {repr(n.get("progressToken")) for n in notes} - {repr("server-two-progress")}
    if tokens:
        return _("notifications/progress carried the progressToken {tokens}, not the request's "
                 "'server-two-progress'", tokens=", ".join(sorted(tokens)))
    values = [n.get("progress") for n in notes]
    if not all(isinstance(v, (int, float)) for v in values) or any(b <= a for a, b in zip(values, values[1:])):
        return _("progress went {values}: it must increase with each notification", values=values)
    if not isinstance(run.progress_result, dict) or run.progress_result.get("isError"):
        return _("crunch answered {result}", result=quote(str(run.progress_result), 120))
    return None


def progress(runs: list[Run]) -> Line:
    return _line("progress", _("a long tool reports progress with the request's progressToken, increasing"), runs,
                 _progress, _("notifications/progress with the token the request carried, progress going up"),
                 spec(L, "basic/utilities/progress"), _("Lab 11 §2"), step="progress")


def _cancel(run: Run) -> str | None:
    if (absent := _missing(run, "crunch", "steps_done")) is not None:
        return absent
    seen = run.cancel or {}
    if seen.get("response") is not None:
        return _("crunch(steps={steps}) answered before it was cancelled: {result}", steps=LONG_STEPS,
                 result=quote(text_of(seen["response"]), 100))
    if seen.get("late_response"):
        return _("a response for the cancelled request (id {id}) came after the cancellation", id=seen.get("sent"))
    counts = [seen.get(key) for key in ("before", "after", "later")]
    if not all(isinstance(c, int) for c in counts):
        return _("steps_done(\"cancelled\") answered {answers}, not a number of steps", answers=counts)
    if counts[2] != counts[1] or counts[2] >= LONG_STEPS:
        return _("steps_done(\"cancelled\") said {before}, then {after}, then {later} while two short jobs ran: "
                 "the cancelled job kept working", before=counts[0], after=counts[1], later=counts[2])
    return None


def cancel(runs: list[Run]) -> Line:
    return _line("cancel", _("a cancelled request gets no response, and its work stops"), runs, _cancel,
                 _("no response for the cancelled id, and steps_done standing still"),
                 spec(L, "basic/utilities/cancellation"), _("Lab 11 §3"), step="cancel")


def _pages(run: Run) -> str | None:
    pages_seen = run.pages or []
    if not pages_seen:
        return _("the server offers no resources (no resources capability): there is no long list to page")
    items = [uri for page in pages_seen for uri in page]
    if len(pages_seen) < 2:
        return _("resources/list came in one page of {n} items, with no nextCursor", n=len(items))
    twice = sorted({uri for uri in items if items.count(uri) > 1})
    if twice:
        return _("{uris} came on more than one page", uris=", ".join(map(str, twice[:3])))
    if len(items) < MIN_ITEMS:
        return _("{n} items in {pages} pages; the long list has {least} or more", n=len(items),
                 pages=len(pages_seen), least=MIN_ITEMS)
    plain = [c for c in run.cursors if not isinstance(c, str) or not c or c.strip().lstrip("-").isdigit()]
    if plain:
        return _("nextCursor {cursor!r} is not an opaque string (a bare number is a position the client can "
                 "compute)", cursor=plain[0])
    return None


def pages(runs: list[Run]) -> Line:
    return _line("pages", _("a long list comes in pages: {least} items or more, each once, with opaque cursors",
                            least=MIN_ITEMS), runs, _pages,
                 _("resources/list in several pages, each item once, {least} items or more, each nextCursor an "
                   "opaque string", least=MIN_ITEMS), spec(L, "server/utilities/pagination"), _("Lab 11 §4"),
                 step="pages")


def _bad_cursor(run: Run) -> str | None:
    if run.bad_cursor == INVALID_PARAMS:
        return None
    if run.bad_cursor is None:
        return _("the server offers no resources (no resources capability): no list to send a cursor to")
    if isinstance(run.bad_cursor, int):
        return _("error {code}", code=run.bad_cursor)
    listed = run.bad_cursor.get("resources", []) if isinstance(run.bad_cursor, dict) else []
    return _("a page of {n} items", n=len(listed))


def bad_cursor(runs: list[Run]) -> Line:
    return _line("bad-cursor", _("a cursor the server never issued gets -32602"), runs, _bad_cursor,
                 _("resources/list with cursor \"not-a-cursor-of-yours\" answered with error -32602"),
                 spec(L, "server/utilities/pagination"), _("Lab 11 §4"), step="pages")


def _ask(run: Run) -> str | None:
    if (absent := _missing(run, "sign_off")) is not None:
        return absent
    if run.era == "legacy" and not run.asked:
        return _("sign_off sent no elicitation/create request")
    if run.era == "modern":
        first = run.asked[0] if run.asked else {}
        if first.get("resultType") != "input_required":
            return _("sign_off answered a {kind} result, not input_required",
                     kind=first.get("resultType") or "complete")
        requests = first.get("inputRequests") or {}
        if not any(isinstance(r, dict) and r.get("method") == "elicitation/create" for r in requests.values()):
            return _("the input_required result asked no elicitation/create")
        if not isinstance(first.get("requestState"), str):
            return _("the input_required result had no requestState: keep what the retry needs in ctx.state")
    result = run.ask_result if isinstance(run.ask_result, dict) else {}
    if result.get("resultType") == "input_required":
        return _("the retry with the answer got another input_required result")
    if result.get("isError") or run.answer not in text_of(result):
        return _("the user's answer ({answer}) is not in the result: {text}", answer=run.answer,
                 text=quote(text_of(result) or str(result), 100))
    return None


def ask(runs: list[Run]) -> Line:
    return _line("ask", _("asks the user in the middle of a call, and uses the answer"), runs, _ask,
                 _("elicitation/create (2025-11-25) or input_required with a requestState (2026-07-28), then the "
                   "answer in the result"), spec(L, "client/elicitation"), spec(M, "basic/patterns/mrtr"),
                 _("Lab 11 §5"), step="ask")
