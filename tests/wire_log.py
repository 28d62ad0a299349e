"""Every frame the test suite puts on a wire, kept for one check at the end against the official schemas.

Three feeds, installed once per test session (``install``, from conftest.py):

* every transport the client side builds (stdio, Streamable HTTP, memory) hands its trace over when it
  is made: the client's frames are checked always, the server's when the server is one of ours (a
  bundled server, ``mcplab serve``, a launched HTTP server of ours); frames a test wrote itself with
  ``send_raw`` are marked and left out: they are wrong on purpose;
* ``server_helpers.RawServer`` (bare JSON lines to a real server process) records what the server said;
* every Starlette app ``mcplab.server.streamable_http.create_app`` builds in this process is wrapped in a small
  ASGI recorder, so a server reached with raw httpx is checked too, error statuses and event streams
  included. Its frames are kept per HTTP session, because a session is what fixes a frame's revision.

``tests/test_wire_schemas.py`` walks them all at the end of the session (``walk``). A frame's revision is
read the way a peer reads it (``mcplab.notebook.schema_check``): the ``_meta`` version of a modern request, the
version ``initialize`` agreed, a response's request. Where nothing was agreed yet (a line the server
could not read before any handshake) the frame must satisfy the newest revision the server might speak.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
OURS = ("weather.py", "files.py", "conformance.py")


@dataclass(eq=False)
class Recording:
    """One trace and whose frames in it are ours to check."""
    trace: Any
    origin: str
    server_is_ours: bool
    client_is_ours: bool
    test_written: set[int] = field(default_factory=set)  # seqs of c2s frames a test sent as raw text


RECORDINGS: list[Recording] = []
OUR_URLS: set[str] = set()
ACTIVE: list[bool] = []  # [True] while installed: without the walk in the run, nothing is kept
_INSTALLED: list[tuple[Any, str, Any]] = []  # (owner, attribute, original): what uninstall puts back


def bundled(argv: Any) -> bool:
    """Does this command line start one of mcplab's servers (a file in servers/, or ``mcplab serve``)?"""
    parts = [str(a) for a in (argv if isinstance(argv, (list, tuple)) else str(argv).split())]
    if any(Path(p).name in OURS and Path(p).resolve().parent == SERVERS for p in parts if p.endswith(".py")):
        return True
    return "serve" in parts and any(p.endswith("mcplab") or p in ("mcplab.cli", "mcplab") for p in parts)


def keep(trace: Any, origin: str, *, server: bool, client: bool) -> Recording:
    recording = Recording(trace, origin, server, client)
    if ACTIVE:
        trace._wire_recording = recording
        RECORDINGS.append(recording)
    return recording


@contextmanager
def wrong_on_purpose() -> Iterator[None]:
    """Leave out the wires opened inside the block: a test that breaks the client or a server on
    purpose (to see its failure reported) makes frames no schema admits."""
    paused = list(ACTIVE)
    ACTIVE.clear()
    try:
        yield
    finally:
        ACTIVE.extend(paused)


def mark_written(trace: Any, before: int) -> None:
    recording = getattr(trace, "_wire_recording", None)
    if recording is not None:
        recording.test_written.update(f.seq for f in trace.frames[before:] if f.direction == "c2s")


# --- installing the feeds ------------------------------------------------------------------------------

def _patch(owner: Any, name: str, replacement: Any) -> None:
    _INSTALLED.append((owner, name, getattr(owner, name)))
    setattr(owner, name, replacement)


