"""In the notebook: a trace viewer that checks every frame against the spec, a diff of two traces,
and the playground, an Inspector inside the notebook.

Theory of operation
-------------------
:func:`show` wraps a trace (or a client) in a :class:`TraceView`. Its HTML is the sequence diagram
of :mod:`mcplab.trace_views` with a badge on every frame: ✓ when the message validates against the
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

The schemas are not part of mcplab. They are read from ``$MCPLAB_SPEC_DIR/<version>/schema.json``,
or from ``../shared/mcp-spec`` beside the checkout; without them the viewer says "badges off".

:func:`diff` lines two traces up step by step (direction, kind and method; ids differ anyway)
with :mod:`difflib`, and for each step both traces took lists which JSON members only one side
has, or has with another value: legacy against modern in a few lines.

:func:`playground` is covered in its own section below. jsonschema and ipywidgets are imported
on first use, so ``import mcplab.notebook`` stays fast.
"""

from __future__ import annotations

import asyncio
import difflib
import html
import json
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from pathlib import Path
from typing import Any, Awaitable, Callable, Literal, Sequence
from urllib.parse import quote

from mcplab import jsonrpc, trace_views
from mcplab.errors import JSONRPCError, MCPLabError
from mcplab.trace import Frame
from mcplab.trace_views import ARROWS, Badge, View
from mcplab.versions import HEADER_PROTOCOL_VERSION, META_PROTOCOL_VERSION

__all__ = ["show", "diff", "playground", "TraceView", "TraceDiff", "Playground", "Check", "Schemas",
           "schemas", "spec_dir", "check_frames", "align", "form_for", "arguments_from", "SPEC_DIR_ENV"]

SPEC_DIR_ENV = "MCPLAB_SPEC_DIR"
REPO = Path(__file__).resolve().parent.parent
VALID, INVALID, UNCHECKED = "valid", "invalid", "unchecked"
BADGE_LOOK = {VALID: ("✓", "#2e7d32"), INVALID: ("✗", trace_views.ERROR_COLOUR), UNCHECKED: ("–", "#9e9e9e")}
RESULT = "result: "  # marks a definition that applies to a response's result member
UNIONS = {"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"}  # not one method
LABEL_WIDTH = 100  # characters of a frame's label in the text views
PRE = trace_views._PRE  # the look of an opened frame, for results and diff cells too


def spec_dir() -> Path:
    """Where the official schemas are looked for: ``$MCPLAB_SPEC_DIR`` or ``<checkout>/../shared/mcp-spec``."""
    return Path(os.environ.get(SPEC_DIR_ENV) or REPO.parent / "shared" / "mcp-spec")


# --- checking one message against the official schema ---------------------------------------------

@dataclass(frozen=True)
class Check:
    """One frame's badge: ``status`` is valid, invalid or unchecked; ``detail`` says why."""
    status: str
    version: str | None = None
    definition: str | None = None   # e.g. "CallToolRequest"
    detail: str = ""

    def badge(self) -> Badge:
        symbol, colour = BADGE_LOOK[self.status]
        head = f"schema {self.version}, {self.definition}" if self.definition else "schema"
        return Badge(f"{symbol} {self.version or 'version?'}", colour, f"{head}: {self.detail or self.status}")


