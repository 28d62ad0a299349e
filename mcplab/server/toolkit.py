"""The server toolkit: register tools, resources and prompts; answer MCP messages. Sans-IO.

Theory of operation
-------------------
A :class:`Server` is a catalogue plus one pure-ish function, :meth:`Server.handle`::

    reply = await server.handle(decoded_message, connection)   # a Response, an ErrorResponse, or None

``handle`` never reads or writes bytes. A runner (``stdio.py``, ``streamable_http/``) decodes a frame,
calls ``handle``, encodes the reply; the :class:`~mcplab.server.context.ClientState` it passes in holds
the era, the negotiated version and the way back to the client. ``handle`` is ``async`` only because
tools may be: a tool that reports progress or asks the client something awaits the runner.

Two eras share ``handle``. The connection's ``era`` says which one answers: ``"modern"`` requests
(2026-07-28) go to ``modern.answer``, which checks the per-request ``_meta`` and then calls the same
handlers; a dual-era connection (``era`` None) decides from the request itself (``modern.era_for``).
What follows is the legacy path.

Requests are dispatched through one table, ``handlers.REQUESTS``: method → (function, the server
capability it belongs to). Before the function runs, four checks decide the error, in this order:

1. unknown method, or a capability this server does not offer → -32601 Method not found;
2. legacy lifecycle (the server's table in ``lifecycle/tables.py``): only ``initialize`` and ``ping`` before
   ``initialize`` → -32600 Invalid Request, and ``initialize`` only once per connection → -32600;
3. ``params`` must be an object → -32602 Invalid params;
4. the function's own checks (unknown tool, bad cursor, missing argument ...) → -32602, or -32002 for
   a resource that is not there (the legacy revisions' code; 2026-07-28 says -32602). A resource
   function says "not there" with a bare ``LookupError``; a ``KeyError`` or any other exception is
   a bug: -32603, with the traceback logged on stderr (spec server/resources, "Error Handling").

A failing *tool* is not a protocol error: it returns a result with ``isError: true`` whose text the
model can read. Invalid tool arguments are a protocol error up to 2025-06-18 and a tool execution error
from 2025-11-25 (SEP-1303), so the model can correct itself.

Notifications never get a reply (JSON-RPC 2.0 §4.1): an unknown or early one is ignored and logged.
"""

from __future__ import annotations

import inspect
import logging
import weakref
from typing import Any, Callable, Iterable

from mcplab.lifecycle import (
    IDLE, RECEIVE_INITIALIZE, RECEIVE_INITIALIZED, RECEIVE_PING, RECEIVE_REQUEST, SEND_NOTIFICATION,
)
from mcplab.wire.errors import (
    InternalError, InvalidParams, InvalidRequest, JSONRPCError, LocalProtocolError, MethodNotFound,
)
from mcplab.wire import jsonrpc
from mcplab.wire.jsonrpc import ErrorResponse, Message, Notification, Request, Response, is_request_id
from mcplab.server import catalogue, modern, subscriptions
from mcplab.server.catalogue import Completer, Prompt, Resource, ResourceTemplate, Tool
from mcplab.server.context import ClientState, Context, Peer
from mcplab.server.handlers import REQUESTS
from mcplab.server.schema import check_output_schema, header_parameters, parse_docstring, reflect
from mcplab.wire.versions import LATEST_LEGACY, Era, ServerEra, at_least

log = logging.getLogger("mcplab.server")

USER_CODE = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete", "resources/list"})
"""Methods that run the server author's functions: a runner should not let them block other requests."""

RECEIVED = {"initialize": RECEIVE_INITIALIZE, "ping": RECEIVE_PING}
"""The lifecycle event a request is, when it is not just any request (lifecycle.SERVER_TRANSITIONS)."""