def install() -> None:
    if ACTIVE:
        return
    ACTIVE.append(True)
    from mcplab.server import streamable_http as server_http
    from mcplab.server.streamable_http import process as http_runner
    from mcplab.transports import http, memory, stdio

    def after_init(cls: Any, describe: Any) -> None:
        original = cls.__init__

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            origin, server = describe(self)
            keep(self.trace, origin, server=server, client=True)

        _patch(cls, "__init__", __init__)

    after_init(stdio.StdioTransport, lambda t: (f"client over stdio: {' '.join(map(str, t.argv))}", bundled(t.argv)))
    after_init(http.HTTPTransport, lambda t: (f"client over http: {t.url}", t.url in OUR_URLS))
    after_init(memory.MemoryTransport, lambda t: ("client over memory", False))

    for cls in (stdio.StdioTransport, http.HTTPTransport, memory.MemoryTransport):
        original_raw = cls.send_raw

        def send_raw(self: Any, *args: Any, __original: Any = original_raw, **kwargs: Any) -> Any:
            before = len(self.trace)

            async def sending() -> Any:
                try:
                    return await __original(self, *args, **kwargs)
                finally:
                    mark_written(self.trace, before)

            return sending()

        _patch(cls, "send_raw", send_raw)

    original_launch = http_runner.launch

    def launch(argv: Any, *args: Any, **kwargs: Any) -> Any:
        process = original_launch(argv, *args, **kwargs)
        if bundled(argv):
            OUR_URLS.add(process.url)
        return process

    _patch(http_runner, "launch", launch)
    _patch(server_http, "launch", launch)

    original_create_app = server_http.create_app

    def create_app(*args: Any, **kwargs: Any) -> Any:
        app = original_create_app(*args, **kwargs)
        app.add_middleware(Recorder)
        return app

    _patch(server_http, "create_app", create_app)
    swaps = {original_create_app: create_app, original_launch: launch}
    for module in list(sys.modules.values()):  # this project's modules that imported the names already
        if module is None or not str(getattr(module, "__file__", "") or "").startswith(str(ROOT)):
            continue
        for name in ("create_app", "launch"):
            found = getattr(module, name, None)
            replacement = next((new for old, new in swaps.items() if found is old), None)
            if replacement is not None and module not in (server_http, http_runner):
                _patch(module, name, replacement)


def uninstall() -> None:
    ACTIVE.clear()
    while _INSTALLED:
        owner, name, original = _INSTALLED.pop()
        setattr(owner, name, original)


# --- the server side of in-process HTTP apps ---------------------------------------------------------------

class Recorder:
    """ASGI middleware: each POST body and everything the endpoint answers, as frames of one trace per session."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.sessions: dict[str, Any] = {}   # Mcp-Session-Id → the trace of that session

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        from mcplab.wire import jsonrpc
        from mcplab.wire.sse import SSEParser
        from mcplab.trace import Trace

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        session = headers.get("mcp-session-id")
        body = bytearray()
        trace = self.sessions.get(session) if session else None
        fresh = trace is None
        if fresh:
            trace = Trace()
        state: dict[str, Any] = {"status": None, "sse": None, "json": bytearray()}

        async def receiving() -> dict:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body") and body.strip():
                    text = bytes(body).decode("utf-8", errors="replace")
                    try:
                        parsed: Any = jsonrpc.decode(text, mcp=False, allow_batch=True)
                    except Exception as exc:  # noqa: BLE001 - a refused body is still what was sent
                        parsed = exc
                    trace.record("c2s", "http", text, parsed if not isinstance(parsed, list) else None,
                                 http={"method": scope["method"], "status": None, "headers": headers})
            return message

        def record(text: str) -> None:
            if not text.strip():
                return
            try:
                parsed: Any = jsonrpc.decode(text, allow_batch=True)
            except Exception as exc:  # noqa: BLE001
                parsed = exc
            trace.record("s2c", "http", text, parsed if not isinstance(parsed, list) else None,
                         http={"method": scope["method"], "status": state["status"], "headers": state["headers"]})

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                state["status"] = message["status"]
                state["headers"] = {k.decode("latin-1").lower(): v.decode("latin-1")
                                    for k, v in message.get("headers", [])}
                if state["headers"].get("content-type", "").startswith("text/event-stream"):
                    state["sse"] = SSEParser()
                opened = state["headers"].get("mcp-session-id")
                if opened and fresh:
                    self.sessions[opened] = trace
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if state["sse"] is not None:
                    for event in state["sse"].feed(chunk):
                        record(event.data)
                else:
                    state["json"].extend(chunk)
                    if not message.get("more_body"):
                        record(bytes(state["json"]).decode("utf-8", errors="replace"))
            await send(message)

        if fresh and not session:
            keep(trace, f"server over http (in process): {scope['method']} {scope.get('path')}", server=True,
                 client=False)
        elif fresh:
            keep(trace, f"server over http (in process), an unknown session", server=True, client=False)
        await self.app(scope, receiving, sending)


# --- the walk at the end ---------------------------------------------------------------------------------

LEGACY_NULL_ID = ("2024-11-05", "2025-03-26", "2025-06-18")
"""Revisions whose schema requires a string or integer id on every error response: a reply to a message
whose id could not be read carries JSON-RPC 2.0's ``"id": null`` there, which those schemas cannot say."""


@dataclass(frozen=True)
class Problem:
    origin: str
    seq: int
    direction: str
    version: str | None
    detail: str
    raw: str

    def __str__(self) -> str:
        return (f"{self.origin}, frame {self.seq} ({self.direction}, {self.version or 'version unknown'}): "
                f"{self.detail}\n    {self.raw[:300]}")