class Schemas:
    """The official schemas in one folder (``<version>/schema.json``), each parsed on first use."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._roots: dict[str, dict | None] = {}
        self._methods: dict[str, dict[str, str]] = {}  # version → method → its definition's name
        self._validators: dict[tuple[str, tuple[str, ...]], Any] = {}

    def available(self) -> bool:
        return self.folder.is_dir() and any(self.folder.glob("*/schema.json"))

    def root(self, version: str) -> dict | None:
        if version not in self._roots:
            path = self.folder / version / "schema.json"
            root = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
            self._roots[version] = root
            self._methods[version] = {
                d["properties"]["method"]["const"]: name for name, d in _defs(root or {}).items()
                if name.endswith(("Request", "Notification")) and name not in UNIONS
                and "const" in d.get("properties", {}).get("method", {})}
        return self._roots[version]

    def check(self, version: str | None, kind: str, message: Any, method: str | None) -> Check:
        """Validate one decoded JSON message; ``method`` is the request's, for a response."""
        if version is None:
            return Check(UNCHECKED, None, None, "the protocol version is unknown; pass show(trace, version=...)")
        root = self.root(version)
        if root is None:
            return Check(UNCHECKED, version, None, f"no official schema for {version} here")
        names = self._definitions(root, self._methods[version], kind, method)
        if isinstance(names, str):
            return Check(INVALID, version, None, names)
        error = _jsonschema().exceptions.best_match(self._validator(version, root, names).iter_errors(message))
        shown = names[-1].removeprefix(RESULT)
        if error is None:
            return Check(VALID, version, shown, "valid")
        where = "/".join(map(str, error.absolute_path)) or "the message"
        return Check(INVALID, version, shown, f"{_cut(error.message, 200)} (at {where})")

    @staticmethod
    def _definitions(root: dict, methods: dict[str, str], kind: str, method: str | None) -> list[str] | str:
        """The definitions a message must satisfy, or why it matches none."""
        defs = _defs(root)
        first = lambda *names: next(n for n in names if n in defs)  # noqa: E731 - names differ per revision
        if kind == "error":
            return [first("JSONRPCErrorResponse", "JSONRPCError")]
        if kind in ("request", "notification"):
            if method not in methods or not methods[method].endswith(kind.title()):
                return f"this revision defines no {kind} {method!r}"
            return ["JSONRPCRequest" if kind == "request" else "JSONRPCNotification", methods[method]]
        envelope = first("JSONRPCResultResponse", "JSONRPCResponse")
        request = methods.get(method)
        if request is None:  # its request is not in the trace, or not in this revision
            return [envelope]
        stem = request[: -len("Request")]
        if stem + "ResultResponse" in defs:  # 2026-07-28 spells out each response
            return [stem + "ResultResponse"]
        return [envelope, RESULT + (stem + "Result" if stem + "Result" in defs else "EmptyResult")]

    def _validator(self, version: str, root: dict, names: list[str]) -> Any:
        key = (version, tuple(names))
        if key not in self._validators:
            where = "definitions" if "definitions" in root else "$defs"
            refs = [{"properties": {"result": {"$ref": f"#/{where}/{name.removeprefix(RESULT)}"}}}
                    if name.startswith(RESULT) else {"$ref": f"#/{where}/{name}"} for name in names]
            schema = {"$schema": root["$schema"], where: root[where], "allOf": refs}
            self._validators[key] = _jsonschema().validators.validator_for(root)(schema)
        return self._validators[key]


def schemas(folder: str | Path | None = None) -> Schemas:
    """The :class:`Schemas` of ``folder`` (default :func:`spec_dir`), shared by every view."""
    return _schemas_at(str(Path(folder or spec_dir()).resolve()))


@lru_cache(maxsize=None)  # parsed once per kernel: each file is a few hundred kB, and labs show many traces
def _schemas_at(folder: str) -> Schemas:
    return Schemas(folder)


def _jsonschema() -> Any:
    """jsonschema, imported on first use, without its IRI format checker.

    jsonschema loads the optional ``rfc3987_syntax`` package (Jupyter installs it) as it is
    imported, and that package builds an Earley parser on import: about 2 s here. Badges never
    check formats, so while jsonschema loads, that import is made to fail (None in sys.modules
    means "not installed") and jsonschema simply leaves the ``iri`` format out.
    """
    if "jsonschema.validators" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
        try:
            import jsonschema.validators  # noqa: F401
        finally:
            del sys.modules["rfc3987_syntax"]
    import jsonschema.exceptions
    import jsonschema.validators

    return jsonschema


def _defs(root: dict) -> dict:
    return root.get("definitions") or root.get("$defs") or {}