class Server:
    """A catalogue of tools, resources and prompts, and :meth:`handle` to answer MCP messages.

    It declares only what it really does: ``logging`` only when told (``declare_logging=True``; Logging, like
    Roots and Sampling, is deprecated in 2026-07-28, SEP-2577), list changes and subscriptions only
    where the transport can carry them (:meth:`capabilities`).
    """

    # What one client may make a server hold (set on an instance to change them; --ask-timeout sets the first).
    ask_timeout = 300.0      # seconds a client has to answer the server's question (a person may be filling a form)
    max_asking = 16          # questions one session may leave unanswered at once
    max_subscriptions = 100  # resources/subscribe: URIs one session may watch

    def __init__(self, name: str, version: str = "0.1.0", *, title: str | None = None,
                 instructions: str | None = None, page_size: int = 50, declare_logging: bool = False,
                 ttl_ms: dict[str, int] | None = None, cache_scope: str | dict[str, str] | None = None,
                 state_key: bytes | None = None) -> None:
        """``declare_logging=True`` declares the ``logging`` capability, for a server whose tools send log
        messages (``ctx.info(...)``). Logging is deprecated in 2026-07-28 (SEP-2577, "deprecated
        features"): a new server logs to stderr instead, so the default declares nothing."""
        self.info = {k: v for k, v in {"name": name, "title": title, "version": version}.items() if v}
        self.instructions = instructions
        self.page_size = page_size
        self.declare_logging = declare_logging
        # Modern caching hints, per method: resources are private and stale unless marked (modern.py).
        self.ttl_ms, self.cache_scope = modern.cache_hints(ttl_ms, cache_scope)
        self._state_key = state_key
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.connections: weakref.WeakSet[ClientState] = weakref.WeakSet()
        self.listeners: list[subscriptions.Subscription] = []  # open subscriptions/listen requests
        self.memo: dict[Any, Any] = {}  # facts derived from the catalogue (modern.py); emptied when it changes

    # --- registration --------------------------------------------------------------------------------

    def tool(self, fn: Callable | None = None, /, *, name: str | None = None, description: str | None = None,
             schema: dict[str, Any] | None = None, output_schema: dict[str, Any] | None = None,
             title: str | None = None, annotations: dict[str, Any] | None = None) -> Any:
        """Register a tool; ``@server.tool`` or ``@server.tool(name=..., schema=...)``.

        Without ``schema`` the inputSchema is reflected from the signature and docstring (schema.py).
        """
        def register(f: Callable) -> Callable:
            if output_schema is not None:
                check_output_schema(output_schema, name or f.__name__)
            reflected, doc, context_param = reflect(f, skip=Context, types=schema is None)
            params = inspect.signature(f).parameters
            self.add(Tool(name or f.__name__, f, description if description is not None else doc,
                          schema or reflected, output_schema, title, annotations, context_param,
                          frozenset(params) - {context_param},
                          any(p.kind is p.VAR_KEYWORD for p in params.values()),
                          headers=header_parameters(schema or reflected, name or f.__name__)))
            return f
        return register(fn) if fn is not None else register

    def resource(self, uri: str, *, name: str | None = None, description: str | None = None,
                 mime_type: str | None = None, title: str | None = None,
                 lister: Callable[[], Iterable[dict[str, Any]]] | None = None,
                 complete: dict[str, Completer] | None = None) -> Callable:
        """Register a resource (a fixed URI) or a resource template (a URI with ``{variables}``)."""
        def register(f: Callable) -> Callable:
            _, doc, context_param = reflect(f, skip=Context, types=False)
            args = dict(name=name or f.__name__, description=description if description is not None else doc,
                        mime_type=mime_type, title=title, context_param=context_param)
            if "{" in uri:
                self.add(ResourceTemplate(uri_template=uri, fn=f, **args, lister=lister,
                                          completers=dict(complete or {})))
            else:
                self.add(Resource(uri=uri, fn=f, **args))
            return f
        return register

    def prompt(self, fn: Callable | None = None, /, *, name: str | None = None, description: str | None = None,
               title: str | None = None, complete: dict[str, Completer] | None = None) -> Any:
        """Register a prompt; its parameters become the prompt's (string) arguments."""
        def register(f: Callable) -> Callable:
            doc, notes = parse_docstring(f)
            arguments, choices, context_param = catalogue.prompt_arguments(f, notes, Context)
            self.add(Prompt(name or f.__name__, f, description if description is not None else doc, arguments,
                            title, context_param, choices, {**choices, **(complete or {})}))
            return f
        return register(fn) if fn is not None else register

    def add(self, item: Tool | Resource | ResourceTemplate | Prompt) -> None:
        """Add (or replace) one catalogue entry; connected clients hear ``list_changed``."""
        if isinstance(item, Tool):
            self.tools[item.name] = item
        elif isinstance(item, Resource):
            self.resources[item.uri] = item
        elif isinstance(item, ResourceTemplate):
            self.templates = [t for t in self.templates if t.uri_template != item.uri_template] + [item]
        else:
            self.prompts[item.name] = item
        self.changed(_kind(item))

    def remove(self, kind: str, key: str) -> None:
        """Remove a tool, prompt (by name) or resource (by URI); connected clients hear ``list_changed``."""
        {"tools": self.tools, "prompts": self.prompts, "resources": self.resources}[kind].pop(key, None)
        self.changed(kind)

    # --- talking to connected clients ---------------------------------------------------------------

    def connect(self, peer: Peer, era: ServerEra = "legacy") -> ClientState:
        """A new connection; the runner keeps it for as long as the client is there.

        ``era`` is what the server was started to speak: ``"legacy"``, ``"modern"``, or ``"dual"``,
        where the connection decides from its first served request (modern.py).
        """
        connection = ClientState(peer, None if era == "dual" else era, eras=era)
        self.connections.add(connection)
        return connection

    @staticmethod
    def era_for(message: Message, *, version_header: str | None = None) -> Era | None:
        """The era one message belongs to (``modern.era_for``): HTTP asks this for every request."""
        return modern.era_for(message, version_header=version_header)

    @property
    def state_key(self) -> bytes:
        """The HMAC key that seals ``requestState`` (mrtr.py): random, drawn once per process."""
        if self._state_key is None:
            import secrets  # only a server that asks its clients something needs it

            self._state_key = secrets.token_bytes(32)
        return self._state_key

    def page(self, items: list[Any], cursor: Any, what: str) -> tuple[list[Any], str | None]:
        """One page of a list (``what``: "tools", "resources" ...) from ``cursor`` on, and the next page's cursor.

        The toolkit's own cursor is ``catalogue.page``'s, of :attr:`page_size` items. A server may
        give itself another (Lab 11: ``server.page = my_page``), with this signature: it returns the
        items and the next cursor (None on the last page), and raises ``InvalidParams`` (-32602) for
        a cursor it did not issue (MCP "pagination").
        """
        return catalogue.page(items, cursor, what, self.page_size)

    def changed(self, kind: str) -> None:
        """Tell every ready client that the tools, resources or prompts list changed."""
        self.memo.clear()
        for conn in list(self.connections):
            if conn.era == "legacy" and conn.lifecycle.allows(SEND_NOTIFICATION) and kind in conn.server_capabilities:
                conn.peer.post(Notification(f"notifications/{kind}/list_changed"))
        subscriptions.list_changed(self.listeners, kind)

    def resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to ``uri`` that it changed (``notifications/resources/updated``)."""
        for conn in list(self.connections):
            if uri in conn.subscriptions:
                conn.peer.post(Notification("notifications/resources/updated", {"uri": uri}))
        subscriptions.resource_updated(self.listeners, uri)

    def capabilities(self, version: str, *, pushes: bool = True) -> dict[str, Any]:
        """The server capabilities: only what this server really offers, in ``version``'s vocabulary.

        ``pushes``: can the transport carry a message that answers no request (list changes, resource
        updates)? stdio can, a legacy HTTP session can on its GET stream, a modern one only on a
        ``subscriptions/listen`` stream; without, ``listChanged`` and ``subscribe`` are not promised.
        """
        caps: dict[str, Any] = {}
        changes = {"listChanged": True} if pushes else {}
        if self.completions_offered() and at_least(version, "2025-03-26"):
            caps["completions"] = {}
        if self.declare_logging:
            caps["logging"] = {}
        if self.prompts:
            caps["prompts"] = dict(changes)
        if self.resources or self.templates:
            caps["resources"] = {"subscribe": True, **changes} if pushes else {}
        if self.tools:
            caps["tools"] = dict(changes)
        return caps

    def completions_offered(self) -> bool:
        return any(p.completers for p in self.prompts.values()) or any(t.completers for t in self.templates)

    # --- handle --------------------------------------------------------------------------------------

    async def handle(self, message: Message, conn: ClientState) -> Response | ErrorResponse | None:
        """Answer one decoded message: a reply for a request, ``None`` for anything else.

        >>> await server.handle(Request(1, "ping"), conn)
        Response(id=1, result={})
        """
        if isinstance(message, Notification):
            try:
                self._notification(message, conn)
            except Exception:  # a notification has no reply to carry the error: log it, keep serving
                log.exception("%s failed", message.method)
            return None
        if not isinstance(message, Request):
            return None  # a response to one of our requests: the runner matches those by id
        try:
            if self._speaks_modern(message, conn):
                return Response(message.id, await modern.answer(self, message, conn))
            return Response(message.id, await self._request(message, conn))
        except JSONRPCError as exc:
            return jsonrpc.error_response(exc, request_id=message.id)
        except Exception as exc:  # a bug in a handler must not kill the connection
            log.exception("%s failed", message.method)
            return jsonrpc.error_response(InternalError(f"{message.method} failed: {type(exc).__name__}: {exc}"),
                                          request_id=message.id)

    def _speaks_modern(self, request: Request, conn: ClientState) -> bool:
        if conn.eras == "legacy":
            return False  # a legacy-only server knows nothing of eras: _meta is just _meta
        if conn.era is not None:
            if conn.era == "legacy" and modern.era_for(request) == "modern":
                modern.refuse_on_legacy(request, conn)
            return conn.era == "modern"
        return modern.era_for(request) == "modern"  # undecided: the request itself says (modern.py)

    async def _request(self, request: Request, conn: ClientState) -> Any:
        method = request.method
        # A message with an "id" is a request, whatever its method is called (JSON-RPC 2.0 §4). So
        # "notifications/initialized" sent with an id asks for a method no server has: -32601, and the
        # handshake stays incomplete. Treating it as the notification would hide the client's bug.
        if method not in REQUESTS:
            hint = " (it is a notification: send it without an \"id\")" if method.startswith("notifications/") else ""
            raise MethodNotFound(f"no method {method!r}{hint}; this server answers: {', '.join(self._methods())}")
        handler, capability = REQUESTS[method]
        if capability and not self._offers(capability):
            raise MethodNotFound(f"{method} belongs to the {capability!r} capability, which this server does not "
                                 f"offer (it offers: {', '.join(self.capabilities(LATEST_LEGACY)) or 'nothing'})")
        # "basic/lifecycle", Initialization: the handshake MUST come first (a ping may come before it),
        # and it happens once per connection. handlers.initialize makes the move once it has an answer.
        event = RECEIVED.get(method, RECEIVE_REQUEST)
        if not conn.lifecycle.allows(event):
            if conn.lifecycle.state is IDLE:
                raise InvalidRequest(f"expected initialize first: {method} is not allowed before the initialize "
                                     f"handshake (only ping is)")
            if event is RECEIVE_INITIALIZE:
                raise InvalidRequest(f"initialize was already answered on this connection (version "
                                     f"{conn.version}); a connection is initialized once")
            try:
                conn.lifecycle.move(event)
            except LocalProtocolError as exc:  # closed, or in ERROR after a failed send: the table says why
                raise InternalError(str(exc)) from exc
        params = request.params if request.params is not None else {}
        if not isinstance(params, dict):
            raise InvalidParams(f"expected \"params\" to be an object for {method}, got an array")
        return await handler(self, params, conn, request)

    def _methods(self) -> list[str]:
        return [m for m, (_, cap) in REQUESTS.items() if cap is None or self._offers(cap)]

    def _offers(self, capability: str) -> bool:
        key = ("offers", LATEST_LEGACY)
        if key not in self.memo:  # every request asks: worked out once per catalogue
            self.memo[key] = frozenset(self.capabilities(LATEST_LEGACY))
        return capability in self.memo[key]

    def _notification(self, note: Notification, conn: ClientState) -> None:
        # Nobody answers a notification, so a wrong one can only be ignored (and logged on stderr):
        # an "initialized" before initialize was answered, a second one, one we do not know.
        params = note.params if isinstance(note.params, dict) else {}
        if note.method == "notifications/initialized":
            if conn.lifecycle.allows(RECEIVE_INITIALIZED):
                conn.lifecycle.move(RECEIVE_INITIALIZED)
            else:
                log.warning("ignored notifications/initialized in state %r", conn.lifecycle.state)
        elif note.method == "notifications/cancelled":
            # A malformed cancellation SHOULD be ignored (MCP "basic/utilities/cancellation"): requestId
            # is a RequestId, a string or an integer; an array or an object names no request at all.
            if is_request_id(params.get("requestId")):
                conn.peer.cancel(params["requestId"])
            else:
                log.info("ignored notifications/cancelled: requestId must be a string or an integer")
        elif note.method not in ("notifications/roots/list_changed", "notifications/progress"):
            log.info("ignored notification %s", note.method)


def _kind(item: Any) -> str:
    return {Tool: "tools", Prompt: "prompts"}.get(type(item), "resources")
