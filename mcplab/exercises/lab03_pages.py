"""Checks for lab 03's two client duties: page a list by hand, and judge structured results.

Theory of operation
-------------------
``check_paged_tools`` reads a real trace: the student started the file server with ``--page-size 1``
and asked ``tools/list`` page by page with ``client.request``. It walks the ``tools/list`` exchanges
in order and holds them to the rules of server/utilities, "Pagination": the first request carries no
cursor, each next one carries the previous result's ``nextCursor`` unchanged (a cursor is opaque: the
client must not parse or alter it), nothing is refused, the list ends at the first result without
``nextCursor``, and nothing is asked after it. Each rule that fails says so in a sentence of its own.

``check_structured_verdicts`` is a table: for each result of ``STRUCTURED_RESULTS``, what a client that
validates does with it against ``STRUCTURED_SCHEMA`` (server/tools, "Output Schema": clients SHOULD
validate). The expected verdicts are what :func:`mcplab.client.structured.check` concludes; a test
keeps the two the same.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, each_case, failed, passed
from mcplab.i18n import N_, Texts, _, ngettext
from mcplab.trace import Trace
from mcplab.wire import jsonrpc

__all__ = ["check_paged_tools", "check_structured_verdicts", "STRUCTURED_SCHEMA", "STRUCTURED_RESULTS",
           "STRUCTURED_VERDICTS"]

PAGES_AT_LEAST = 3  # the file server has four read-only tools: one a page gives four pages

# --- 6. page by hand ------------------------------------------------------------------------------


def _exchanges(trace: Trace) -> list[tuple[jsonrpc.Request, Any]]:
    """Each tools/list request the client sent, with the answer that carried its id (None if none came)."""
    answers: dict[Any, Any] = {}
    requests: list[jsonrpc.Request] = []
    for frame in trace.frames:
        message = frame.message
        if frame.direction == "c2s" and isinstance(message, jsonrpc.Request) and message.method == "tools/list":
            requests.append(message)
        elif frame.direction == "s2c" and isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            answers.setdefault(message.id, message)
    return [(request, answers.get(request.id)) for request in requests]


@check(N_("the trace of a connection (client.trace)"), Trace)
def check_paged_tools(trace: Any) -> Feedback:
    """The trace of tools/list paged by hand on the file server started with --page-size 1."""
    hint = _('start with params {}, then send params {"cursor": ...} with the nextCursor of the result before, '
             'exactly as it came, and stop at the first result that has no nextCursor')
    exchanges = _exchanges(trace)
    if not exchanges:
        return failed(_("no tools/list request in this trace: page the tool list, not another list"), hint)
    for number, (request, answer) in enumerate(exchanges, 1):
        if answer is None:
            return failed(_("tools/list request {number} (id {id}) has no answer in the trace: pass the trace "
                            "after the last page came", number=number, id=request.id), hint)
        if isinstance(answer, jsonrpc.ErrorResponse):
            return failed(_("the server refused tools/list request {number} with {code} ({message}): a cursor "
                            "passed on exactly as it came is never refused", number=number, code=answer.code,
                            message=answer.message), hint)
    params = [request.params or {} for request, _answer in exchanges]
    if "cursor" in params[0]:
        return failed(_("the first request already carries a cursor ({cursor!r}): the first page is asked "
                        "for without one", cursor=params[0]["cursor"]), hint)
    for number, ((_request, before), asked) in enumerate(zip(exchanges, params[1:]), 2):
        given = before.result.get("nextCursor")
        if given is None:
            return failed(_("request {number} was sent after a result without nextCursor: that result was the "
                            "last page, and the list was complete", number=number), hint)
        if asked.get("cursor") != given:
            return failed(_("request {number} sent cursor {sent!r}, but the result before it gave nextCursor "
                            "{given!r}: a cursor is opaque, passed on unchanged", number=number,
                            sent=asked.get("cursor"), given=given), hint)
    last = exchanges[-1][1].result
    if last.get("nextCursor") is not None:
        return failed(_("the last result in the trace still has nextCursor {given!r}: the list goes on, so ask "
                        "for the next page", given=last["nextCursor"]), hint)
    if len(exchanges) < PAGES_AT_LEAST:
        return failed(_too_few(len(exchanges)), _("start the file server with --page-size 1, so that each tool "
                                                   "comes on a page of its own"))
    names = [tool.get("name") for _request, answer in exchanges for tool in answer.result.get("tools", [])]
    return passed(_("{pages} pages, {count} tools ({names}): each cursor passed on unchanged, and the list ended "
                    "where nextCursor was absent", pages=len(exchanges), count=len(names), names=", ".join(names)))


def _too_few(pages: int) -> str:
    return ngettext("the list came in {n} page: with one tool a page the file server needs more, and the "
                    "cursors are what this exercise is about",
                    "the list came in {n} pages: with one tool a page the file server needs more, and the "
                    "cursors are what this exercise is about", pages)


# --- 7. what a validating client does with structured output -------------------------------------

STRUCTURED_SCHEMA = {  # a tool's outputSchema, as tools/list gives it
    "type": "object",
    "properties": {"city": {"type": "string"}, "high_c": {"type": "integer"}},
    "required": ["city", "high_c"],
}

_TEXT = [{"type": "text", "text": '{"city": "Tokyo", "high_c": 21}'}]
STRUCTURED_RESULTS = {  # tools/call results of that tool, as they came
    "a": {"content": _TEXT, "structuredContent": {"city": "Tokyo", "high_c": 21}},
    "b": {"content": _TEXT, "structuredContent": {"city": "Tokyo", "high_c": "21"}},
    "c": {"content": _TEXT},
    "d": {"content": [{"type": "text", "text": "Unknown city 'Atlantis'"}], "isError": True},
    "e": {"content": _TEXT, "structuredContent": {"city": "Tokyo", "high_c": 21, "humidity": 40}},
    "f": {"content": _TEXT, "structuredContent": {"city": "Tokyo"}},
}
STRUCTURED_VERDICTS = ("use", "reject", "not checked")
_VERDICT = {"a": "use", "b": "reject", "c": "reject", "d": "not checked", "e": "use", "f": "reject"}
_WHY_VERDICT = Texts({
    "a": "every required property is there, with the type the schema gives",
    "b": "high_c is a string where the schema says integer: the server broke its MUST",
    "c": "the tool declares an outputSchema, so a result without structuredContent breaks the server's MUST",
    "d": "isError: true reports a failure for the model to read; there is no structured output to check",
    "e": "the schema does not forbid other properties (no additionalProperties: false), so an extra one conforms",
    "f": "high_c is required and missing",
})


@check(N_('a dict of result → "use", "reject" or "not checked"'), dict)
def check_structured_verdicts(answer: Any) -> Feedback:
    """For each of STRUCTURED_RESULTS: what a client that validates against STRUCTURED_SCHEMA does."""
    hint = _("validate structuredContent against the schema as JSON Schema does (required properties, types; "
             "other properties are allowed unless the schema forbids them); an outputSchema promises "
             "structuredContent in every result that is not an error")
    if (wrong := each_case(answer, _VERDICT, STRUCTURED_VERDICTS, _WHY_VERDICT, hint)) is not None:
        return wrong
    return passed(_("conforming objects are used, broken promises rejected, error results read as errors"))