def _null_id_reply(frame: Any, version: str | None) -> bool:
    try:
        message = json.loads(frame.raw)
    except ValueError:
        return False
    return (isinstance(message, dict) and set(message) == {"jsonrpc", "id", "error"} and message["id"] is None
            and message["error"].get("code") in (-32700, -32600) and version in LEGACY_NULL_ID)


def _batch_problems(frame: Any, version: str | None, book: Any) -> list[str]:
    """A JSON-RPC batch (2025-03-26 only): each element checked as the message it is."""
    try:
        elements = json.loads(frame.raw)
    except ValueError:
        return ["a batch that is not JSON"]
    if version != "2025-03-26":
        return [f"a batch in {version}: only 2025-03-26 has them"]
    problems = []
    for element in elements:
        if isinstance(element, dict) and element.get("id") is None and "error" in element:
            continue  # an element whose id could not be read: "id": null, see LEGACY_NULL_ID
        kind = "error" if "error" in element else "response" if "result" in element else \
            "request" if "id" in element else "notification"
        check = book.check(version, kind, element, element.get("method"))
        if check.status != "valid":
            problems.append(f"batch element {element.get('id')}: {check.detail}")
    return problems


def _envelope_problem(book: Any, version: str, kind: str, message: Any) -> str | None:
    """Only the JSON-RPC envelope of ``version`` (for a method the revision does not define)."""
    from mcplab.notebook.schema_check import _jsonschema

    root = book.root(version)
    where = "definitions" if "definitions" in root else "$defs"
    name = "JSONRPCRequest" if kind == "request" else "JSONRPCNotification"
    validator = _jsonschema().validators.validator_for(root)({**root, "$ref": f"#/{where}/{name}"})
    error = _jsonschema().exceptions.best_match(validator.iter_errors(message))
    return None if error is None else error.message


def walk(book: Any) -> tuple[int, list[Problem], dict[str, int]]:
    """Check every recorded frame that is ours; return (frames checked, problems, exemptions by reason)."""
    from mcplab.trace import views as trace_views
    from mcplab.notebook.schema_check import INVALID, VALID, check_frames
    from mcplab.wire.versions import ALL_VERSIONS, LATEST_LEGACY, LATEST_MODERN

    checked, problems = 0, []
    exempt = {"written wrong on purpose by a test": 0, "JSON-RPC null id": 0, "a method the caller made up": 0}
    for recording in RECORDINGS:
        frames = list(recording.trace.frames)
        if not frames:
            continue
        results = check_frames(frames, book=book)
        views = {v.frame.seq: v for v in trace_views.describe(frames)}
        methods = {v.frame.seq: getattr(v.frame.message, "method", None) for v in views.values()}
        for frame in frames:
            ours = recording.client_is_ours if frame.direction == "c2s" else recording.server_is_ours
            result = results.get(frame.seq)
            if not ours or result is None:
                continue
            if frame.direction == "c2s" and frame.seq in recording.test_written:
                exempt["written wrong on purpose by a test"] += 1
                continue
            view = views[frame.seq]
            method = methods.get(view.answers) if view.answers is not None else methods.get(frame.seq)
            if frame.raw.lstrip().startswith("["):  # the client's decoder refuses arrays; this is a batch
                found = _batch_problems(frame, result.version, book)
            elif result.version not in ALL_VERSIONS:
                # Nothing agreed yet, or a version the server does not speak (a request asking for 2099):
                # the server answers in the newest revision it may speak.
                tries = [book.check(v, view.kind, json.loads(frame.raw), method) for v in (LATEST_LEGACY, LATEST_MODERN)]
                found = [] if any(t.status == VALID for t in tries) else [" / ".join(t.detail for t in tries)]
            elif result.status == INVALID and _null_id_reply(frame, result.version):
                exempt["JSON-RPC null id"] += 1
                continue
            elif (result.status == INVALID and frame.direction == "c2s" and view.kind in ("request", "notification")
                  and result.detail.startswith("this revision defines no")):
                # A test asked the client for a method no revision has (to see the -32601): the client
                # sends what it is asked; its envelope must still be right.
                exempt["a method the caller made up"] += 1
                problem = _envelope_problem(book, result.version, view.kind, json.loads(frame.raw))
                found = [problem] if problem else []
            else:
                found = [] if result.status == VALID else [result.detail]
            checked += 1
            problems += [Problem(recording.origin, frame.seq, frame.direction, result.version, d, frame.raw)
                         for d in found]
    return checked, problems, exempt
