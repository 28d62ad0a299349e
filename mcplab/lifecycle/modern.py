"""The modern era (2026-07-28), client side: no handshake and no session, every request stamped.
Sans-IO.

Theory of operation
-------------------
A modern connection (spec "basic/index", "server/discover") has nothing to open. What ``initialize``
used to agree once now rides in every request's ``params._meta``:

    client → {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
              "io.modelcontextprotocol/protocolVersion":"2026-07-28",
              "io.modelcontextprotocol/clientCapabilities":{},
              "io.modelcontextprotocol/clientInfo":{"name":"mcplab","version":"0.1.0"}}}}
    server → {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],
              "capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private", …}}

:class:`ModernLifecycle` is that per-request stamping (:func:`stamp`): its ``prepare`` adds the
``_meta`` keys to every request, refuses the methods 2026-07-28 removed (:data:`REMOVED_IN_MODERN`:
``ping``, ``logging/setLevel``, ``resources/subscribe`` …) and, once ``server/discover`` has answered,
checks capabilities as the legacy era does. A modern client never answers a server request (servers
ask through MRTR, ``client/mrtr.py``). Which era a server speaks is decided in ``client/eras.py``.
"""

from __future__ import annotations

from typing import Any

from mcplab.lifecycle.capabilities import required_capability
from mcplab.lifecycle.states import (
    CLIENT, CLIENT_INFO, CLOSED, DISCOVER, ERROR, INITIALIZE, INITIALIZED, OPERATING, PING, SEND_NOTIFICATION,
    SEND_REQUEST,
)
from mcplab.i18n import _
from mcplab.lifecycle.tables import RoleState
from mcplab.wire.errors import LocalProtocolError, RemoteProtocolError
from mcplab.wire.jsonrpc import Request, RequestId
from mcplab.wire.versions import (
    LATEST_MODERN, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
    META_SERVER_INFO, MODERN_VERSIONS, Era,
)

__all__ = ["REMOVED_IN_MODERN", "stamp", "check_discover_result", "ModernLifecycle"]

#: What 2026-07-28 removed (spec "changelog"); a modern client must not send any of it.
REMOVED_IN_MODERN = frozenset({INITIALIZE, INITIALIZED, PING, "logging/setLevel", "resources/subscribe",
                               "resources/unsubscribe", "notifications/roots/list_changed"})


def stamp(params: dict[str, Any] | None, version: str, capabilities: dict[str, Any],
          client_info: dict[str, Any] | None = None, log_level: str | None = None) -> dict[str, Any]:
    """``params`` with the modern ``_meta`` keys added; ``_meta`` keys already there (``progressToken``) stay.

    >>> stamp({"name": "get_weather"}, "2026-07-28", {})
    {'name': 'get_weather', '_meta': {'io.modelcontextprotocol/protocolVersion': '2026-07-28', \
'io.modelcontextprotocol/clientCapabilities': {}}}
    """
    meta = dict((params or {}).get("_meta") or {})
    meta[META_PROTOCOL_VERSION] = version
    meta[META_CLIENT_CAPABILITIES] = capabilities  # required, even when empty
    if client_info:
        meta[META_CLIENT_INFO] = client_info       # SHOULD: identity for display and logs only
    if log_level:
        meta[META_LOG_LEVEL] = log_level           # opt in to notifications/message for this request
    return {**(params or {}), "_meta": meta}


def check_discover_result(result: Any) -> dict[str, Any]:
    """Check a ``server/discover`` result; return it, or raise naming what is wrong."""
    if not isinstance(result, dict):
        raise RemoteProtocolError(f"expected the server/discover result to be a JSON object, got {result!r}")
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise RemoteProtocolError(f"the server/discover result has no \"supportedVersions\" list of strings "
                                  f"(got {versions!r})")
    if not isinstance(result.get("capabilities"), dict):
        raise RemoteProtocolError(f"the server/discover result has no \"capabilities\" object "
                                  f"(got {result.get('capabilities')!r})")
    return result


class ModernLifecycle(RoleState):
    """The modern era, client side: nothing to open, every request stamped with who is asking."""

    era: Era = "modern"

    def __init__(self, version: str = LATEST_MODERN, *, capabilities: dict[str, Any] | None = None,
                 client_info: dict[str, Any] | None = None, log_level: str | None = None) -> None:
        if version not in MODERN_VERSIONS:
            raise LocalProtocolError(f"{version!r} is not a modern protocol version; modern versions are "
                                     f"{', '.join(MODERN_VERSIONS)}")
        super().__init__(CLIENT, OPERATING)  # every request stands alone, so there is nothing to open
        self.requested_version = self.version = version
        self.capabilities = dict(capabilities or {})
        self.client_info = dict(client_info or CLIENT_INFO)
        self.log_level = log_level
        self.result: dict[str, Any] | None = None  # the DiscoverResult, once the server answered

    def stamp(self, params: dict[str, Any] | None) -> dict[str, Any]:
        return stamp(params, self.version, self.capabilities, self.client_info, self.log_level)

    def use_version(self, version: str) -> None:
        """Stamp ``version`` from now on (after -32022 named the versions the server supports)."""
        if version not in MODERN_VERSIONS:
            raise LocalProtocolError(f"{version!r} is not a modern protocol version")
        self.version = version

    def discover_request(self, request_id: RequestId) -> Request:
        return Request(request_id, DISCOVER, self.stamp(None))

    def accept_discover(self, result: Any) -> dict[str, Any]:
        """Keep the server's DiscoverResult: its capabilities, identity and instructions."""
        self.result = check_discover_result(result)
        return self.result

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.result["capabilities"] if self.result else {}

    @property
    def server_info(self) -> dict[str, Any]:
        if not self.result:
            return {}
        meta = self.result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        return info if isinstance(info, dict) else self.result.get("serverInfo") or {}

    @property
    def instructions(self) -> str | None:
        return self.result.get("instructions") if self.result else None

    def _check_open(self, what: str) -> None:
        if self.state is ERROR:
            self.move(SEND_NOTIFICATION if what.startswith("notifications/") else SEND_REQUEST)  # raises, naming why
        if self.state is CLOSED:
            raise LocalProtocolError(f"{self.role} in state 'closed' cannot send {what}")

    def prepare(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """Refuse what the modern era removed or the server never declared; stamp ``_meta`` on the rest."""
        self._check_open(method)
        if method in REMOVED_IN_MODERN:
            raise LocalProtocolError(f"{method} does not exist in protocol version {self.version} (the "
                                     f"modern era removed it); this connection speaks the modern era")
        need = required_capability(method, self.version)
        if need is not None and self.result is not None:
            name, sub = need
            declared = self.server_capabilities.get(name)
            if not isinstance(declared, dict) or (sub is not None and not declared.get(sub)):
                needed = name if sub is None else f"{name}.{sub}"
                listed = ", ".join(self.server_capabilities) or _("nothing")
                raise LocalProtocolError(_("{method} needs the server capability {name}, which server/discover did "
                                           "not list (it listed: {listed})", method=method, name=needed,
                                           listed=listed))
        return self.stamp(params)

    def prepare_notification(self, method: str) -> None:
        self._check_open(method)
        if method in REMOVED_IN_MODERN:
            raise LocalProtocolError(f"{method} does not exist in protocol version {self.version}")

    def prepare_response(self) -> None:
        raise LocalProtocolError("in the modern era a client never sends responses: a server asks for input "
                                 "inside a result (resultType \"input_required\"), not with a request")
