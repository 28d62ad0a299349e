"""The lifecycle of a connection, both roles, both eras: what may be sent or received now, what to send
first, and how to stamp every request after that. Sans-IO.

Theory of operation
-------------------
A **legacy** connection (revisions 2024-11-05 … 2025-11-25, spec "basic/lifecycle") opens in three steps:

    client → {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
              "capabilities":{},"clientInfo":{"name":"mcplab","version":"0.1.0"}}}
    server → {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25",
              "capabilities":{"tools":{}},"serverInfo":{"name":"weather","version":"1.0"}}}
    client → {"jsonrpc":"2.0","method":"notifications/initialized"}

after which the negotiated version and both sides' capabilities hold for the whole session.
:class:`LegacyLifecycle` keeps that session. Like h11's ``_state.py`` it never touches a pipe:
the client asks it for the messages to send (:meth:`~LegacyLifecycle.initialize_request`,
:meth:`~LegacyLifecycle.initialized_notification`), hands it the server's answer
(:meth:`~LegacyLifecycle.accept_initialize`), and asks it to :meth:`~LegacyLifecycle.prepare`
every later request. Every legal move is one row of :data:`TRANSITIONS`; any other move raises
:class:`~mcplab.wire.errors.LocalProtocolError` naming the role, the state and the event. The server's
answer is checked: its version must be one this client speaks (else :class:`UnsupportedVersion`,
and the spec says to disconnect), and a request for a capability it never declared fails here,
before anything is sent (:func:`required_capability`).

The **server** walks the same states with the moves mirrored (:data:`SERVER_TRANSITIONS`: initialize
received and answered → ``accepted``; notifications/initialized received → ``operating``). As in h11,
the code that walks a table never asks which role it plays: :class:`RoleState` is a role, a state and
:data:`TABLES`. A send or a receive that fails puts either role in ``error`` for good; every later move
raises :class:`~mcplab.wire.errors.LocalProtocolError` naming the role, the state and what failed.

A **modern** connection (2026-07-28, spec "basic/index", "server/discover") has no handshake and
no session. What ``initialize`` used to agree once now rides in every request's ``params._meta``:

    client → {"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{
              "io.modelcontextprotocol/protocolVersion":"2026-07-28",
              "io.modelcontextprotocol/clientCapabilities":{},
              "io.modelcontextprotocol/clientInfo":{"name":"mcplab","version":"0.1.0"}}}}
    server → {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],
              "capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private", …}}

:class:`ModernLifecycle` is that per-request stamping (:func:`stamp`): its ``prepare`` adds the
``_meta`` keys to every request, refuses the methods 2026-07-28 removed (``ping``,
``logging/setLevel``, ``resources/subscribe`` …) and, once ``server/discover`` has answered,
checks capabilities the same way. A modern client never answers a server request (servers ask
through MRTR, ``client/mrtr.py``). Which era a server speaks is decided in ``client/eras.py``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal, Protocol

from mcplab import __version__
from mcplab.wire.errors import LocalProtocolError, RemoteError, RemoteProtocolError
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, RequestId, Response
from mcplab.wire.versions import (
    LATEST_LEGACY, LATEST_MODERN, LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, META_SERVER_INFO, MODERN_VERSIONS, Era, at_least, era_of,
)

__all__ = [
    "INITIALIZE", "INITIALIZED", "PING", "CANCELLED", "DISCOVER", "TRANSITIONS", "SERVER_TRANSITIONS", "TABLES",
    "State", "Event", "RoleState", "Lifecycle", "CLIENT", "SERVER", "CLIENT_INFO",
    "REMOVED_IN_MODERN", "LegacyLifecycle", "ModernLifecycle", "UnsupportedVersion", "initialize_request",
    "check_initialize_result", "required_capability", "client_capabilities", "stamp", "check_discover_result",
]

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
CANCELLED = "notifications/cancelled"
DISCOVER = "server/discover"
CLIENT_INFO = {"name": "mcplab", "version": __version__}

# --- states and events -------------------------------------------------------------------------
# Like h11's sentinels: each state and event is one named constant, compared by identity, that reads
# as its wire-ish name ("idle", "send initialize") in every message and table printout. They are str
# underneath, so a log or a notebook can compare them with plain strings.


class _Named(str, Enum):
    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class State(_Named):
    """Where one role stands in the lifecycle."""
    IDLE = "idle"                          # nothing exchanged yet
    AWAITING_RESULT = "awaiting-result"    # client: initialize sent, no answer yet
    ACCEPTED = "accepted"                  # initialize answered; notifications/initialized not yet
    OPERATING = "operating"                # the session is open
    CLOSED = "closed"
    ERROR = "error"                        # a send or a receive failed: nothing more can happen


class Event(_Named):
    """What a role does or meets; the tables say in which states each is legal."""
    SEND_INITIALIZE = "send initialize"
    RECEIVE_RESULT = "receive initialize result"
    RECEIVE_ERROR = "receive initialize error"
    SEND_INITIALIZED = "send notifications/initialized"
    RECEIVE_INITIALIZE = "receive initialize"
    RECEIVE_INITIALIZED = "receive notifications/initialized"
    RECEIVE_PING = "receive ping"
    RECEIVE_REQUEST = "receive request"
    SEND_PING = "send ping"
    SEND_REQUEST = "send request"
    SEND_NOTIFICATION = "send notification"
    SEND_RESPONSE = "send response"
    CLOSE = "close"


IDLE, AWAITING_RESULT, ACCEPTED, OPERATING, CLOSED, ERROR = State
(SEND_INITIALIZE, RECEIVE_RESULT, RECEIVE_ERROR, SEND_INITIALIZED, RECEIVE_INITIALIZE, RECEIVE_INITIALIZED,
 RECEIVE_PING, RECEIVE_REQUEST, SEND_PING, SEND_REQUEST, SEND_NOTIFICATION, SEND_RESPONSE, CLOSE) = Event

CLIENT, SERVER = "client", "server"
Role = Literal["client", "server"]
Table = dict[tuple[State, Event], State]

#: (state, event) → next state: every legal move of the client, and nothing else.
TRANSITIONS: Table = {
    (IDLE, SEND_INITIALIZE): AWAITING_RESULT,
    # "The client SHOULD NOT send requests other than pings before the server has
    # responded to the initialize request"; a ping from the server must be answered.
    (AWAITING_RESULT, SEND_PING): AWAITING_RESULT,
    (AWAITING_RESULT, SEND_RESPONSE): AWAITING_RESULT,
    (AWAITING_RESULT, RECEIVE_RESULT): ACCEPTED,
    (AWAITING_RESULT, RECEIVE_ERROR): CLOSED,
    (ACCEPTED, SEND_INITIALIZED): OPERATING,
    (ACCEPTED, SEND_RESPONSE): ACCEPTED,
    (OPERATING, SEND_PING): OPERATING,
    (OPERATING, SEND_REQUEST): OPERATING,
    (OPERATING, SEND_NOTIFICATION): OPERATING,
    (OPERATING, SEND_RESPONSE): OPERATING,
    **{(state, CLOSE): CLOSED for state in (IDLE, AWAITING_RESULT, ACCEPTED, OPERATING, CLOSED)},
}

#: The same handshake seen from the server: the same states, the moves mirrored.
SERVER_TRANSITIONS: Table = {
    # "basic/lifecycle", Initialization: the handshake MUST be the first interaction; a ping may come first.
    (IDLE, RECEIVE_PING): IDLE,
    (IDLE, RECEIVE_INITIALIZE): ACCEPTED,       # the move is made when the answer is ready to go
    (ACCEPTED, RECEIVE_PING): ACCEPTED,
    (ACCEPTED, RECEIVE_REQUEST): ACCEPTED,      # the client may ask as soon as it has the answer
    (ACCEPTED, RECEIVE_INITIALIZED): OPERATING,
    (OPERATING, RECEIVE_PING): OPERATING,
    (OPERATING, RECEIVE_REQUEST): OPERATING,
    # "The server SHOULD NOT send requests other than pings and logging before receiving the
    # initialized notification": requests and list changes wait for OPERATING.
    (OPERATING, SEND_REQUEST): OPERATING,
    (OPERATING, SEND_NOTIFICATION): OPERATING,
    **{(state, CLOSE): CLOSED for state in (IDLE, ACCEPTED, OPERATING, CLOSED)},
}

#: Each role's table; both have the same shape, and the code that walks them does not know the role.
TABLES: dict[str, Table] = {CLIENT: TRANSITIONS, SERVER: SERVER_TRANSITIONS}


class RoleState:
    """One role's place in its table. A failed send or receive moves it to ERROR for good (as h11's
    ``process_error``: no table row leads there, any state can); every later move then raises,
    naming the role, the state and what failed."""

    def __init__(self, role: Role, state: State = IDLE) -> None:
        self.role, self.state = role, state
        self.failure: BaseException | None = None  # what moved the role to ERROR

    def allows(self, event: Event) -> bool:
        return (self.state, event) in TABLES[self.role]

    def move(self, event: Event) -> State:
        """Take one step of the role's table, or raise naming the role, the state and the event."""
        if self.state is ERROR:
            error = LocalProtocolError(f"{self.role} in state 'error' cannot '{event}': the connection failed "
                                       f"earlier ({type(self.failure).__name__}: {self.failure})")
            raise error from self.failure
        table = TABLES[self.role]
        try:
            self.state = table[(self.state, event)]
        except KeyError:
            legal = sorted(e for (s, e) in table if s == self.state)
            raise LocalProtocolError(f"{self.role} in state '{self.state}' cannot '{event}'; legal "
                                     f"here: {', '.join(legal) or 'nothing'}") from None
        return self.state

    def fail(self, failure: BaseException) -> None:
        """A send or a receive failed: ERROR from now on (the first failure is the one remembered)."""
        if self.state is not ERROR:
            self.state, self.failure = ERROR, failure

    def close(self) -> None:
        if self.state is not ERROR:
            self.move(CLOSE)


