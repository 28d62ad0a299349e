"""In the notebook: a trace viewer that checks every frame against the spec, and a diff of two traces.

Theory of operation
-------------------
:func:`show` wraps a trace (or a client) in a :class:`TraceView`. Its HTML is the sequence diagram
of :mod:`mcplab.trace.views` with a badge on every frame: ✓ when the message validates against the
official JSON Schema of its protocol revision, ✗ and the first complaint when it does not, – when
nothing could be checked. Whether the schemas are on this machine must not change a stored
output: the text view never mentions badges, and in the HTML (which nbval compares too) everything
a badge adds sits between ``<!--badge-->`` markers that ``labs/nbval-sanitize.cfg`` drops.

A frame's revision is read from the trace the way a peer would read it: a modern (2026-07-28)
request carries it in ``params._meta["io.modelcontextprotocol/protocolVersion"]``; a legacy
session agreed on it in the ``initialize`` result; a response belongs to its request's revision.
``show(trace, version=...)`` overrides all of that. The definition a message is checked against
comes from the schema itself: the request or notification definition whose ``method`` constant
is the frame's method, the matching ``…Result`` for a response (paired with its request by id),
the error response shape for an error. Draft-07 schemas (up to 2025-06-18) keep definitions under
``#/definitions``, the 2020-12 ones under ``#/$defs``.

The schemas are not part of mcplab: ``mcplab schemas`` downloads them into the user's cache
(``$MCPLAB_SPEC_DIR`` or ``../shared/mcp-spec`` beside the checkout win when present, see
``schemas.py``); without them the viewer says "badges off".

:func:`diff` lines two traces up step by step (direction, kind and method; ids differ anyway)
with :mod:`difflib`, and for each step both traces took lists which JSON members only one side
has, or has with another value: legacy against modern in a few lines. A long diff folds:
``diff(...).folded()`` keeps the steps that differ, counts each run of equal steps in one line, and
leaves the frames out of the HTML (the unfolded view opens each one under its line), so a stored
output stays a few kilobytes.

The badges come from ``mcplab/notebook/schema_check.py``; jsonschema is imported on first use.
"""

from __future__ import annotations

import difflib
import html
import json
from dataclasses import dataclass, replace
from itertools import zip_longest
from typing import Any, Sequence

from mcplab.i18n import _, ngettext
from mcplab.notebook.schema_check import (
    BADGE_LOOK, INVALID, PRE, SPEC_DIR_ENV, Check, _cut, _message_json, check_frames, schemas,
)
from mcplab.trace import Frame
from mcplab.trace import views as trace_views
from mcplab.trace.views import ARROWS, View

__all__ = ["show", "diff", "TraceView", "TraceDiff", "align"]


# --- the viewer -----------------------------------------------------------------------------------

def _frames(trace: Any) -> list[Frame]:
    """A Trace, a Client (its ``.trace``) or a list of frames → the list of frames."""
    trace = getattr(trace, "trace", trace)
    return list(getattr(trace, "frames", trace))


def _line(view: View) -> str:
    """``→ tools/call get_weather (id 3)``: one frame in the text views."""
    if view.kind in ("stderr", "note"):
        return _cut(f"{view.kind}: {view.label}")
    answers = f" ↩ #{view.answers}" if view.answers is not None else ""
    return _cut(f"{ARROWS[view.frame.direction]} {view.label}{answers}")


@dataclass(frozen=True)
class TraceView:
    """What :func:`show` returns: HTML with badges for the eye, plain text for nbval."""
    frames: tuple[Frame, ...]
    checks: dict[int, Check]
    schemas_found: bool
    dropped: int = 0  # earlier frames a bounded trace let go

    @property
    def invalid(self) -> list[tuple[int, str]]:
        """(seq, why) for every frame the official schema rejects."""
        return [(seq, check.detail) for seq, check in self.checks.items() if check.status == INVALID]

    def __repr__(self) -> str:
        lines = [f"{view.frame.seq:>3} {_line(view)}" for view in trace_views.describe(self.frames)]
        marker = [trace_views.dropped_line(self.dropped)] if self.dropped else []
        return "\n".join([trace_views.summary(list(self.frames), self.dropped), *marker, *lines])

    def _repr_html_(self) -> str:
        # The first line counts the frames by kind, as the text view's first line does: hints point at it.
        count = trace_views.summary(list(self.frames), self.dropped)
        return f'<div style="font:12px sans-serif;color:#333">{html.escape(count)}</div>' + self.diagram_html()

    def diagram_html(self) -> str:
        """The badges' note and the sequence diagram, without the count (the playground shows its own)."""
        badges = {seq: check.badge() for seq, check in self.checks.items()}
        return _note(self.checks, self.schemas_found) + trace_views.render_html(list(self.frames), badges,
                                                                                 dropped=self.dropped)


