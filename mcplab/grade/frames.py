"""The graders' schema line: every frame of a graded run against the official schema of its revision.

Theory of operation
-------------------
A run is a trace and the revision its frames belong to (the version a legacy session negotiated, or
2026-07-28 for a modern one). Each stdio frame that is JSON is checked, in both directions, with
:meth:`mcplab.notebook.schema_check.Schemas.check`: a request or notification against the definition whose
``method`` it names, a response against its request's result, an error against the error response.
The schemas come from :func:`mcplab.notebook.schema_check.schemas`, the same lookup the trace viewer's badges
use; where they are not available the line is skipped and says so, and every other line still runs.

Two kinds of frame are left to other lines: a line that is not JSON (the stdout line judges a
server's, and the malformed line is the grader's own, on purpose), and the error reply to that line.
JSON-RPC 2.0 §5 gives such a reply ``"id": null``, since no id could be read; the 2025-11-25 and
2026-07-28 schemas allow no null id but let an error response leave ``id`` out. The reply is checked
without its ``id``, so either spelling passes, and judged by the malformed line.
"""

from __future__ import annotations

import json
from typing import Sequence

from mcplab.notebook import schema_check
from mcplab.grade.report import Line, failed, passed, quote, skipped
from mcplab.i18n import N_, _
from mcplab.trace import Trace
from mcplab.wire.versions import ALL_VERSIONS, at_least

CHECK, TITLE = "schema", N_("every frame matches the official schema of its revision")
NO_SCHEMAS = N_("the official schemas are not available here: fetch them with `mcplab schemas`, or point "
                "$MCPLAB_SPEC_DIR at a folder of <version>/schema.json")
Run = tuple[str, Trace, str]  # (label, trace, revision)


def kind_of(obj: dict) -> str:
    if "method" in obj:
        return "request" if "id" in obj else "notification"
    return "error" if "error" in obj else "response"


def problems(label: str, trace: Trace, version: str, book: schema_check.Schemas) -> list[str]:
    """One sentence per frame of ``trace`` that the schema of ``version`` refuses."""
    asked: dict[tuple[str, object], str] = {}  # (direction, id) → method, to type each response
    found = []
    for frame in trace.frames:
        if frame.channel != "stdio":
            continue
        try:
            obj = json.loads(frame.raw)
        except ValueError:
            continue  # not JSON: judged by the stdout and malformed-line checks
        if not isinstance(obj, dict):
            found.append(_("{label} frame {seq}: not a JSON object: {raw}", label=label, seq=frame.seq,
                           raw=quote(frame.raw, 120)))
            continue
        kind = kind_of(obj)
        if kind == "request" and isinstance(obj.get("method"), str):
            asked[(frame.direction, json.dumps(obj.get("id")))] = obj["method"]
        other = "s2c" if frame.direction == "c2s" else "c2s"
        method = obj.get("method") if kind in ("request", "notification") else asked.get((other, json.dumps(obj.get("id"))))
        if kind == "error" and "id" in obj and obj["id"] is None:
            if version in ALL_VERSIONS and not at_least(version, "2025-11-25"):
                continue  # older schemas require an id that this reply cannot have
            obj = {k: v for k, v in obj.items() if k != "id"}
        check = book.check(version, kind, obj, method)
        if check.status == schema_check.INVALID:
            found.append(_("{label} frame {seq} ({definition}): {detail}: {raw}", label=label, seq=frame.seq,
                           definition=check.definition or kind, detail=check.detail, raw=quote(frame.raw, 120)))
    return found


def schema_line(runs: Sequence[Run], *, where: Sequence[str] = ()) -> Line:
    """The schema line of a report card for these runs."""
    book = schema_check.schemas()
    versions = sorted({version for _, _, version in runs})
    if not book.available():
        return skipped(CHECK, _(TITLE), _(NO_SCHEMAS))
    absent = [v for v in versions if book.root(v) is None]
    if absent:
        return skipped(CHECK, _(TITLE), _("no official schema for {versions} here", versions=", ".join(absent)))
    found = [p for label, trace, version in runs for p in problems(label, trace, version, book)]
    if found:
        more = _(" ({count} more)", count=len(found) - 1) if len(found) > 1 else ""
        return failed(CHECK, _(TITLE), _("every frame valid against the schema of its revision ({versions})",
                                         versions=", ".join(versions)),
                      found[0] + more, *where)
    return passed(CHECK, _(TITLE), ", ".join(versions))
