"""Each frame of a trace checked against the official JSON Schema of its protocol revision.

Theory of operation
-------------------
A frame's revision is read from the trace the way a peer would read it: a modern (2026-07-28)
request carries it in ``params._meta["io.modelcontextprotocol/protocolVersion"]``; a legacy
session agreed on it in the ``initialize`` result; a response belongs to its request's revision.
A caller may pass ``version=`` instead. The definition a message is checked against comes from the
schema itself: the request or notification definition whose ``method`` constant is the frame's
method, the matching ``…Result`` for a response (paired with its request by id), the error
response shape for an error. Draft-07 schemas (up to 2025-06-18) keep definitions under
``#/definitions``, the 2020-12 ones under ``#/$defs``.

The schemas are not part of mcplab. They are read where ``schemas.py`` finds them: from
``$MCPLAB_SPEC_DIR/<version>/schema.json``, from ``../shared/mcp-spec`` beside the checkout, or from
the user's cache that ``mcplab schemas`` fills; the viewer says "badges off" when there are none.
jsonschema is imported on first use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from mcplab.wire import jsonrpc
from mcplab.trace import views as trace_views
from mcplab.wire.errors import JSONRPCError
from mcplab.i18n import _
from mcplab.schemas import SPEC_DIR_ENV, spec_dir  # noqa: F401 - the notebook package hands both on
from mcplab.server.schema import load_jsonschema
from mcplab.trace import Frame
from mcplab.trace.views import Badge, View
from mcplab.wire.versions import ALL_VERSIONS, HEADER_PROTOCOL_VERSION, META_PROTOCOL_VERSION

VALID, INVALID, UNCHECKED = "valid", "invalid", "unchecked"
BADGE_LOOK = {VALID: ("✓", "#2e7d32"), INVALID: ("✗", trace_views.ERROR_COLOUR), UNCHECKED: ("–", "#9e9e9e")}
RESULT = "result: "  # marks a definition that applies to a response's result member
UNIONS = {"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"}  # not one method
LABEL_WIDTH = 100  # characters of a frame's label in the text views
PRE = trace_views._PRE  # the look of an opened frame, for results and diff cells too


def _cut(text: str, width: int = LABEL_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


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
        head = (_("schema {version}, {definition}", version=self.version, definition=self.definition)
                if self.definition else _("schema"))
        return Badge(f"{symbol} {self.version or _('version?')}", colour, f"{head}: {self.detail or _(self.status)}")


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
            return Check(UNCHECKED, None, None, _("the protocol version is unknown; pass show(trace, version=...)"))
        root = self.root(version)
        if root is None:
            return Check(UNCHECKED, version, None, _("no official schema for {versions} here", versions=version))
        names = self._definitions(root, self._methods[version], kind, method)
        if isinstance(names, str):
            return Check(INVALID, version, None, names)
        error = _jsonschema().exceptions.best_match(self._validator(version, root, names).iter_errors(message))
        shown = names[-1].removeprefix(RESULT)
        if error is None:
            return Check(VALID, version, shown, _("valid"))
        where = "/".join(map(str, error.absolute_path)) or _("the message")
        return Check(INVALID, version, shown, _("{why} (at {where})", why=_cut(error.message, 200), where=where))

    @staticmethod
    def _definitions(root: dict, methods: dict[str, str], kind: str, method: str | None) -> list[str] | str:
        """The definitions a message must satisfy, or why it matches none."""
        defs = _defs(root)
        first = lambda *names: next(n for n in names if n in defs)  # noqa: E731 - names differ per revision
        if kind == "error":
            return [first("JSONRPCErrorResponse", "JSONRPCError")]
        if kind in ("request", "notification"):
            if method not in methods or not methods[method].endswith(kind.title()):
                return _("this revision defines no {kind} {method!r}", kind=kind, method=method)
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
    # The server toolkit's loader: jsonschema without the optional format checkers, which cost
    # seconds to import in a Jupyter environment and which a badge never needs.
    load_jsonschema()
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
        else:  # a header that names no revision (a client's mistake) says nothing about the frame's
            found[view.frame.seq] = header if header in ALL_VERSIONS else session
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
        if view.kind in ("stderr", "note", "oauth") or (view.kind == "raw" and not view.frame.raw.strip()):
            continue  # an authorization exchange is OAuth, not MCP: no MCP schema applies
        if view.kind in ("refused", "raw", "batch"):
            checks[seq] = Check(INVALID if view.kind != "batch" else UNCHECKED, versions[seq], None,
                                _("not a single JSON-RPC message") if view.kind != "batch" else _("a batch"))
            continue
        method = methods.get(view.answers) if view.answers is not None else methods[seq]
        checks[seq] = book.check(versions[seq], view.kind, _message_json(view.frame), method)
    return checks