class Lifecycle(Protocol):
    """A client's lifecycle in either era (:class:`LegacyLifecycle`, :class:`ModernLifecycle`): what the
    client and its connection use, so neither needs to know which era it holds."""
    role: Role
    era: Era
    state: State
    requested_version: str
    capabilities: dict[str, Any]
    result: dict[str, Any] | None

    @property
    def version(self) -> str | None: ...
    @property
    def server_capabilities(self) -> dict[str, Any]: ...
    @property
    def server_info(self) -> dict[str, Any]: ...
    @property
    def instructions(self) -> str | None: ...
    def prepare(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None: ...
    def prepare_notification(self, method: str) -> None: ...
    def prepare_response(self) -> None: ...
    def fail(self, failure: BaseException) -> None: ...
    def close(self) -> None: ...


#: The server capability each client request needs: (capability, sub-capability or None).
#: completion/complete has a capability from 2025-03-26 on; 2024-11-05 declared none for it.
REQUIRED_CAPABILITY: dict[str, tuple[str, str | None]] = {
    "tools/list": ("tools", None), "tools/call": ("tools", None),
    "resources/list": ("resources", None), "resources/templates/list": ("resources", None),
    "resources/read": ("resources", None),
    "resources/subscribe": ("resources", "subscribe"), "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts", None), "prompts/get": ("prompts", None),
    "completion/complete": ("completions", None),
    "logging/setLevel": ("logging", None),
}


