"""The MCP client: one connection to one server, in either era, with typed results.

Theory of operation
-------------------
``Client`` turns method calls into JSON-RPC requests and responses into typed results::

    async with Client(stdio(["python", "servers/weather.py"]), era="auto") as client:
        tools = await client.list_tools()                 # tools/list, following nextCursor
        result = await client.call_tool("get_weather", {"city": "Beijing"})
    client.trace                                          # every frame that crossed the pipe
    client.era, client.era_reason                         # which era it spoke, and why

**Opening** (``opening.py``): ``era="legacy"`` runs the ``initialize`` handshake, ``era="modern"``
asks ``server/discover``, and ``era="auto"`` probes with ``server/discover`` and falls back to
``initialize`` when the answer is not a modern one. ``eras.py`` makes each decision; the client
keeps them (``era_decisions``) and says why in one sentence (``era_reason``). The default is
``era="legacy"`` (:data:`DEFAULT_ERA`): the handshake the labs teach first, with no probe in the trace;
``era="auto"`` is what a client facing unknown servers picks (``mcplab inspect`` does). A caller who
opens many connections may hand each Client the same :class:`~mcplab.client.eras.EraCache` (a Host
does): then the era found is remembered per server, and the next connection need not probe. Without
one, a Client remembers nothing beyond itself.

**Every request** goes through the lifecycle (``lifecycle/``), which refuses a method whose
server capability was never declared and, in the modern era, stamps ``_meta``; the connection
(``connection.py``) matches the response by id, gives up after the timeout and says so with
``notifications/cancelled`` (over 2026-07-28 HTTP, by closing the request's response). A result's ``resultType`` is checked: missing means complete,
unknown is an error. ``tools/call``, ``resources/read`` and ``prompts/get`` answered with
``input_required`` are answered and retried (MRTR, ``mrtr.py``).

**Starting over**, noted in the trace each time. Over legacy HTTP a 404 for the session means the
server ended it: the client MUST start a new session with a fresh ``initialize`` (2025-11-25
transports), then sends the request again, once. Over modern HTTP a reply stream that ends before
its response loses the request: the client MUST re-issue it with a new id (2026-07-28 changelog),
at most :data:`MAX_REISSUES` times. Lists follow ``nextCursor`` until it is absent: ``""`` is a
cursor like any other (2026-07-28 pagination).

**Asking the client.** A legacy server sends requests (``sampling/createMessage``,
``elicitation/create``, ``roots/list``); a modern one puts them in an ``input_required`` result.
The handlers (``handlers.py``: :class:`~mcplab.client.handlers.Handlers`, or each by its name,
``sampling=``, ``elicitation=``, ``roots=``, ``on_log=`` ...) answer both, and a capability is declared
only when it has a handler. ``input_handler=`` replaces them for MRTR (a prompt, a form).
Roots, Sampling and Logging (``on_log=``, :meth:`Client.set_logging_level`) are deprecated in
2026-07-28 (SEP-2577, ``versions.DEPRECATED``): they still work, and new servers should not need them.

**Modern HTTP.** Every request carries routing headers (``wire/headers.py``), tool parameters marked
``x-mcp-header`` become ``Mcp-Param-*`` headers, and a tool whose marks break the spec's rules
is left out of :meth:`Client.list_tools`, with a logged warning and an entry in ``rejected_tools``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

import anyio

from mcplab.client.connection import Connection, call
from mcplab.i18n import _
from mcplab.client.eras import INITIALIZE, EraCache, Verdict, first_step, server_key
from mcplab.client.handlers import ELICITATION, ROOTS, SAMPLING, Callback, Handler, Handlers
from mcplab.wire.errors import (
    HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION, InternalError, JSONRPCError, LocalProtocolError,
    MethodNotFound, RemoteError, RemoteProtocolError, SessionExpired, TransportError,
)
from mcplab.wire import jsonrpc
from mcplab.wire.headers import InvalidHeaderAnnotation, header_annotations, param_headers
from mcplab.wire.jsonrpc import ErrorResponse, Notification, Request, Response
from mcplab.lifecycle import DISCOVER, PING, LegacyLifecycle, Lifecycle, ModernLifecycle, client_capabilities
from mcplab.client.mrtr import MAX_ROUNDS, handler_for, run_rounds
from mcplab.client.opening import open_era
from mcplab.client.results import (
    Completion, Listing, Prompt, PromptResult, Resource, ResourceRead, ResourceTemplate, Tool, ToolResult,
    result_type,
)
from mcplab.trace import Trace
from mcplab.transports.base import StreamEnded, Transport
from mcplab.wire.versions import LATEST_LEGACY, LATEST_MODERN, MODERN_VERSIONS

__all__ = ["Client", "Handlers", "DEFAULT_TIMEOUT", "DEFAULT_ERA", "PROBE_TIMEOUT", "MAX_REISSUES"]

DEFAULT_TIMEOUT = 30.0   # seconds per request, unless the caller says otherwise
PROBE_TIMEOUT = 5.0      # seconds era="auto" waits on stdio for server/discover, from the server's read of it
                         # (opening.py; from the write where that cannot be seen), before calling it legacy
MAX_PAGES = 1000         # a list that never ends must not hang the client
MAX_REISSUES = 2         # times a modern request whose reply stream broke is sent again
# Legacy unless asked: the labs open with the initialize handshake they teach, and a probe in every
# trace would come before it. era="auto" (the probe, then the fallback) is one argument away.
DEFAULT_ERA = "legacy"
LOG = logging.getLogger("mcplab.client")


class Client:
    """A connection to one MCP server (see the module docstring).

    ``era``: ``"legacy"`` (the default), ``"modern"`` or ``"auto"``; ``version`` pins a revision;
    ``timeout`` is per request; ``client_info`` is the identity sent to the server; ``era_cache`` an
    :class:`~mcplab.client.eras.EraCache` the caller owns and shares between its clients (None: no
    memory). ``handlers`` (:class:`~mcplab.client.handlers.Handlers`), or its fields by name
    (``elicitation=...``), answer what the server asks and hear what it tells.
    ``sampling=``, ``roots=`` and ``on_log=`` serve features deprecated in 2026-07-28 (SEP-2577):
    Sampling, Roots and Logging keep working in every revision, but new servers should not rely on them.
    """

    probe_timeout = PROBE_TIMEOUT
    max_rounds = MAX_ROUNDS

    def __init__(self, transport: Transport, *, era: str = DEFAULT_ERA, version: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, client_info: dict | None = None,
                 era_cache: EraCache | None = None, handlers: Handlers | None = None, **by_name: Any) -> None:
        unknown = set(by_name) - set(Handlers.names())
        if unknown:
            raise TypeError(f"Client() got unexpected keyword argument(s) {', '.join(sorted(unknown))}; "
                            f"expected era, version, timeout, client_info, era_cache, handlers, or a handler: "
                            f"{', '.join(Handlers.names())}")
        self.transport = transport
        self.timeout = timeout
        self.client_info = client_info
        self.handlers = replace(handlers or Handlers(), **by_name)
        self._answers: dict[str, Handler] = self.handlers.answers()
        self._input_handler = self.handlers.input_handler or handler_for(self._answers)
        self.asked_era, self.era_cache = era, era_cache
        self._key = server_key(transport)
        if era == "legacy" and version is not None:
            LegacyLifecycle(version)  # refuses a version it cannot speak now, before anything starts
        self._plan = first_step(era, version, era_cache.get(self._key) if era_cache is not None else None)
        first = self._make_lifecycle("legacy" if self._plan.step == INITIALIZE else "modern", self._plan.version)
        self._connection = Connection(transport, first, on_notification=self._notified, on_request=self._answer)
        self._progress: dict[Any, Callback] = {}
        self.era_decisions: list[Verdict] = []
        self.rejected_tools: dict[str, str] = {}       # tool name → why list_tools left it out
        self._header_paths: dict[str, dict] = {}       # tool name → its x-mcp-header marks
        self._opened = False
        self._shown = 0  # seq of the last frame recent() handed out

    def _make_lifecycle(self, era: str, version: str | None) -> Lifecycle:
        """A fresh lifecycle for one opening step, declaring the capabilities we have handlers for."""
        version = version or (LATEST_LEGACY if era == "legacy" else LATEST_MODERN)
        capabilities = client_capabilities(sampling=SAMPLING in self._answers, elicitation=ELICITATION in self._answers,
                                           roots=ROOTS in self._answers, version=version)
        if era == "legacy":
            return LegacyLifecycle(version, capabilities=capabilities, client_info=self.client_info)
        return ModernLifecycle(version, capabilities=capabilities, client_info=self.client_info)

    # --- opening and closing -----------------------------------------------------------------
    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> Client:
        """Open the transport and the era (probing it if asked to); on any failure, close everything."""
        if self._opened:
            raise LocalProtocolError(_("this client is already connected; make a new Client per connection"))
        self._opened = True
        await self.transport.open()
        try:
            # Silence means "legacy" only on stdio (spec 2026-07-28, stdio "Backward Compatibility"): over
            # HTTP every POST gets a status the verdict reads (streamable-http "Backward Compatibility"),
            # so a slow server there is waited for like any request, not mistaken for a legacy one.
            silence_counts = getattr(self.transport, "channel", "stdio") == "stdio"
            probe_timeout = min(self.probe_timeout, self.timeout) if silence_counts else self.timeout
            self.era_decisions = await open_era(self._connection, self._plan, self._make_lifecycle,
                                                asked_era=self.asked_era, timeout=self.timeout,
                                                probe_timeout=probe_timeout)
            if self.era_cache is not None:
                self.era_cache.remember(self._key, self.era, self.protocol_version)
        except BaseException:
            with anyio.CancelScope(shield=True):  # the child must be reaped even if we were cancelled
                await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Close the connection (stdio: close stdin, wait, terminate, kill). Safe to call twice."""
        self._connection.close()
        await self.transport.close()

    # --- what opening agreed ---------------------------------------------------------------------
    @property
    def _lifecycle(self) -> Lifecycle:
        """The lifecycle in force: the connection's, which opening replaces at each step."""
        return self._connection.lifecycle

    @property
    def trace(self) -> Trace:
        """Every frame of this connection so far, both directions, stderr included."""
        return self.transport.trace

    def recent(self) -> Trace:
        """The frames recorded since the last call to ``recent()`` (all of them the first time):
        what a notebook cell just put on the wire, as a Trace of its own."""
        frames = self.trace.frames
        view = Trace(max_frames=None, max_chars=None)
        if frames:
            first = frames[0].seq  # a bounded trace may have let frames go since the last call
            view.frames = frames[max(0, self._shown - first + 1):]
            view.dropped = max(0, first - 1 - self._shown)
            self._shown = frames[-1].seq
        return view

    @property
    def era(self) -> str:
        """``"legacy"`` or ``"modern"``: the era this connection speaks (before connecting: the one it
        will try first)."""
        return self._lifecycle.era

    @property
    def era_reason(self) -> str:
        """Why this era: every decision of the opening, in order, as one text."""
        return " → ".join(d.reason for d in self.era_decisions or [self._plan])

    @property
    def protocol_version(self) -> str | None:
        """The version in use: agreed by initialize (legacy) or stamped on every request (modern)."""
        return self._lifecycle.version

    @property
    def requested_version(self) -> str:
        """The version this client first asked for in this era (initialize, or server/discover)."""
        return self._lifecycle.requested_version

    @property
    def server_info(self) -> dict:
        return self._lifecycle.server_info

    @property
    def server_capabilities(self) -> dict:
        return self._lifecycle.server_capabilities

    @property
    def client_capabilities(self) -> dict:
        return self._lifecycle.capabilities

    @property
    def instructions(self) -> str | None:
        return self._lifecycle.instructions

    @property
    def initialize_result(self) -> dict | None:
        """The server's answer to initialize (legacy; None in the modern era)."""
        return self._lifecycle.result if self._lifecycle.era == "legacy" else None

    @property
    def discovery(self) -> dict | None:
        """The server's DiscoverResult (modern; None in the legacy era)."""
        return self._lifecycle.result if self._lifecycle.era == "modern" else None

    def __repr__(self) -> str:
        info = self.server_info
        who = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else "not connected"
        return f"<Client: {who}, protocol {self.protocol_version or '-'}>"

    # --- requests --------------------------------------------------------------------------------
    async def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                      on_progress: Callback | None = None, rounds: bool = True) -> Any:
        """Send one request and return its ``result``; an error response raises RemoteError.

        A result that is ``input_required`` is answered and the request retried (``rounds=False``
        returns it as it came instead).

        >>> await client.request("tools/list")          # doctest: +SKIP
        {'tools': [...]}
        """
        wait = self.timeout if timeout is None else timeout

        def once(current: dict | None) -> Any:  # one round: a new id each time
            return self._request_once(method, current, wait, on_progress)

        if not rounds:
            return await once(params)
        name = (params or {}).get("name") or (params or {}).get("uri")
        return await run_rounds(once, method, params, self._input_handler, max_rounds=self.max_rounds,
                                asked_by=f"{method} {name}" if name else method)

    async def _request_once(self, method: str, params: dict | None, timeout: float, on_progress: Callback | None,
                            *, retried: bool = False, reissues: int = 0, request_id: Any = None) -> Any:
        self._connection.raise_if_failed()
        stamped = self._lifecycle.prepare(method, params)
        request_id = self._connection.ids() if request_id is None else request_id
        if on_progress is not None:  # the request id doubles as the progress token: unique while active
            stamped = dict(stamped or {})
            stamped["_meta"] = {**stamped.get("_meta", {}), "progressToken": request_id}
            self._progress[request_id] = on_progress
        try:
            response = await self._connection.exchange(Request(request_id, method, stamped), timeout,
                                                       extra_headers=self._param_headers(method, stamped))
        except SessionExpired:
            if retried or self.era != "legacy":
                raise
            await self._new_session(f"the server answered {method} (id {request_id}) with 404 for this session")
            return await self._request_once(method, params, timeout, on_progress, retried=True)
        finally:
            self._progress.pop(request_id, None)
        if isinstance(response, StreamEnded):
            if reissues >= MAX_REISSUES:
                raise TransportError(_("{method}: the reply stream broke {times} times before the response came "
                                       "({reason}); gave up", method=method, times=reissues + 1,
                                       reason=response.reason))
            again = self._connection.ids()
            self.trace.note(f"{method} (id {request_id}): {response.reason}; 2026-07-28 streams cannot be resumed, "
                            f"so the request is re-issued as a new request, id {again}")
            return await self._request_once(method, params, timeout, on_progress, retried=retried,
                                            reissues=reissues + 1, request_id=again)
        if isinstance(response, ErrorResponse):
            if not retried and await self._recover(method, response):
                return await self._request_once(method, params, timeout, on_progress, retried=True)
            raise RemoteError(response.code, response.message, response.data, method=method)
        result_type(response.result)  # an unknown resultType is an error, whatever the method
        return response.result

    async def _new_session(self, why: str) -> None:
        """The server ended the legacy HTTP session: initialize again, as the spec says the client MUST."""
        self.trace.note(f"session: {why}; starting a new session with initialize (2025-11-25 transports, "
                        f"session management); what the old session held, subscriptions included, is gone")
        verdict = Verdict("legacy", INITIALIZE, self.protocol_version, "a new session after a 404")
        await open_era(self._connection, verdict, self._make_lifecycle, asked_era="legacy", timeout=self.timeout,
                       probe_timeout=min(self.probe_timeout, self.timeout))

    async def _recover(self, method: str, error: ErrorResponse) -> bool:
        """A modern refusal that one retry can fix: another version (-32022), stale tool headers (-32020)."""
        if self.era != "modern":
            return False
        if error.code == UNSUPPORTED_PROTOCOL_VERSION:
            supported = error.data.get("supported") if isinstance(error.data, dict) else None
            usable = [v for v in MODERN_VERSIONS if v in (supported or [])]
            if usable and usable[-1] != self._lifecycle.version:
                self._lifecycle.use_version(usable[-1])
                if self.era_cache is not None:
                    self.era_cache.remember(self._key, "modern", usable[-1])
                return True
            if self.era_cache is not None:
                self.era_cache.forget(self._key)  # what we remembered no longer holds: probe next time
        if error.code == HEADER_MISMATCH and method == "tools/call":
            await self.list_tools()  # the spec: the tool's inputSchema may have changed; list again, retry
            return True
        return False

    def _param_headers(self, method: str, params: dict | None) -> dict[str, str] | None:
        if method != "tools/call" or not self._mirrors_headers or not isinstance(params, dict):
            return None
        return param_headers(self._header_paths.get(params.get("name"), {}), params.get("arguments"))

    @property
    def _mirrors_headers(self) -> bool:
        return self.era == "modern" and getattr(self.transport, "channel", None) == "http"

    async def notify(self, method: str, params: dict | None = None) -> None:
        """Send one notification (nobody answers it)."""
        self._connection.raise_if_failed()
        self._lifecycle.prepare_notification(method)
        await self._connection.send(Notification(method, params))

    # --- what the server sends on its own ------------------------------------------------------
    async def _notified(self, notification: Notification) -> None:
        method, params, heard = notification.method, notification.params or {}, self.handlers
        if method == "notifications/progress":
            await call(self._progress.get(params.get("progressToken"), heard.on_progress), params)
        elif method == "notifications/message":
            await call(heard.on_log, params)
        elif method.endswith("/list_changed"):
            await call(heard.on_list_changed, method)
        await call(heard.on_notification, notification)

    async def _answer(self, request: Request) -> Response | ErrorResponse:
        if self._lifecycle.era == "modern":
            raise RemoteProtocolError(_("the server sent a request ({method}); in the modern era a server never does "
                                        "(it asks with an input_required result instead)", method=request.method))
        handler = {PING: lambda params: {}, **self._answers}.get(request.method)
        if handler is None:
            reply: Response | ErrorResponse = jsonrpc.error_response(
                MethodNotFound(f"this client has no handler for {request.method}"), request_id=request.id)
        else:
            try:
                reply = Response(request.id, await call(handler, request.params or {}))
            except RemoteError as exc:  # a handler passing on a server's refusal: the same code and words
                reply = ErrorResponse(request.id, exc.code, exc.message, exc.data)
            except JSONRPCError as exc:
                reply = jsonrpc.error_response(exc, request_id=request.id)
            except Exception as exc:  # a broken handler must not leave the server waiting forever
                reply = jsonrpc.error_response(InternalError(f"{type(exc).__name__}: {exc}"), request_id=request.id)
        self._lifecycle.prepare_response()
        return reply

    # --- the primitives ------------------------------------------------------------------------
    async def _list(self, method: str, key: str, timeout: float | None) -> Listing:
        items = Listing()
        cursor: str | None = None
        for page in range(MAX_PAGES):
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None, timeout=timeout)
            listed = result.get(key) if isinstance(result, dict) else None
            if not isinstance(listed, list):
                raise RemoteProtocolError(_("expected the {method} result to hold an array {key}, got {result}",
                                            method=method, key=repr(key), result=repr(result)))
            items.add_page(listed, result, first=page == 0)
            cursor = result.get("nextCursor")
            if cursor is None:  # only an absent cursor ends the list: "" is a cursor (2026-07-28 pagination)
                return items
            if not isinstance(cursor, str):
                raise RemoteProtocolError(_("expected the {method} result's nextCursor to be a string, got {cursor}",
                                            method=method, cursor=repr(cursor)))
        raise RemoteProtocolError(_("{method} was still returning a nextCursor after {pages} pages", method=method,
                                    pages=MAX_PAGES))

    async def list_tools(self, *, timeout: float | None = None) -> Listing:
        """``tools/list``, every page: the tools a *model* may choose to call."""
        listed = await self._list("tools/list", "tools", timeout)
        return listed.derive(tool for tool in map(Tool.from_json, listed) if self._keep(tool))

    def _keep(self, tool: Tool) -> bool:
        """Remember a tool's x-mcp-header marks; on modern HTTP, leave out a tool whose marks are invalid."""
        if not self._mirrors_headers:
            return True
        try:
            self._header_paths[tool.name] = header_annotations(tool.input_schema)
        except InvalidHeaderAnnotation as exc:
            self.rejected_tools[tool.name] = str(exc)
            LOG.warning("left out tool %r: %s", tool.name, exc)  # the spec: SHOULD log the tool and the reason
            return False
        return True

    async def call_tool(self, name: str, arguments: dict | None = None, *, timeout: float | None = None,
                        on_progress: Callback | None = None) -> ToolResult:
        """``tools/call``. A failing tool gives ``is_error=True``; an unknown tool raises RemoteError."""
        params = {"name": name, "arguments": arguments or {}}
        return ToolResult.from_json(await self.request("tools/call", params, timeout=timeout,
                                                       on_progress=on_progress))

    async def list_resources(self, *, timeout: float | None = None) -> Listing:
        """``resources/list``, every page: data the *application* may read into the context."""
        listed = await self._list("resources/list", "resources", timeout)
        return listed.derive(map(Resource.from_json, listed))

    async def list_resource_templates(self, *, timeout: float | None = None) -> Listing:
        listed = await self._list("resources/templates/list", "resourceTemplates", timeout)
        return listed.derive(map(ResourceTemplate.from_json, listed))

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ResourceRead:
        return ResourceRead.from_json(await self.request("resources/read", {"uri": uri}, timeout=timeout))

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (legacy): changes arrive as ``notifications/resources/updated``."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, *, timeout: float | None = None) -> Listing:
        """``prompts/list``, every page: templates a *user* picks (a slash command, say)."""
        listed = await self._list("prompts/list", "prompts", timeout)
        return listed.derive(map(Prompt.from_json, listed))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None, *,
                         timeout: float | None = None) -> PromptResult:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return PromptResult.from_json(await self.request("prompts/get", params, timeout=timeout))

    async def complete(self, ref: dict, argument: str, value: str, *, context: dict[str, str] | None = None,
                       timeout: float | None = None) -> Completion:
        """``completion/complete`` for one argument of ``ref`` ({"type": "ref/prompt", "name": ...}
        or {"type": "ref/resource", "uri": ...})."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return Completion.from_json(await self.request("completion/complete", params, timeout=timeout))

    async def discover(self, *, timeout: float | None = None) -> dict:
        """``server/discover`` (modern): versions, capabilities, identity; refreshes ``server_capabilities``."""
        if not isinstance(self._lifecycle, ModernLifecycle):
            raise LocalProtocolError(_("server/discover belongs to the modern era; this connection speaks legacy"))
        result = await self.request(DISCOVER, timeout=timeout)
        return self._lifecycle.accept_discover(result)

    async def ping(self, *, timeout: float | None = None) -> None:
        """``ping``: the server must answer at once. The modern era removed ping; there a
        ``server/discover``, which every modern server must answer, does the same job."""
        if self.era == "modern":
            await self.discover(timeout=timeout)
        else:
            await self.request(PING, timeout=timeout)

    async def set_logging_level(self, level: str) -> None:
        """Log lines at ``level`` and above arrive as ``notifications/message``: legacy sends
        ``logging/setLevel`` once; modern stamps the level on every later request instead.
        Logging is deprecated in 2026-07-28 (SEP-2577)."""
        if isinstance(self._lifecycle, ModernLifecycle):
            self._lifecycle.log_level = level
        else:
            await self.request("logging/setLevel", {"level": level})

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (it will ask ``roots/list`` again); legacy only:
        2026-07-28 removed the notification, and Roots are deprecated in 2026-07-28 (SEP-2577)."""
        await self.notify("notifications/roots/list_changed")
