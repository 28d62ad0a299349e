"""JSON-RPC 2.0, the wire format under MCP: messages, encode/decode, line framing. Sans-IO.

Theory of operation
-------------------
Every MCP message is one JSON-RPC 2.0 object, recognised by its keys alone:

    has "method" and "id"      → Request        {"jsonrpc":"2.0","id":1,"method":"tools/list"}
    has "method", no "id"      → Notification   {"jsonrpc":"2.0","method":"notifications/initialized"}
    has "result"               → Response       {"jsonrpc":"2.0","id":1,"result":{...}}
    has "error"                → ErrorResponse  {"jsonrpc":"2.0","id":1,"error":{"code":-32601,...}}

:func:`decode` checks the rules in a fixed order and raises a typed error carrying the code
the peer should be answered with: text that is not JSON → :class:`ParseError` (-32700);
JSON of the wrong shape → :class:`InvalidRequest` (-32600) whose message names the broken
rule. :func:`decode_and_show_work` runs the same checks and returns every step, for the lab.

MCP is stricter than JSON-RPC in one place: a request id is a string or an integer and
never ``null`` (JSON-RPC merely discourages null ids, MCP forbids them because a null id
cannot be told apart from the id of an error about an unreadable request). ``decode``
enforces that unless called with ``mcp=False``.

The error that answers an unreadable request is where the revisions part ways. JSON-RPC 2.0
§5 gives it ``"id": null``; the MCP schemas up to 2025-06-18 require every error response to
carry a string or integer id (so no reply to such a request satisfies them, and JSON-RPC's
``null`` is kept); from 2025-11-25 on ``id`` is optional and never null, so the reply leaves it
out. :func:`error_response` writes either form (:func:`keeps_null_id` says which).

Batches (a JSON array of messages) are plain JSON-RPC 2.0. MCP 2025-03-26 allowed them and
2025-06-18 removed them again, so :func:`decode` refuses arrays unless ``allow_batch=True``;
:func:`answer_batch` then answers one the way JSON-RPC 2.0 §6 says.

On stdio each message is one line of UTF-8 ending in ``\\n`` and no message may contain a
raw newline. :class:`LineFramer` turns arbitrary byte chunks back into lines. It counts
bytes, not characters, and only decodes complete lines, so a chunk boundary may fall
anywhere, even inside a multi-byte character.

Nothing here does I/O: the transports move bytes, this module only looks at them.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Union

from mcplab.wire.errors import (  # re-exported: the codes belong to the wire format
    HEADER_MISMATCH, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, PARSE_ERROR, RESOURCE_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION,
    InvalidRequest, JSONRPCError, LocalProtocolError, ParseError, RemoteProtocolError,
)
from mcplab.i18n import N_, _, columns
from mcplab.wire.versions import at_least

__all__ = [
    "Request", "Notification", "Response", "ErrorResponse", "Message", "Batch",
    "encode", "decode", "decode_as_sent", "to_dict", "decode_and_show_work", "Work", "answer_batch", "refuse_in_batch",
    "error_response", "keeps_null_id", "is_request_id", "NO_BATCHES",
    "LineFramer", "IdAllocator", "PendingRequests",
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "RESOURCE_NOT_FOUND", "HEADER_MISMATCH", "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
]

JSONRPC = "2.0"
RequestId = Union[str, int]
Params = Union[dict, list, None]


@dataclass(frozen=True)
class Request:
    """A call that expects exactly one response with the same ``id``."""
    id: RequestId
    method: str
    params: Params = None


@dataclass(frozen=True)
class Notification:
    """A one-way message: no ``id``, so nobody answers it."""
    method: str
    params: Params = None


@dataclass(frozen=True)
class Response:
    """A success: ``result`` may be any JSON value."""
    id: RequestId
    result: Any


@dataclass(frozen=True)
class ErrorResponse:
    """A failure: ``id`` is ``None`` when the request's id could not be read.

    Such a reply leaves ``"id"`` out on the wire (MCP 2025-11-25 and later); ``null_id`` writes
    JSON-RPC 2.0's ``"id": null`` instead, the only form revisions up to 2025-06-18 have.
    """
    id: RequestId | None
    code: int
    message: str
    data: Any = None
    null_id: bool = field(default=False, compare=False, repr=False)

    @property
    def error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


Message = Union[Request, Notification, Response, ErrorResponse]
Batch = list[Union[Message, JSONRPCError]]  # a decoded batch: one entry per array element, in order


# --- encode ------------------------------------------------------------------------------------

def to_dict(message: Message) -> dict[str, Any]:
    """The JSON object for a message, keys in the order the spec writes them."""
    if isinstance(message, Request):
        obj: dict[str, Any] = {"jsonrpc": JSONRPC, "id": message.id, "method": message.method}
    elif isinstance(message, Notification):
        obj = {"jsonrpc": JSONRPC, "method": message.method}
    elif isinstance(message, Response):
        return {"jsonrpc": JSONRPC, "id": message.id, "result": message.result}
    elif message.id is None and not message.null_id:
        return {"jsonrpc": JSONRPC, "error": message.error}  # no readable id: left out (MCP 2025-11-25)
    else:
        return {"jsonrpc": JSONRPC, "id": message.id, "error": message.error}
    if message.params is not None:
        obj["params"] = message.params
    return obj


def encode(message: Message | list[Message]) -> str:
    """One message (or a batch) as a single line of JSON, with no newline in it.

    >>> encode(Notification("notifications/initialized"))
    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    """
    obj = [to_dict(m) for m in message] if isinstance(message, list) else to_dict(message)
    return _dumps(obj)


def _dumps(obj: Any) -> str:
    # json escapes control characters inside strings, so the text never holds a raw newline.
    # Non-ASCII stays readable (中文 on the wire, as the seeds show it) unless the data holds
    # a lone surrogate, which UTF-8 cannot carry; then the whole line falls back to \\u escapes.
    text = _ENCODER.encode(obj)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = _ASCII_ENCODER.encode(obj)
    return text


NO_NULL_ID_SINCE = "2025-11-25"  # the first revision whose error responses may leave "id" out


def keeps_null_id(version: str | None) -> bool:
    """Does revision ``version`` answer an unreadable request with ``"id": null``? (None: nothing
    agreed yet, and the newest revision, which leaves the id out, decides.)"""
    return version is not None and not at_least(version, NO_NULL_ID_SINCE)


def error_response(error: JSONRPCError, *, null_id: bool = False, request_id: RequestId | None = None) -> ErrorResponse:
    """The reply a peer should get for a refused message: every error becomes a reply here.

    ``request_id`` names the request it answers when the error does not carry it (a handler's error).
    When its id could not be read, the reply leaves ``"id"`` out (MCP 2025-11-25 and later), or
    carries ``"id": null`` with ``null_id=True`` (JSON-RPC 2.0 §5; see :func:`keeps_null_id`).

    >>> encode(error_response(ParseError("not JSON")))
    '{"jsonrpc":"2.0","error":{"code":-32700,"message":"not JSON"}}'
    """
    rid = error.request_id if request_id is None else request_id
    return ErrorResponse(rid, error.code, error.message, error.data, null_id=null_id and rid is None)


# --- decode ------------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    # 1e999 is JSON by the grammar but overflows to inf, which no JSON encoder can send back.
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"the number {text} is too large for a double")
    return value


# One encoder and one decoder for every message: json.dumps/json.loads with keyword arguments
# build a new one per call, a cost every message on the hot path would pay.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def _parse(text: str | bytes, steps: list | None) -> Any:
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(f"expected UTF-8 text, got invalid byte {exc.object[exc.start]:#04x} "
                             f"at offset {exc.start}", raw=bytes(text)) from None
        if steps is not None:
            steps.append((_("bytes → text"), _("valid UTF-8")))
    try:
        value = _load(text)
    except (ValueError, RecursionError) as exc:
        # ValueError covers JSONDecodeError, NaN/Infinity, 1e999, and integers too long to convert.
        raise ParseError(f"expected JSON text, got something that does not parse: {exc}",
                         raw=text) from None
    if steps is not None:
        steps.append((_("text → JSON"), _(A_JSON.get(_kind(value), "a JSON value"))))
    return value


# What decode_and_show_work says it found, one whole phrase per kind so that each translates whole.
A_JSON = {"object": N_("a JSON object"), "array": N_("a JSON array"), "string": N_("a JSON string"),
          "number": N_("a JSON number"), "boolean": N_("a JSON boolean"), "null": N_("JSON null")}


def _load(text: str) -> Any:
    # The decoder's scanner, called directly: JSONDecoder.decode adds two regular-expression matches
    # (whitespace before and after the value) to every message. A line that starts or ends with
    # whitespace, or holds more than one value, goes the long way, which also words the error.
    try:
        value, end = _DECODER.scan_once(text, 0)
    except StopIteration:
        return _DECODER.decode(text)
    return value if end == len(text) else _DECODER.decode(text)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _valid_id(value: Any, *, allow_null: bool) -> bool:
    if value is None:
        return allow_null
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_request_id(value: Any) -> bool:
    """Is ``value`` an MCP request id, a string or an integer (JSON ``true`` is not one)?"""
    return _valid_id(value, allow_null=False)


def _classify(obj: Any, *, mcp: bool, raw: Any, steps: list | None) -> Message:
    """Recognise one JSON value as a message, checking the JSON-RPC 2.0 rules in order: an object,
    ``"jsonrpc": "2.0"``, then by its keys a request or notification (:func:`_classify_call`) or a
    response (:func:`_classify_response`)."""
    if not isinstance(obj, dict):
        raise _refuse(f"expected a JSON object, got a JSON {_kind(obj)}", None, raw, steps)
    if obj.get("jsonrpc") != JSONRPC:
        got = "no \"jsonrpc\" member" if "jsonrpc" not in obj else f"\"jsonrpc\": {json.dumps(obj['jsonrpc'])}"
        raise _refuse(f"expected \"jsonrpc\": \"2.0\", got {got}", _echo(obj), raw, steps)
    if steps is not None:  # the explanation is built only for decode_and_show_work
        steps.append((_('"jsonrpc" is "2.0"'), _("yes")))
    if "method" in obj:
        return _classify_call(obj, mcp, raw, steps)
    return _classify_response(obj, mcp, raw, steps)


def _refuse(reason: str, request_id: RequestId | None, raw: Any, steps: list | None) -> InvalidRequest:
    """The error for a message that breaks a rule (the caller raises it)."""
    if steps is not None:
        steps.append((_("refused"), reason))  # the reason stays as it is: it is the error's message on the wire
    return InvalidRequest(reason, request_id=request_id, raw=raw)


def _echo(obj: dict) -> RequestId | None:
    """The id to echo in the error reply when it is readable, as JSON-RPC 2.0 §5 asks."""
    rid = obj.get("id")
    return rid if _valid_id(rid, allow_null=False) else None


def _classify_call(obj: dict, mcp: bool, raw: Any, steps: list | None) -> Request | Notification:
    """A message with ``"method"``: a request when it has an ``"id"``, else a notification."""
    method = obj["method"]
    if not isinstance(method, str):
        raise _refuse(f"expected \"method\" to be a string, got a JSON {_kind(method)}", _echo(obj), raw, steps)
    if "result" in obj or "error" in obj:
        raise _refuse("a message with \"method\" cannot also carry \"result\" or \"error\"", _echo(obj), raw, steps)
    params = obj.get("params")
    if "params" in obj and not isinstance(params, (dict, list)):
        raise _refuse(f"expected \"params\" to be an object or an array, got a JSON {_kind(params)}",
                      _echo(obj), raw, steps)
    if "id" not in obj:
        if steps is not None:
            steps.append((_('has "method" but no "id"'), _("a notification: nobody will answer it")))
        return Notification(method, params)
    rid = obj["id"]
    if rid is None and mcp:
        raise _refuse("expected \"id\" to be a string or an integer, got null "
                      "(JSON-RPC tolerates a null id, MCP forbids it)", None, raw, steps)
    if not _valid_id(rid, allow_null=not mcp):
        raise _refuse(f"expected \"id\" to be a string or an integer, got a JSON {_kind(rid)}", None, raw, steps)
    if steps is not None:
        steps.append((_('has "method" and "id"'),
                      _("a request with id {id}: it expects a response", id=json.dumps(rid))))
    return Request(rid, method, params)


def _classify_response(obj: dict, mcp: bool, raw: Any, steps: list | None) -> Response | ErrorResponse:
    """A message without ``"method"``: a success (``"result"``) or an error (``"error"``), never both."""
    has_result, has_error = "result" in obj, "error" in obj
    if has_result and has_error:
        raise _refuse("a response carries \"result\" or \"error\", never both", _echo(obj), raw, steps)
    if not has_result and not has_error:
        raise _refuse("expected \"method\" (request or notification) or \"result\"/\"error\" (response), "
                      "got none of them", _echo(obj), raw, steps)
    # JSON-RPC 2.0 §5 requires "id" in every response ("id": null when the request's id was
    # unreadable). MCP's 2025-11-25 schema lets an error response leave it out instead.
    if "id" not in obj and not (has_error and mcp):
        raise _refuse("a response must carry the \"id\" of the request it answers", None, raw, steps)
    rid = obj.get("id")
    if has_result:
        # A null id can only answer a null-id request, which MCP forbids and JSON-RPC tolerates.
        if not _valid_id(rid, allow_null=not mcp):
            raise _refuse(f"expected the response \"id\" to be a string or an integer, got a JSON {_kind(rid)}",
                          None, raw, steps)
        if steps is not None:
            steps.append((_('has "result"'), _("a success response to request {id}", id=json.dumps(rid))))
        return Response(rid, obj["result"])
    if not _valid_id(rid, allow_null=True):
        raise _refuse(f"expected the error response \"id\" to be a string, an integer or null, "
                      f"got a JSON {_kind(rid)}", None, raw, steps)
    error = obj["error"]
    if not (isinstance(error, dict) and isinstance(error.get("code"), int)
            and not isinstance(error.get("code"), bool) and isinstance(error.get("message"), str)):
        raise _refuse("expected \"error\" to be an object with an integer \"code\" and a string \"message\"",
                      _echo(obj), raw, steps)
    if steps is not None:
        steps.append((_('has "error"'), _("an error response (code {code}) to request {id}", code=error["code"],
                                          id=json.dumps(rid))))
    return ErrorResponse(rid, error["code"], error["message"], error.get("data"), null_id="id" in obj and rid is None)


NO_BATCHES = "expected one JSON object, got an array: JSON-RPC batches were allowed only in MCP 2025-03-26"


def decode(text: str | bytes, *, mcp: bool = True, allow_batch: bool = False) -> Message | Batch:
    """Recognise one JSON-RPC message, or raise :class:`ParseError` / :class:`InvalidRequest`.

    >>> decode('{"jsonrpc":"2.0","id":1,"method":"ping"}')
    Request(id=1, method='ping', params=None)
    """
    value = _parse(text, None)
    if isinstance(value, list):
        if not allow_batch:
            raise InvalidRequest(NO_BATCHES, raw=text)
        if not value:
            raise InvalidRequest("expected at least one message in the batch, got an empty array", raw=text)
        batch: Batch = []
        for item in value:
            try:
                batch.append(_classify(item, mcp=mcp, raw=text, steps=None))
            except InvalidRequest as exc:
                batch.append(exc)
        return batch
    return _classify(value, mcp=mcp, raw=text, steps=None)


def decode_as_sent(text: str | bytes) -> Message | JSONRPCError:
    """A frame as a trace shows it: the message it holds, or the error reading it (what was sent may be invalid)."""
    try:
        return decode(text, mcp=False)  # type: ignore[return-value]  # no batch: an array is its InvalidRequest
    except JSONRPCError as exc:
        return exc


class Work(NamedTuple):  # a function's two-part answer; cheaper to define than a frozen dataclass
    """The steps :func:`decode_and_show_work` took, and what came out (a message or an error)."""
    steps: tuple[tuple[str, str], ...]
    outcome: Message | JSONRPCError

    def __repr__(self) -> str:
        width = max(columns(check) for check, _outcome in self.steps) if self.steps else 0
        lines = [f"{i}. {check}{' ' * (width - columns(check))}  →  {outcome}"
                 for i, (check, outcome) in enumerate(self.steps, 1)]
        if isinstance(self.outcome, JSONRPCError):
            lines.append("⇒ " + _("refused with {code}: {message}", code=self.outcome.code,
                                  message=self.outcome.message))
        else:
            lines.append(f"⇒ {self.outcome!r}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


def decode_and_show_work(text: str | bytes, *, mcp: bool = True) -> Work:
    """Decode one message and return every check made on the way, in order."""
    steps: list[tuple[str, str]] = []
    try:
        value = _parse(text, steps)
        outcome: Message | JSONRPCError = _classify(value, mcp=mcp, raw=text, steps=steps)
    except ParseError as exc:
        steps.append((_("refused"), exc.message))
        outcome = exc
    except InvalidRequest as exc:
        outcome = exc
    return Work(tuple(steps), outcome)


INITIALIZE_IN_BATCH = "initialize must not be part of a JSON-RPC batch (MCP 2025-03-26)"


def refuse_in_batch(item: Message | JSONRPCError) -> ErrorResponse | None:
    """The reply a batch element gets without being handled, or None: an element that did not decode
    gets its error (JSON-RPC 2.0 §6, ``"id": null`` as 2025-03-26 has it), and ``initialize`` is refused,
    since MCP 2025-03-26 says it MUST NOT be part of a batch. Every batch, on either runner, follows this.
    """
    if isinstance(item, JSONRPCError):
        return error_response(item, null_id=True)
    if isinstance(item, Request) and item.method == "initialize":
        return ErrorResponse(item.id, INVALID_REQUEST, INITIALIZE_IN_BATCH)
    return None


def answer_batch(batch: Batch, handle: Callable[[Message], Message | None]) -> list[Message] | None:
    """Answer a decoded batch per JSON-RPC 2.0 §6: one reply per request (in any order is
    allowed, here in order), an error reply per invalid element, and ``None`` (send
    nothing at all) when every element was a notification. Elements :func:`refuse_in_batch` refuses
    are not handed to ``handle``.

    ``handle`` returns the reply to one message (``None`` for a notification) or raises a
    :class:`JSONRPCError`, which becomes that request's error reply; a failing
    notification still gets no reply, since nobody is waiting for one.
    """
    replies: list[Message] = []
    for item in batch:
        refusal = refuse_in_batch(item)
        if refusal is not None:
            replies.append(refusal)
            continue
        try:
            reply = handle(item)
        except JSONRPCError as exc:
            reply = error_response(exc, request_id=item.id) if isinstance(item, Request) else None
        if reply is not None:
            replies.append(reply)
    return replies or None


# --- framing -------------------------------------------------------------------------------------

DEFAULT_MAX_LINE = 4 * 1024 * 1024


class LineFramer:
    """Newline-delimited framing for stdio: bytes in, messages (or typed errors) out.

    This is the one way bytes from a peer become messages, on both sides: the client's stdio
    transport, the stdio server and the graders all call :meth:`frames` (or :meth:`feed`, which
    is the same without the raw lines). A line longer than ``max_line`` bytes is reported once,
    as a :class:`ParseError`, as soon as it passes the limit; the rest of it is skipped and
    framing recovers at the next newline. Blank lines are skipped; a trailing ``\\r`` is dropped.

    ``allow_batch=True`` decodes a JSON array as a batch (a list) instead of refusing it; the
    stdio server does, and decides per line, from the negotiated revision, whether a batch is
    welcome (batches exist in MCP 2025-03-26 only).
    """

    def __init__(self, max_line: int = DEFAULT_MAX_LINE, *, mcp: bool = True, allow_batch: bool = False) -> None:
        self.max_line = max_line
        self.mcp = mcp
        self.allow_batch = allow_batch
        self._buffer = bytearray()
        self._skipping = False  # inside an over-long line, waiting for its newline

    def feed(self, data: bytes) -> list[Message | Batch | JSONRPCError]:
        """Every message (or framing/decoding error) that ``data`` completes, in order.

        >>> LineFramer().feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n{"jsonrpc"')
        [Notification(method='notifications/initialized', params=None)]
        """
        return [message for _, message in self.frames(data)]

    def frames(self, data: bytes) -> list[tuple[bytes, Message | Batch | JSONRPCError]]:
        """Like :meth:`feed`, each message with the line it came from (``b""`` for a line over the
        limit, which is not kept): what a trace records."""
        out: list[tuple[bytes, Message | Batch | JSONRPCError]] = []
        mcp, allow_batch = self.mcp, self.allow_batch
        for line in self.lines(data):
            if isinstance(line, ParseError):
                out.append((b"", line))
                continue
            try:
                out.append((line, decode(line, mcp=mcp, allow_batch=allow_batch)))
            except JSONRPCError as exc:
                out.append((line, exc))
        return out

    def lines(self, data: bytes) -> list[bytes | ParseError]:
        """Split off every complete line ``data`` finishes; keep the unfinished rest. Text that is not
        JSON-RPC (a server's stderr) is cut here, with the same limit, and not decoded."""
        out: list[bytes | ParseError] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            else:
                if self._buffer:
                    self._buffer += data[start:end]
                    line = bytes(self._buffer)
                    self._buffer.clear()
                else:
                    line = data[start:end]
                if len(line) > self.max_line:
                    out.append(self._too_long(len(line)))
                else:
                    line = line.rstrip(b"\r")
                    if line.strip():
                        out.append(line)
            start = end + 1
        if not self._skipping:
            self._buffer += data[start:]
            if len(self._buffer) > self.max_line:
                out.append(self._too_long(len(self._buffer)))
                self._buffer.clear()
                self._skipping = True
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held back (a stream that ends here truncated a message)."""
        return len(self._buffer)

    def _too_long(self, size: int) -> ParseError:
        return ParseError(f"expected a line of at most {self.max_line} bytes, got {size} bytes "
                          f"and no newline yet; skipping to the next newline",
                          data={"maxLineBytes": self.max_line})


# --- correlation ---------------------------------------------------------------------------------

class IdAllocator:
    """Request ids 1, 2, 3, …: unique per connection, which is all JSON-RPC asks."""

    def __init__(self, start: int = 1) -> None:
        self._next = start

    def __call__(self) -> int:
        value, self._next = self._next, self._next + 1
        return value


class PendingRequests:
    """Requests sent and not yet answered, keyed by id; a reply is matched by its id alone."""

    def __init__(self) -> None:
        self._waiting: dict[RequestId, Any] = {}

    def add(self, request_id: RequestId, waiter: Any = None) -> None:
        """Remember a request about to be sent; reusing a waiting id is this side's mistake."""
        if request_id in self._waiting:
            raise LocalProtocolError(_("request id {id} is already waiting for a response; ids must be unique",
                                       id=repr(request_id)))
        self._waiting[request_id] = waiter

    def resolve(self, response: Response | ErrorResponse) -> Any:
        """The waiter for ``response.id``; an id nobody is waiting for is the peer's mistake."""
        try:
            return self._waiting.pop(response.id)  # type: ignore[arg-type]
        except KeyError:
            waiting = ", ".join(sorted(map(repr, self._waiting))) or _("none")
            if response.id is None and isinstance(response, ErrorResponse):
                # "id": null answers a message the peer could not read; no waiter can be told.
                raise RemoteProtocolError(_("got an error response with a null id ({code}: {message}): the peer "
                                            "could not read one of our messages (waiting: {waiting})",
                                            code=response.error["code"], message=response.error["message"],
                                            waiting=waiting)) from None
            raise RemoteProtocolError(_("got a response for id {id}, but no request with that id is waiting "
                                        "(waiting: {waiting})", id=repr(response.id), waiting=waiting)) from None

    def discard(self, request_id: RequestId) -> Any:
        return self._waiting.pop(request_id, None)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._waiting

    def __len__(self) -> int:
        return len(self._waiting)

    def __iter__(self):
        return iter(list(self._waiting))
