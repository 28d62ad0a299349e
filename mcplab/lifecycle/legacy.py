"""The legacy era, client side: the ``initialize`` request, the check of its answer, and the session
that follows. Sans-IO.

Theory of operation
-------------------
A legacy connection (revisions 2024-11-05 … 2025-11-25, spec "basic/lifecycle") opens in three steps:

    client → {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
              "capabilities":{},"clientInfo":{"name":"mcplab","version":"0.1.0"}}}
    server → {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",
              "capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1.0"}}}
    client → {"jsonrpc":"2.0","method":"notifications/initialized"}

after which the negotiated version and both sides' capabilities hold for the whole session.
:class:`LegacyLifecycle` keeps that session. Like h11 it never touches a pipe: the client asks it for
the messages to send (:meth:`~LegacyLifecycle.initialize_request`,
:meth:`~LegacyLifecycle.initialized_notification`), hands it the server's answer
(:meth:`~LegacyLifecycle.accept_initialize`), and asks it to :meth:`~LegacyLifecycle.prepare` every
later request. Each step is a move of the client's table (:data:`~mcplab.lifecycle.tables.TRANSITIONS`).
The server's answer is checked (:func:`check_initialize_result`): its version must be one this client
speaks (else :class:`UnsupportedVersion`, and the spec says to disconnect), and a request for a
capability it never declared fails here, before anything is sent.
"""

from __future__ import annotations

from typing import Any

from mcplab.lifecycle.capabilities import required_capability
from mcplab.lifecycle.states import (
    CLIENT, CLIENT_INFO, CLOSE, INITIALIZE, INITIALIZED, PING, RECEIVE_ERROR, RECEIVE_RESULT, SEND_INITIALIZE,
    SEND_INITIALIZED, SEND_NOTIFICATION, SEND_PING, SEND_REQUEST, SEND_RESPONSE,
)
from mcplab.i18n import _
from mcplab.lifecycle.tables import RoleState
from mcplab.wire.errors import LocalProtocolError, RemoteError, RemoteProtocolError
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response
from mcplab.wire.versions import LATEST_LEGACY, LEGACY_VERSIONS, Era

__all__ = ["UnsupportedVersion", "initialize_request", "check_initialize_result", "LegacyLifecycle"]

class UnsupportedVersion(RemoteProtocolError):
    """The server answered ``initialize`` with a protocol version this client does not speak."""

    def __init__(self, requested: str, answered: Any, supported: tuple[str, ...] = LEGACY_VERSIONS) -> None:
        super().__init__(_("asked the server for protocol version {requested}, it answered {answered}, which this "
                           "client does not speak (it speaks {supported}); the spec says to disconnect",
                           requested=requested, answered=repr(answered), supported=", ".join(supported)))
        self.requested, self.answered, self.supported = requested, answered, supported



def initialize_request(request_id: RequestId, version: str = LATEST_LEGACY, *,
                       capabilities: dict[str, Any] | None = None,
                       client_info: dict[str, Any] | None = None) -> Request:
    """The first message of a legacy connection.

    >>> initialize_request(1, "2024-11-05").params["protocolVersion"]
    '2024-11-05'
    """
    return Request(request_id, INITIALIZE, {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": dict(client_info or CLIENT_INFO),  # a copy: the caller may change its request
    })


def check_initialize_result(result: Any, requested: str,
                            supported: tuple[str, ...] = LEGACY_VERSIONS) -> dict[str, Any]:
    """Check the server's ``initialize`` result; return it, or raise naming what is wrong."""
    if not isinstance(result, dict):
        raise RemoteProtocolError(f"expected the initialize result to be a JSON object, got {result!r}")
    for key in ("protocolVersion", "capabilities", "serverInfo"):
        if key not in result:
            raise RemoteProtocolError(f"the initialize result has no {key!r}; the spec requires "
                                      f"protocolVersion, capabilities and serverInfo")
    if not isinstance(result["capabilities"], dict):
        raise RemoteProtocolError(f"expected \"capabilities\" to be an object, got {result['capabilities']!r}")
    if result["protocolVersion"] not in supported:
        raise UnsupportedVersion(requested, result["protocolVersion"], supported)
    return result



class LegacyLifecycle(RoleState):
    """One legacy session, client side: what was asked, what was agreed, what may be sent now."""

    era: Era = "legacy"

    def __init__(self, version: str = LATEST_LEGACY, *, capabilities: dict[str, Any] | None = None,
                 client_info: dict[str, Any] | None = None) -> None:
        if version not in LEGACY_VERSIONS:
            raise LocalProtocolError(_("this client does not speak protocol version {version} with initialize; "
                                       "legacy versions are {versions}", version=repr(version),
                                       versions=", ".join(LEGACY_VERSIONS)))
        super().__init__(CLIENT)
        self.requested_version = version
        self.capabilities = dict(capabilities or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.result: dict[str, Any] | None = None  # the server's initialize result, once accepted

    # --- opening -------------------------------------------------------------------------------
    def initialize_request(self, request_id: RequestId) -> Request:
        self.move(SEND_INITIALIZE)
        return initialize_request(request_id, self.requested_version,
                                  capabilities=self.capabilities, client_info=self.client_info)

    def accept_initialize(self, response: Response | ErrorResponse) -> dict[str, Any]:
        """Take the server's answer to ``initialize``; raise if it refused or answered wrongly."""
        if isinstance(response, ErrorResponse):
            self.move(RECEIVE_ERROR)
            raise RemoteError(response.code, response.message, response.data, method=INITIALIZE)
        try:
            result = check_initialize_result(response.result, self.requested_version)
        except RemoteProtocolError:
            self.move(CLOSE)
            raise
        self.move(RECEIVE_RESULT)
        self.result = result
        return result

    def initialized_notification(self) -> Notification:
        self.move(SEND_INITIALIZED)
        return Notification(INITIALIZED)

    # --- operating -----------------------------------------------------------------------------
    @property
    def version(self) -> str | None:
        """The negotiated protocol version (None before the server answered)."""
        return self.result["protocolVersion"] if self.result else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.result["capabilities"] if self.result else {}

    @property
    def server_info(self) -> dict[str, Any]:
        return self.result["serverInfo"] if self.result else {}

    @property
    def instructions(self) -> str | None:
        return self.result.get("instructions") if self.result else None

    def prepare(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """Check that ``method`` may be sent now and stamp its params (legacy: nothing to add)."""
        if method == PING:
            self.move(SEND_PING)
            return params
        self.move(SEND_REQUEST)
        need = required_capability(method, self.version or self.requested_version)
        if need is not None:
            name, sub = need
            declared = self.server_capabilities.get(name)
            if not isinstance(declared, dict):
                raise LocalProtocolError(_("{method} needs the server capability {name}, which this server did "
                                           "not declare (it declared: {declared})", method=method, name=repr(name),
                                           declared=", ".join(self.server_capabilities) or _("nothing")))
            if sub is not None and not declared.get(sub):
                raise LocalProtocolError(_("{method} needs the server capability {name}, which this server did "
                                           "not declare", method=method, name=f"{name}.{sub}"))
        return params

    def prepare_notification(self, method: str) -> None:
        self.move(SEND_NOTIFICATION)

    def prepare_response(self) -> None:
        self.move(SEND_RESPONSE)
