"""Every error mcplab raises, in one tree, and the error codes that travel on the wire.

Theory of operation
-------------------
A JSON-RPC error response carries ``{"code": int, "message": str, "data"?: any}``.
The codes below are the only ones mcplab sends; each says where it is defined.

Three families of exception, after h11's split between "you broke it" and "the peer broke it":

* :class:`JSONRPCError` and its subclasses, one class per wire code. They are raised
  when a message cannot be accepted (by ``jsonrpc.decode`` for framing and shape, by the
  server toolkit for methods and params) and they know how to become the error object
  the peer should receive (:meth:`JSONRPCError.to_error`).
* :class:`RemoteError`: the peer answered one of *our* requests with an error response.
  It keeps the peer's ``code``, ``message`` and ``data`` untouched.
* Local and transport failures: :class:`LocalProtocolError` (this side tried something
  the protocol forbids, e.g. calling a capability the server never declared),
  :class:`RemoteProtocolError` (the peer sent something impossible, e.g. a response to
  an id nobody asked), :class:`TransportError` and :class:`ServerExited` (the process or
  connection went away; carries the exit code and the last lines of the server's stderr),
  :class:`RequestTimeout`.

All of them derive from :class:`MCPLabError`, so ``except MCPLabError`` catches every
typed failure and nothing else.
"""

from __future__ import annotations

import signal
from typing import Any

from mcplab.i18n import _

# --- JSON-RPC 2.0, section 5.1 ("Error object") -------------------------------------------
PARSE_ERROR = -32700
"""Invalid JSON was received (JSON-RPC 2.0 §5.1)."""
INVALID_REQUEST = -32600
"""The JSON sent is not a valid Request object (JSON-RPC 2.0 §5.1)."""
METHOD_NOT_FOUND = -32601
"""The method does not exist or is not available (JSON-RPC 2.0 §5.1)."""
INVALID_PARAMS = -32602
"""Invalid method parameters (JSON-RPC 2.0 §5.1); MCP also uses it for unknown tools and prompts."""
INTERNAL_ERROR = -32603
"""Internal JSON-RPC error (JSON-RPC 2.0 §5.1)."""

# --- MCP's own codes, in the -32000..-32099 range JSON-RPC reserves for implementations -----
# Until 2025-11-25 MCP simply used that range. 2026-07-28 splits it ("basic", Error Codes):
# -32000..-32019 is left to implementations (no new codes), -32020..-32099 is the spec's own.
RESOURCE_NOT_FOUND = -32002
"""Resource not found: MCP 2024-11-05 … 2025-11-25 (server/resources, "Error Handling"); 2026-07-28
retired it (servers answer -32602, and clients SHOULD still accept -32002 from older servers)."""
HEADER_MISMATCH = -32020
"""HTTP headers disagree with the body, or a required header is missing (MCP 2026-07-28)."""
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
"""The request needs a client capability the client did not declare (MCP 2026-07-28)."""
UNSUPPORTED_PROTOCOL_VERSION = -32022
"""The request's protocol version is unknown or unsupported (MCP 2026-07-28)."""

ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    RESOURCE_NOT_FOUND: "Resource not found",
    HEADER_MISMATCH: "Header mismatch",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "Missing required client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}


DEFINED_BY: dict[int, str] = {
    PARSE_ERROR: "JSON-RPC 2.0", INVALID_REQUEST: "JSON-RPC 2.0", METHOD_NOT_FOUND: "JSON-RPC 2.0",
    INVALID_PARAMS: "JSON-RPC 2.0", INTERNAL_ERROR: "JSON-RPC 2.0",
    RESOURCE_NOT_FOUND: "MCP 2024-11-05 … 2025-11-25 (2026-07-28 answers -32602 instead)",
    HEADER_MISMATCH: "MCP 2026-07-28", MISSING_REQUIRED_CLIENT_CAPABILITY: "MCP 2026-07-28",
    UNSUPPORTED_PROTOCOL_VERSION: "MCP 2026-07-28",
}
"""Which specification defines each code, and in which MCP revisions it holds."""


def error_name(code: int) -> str:
    """The short name of a wire error code, e.g. ``-32601`` → ``"Method not found"``."""
    if code in ERROR_NAMES:
        return ERROR_NAMES[code]
    if -32099 <= code <= -32000:
        return "Server error"
    return "Application error"


class MCPLabError(Exception):
    """Base of every error mcplab raises on purpose."""