def _note(checks: dict[int, Check], found: bool) -> str:
    """The line above the diagram: what the badges were checked against, or that they are off.

    Like the badges, it sits between ``<!--badge-->`` markers: a stored notebook must compare equal
    on machines with and without the schemas (nbval also compares HTML, after sanitizing).
    """
    return f"{trace_views.BADGE_START}{_note_text(checks, found)}{trace_views.BADGE_END}"


def _note_text(checks: dict[int, Check], found: bool) -> str:
    style = "font:11px sans-serif;color:#666;margin:2px 0 4px"
    if not found:
        text = html.escape(_("schemas not available: badges off (run {command} once online, or put the official "
                             "<version>/schema.json files in ${env})"))  # escaped first: the fields are markup
        return f'<div style="{style}">{text.format(command="<code>mcplab schemas</code>", env=SPEC_DIR_ENV)}</div>'
    used = sorted({c.version for c in checks.values() if c.version})
    count = {status: sum(c.status == status for c in checks.values()) for status in BADGE_LOOK}
    against = (_("the official schema of {versions}", versions=", ".join(used)) if used
               else _("the official schemas"))
    tally = ", ".join(f"{n} {BADGE_LOOK[status][0]}" for status, n in count.items() if n)
    text = _("each frame checked against {against}: {tally} (open a frame to read why)", against=against,
             tally=tally or _("nothing to check"))
    return f'<div style="{style}">{html.escape(text)}</div>'


def show(trace: Any, version: str | None = None) -> TraceView:
    """The trace as a sequence diagram with a schema badge on each frame.

    >>> show(client.trace)                       # doctest: +SKIP
    9 frames: 4 requests, 4 responses, 1 notification
      1 → initialize (id 1)
      ...
    """
    frames = _frames(trace)
    book = schemas()
    found = book.available()
    return TraceView(tuple(frames), check_frames(frames, version, book) if found else {}, found,
                     getattr(getattr(trace, "trace", trace), "dropped", 0))


# --- two traces side by side ----------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One row of a diff: ``same`` ("="), ``differs`` ("~"), ``replaced`` ("≠"), ``a`` or ``b`` only."""
    kind: str
    a: View | None
    b: View | None
    changes: tuple[str, ...] = ()


MARKS = {"same": "=", "differs": "~", "replaced": "≠", "a": "◀", "b": "▶"}
STEP_TINTS = {"same": "", "differs": "#e3f2fd", "replaced": "#f3e5f5", "a": "#fff8e1", "b": "#fff8e1"}
MAX_CHANGES = 8


def _step_key(view: View, methods: dict[int, str | None]) -> tuple:
    if view.kind in ("stderr", "note"):
        return (view.kind, view.label)
    method = methods.get(view.answers) if view.answers is not None else methods.get(view.frame.seq)
    return (view.frame.direction, view.kind, method)