class UnsupportedVersion(RemoteProtocolError):
    """The server answered ``initialize`` with a protocol version this client does not speak."""

    def __init__(self, requested: str, answered: Any, supported: tuple[str, ...] = LEGACY_VERSIONS) -> None:
        super().__init__(f"asked the server for protocol version {requested}, it answered {answered!r}, "
                         f"which this client does not speak (it speaks {', '.join(supported)}); "
                         f"the spec says to disconnect")
        self.requested, self.answered, self.supported = requested, answered, supported


def client_capabilities(*, sampling: bool = False, elicitation: bool = False, roots: bool = False,
                        version: str = LATEST_LEGACY) -> dict[str, Any]:
    """The ``capabilities`` object a client declares: only what it has a handler for."""
    capabilities: dict[str, Any] = {}
    if roots:  # 2026-07-28 dropped roots.listChanged with notifications/roots/list_changed
        capabilities["roots"] = {} if era_of(version) == "modern" else {"listChanged": True}
    if sampling:
        capabilities["sampling"] = {}
    if elicitation and at_least(version, "2025-06-18"):  # elicitation arrived in 2025-06-18
        capabilities["elicitation"] = {}
    return capabilities


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


def required_capability(method: str, version: str) -> tuple[str, str | None] | None:
    """The server capability ``method`` needs under ``version``, or None when it needs none."""
    if method == "completion/complete" and not at_least(version, "2025-03-26"):
        return None
    return REQUIRED_CAPABILITY.get(method)


class LegacyLifecycle(RoleState):
    """One legacy session, client side: what was asked, what was agreed, what may be sent now."""

    era: Era = "legacy"

    def __init__(self, version: str = LATEST_LEGACY, *, capabilities: dict[str, Any] | None = None,
                 client_info: dict[str, Any] | None = None) -> None:
        if version not in LEGACY_VERSIONS:
            raise LocalProtocolError(f"this client does not speak protocol version {version!r} with "
                                     f"initialize; legacy versions are {', '.join(LEGACY_VERSIONS)}")
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
                raise LocalProtocolError(f"{method} needs the server capability {name!r}, which this server "
                                         f"did not declare (it declared: "
                                         f"{', '.join(self.server_capabilities) or 'nothing'})")
            if sub is not None and not declared.get(sub):
                raise LocalProtocolError(f"{method} needs the server capability {name}.{sub}, which this "
                                         f"server did not declare")
        return params

    def prepare_notification(self, method: str) -> None:
        self.move(SEND_NOTIFICATION)

    def prepare_response(self) -> None:
        self.move(SEND_RESPONSE)


# --- the modern era: no handshake, every request stamped ----------------------------------------

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
                listed = ", ".join(self.server_capabilities) or "nothing"
                raise LocalProtocolError(f"{method} needs the server capability {needed}, which server/discover "
                                         f"did not list (it listed: {listed})")
        return self.stamp(params)

    def prepare_notification(self, method: str) -> None:
        self._check_open(method)
        if method in REMOVED_IN_MODERN:
            raise LocalProtocolError(f"{method} does not exist in protocol version {self.version}")

    def prepare_response(self) -> None:
        raise LocalProtocolError("in the modern era a client never sends responses: a server asks for input "
                                 "inside a result (resultType \"input_required\"), not with a request")