class JSONRPCError(MCPLabError):
    """A message that must be refused with a JSON-RPC error response.

    ``request_id`` is the id of the offending request when it could be read (the reply
    echoes it), else ``None`` (the reply leaves the id out, or carries ``"id": null`` in the
    revisions before 2025-11-25: ``jsonrpc.error_response``). ``raw`` is the text as it
    arrived, so a trace can show what was refused.
    """

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, *, data: Any = None, request_id: str | int | None = None,
                 raw: str | bytes | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        self.request_id = request_id
        self.raw = raw

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC error object for the reply: ``{"code", "message", "data"?}``."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"


class ParseError(JSONRPCError):
    """The bytes are not JSON (or not UTF-8, or the line was too long to read)."""
    code = PARSE_ERROR


class InvalidRequest(JSONRPCError):
    """Valid JSON, but not a JSON-RPC 2.0 message; ``message`` says which rule it broke."""
    code = INVALID_REQUEST


class MethodNotFound(JSONRPCError):
    code = METHOD_NOT_FOUND


class InvalidParams(JSONRPCError):
    code = INVALID_PARAMS


class InternalError(JSONRPCError):
    code = INTERNAL_ERROR


class ResourceNotFound(JSONRPCError):
    code = RESOURCE_NOT_FOUND


class HeaderMismatch(JSONRPCError):
    code = HEADER_MISMATCH


class MissingRequiredClientCapability(JSONRPCError):
    code = MISSING_REQUIRED_CLIENT_CAPABILITY


class UnsupportedProtocolVersion(JSONRPCError):
    code = UNSUPPORTED_PROTOCOL_VERSION


class RemoteError(MCPLabError):
    """The peer answered our request with a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None) -> None:
        if method:
            said = _("the server answered to {method} with error {code} ({name}): {message}", method=method, code=code,
                     name=error_name(code), message=message)
        else:
            said = _("the server answered with error {code} ({name}): {message}", code=code, name=error_name(code),
                     message=message)
        super().__init__(said)
        self.code = code
        self.message = message
        self.data = data
        self.method = method


class LocalProtocolError(MCPLabError):
    """This side tried something the protocol does not allow (nothing was sent)."""


class RemoteProtocolError(MCPLabError):
    """The peer sent something the protocol does not allow; ``raw`` is what it sent."""

    def __init__(self, message: str, *, raw: str | bytes | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class TransportError(MCPLabError):
    """The connection failed or closed; ``stderr_tail`` holds the server's last stderr lines."""

    def __init__(self, message: str, *, stderr_tail: list[str] | None = None) -> None:
        self.stderr_tail = list(stderr_tail or [])
        if self.stderr_tail:
            message += "\nlast lines on the server's stderr:\n  " + "\n  ".join(self.stderr_tail)
        super().__init__(message)


class ServerExited(TransportError):
    """The server process ended; ``returncode`` is its exit status."""

    def __init__(self, message: str, *, returncode: int | None, stderr_tail: list[str] | None = None) -> None:
        super().__init__(message, stderr_tail=stderr_tail)
        self.returncode = returncode

    @classmethod
    def ended(cls, code: int, stderr_tail: list[str] | None = None) -> ServerExited:
        """A server that ended with exit status ``code``, said plainly (a negative code: killed by that signal)."""
        if code >= 0:
            return cls(_("the server exited with code {code}", code=code), returncode=code, stderr_tail=stderr_tail)
        name = next((s.name for s in signal.Signals if s == -code), "unknown signal")
        return cls(_("the server was killed by signal {number} ({name})", number=-code, name=name), returncode=code,
                   stderr_tail=stderr_tail)


class HTTPStatusError(TransportError):
    """An HTTP exchange ended with a status the protocol does not expect."""

    def __init__(self, message: str, *, status: int, body: str = "", headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


class SessionExpired(HTTPStatusError):
    """HTTP 404 for a request that named a legacy session: the server ended it, and the client MUST
    start a new one with a fresh ``initialize`` (2025-11-25 transports, "Session Management")."""


class AuthorizationError(TransportError):
    """The OAuth flow stopped: a server refused (``error`` holds the RFC's code, e.g. ``invalid_grant``),
    or what it said failed a check the spec requires (a foreign ``resource``, a wrong ``iss``)."""

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


class RequestTimeout(MCPLabError):
    """No response arrived in time; the request was cancelled on the wire."""