def _changes(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values part: ``- path`` only in a, ``+ path`` only in b, ``~ path: x → y``."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in [*a, *(k for k in b if k not in a)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in b:
                found.append(f"- {where}")
            elif key not in a:
                found.append(f"+ {where}")
            else:
                found += _changes(a[key], b[key], where)
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [c for i, (x, y) in enumerate(zip(a, b)) for c in _changes(x, y, f"{path}[{i}]")]
    if a == b:
        return []
    dump = lambda v: _cut(json.dumps(v, ensure_ascii=False), 40)  # noqa: E731
    return [f"~ {path or _('the message')}: {dump(a)} → {dump(b)}"]


def _compare(a: View, b: View) -> list[str]:
    left, right = _message_json(a.frame), _message_json(b.frame)
    if isinstance(left, dict) and isinstance(right, dict):
        left, right = ({k: v for k, v in m.items() if k != "id"} for m in (left, right))  # ids always differ
    return _changes(left, right)


def align(frames_a: Sequence[Frame], frames_b: Sequence[Frame]) -> list[Step]:
    """The two traces as aligned steps (difflib over direction, kind and method)."""
    views_a, views_b = trace_views.describe(frames_a), trace_views.describe(frames_b)
    methods = lambda views: {v.frame.seq: getattr(v.frame.message, "method", None) for v in views}  # noqa: E731
    keys_a = [_step_key(v, methods(views_a)) for v in views_a]
    keys_b = [_step_key(v, methods(views_b)) for v in views_b]
    steps: list[Step] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes():
        if op == "equal":
            for a, b in zip(views_a[i1:i2], views_b[j1:j2]):
                changes = _compare(a, b)
                steps.append(Step("differs" if changes else "same", a, b, tuple(changes)))
            continue
        # Where the traces part, messages going the same way share a row (legacy's initialize
        # beside modern's server/discover); anything else stands on its own side.
        for a, b in zip_longest(views_a[i1:i2], views_b[j1:j2]):
            if (a and b and a.frame.direction == b.frame.direction
                    and not {"stderr", "note"} & {a.kind, b.kind}):
                steps.append(Step("replaced", a, b))
            else:
                steps += ([Step("a", a, None)] if a else []) + ([Step("b", None, b)] if b else [])
    return steps


@dataclass(frozen=True)
class TraceDiff:
    """What :func:`diff` returns: aligned steps, as text and as a two-column HTML table."""
    labels: tuple[str, str]
    steps: tuple[Step, ...]
    sizes: tuple[int, int]
    checks: tuple[dict[int, Check], dict[int, Check]]
    fold: bool = False

    def folded(self) -> TraceDiff:
        """The same diff, short: the steps that differ, one count line per run of equal steps, no frames."""
        return replace(self, fold=True)

    def _rows(self) -> list[Step | int]:
        """The steps to show: every step, or (folded) a count in place of each run of equal steps."""
        if not self.fold:
            return list(self.steps)
        rows: list[Step | int] = []
        for step in self.steps:
            if step.kind != "same":
                rows.append(step)
            elif rows and isinstance(rows[-1], int):
                rows[-1] += 1
            else:
                rows.append(1)
        return rows

    def _fold_note(self) -> str:
        return _("folded: {same} equal steps counted, not listed, and no frame shown; the same diff without "
                 ".folded() opens each frame under its line", same=self.counts()["same"])

    def counts(self) -> dict[str, int]:
        return {kind: sum(step.kind == kind for step in self.steps) for kind in MARKS}

    def summary(self) -> str:
        n, (a, b) = self.counts(), self.labels
        both = n["same"] + n["differs"]
        return _("{a}: {size_a} frames, {b}: {size_b} frames; {both} steps in both ({differs} differ), {replaced} "
                 "replaced, {only_a} only in {a}, {only_b} only in {b}", a=a, b=b, size_a=self.sizes[0],
                 size_b=self.sizes[1], both=both, differs=n['differs'], replaced=n['replaced'], only_a=n['a'],
                 only_b=n['b'])

    def __repr__(self) -> str:
        width = 48
        lines = [self.summary(), f"    {self.labels[0]:<{width}} │ {self.labels[1]}"]
        for step in self._rows():
            if isinstance(step, int):
                lines.append(f"  {MARKS['same']} " + ngettext("{n} step the same on both sides",
                                                             "{n} steps the same on both sides", step))
                continue
            left = _cut(_line(step.a), width) if step.a else ""
            right = _cut(_line(step.b), width) if step.b else ""
            lines.append(f"  {MARKS[step.kind]} {left:<{width}} │ {right}".rstrip())
            lines += [f"      {c}" for c in _shown_changes(step.changes)]
        if self.fold:
            lines.append(self._fold_note())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        # Inline styles against the page's table rules, as in mcplab.trace.views: fixed columns, a narrow
        # mark, the two traces halves of the rest, every cell left-aligned, no striped rows.
        cell = "padding:2px 6px;vertical-align:top;border-bottom:1px solid #eee;text-align:left"
        widths = ("width:2em", "", "")
        head = "".join(f'<th style="{cell};color:#555;{width}">{html.escape(t)}</th>'
                       for t, width in zip(("", *self.labels), widths))
        rows = []
        for step in self._rows():
            if isinstance(step, int):
                count = html.escape(ngettext("{n} step the same on both sides", "{n} steps the same on both sides",
                                             step))
                rows.append(f'<tr style="background:none"><td style="{cell};color:#555">{MARKS["same"]}</td>'
                            f'<td style="{cell};color:#555" colspan="2">{count}</td></tr>')
                continue
            tint = f"background:{STEP_TINTS[step.kind] or 'none'}"
            sides = [_diff_cell(view, checks, frame=not self.fold) for view, checks in zip((step.a, step.b), self.checks)]
            changes = "".join(f"<div>{html.escape(c)}</div>" for c in _shown_changes(step.changes))
            extra = (f'<div style="font:11px monospace;color:#1565c0;margin-top:2px;overflow-wrap:anywhere">'
                     f'{changes}</div>' if changes else "")
            rows.append(f'<tr style="{tint}"><td style="{cell};color:#555">{MARKS[step.kind]}</td>'
                        f'<td style="{cell}">{sides[0]}</td><td style="{cell}">{sides[1]}{extra}</td></tr>')
        legend = ('<div style="font:11px sans-serif;color:#666;margin:2px 0 4px">'
                  + html.escape(_("= same · ~ same step, different members (listed) · ≠ different messages · "
                                  "◀ ▶ only on one side")) + '</div>')
        note = (f'<div style="font:11px sans-serif;color:#666;margin:4px 0">{html.escape(self._fold_note())}</div>'
                if self.fold else "")
        return (f'{legend}<div style="font:12px sans-serif;color:#333">{html.escape(self.summary())}</div>'
                f'<table class="mcplab-trace-diff" style="border-collapse:collapse;table-layout:fixed;width:100%;'
                f'margin:0;font:12px/1.4 sans-serif"><tr style="background:none">{head}</tr>{"".join(rows)}</table>'
                f'{note}')


def _shown_changes(changes: tuple[str, ...]) -> list[str]:
    more = len(changes) - MAX_CHANGES
    return list(changes[:MAX_CHANGES]) + ([_("… and {count} more", count=more)] if more > 0 else [])


def _diff_cell(view: View | None, checks: dict[int, Check], frame: bool = True) -> str:
    if view is None:
        return ""
    check = checks.get(view.frame.seq)
    badge = trace_views.badge_html(check.badge()) if check else ""
    if not frame:
        return f"{html.escape(_line(view))}{badge}"
    return (f'<details><summary style="cursor:pointer">{html.escape(_line(view))}{badge}</summary>'
            f'<pre style="{PRE}">{html.escape(trace_views.pretty(view.frame))}</pre></details>')


def diff(trace_a: Any, trace_b: Any, labels: tuple[str, str] = ("legacy", "modern"),
         versions: tuple[str | None, str | None] = (None, None)) -> TraceDiff:
    """Two traces side by side, step by step, with what changed in each shared step.

    >>> diff(legacy_client.trace, modern_client.trace)      # doctest: +SKIP
    legacy: 7 frames, modern: 5 frames; 4 steps in both (4 differ), 0 replaced, 3 only in legacy, ...
    """
    frames_a, frames_b = _frames(trace_a), _frames(trace_b)
    book = schemas()
    checks = ((check_frames(frames_a, versions[0], book), check_frames(frames_b, versions[1], book))
              if book.available() else ({}, {}))
    return TraceDiff(tuple(labels), tuple(align(frames_a, frames_b)), (len(frames_a), len(frames_b)), checks)