def _message_json(frame: Frame) -> Any:
    """What crossed the wire, as JSON: the raw text, or (an SSE body) the decoded message."""
    try:
        return json.loads(frame.raw)
    except ValueError:
        message = frame.message
        return jsonrpc.to_dict(message) if message is not None and not isinstance(message, JSONRPCError) else None


def _versions(views: list[View], version: str | None) -> dict[int, str | None]:
    """seq → the revision each frame belongs to (see the module docstring)."""
    if version is not None:
        return {view.frame.seq: version for view in views}
    by_seq = {view.frame.seq: view for view in views}
    session = None  # the legacy session's revision: what initialize agreed on, else what it asked
    for view in views:
        message = view.frame.message
        if isinstance(message, jsonrpc.Request) and message.method == "initialize" and session is None:
            session = (message.params or {}).get("protocolVersion")
        if isinstance(message, jsonrpc.Response) and view.answers is not None:
            request = by_seq[view.answers].frame.message
            if getattr(request, "method", None) == "initialize" and isinstance(message.result, dict):
                session = message.result.get("protocolVersion", session)
    found: dict[int, str | None] = {}
    for view in views:
        message, headers = view.frame.message, (view.frame.http or {}).get("headers") or {}
        params = getattr(message, "params", None)
        meta = params.get("_meta") if isinstance(params, dict) else None
        header = {k.lower(): v for k, v in headers.items()}.get(HEADER_PROTOCOL_VERSION.lower())
        if isinstance(meta, dict) and isinstance(meta.get(META_PROTOCOL_VERSION), str):
            found[view.frame.seq] = meta[META_PROTOCOL_VERSION]
        elif view.answers is not None:
            found[view.frame.seq] = found.get(view.answers)
        else:
            found[view.frame.seq] = header or session
    return found


def check_frames(frames: Sequence[Frame], version: str | None = None,
                 book: Schemas | None = None) -> dict[int, Check]:
    """seq → :class:`Check` for every frame that carries a JSON-RPC message (stderr has none)."""
    book = book or schemas()
    views = trace_views.describe(frames)
    versions = _versions(views, version)
    methods = {view.frame.seq: getattr(view.frame.message, "method", None) for view in views}
    checks = {}
    for view in views:
        seq = view.frame.seq
        if view.kind in ("stderr", "note") or (view.kind == "raw" and not view.frame.raw.strip()):
            continue
        if view.kind in ("refused", "raw", "batch"):
            checks[seq] = Check(INVALID if view.kind != "batch" else UNCHECKED, versions[seq], None,
                                "not a single JSON-RPC message" if view.kind != "batch" else "a batch")
            continue
        method = methods.get(view.answers) if view.answers is not None else methods[seq]
        checks[seq] = book.check(versions[seq], view.kind, _message_json(view.frame), method)
    return checks


# --- the viewer -----------------------------------------------------------------------------------

def _frames(trace: Any) -> list[Frame]:
    """A Trace, a Client (its ``.trace``) or a list of frames → the list of frames."""
    trace = getattr(trace, "trace", trace)
    return list(getattr(trace, "frames", trace))


def _cut(text: str, width: int = LABEL_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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

    @property
    def invalid(self) -> list[tuple[int, str]]:
        """(seq, why) for every frame the official schema rejects."""
        return [(seq, check.detail) for seq, check in self.checks.items() if check.status == INVALID]

    def __repr__(self) -> str:
        lines = [f"{view.frame.seq:>3} {_line(view)}" for view in trace_views.describe(self.frames)]
        return "\n".join([trace_views.summary(list(self.frames)), *lines])

    def _repr_html_(self) -> str:
        badges = {seq: check.badge() for seq, check in self.checks.items()}
        return _note(self.checks, self.schemas_found) + trace_views.render_html(list(self.frames), badges)


def _note(checks: dict[int, Check], found: bool) -> str:
    """The line above the diagram: what the badges were checked against, or that they are off.

    Like the badges, it sits between ``<!--badge-->`` markers: a stored notebook must compare equal
    on machines with and without the schemas (nbval also compares HTML, after sanitizing).
    """
    return f"{trace_views.BADGE_START}{_note_text(checks, found)}{trace_views.BADGE_END}"


def _note_text(checks: dict[int, Check], found: bool) -> str:
    style = "font:11px sans-serif;color:#666;margin:2px 0 4px"
    if not found:
        return (f'<div style="{style}">schemas not available: badges off (put the official '
                f'&lt;version&gt;/schema.json files in ${SPEC_DIR_ENV})</div>')
    used = sorted({c.version for c in checks.values() if c.version})
    count = {status: sum(c.status == status for c in checks.values()) for status in BADGE_LOOK}
    against = f"the official schema of {', '.join(used)}" if used else "the official schemas"
    tally = ", ".join(f"{n} {BADGE_LOOK[status][0]}" for status, n in count.items() if n)
    return (f'<div style="{style}">each frame checked against {html.escape(against)}: '
            f'{tally or "nothing to check"} (open a frame to read why)</div>')


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
    return TraceView(tuple(frames), check_frames(frames, version, book) if found else {}, found)


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
    return [f"~ {path or 'the message'}: {dump(a)} → {dump(b)}"]


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

    def counts(self) -> dict[str, int]:
        return {kind: sum(step.kind == kind for step in self.steps) for kind in MARKS}

    def summary(self) -> str:
        n, (a, b) = self.counts(), self.labels
        both = n["same"] + n["differs"]
        return (f"{a}: {self.sizes[0]} frames, {b}: {self.sizes[1]} frames; {both} steps in both "
                f"({n['differs']} differ), {n['replaced']} replaced, {n['a']} only in {a}, {n['b']} only in {b}")

    def __repr__(self) -> str:
        width = 48
        lines = [self.summary(), f"    {self.labels[0]:<{width}} │ {self.labels[1]}"]
        for step in self.steps:
            left = _cut(_line(step.a), width) if step.a else ""
            right = _cut(_line(step.b), width) if step.b else ""
            lines.append(f"  {MARKS[step.kind]} {left:<{width}} │ {right}".rstrip())
            lines += [f"      {c}" for c in _shown_changes(step.changes)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cell = "padding:2px 6px;vertical-align:top;border-bottom:1px solid #eee"
        head = "".join(f'<th style="{cell};text-align:left;color:#555">{html.escape(t)}</th>'
                       for t in ("", *self.labels))
        rows = []
        for step in self.steps:
            tint = f";background:{STEP_TINTS[step.kind]}" if STEP_TINTS[step.kind] else ""
            sides = [_diff_cell(view, checks) for view, checks in zip((step.a, step.b), self.checks)]
            changes = "".join(f"<div>{html.escape(c)}</div>" for c in _shown_changes(step.changes))
            extra = (f'<div style="font:11px monospace;color:#1565c0;margin-top:2px">{changes}</div>'
                     if changes else "")
            rows.append(f'<tr style="{tint[1:]}"><td style="{cell};color:#555">{MARKS[step.kind]}</td>'
                        f'<td style="{cell}">{sides[0]}</td><td style="{cell}">{sides[1]}{extra}</td></tr>')
        legend = ('<div style="font:11px sans-serif;color:#666;margin:2px 0 4px">= same · ~ same step, '
                  'different members (listed) · ≠ different messages · ◀ ▶ only on one side</div>')
        return (f'{legend}<div style="font:12px sans-serif;color:#333">{html.escape(self.summary())}</div>'
                f'<table style="border-collapse:collapse;width:100%;font:12px/1.4 sans-serif">'
                f'<tr>{head}</tr>{"".join(rows)}</table>')


def _shown_changes(changes: tuple[str, ...]) -> list[str]:
    more = len(changes) - MAX_CHANGES
    return list(changes[:MAX_CHANGES]) + ([f"… and {more} more"] if more > 0 else [])


def _diff_cell(view: View | None, checks: dict[int, Check]) -> str:
    if view is None:
        return ""
    check = checks.get(view.frame.seq)
    badge = trace_views.badge_html(check.badge()) if check else ""
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


# --- the playground -------------------------------------------------------------------------------
#
# An ipywidgets panel over one Client: pick a server, transport and era, connect, see the tools,
# resources and prompts, fill a form generated from the selected item's schema, send, and watch
# the result and the trace. Every button has a method twin (connect, select_tool, send, close) so
# a notebook cell or a test drives exactly what a click drives.

BUNDLED = ("weather", "files")
KINDS = ("tools", "resources", "prompts")
TEMPLATE_VARIABLE = re.compile(r"\{(\+?)([A-Za-z0-9_]+)\}")  # RFC 6570 level 1 and {+reserved}


def form_for(schema: dict) -> dict[str, Any]:
    """One input widget per property of an object schema, required ones first (ipywidgets).

    Strings, numbers and JSON values are text boxes, so that an empty box means "leave it out";
    an ``enum`` is a dropdown and a boolean a checkbox.
    """
    import ipywidgets as widgets

    properties = schema.get("properties") or {}
    required = [name for name in schema.get("required", []) if name in properties]
    form = {}
    for name in required + [name for name in properties if name not in required]:
        spec = properties[name] if isinstance(properties[name], dict) else {}
        label = name + ("*" if name in required else "")
        default = spec.get("default")
        hint = " · ".join(str(part) for part in (spec.get("type"), spec.get("description")) if part)
        common = dict(description=label, tooltip=hint, style={"description_width": "120px"},
                      layout={"width": "460px"})
        if spec.get("enum"):
            options = ([] if name in required else [""]) + [json.dumps(v) if not isinstance(v, str) else v
                                                             for v in spec["enum"]]
            widget = widgets.Dropdown(options=options, value=default if default in options else options[0], **common)
        elif spec.get("type") == "boolean":
            widget = widgets.Checkbox(value=bool(default), indent=False, **common)
        else:
            shown = "" if default is None else default if isinstance(default, str) else json.dumps(default)
            widget = widgets.Text(value=shown, placeholder=hint, **common)
        widget.add_class(f"mcplab-arg-{name}")
        form[name] = widget
    return form


def arguments_from(form: dict[str, Any], schema: dict) -> dict[str, Any]:
    """The form's values as tool arguments: empty boxes are left out, numbers and JSON parsed."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name, widget in form.items():
        spec = properties.get(name) if isinstance(properties.get(name), dict) else {}
        kind, value = spec.get("type"), widget.value
        if kind == "boolean":
            if value != spec.get("default", False) or name in schema.get("required", []):
                arguments[name] = value
            continue
        if not str(value).strip():
            continue  # left out: if it was required, the server will say so, which is the lesson
        try:
            if kind == "integer":
                arguments[name] = int(value)
            elif kind == "number":
                arguments[name] = float(value)
            elif kind in ("array", "object") or (spec.get("enum") and not isinstance(spec["enum"][0], str)):
                arguments[name] = json.loads(value)
            else:
                arguments[name] = value
        except ValueError:
            raise ValueError(f"{name}: {value!r} is not a valid {kind or 'JSON value'}") from None
    return arguments


def _expand(template: str, values: dict[str, Any]) -> str:
    """``weather://city/{name}`` with name=Beijing → ``weather://city/Beijing`` ({+x} keeps slashes)."""
    return TEMPLATE_VARIABLE.sub(
        lambda m: quote(str(values.get(m.group(2), "")), safe="/" if m.group(1) else ""), template)


class Playground:
    """The panel (``.widget``) and its state: ``client``, the catalogue, the selected item's ``form``."""

    def __init__(self, server: str | Sequence[str], transport: str, era: str, version: str | None,
                 timeout: float) -> None:
        import ipywidgets as widgets

        self.version, self.timeout = version, timeout
        self.client: Any = None
        self._server: Any = None  # the HTTP server process we launched, if any
        self.task: asyncio.Task | None = None  # the work a button started, if any
        self.catalogue: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}  # kind → name → item
        self.form: dict[str, Any] = {}
        self.last_result: Any = None
        command = server if isinstance(server, str) else " ".join(server)
        self._argv = None if isinstance(server, str) else list(server)
        self.server_box = widgets.Combobox(value=command, options=list(BUNDLED), description="server",
                                           placeholder="weather, files, a command or a URL",
                                           layout={"width": "360px"})
        if command.startswith(("http://", "https://")):
            transport = "http"
        self.transport_buttons = widgets.ToggleButtons(options=["stdio", "http"], value=transport,
                                                       style={"button_width": "60px"})
        self.era_buttons = widgets.ToggleButtons(options=["legacy", "modern", "auto"], value=era,
                                                 style={"button_width": "70px"})
        self.connect_button = widgets.Button(description="Connect", button_style="primary")
        self.close_button = widgets.Button(description="Disconnect")
        self.status = widgets.HTML("not connected")
        self.kind_buttons = widgets.ToggleButtons(options=list(KINDS), style={"button_width": "90px"})
        self.items = widgets.Select(options=[], rows=6, layout={"width": "320px"})
        self.about = widgets.HTML()
        self.form_box = widgets.VBox()
        self.send_button = widgets.Button(description="Send", button_style="success", disabled=True)
        self.result = widgets.HTML()
        self.trace_count = widgets.HTML()
        self.trace_html = widgets.HTML()
        for widget, name in ((self.send_button, "send"), (self.connect_button, "connect"),
                             (self.trace_html, "trace"), (self.trace_count, "trace-count"),
                             (self.result, "result"), (self.status, "status")):
            widget.add_class(f"mcplab-{name}")
        self.connect_button.on_click(lambda _: self._start(self.connect))
        self.close_button.on_click(lambda _: self._start(self.close))
        self.send_button.on_click(lambda _: self._start(self.send))
        self.kind_buttons.observe(lambda _: self._list_items(), names="value")
        self.items.observe(lambda _: self._select(), names="value")
        self.widget = widgets.VBox([
            widgets.HBox([self.server_box, self.transport_buttons, self.era_buttons]),
            widgets.HBox([self.connect_button, self.close_button, self.status]),
            widgets.HBox([widgets.VBox([self.kind_buttons, self.items]),
                          widgets.VBox([self.about, self.form_box, self.send_button])]),
            self.result, self.trace_count, self.trace_html])
        self.widget.add_class("mcplab-playground")

    # --- what the buttons do ----------------------------------------------------------------------
    def _start(self, work: Callable[[], Awaitable[Any]]) -> None:
        # ipywidgets calls a click handler synchronously while the kernel handles the comm message,
        # on the kernel's own asyncio event loop, the loop the server's pipes are registered with.
        # The handler may not block that loop (the answer we would wait for is read by it), so the
        # work becomes a task on the running loop. The task is kept in self.task (tests await it)
        # and its failure is shown in the panel; the buttons stay disabled until it ends, so two
        # clicks never interleave.
        if self.busy:
            return
        self.task = asyncio.get_running_loop().create_task(work())
        self.task.add_done_callback(self._finished)
        self._refresh_buttons()

    def _finished(self, task: asyncio.Task) -> None:
        self._refresh_buttons()
        if not task.cancelled() and task.exception() is not None:
            self._error(task.exception())  # send() showed it already; connect() and close() did not

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def _refresh_buttons(self) -> None:
        self.connect_button.disabled = self.close_button.disabled = self.busy
        self.send_button.disabled = self.busy or self.client is None or self.items.value is None

    async def connect(self) -> Playground:
        """Start (or reach) the server, run the handshake, and list what it offers."""
        from mcplab.client import Client

        await self.close()
        self._status("connecting …")
        try:
            transport = await self._transport()
            client = Client(transport, era=self.era_buttons.value, version=self.version, timeout=self.timeout)
        except (ValueError, MCPLabError, ImportError) as exc:
            await self._stop_server()
            self._status(f"cannot connect: {exc}", error=True)
            raise
        try:
            await client.connect()
            offered = client.server_capabilities
            listed = {"tools": client.list_tools if "tools" in offered else None,
                      "resources": client.list_resources if "resources" in offered else None,
                      "prompts": client.list_prompts if "prompts" in offered else None}
            catalogue = {kind: {} for kind in KINDS}
            for kind, lister in listed.items():
                for item in (await lister()) if lister else []:
                    catalogue[kind][getattr(item, "name" if kind != "resources" else "uri")] = item
            if "resources" in offered:
                for template in await client.list_resource_templates():
                    catalogue["resources"][template.uri_template] = template
        except MCPLabError as exc:
            self.client = client  # so that the trace shows how far it got, and close() reaps it
            self._show_trace()
            await self.close()
            self._status(f"connection failed: {type(exc).__name__}: {exc}", error=True)
            raise
        self.client, self.catalogue = client, catalogue
        info = client.server_info
        self._status(f"connected to {info.get('name', '?')} {info.get('version', '')} over "
                     f"{getattr(transport, 'channel', self.transport_buttons.value)}, "
                     f"protocol {client.protocol_version}: {self._counts()}")
        self.kind_buttons.value = next((k for k in KINDS if catalogue[k]), "tools")
        self._list_items()
        self._show_trace()
        return self

    async def _transport(self) -> Any:
        """stdio: spawn the command. http: a URL as given, or a command started with ``--http --port 0``."""
        target = self.server_box.value.strip()
        if target.startswith(("http://", "https://")):
            self.transport_buttons.value = "http"
            from mcplab.transports.http import http
            return http(target)
        if target in BUNDLED:
            from mcplab.cli import server_command
            argv: str | list[str] = server_command(target)
        else:
            argv = self._argv if self._argv and " ".join(self._argv) == target else target
        if self.transport_buttons.value == "stdio":
            from mcplab.transports.stdio import stdio
            return stdio(argv)
        import anyio

        from mcplab.server.http import launch
        from mcplab.transports.http import http
        # launch() waits for the child to print its URL, sleeping between looks; in a worker
        # thread, so that the kernel's loop (and every widget on the page) stays responsive.
        self._server = await anyio.to_thread.run_sync(launch, argv)
        return http(self._server.url)

    async def close(self) -> None:
        """Close the connection (a stdio server exits when its stdin closes) and stop a launched server."""
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()
            self._status("disconnected")
            self._show_trace(client)
        await self._stop_server()
        self._refresh_buttons()

    async def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            import anyio
            await anyio.to_thread.run_sync(server.stop)  # closes its stdin, then waits: not on the loop

    # --- choosing what to send --------------------------------------------------------------------
    def select_tool(self, name: str) -> dict[str, Any]:
        return self._choose("tools", name)

    def select_resource(self, uri: str) -> dict[str, Any]:
        return self._choose("resources", uri)

    def select_prompt(self, name: str) -> dict[str, Any]:
        return self._choose("prompts", name)

    def _choose(self, kind: str, name: str) -> dict[str, Any]:
        """Select one item (as a click would) and return its form: ``{argument: widget}``."""
        if name not in self.catalogue[kind]:
            known = ", ".join(self.catalogue[kind]) or "none (connect first)"
            raise ValueError(f"no {kind[:-1]} {name!r}; this server has: {known}")
        self.kind_buttons.value = kind
        self.items.value = name
        return self.form

    def _list_items(self) -> None:
        names = list(self.catalogue[self.kind_buttons.value])
        self.items.options = names
        self.items.value = names[0] if names else None
        self._select()

    def _select(self) -> None:
        kind, name = self.kind_buttons.value, self.items.value
        item = self.catalogue[kind].get(name) if name is not None else None
        self.form = form_for(self._schema(kind, item)) if item is not None else {}
        self.form_box.children = list(self.form.values())
        about = getattr(item, "description", "") or ""
        self.about.value = f"<b>{html.escape(str(name or ''))}</b> {html.escape(about)}" if item else ""
        self._refresh_buttons()

    def _schema(self, kind: str, item: Any) -> dict:
        """The object schema the form is built from: a tool's inputSchema, or strings for the others."""
        if kind == "tools":
            return item.input_schema
        if kind == "prompts":
            return {"type": "object",
                    "properties": {a["name"]: {"type": "string", "description": a.get("description", "")}
                                   for a in item.arguments},
                    "required": [a["name"] for a in item.arguments if a.get("required")]}
        variables = TEMPLATE_VARIABLE.findall(getattr(item, "uri_template", ""))
        return {"type": "object", "properties": {v: {"type": "string"} for _, v in variables},
                "required": [v for _, v in variables]}

    def arguments(self) -> dict[str, Any]:
        kind, item = self.kind_buttons.value, self.catalogue[self.kind_buttons.value].get(self.items.value)
        return arguments_from(self.form, self._schema(kind, item)) if item is not None else {}

    async def send(self) -> Any:
        """Send the selected item with the form's values; return (and show) the typed result."""
        if self.client is None:
            raise MCPLabError("not connected: await pg.connect() (or click Connect) first")
        kind, name = self.kind_buttons.value, self.items.value
        if name is None:
            raise ValueError(f"this server lists no {kind}")
        try:
            arguments = self.arguments()
            if kind == "tools":
                result = await self.client.call_tool(name, arguments)
            elif kind == "prompts":
                result = await self.client.get_prompt(name, arguments)
            else:
                item = self.catalogue[kind][name]
                uri = _expand(item.uri_template, arguments) if hasattr(item, "uri_template") else name
                result = await self.client.read_resource(uri)
        except (ValueError, MCPLabError) as exc:
            self._error(exc)
            raise
        finally:
            self._show_trace()
        self.last_result = result
        self.result.value = (f'<pre style="{PRE}">{html.escape(repr(result))}\n\n'
                             f'{html.escape(json.dumps(result.raw, indent=2, ensure_ascii=False))}</pre>')
        return result

    # --- showing ----------------------------------------------------------------------------------
    @property
    def trace(self) -> Any:
        return self.client.trace if self.client is not None else None

    def _show_trace(self, client: Any = None) -> None:
        client = client or self.client
        if client is not None:
            view = show(client.trace)
            self.trace_count.value = f"<b>trace</b>: {trace_views.summary(list(view.frames))}"
            self.trace_html.value = view._repr_html_()

    def _status(self, text: str, error: bool = False) -> None:
        colour = trace_views.ERROR_COLOUR if error else "#333"
        self.status.value = f'<span style="color:{colour}">{html.escape(text)}</span>'

    def _error(self, exc: BaseException) -> None:
        self.result.value = (f'<pre style="{PRE};color:{trace_views.ERROR_COLOUR}">'
                             f'{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</pre>')

    def __repr__(self) -> str:
        where = f"{self.server_box.value} over {self.transport_buttons.value}, era {self.era_buttons.value}"
        if self.client is None:
            return f"Playground ({where}): not connected"
        selected = f"; selected {self.kind_buttons.value[:-1]} {self.items.value}" if self.items.value else ""
        return f"Playground ({where}): connected, {self._counts()}{selected}"

    def _counts(self) -> str:
        """``2 tools, 2 resources, 1 prompt``"""
        return ", ".join(f"{len(items)} {kind if len(items) != 1 else kind[:-1]}"
                         for kind, items in self.catalogue.items())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The widget's own text/plain names its model id; ours is the same on every run (nbval).
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = repr(self)
        return bundle


def playground(server: str | Sequence[str] = "weather", transport: Literal["stdio", "http"] = "stdio",
               era: Literal["legacy", "modern", "auto"] = "legacy", *, version: str | None = None,
               timeout: float = 30.0) -> Playground:
    """The playground panel, not yet connected: click Connect, or ``await pg.connect()``.

    ``server`` is a bundled server ("weather", "files"), a command (a string or an argv list) or a
    Streamable HTTP URL.

    >>> pg = playground("weather"); await pg.connect()          # doctest: +SKIP
    >>> pg.select_tool("get_weather")["city"].value = "Beijing"; await pg.send()
    ToolResult(text='Beijing: sunny (晴), 12 °C, humidity 30%, wind 9 km/h', is_error=False)
    """
    return Playground(server, transport, era, version, timeout)
