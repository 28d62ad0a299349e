"""The MCP client: one connection to one server, requests matched to responses by id.

Theory of operation
-------------------
``Client`` turns method calls into JSON-RPC requests and responses into typed results::

    async with Client(stdio(["python", "servers/weather.py"]), era="legacy") as client:
        tools = await client.list_tools()                 # tools/list, following nextCursor
        result = await client.call_tool("get_weather", {"city": "Beijing"})
    client.trace                                          # every frame that crossed the pipe

Opening runs the lifecycle (``lifecycle.py``): ``initialize`` → check the answer →
``notifications/initialized``. Every later request is first handed to the lifecycle, which
refuses a method whose server capability was never declared and, in the modern era (a later
issue), stamps ``_meta``. The transport records every frame in ``client.trace``.

**Who reads.** There is no background task. Each request registers a waiter under its id and
then waits; the first waiter finding nobody reading becomes the reader: it takes messages off
the transport and dispatches them (a response wakes the waiter with that id, a notification
goes to the callbacks, a server request is answered) until its own response arrives, then hands
the reading to another waiter. A lone sequential caller thus reads its own reply with no task
switch, and a connection is not tied to a task group: a notebook can open it in one cell and
use it in the next (``await client.connect()`` … ``await client.aclose()``). Notifications that
arrive while no request is waiting are dispatched when the next one is.

**Failures.** A request with no answer within its timeout is given up and announced with
``notifications/cancelled`` (spec "basic/utilities/cancellation"; never for ``initialize``);
a late answer to it is ignored, as the spec says. A server that exits, writes a line that is not
JSON-RPC, or answers an id nobody asked for ends the connection: every waiting request and
every later one raises the same typed error (``ServerExited``, ``RemoteProtocolError``).
An error *response* raises :class:`~mcplab.errors.RemoteError` for that request only.

Server-to-client requests (``sampling/createMessage``, ``elicitation/create``, ``roots/list``)
are answered by the handlers you pass; a capability is declared only when it has a handler.
"""

from __future__ import annotations

import inspect
from collections import deque
from typing import Any, Callable, Sequence

import anyio

from mcplab import jsonrpc
from mcplab.errors import (
    INTERNAL_ERROR, METHOD_NOT_FOUND, JSONRPCError, LocalProtocolError, MCPLabError, RemoteError,
    RemoteProtocolError, RequestTimeout, TransportError,
)
from mcplab.jsonrpc import ErrorResponse, Notification, Request, Response
from mcplab.lifecycle import CANCELLED, CLOSED, PING, LegacyLifecycle, client_capabilities
from mcplab.results import (
    Completion, Prompt, PromptResult, Resource, ResourceRead, ResourceTemplate, Tool, ToolResult,
)
from mcplab.trace import Trace
from mcplab.transports.base import Transport
from mcplab.versions import LATEST_LEGACY

__all__ = ["Client", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 30.0   # seconds per request, unless the caller says otherwise
MAX_PAGES = 1000         # a list that never ends must not hang the client
REMEMBER_ABANDONED = 256  # ids of given-up requests whose late answers we still recognise

Callback = Callable[..., Any]
Handler = Callable[[dict], Any]


class _Waiter:
    """A request waiting for its response; ``event`` exists only while its task sleeps."""
    __slots__ = ("response", "event")

    def __init__(self) -> None:
        self.response: Response | ErrorResponse | None = None
        self.event: anyio.Event | None = None


class Client:
    """A connection to one MCP server (see the module docstring)."""

    def __init__(self, transport: Transport, *, era: str = "legacy", version: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, client_info: dict | None = None,
                 on_progress: Callback | None = None, on_log: Callback | None = None,
                 on_list_changed: Callback | None = None, on_notification: Callback | None = None,
                 sampling: Handler | None = None, elicitation: Handler | None = None,
                 roots: Sequence[str | dict] | Handler | None = None) -> None:
        if era != "legacy":
            raise ValueError(f"era={era!r} is not available yet; this mcplab speaks era='legacy' "
                             f"(the initialize handshake)")
        self.transport = transport
        self.timeout = timeout
        self.on_progress, self.on_log = on_progress, on_log
        self.on_list_changed, self.on_notification = on_list_changed, on_notification
        self._handlers: dict[str, Handler] = {PING: lambda params: {}}
        if sampling is not None:
            self._handlers["sampling/createMessage"] = sampling
        if elicitation is not None:
            self._handlers["elicitation/create"] = elicitation
        if roots is not None:
            self._handlers["roots/list"] = roots if callable(roots) else _static_roots(roots)
        version = version or LATEST_LEGACY
        self._lifecycle = LegacyLifecycle(version, client_info=client_info, capabilities=client_capabilities(
            sampling=sampling is not None, elicitation=elicitation is not None, roots=roots is not None,
            version=version))
        self._ids = jsonrpc.IdAllocator()
        self._pending = jsonrpc.PendingRequests()
        self._abandoned: deque[jsonrpc.RequestId] = deque(maxlen=REMEMBER_ABANDONED)
        self._progress: dict[Any, Callback] = {}
        self._reading = False
        self._sleeping: list[_Waiter] = []  # waiters whose task sleeps while another one reads
        self._failure: MCPLabError | None = None
        self._opened = False
        self._shown = 0  # frames already handed out by recent()

    # --- opening and closing -----------------------------------------------------------------
    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> Client:
        """Open the transport and run the handshake; on any failure, close everything again."""
        if self._opened:
            raise LocalProtocolError("this client is already connected; make a new Client per connection")
        self._opened = True
        await self.transport.open()
        try:
            lifecycle = self._lifecycle
            request = lifecycle.initialize_request(self._ids())
            # initialize MUST NOT be cancelled (spec "cancellation"), so no notification on timeout.
            lifecycle.accept_initialize(await self._exchange(request, self.timeout, announce=False))
            await self._send(lifecycle.initialized_notification())
        except BaseException:
            with anyio.CancelScope(shield=True):  # the child must be reaped even if we were cancelled
                await self.aclose()
            raise
        return self

    async def aclose(self) -> None:
        """Close the connection (stdio: close stdin, wait, terminate, kill). Safe to call twice."""
        if self._failure is None:
            self._fail(TransportError("the client was closed"))
        await self.transport.close()

    # --- what the handshake agreed -------------------------------------------------------------
    @property
    def trace(self) -> Trace:
        """Every frame of this connection so far, both directions, stderr included."""
        return self.transport.trace

    def recent(self) -> Trace:
        """The frames recorded since the last call to ``recent()`` (all of them the first time):
        what a notebook cell just put on the wire, as a Trace of its own."""
        view = Trace()
        view.frames = self.trace.frames[self._shown:]
        self._shown = len(self.trace)
        return view

    @property
    def protocol_version(self) -> str | None:
        """The version the handshake agreed on (the server's answer)."""
        return self._lifecycle.version

    @property
    def requested_version(self) -> str:
        """The version this client asked for in ``initialize``."""
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
        return self._lifecycle.result

    def __repr__(self) -> str:
        info = self.server_info
        who = f"{info.get('name', '?')} {info.get('version', '')}".strip() if info else "not connected"
        return f"<Client: {who}, protocol {self.protocol_version or '-'}>"

    # --- requests --------------------------------------------------------------------------------
    async def request(self, method: str, params: dict | None = None, *, timeout: float | None = None,
                      on_progress: Callback | None = None) -> Any:
        """Send one request and return its ``result``; an error response raises RemoteError.

        >>> await client.request("tools/list")          # doctest: +SKIP
        {'tools': [...]}
        """
        self._raise_if_failed()
        params = self._lifecycle.prepare(method, params)
        request_id = self._ids()
        if on_progress is not None:  # the request id doubles as the progress token: unique while active
            meta = {**(params or {}).get("_meta", {}), "progressToken": request_id}
            params = {**(params or {}), "_meta": meta}
            self._progress[request_id] = on_progress
        try:
            response = await self._exchange(Request(request_id, method, params),
                                            self.timeout if timeout is None else timeout)
        finally:
            self._progress.pop(request_id, None)
        if isinstance(response, ErrorResponse):
            raise RemoteError(response.code, response.message, response.data, method=method)
        return response.result

    async def notify(self, method: str, params: dict | None = None) -> None:
        """Send one notification (nobody answers it)."""
        self._raise_if_failed()
        self._lifecycle.prepare_notification(method)
        await self._send(Notification(method, params))

    async def _send(self, message: jsonrpc.Message) -> None:
        try:
            await self.transport.send(message)
        except MCPLabError as exc:
            self._fail(exc)
            raise

    async def _exchange(self, request: Request, timeout: float, *, announce: bool = True
                        ) -> Response | ErrorResponse:
        self._raise_if_failed()
        waiter = _Waiter()
        self._pending.add(request.id, waiter)
        try:
            await self._send(request)
            with anyio.move_on_after(timeout):
                await self._wait(waiter)
        except BaseException as exc:
            self._abandon(request.id, waiter)
            if announce and waiter.response is None and isinstance(exc, anyio.get_cancelled_exc_class()):
                with anyio.CancelScope(shield=True):  # we are being cancelled, yet the server must hear it
                    await self._announce_cancel(request.id, "the caller cancelled the request")
            raise
        if waiter.response is None:
            self._abandon(request.id, waiter)
            if announce:
                await self._announce_cancel(request.id, f"no response within {timeout:g} s")
            raise RequestTimeout(f"no response to {request.method} (id {request.id}) within {timeout:g} s"
                                 + ("; sent notifications/cancelled" if announce else ""))
        return waiter.response

    def _abandon(self, request_id: jsonrpc.RequestId, waiter: _Waiter) -> None:
        if waiter.response is None and self._pending.discard(request_id) is not None:
            self._abandoned.append(request_id)

    async def _announce_cancel(self, request_id: jsonrpc.RequestId, reason: str) -> None:
        if self._failure is None:
            try:
                self._lifecycle.prepare_notification(CANCELLED)
                await self._send(Notification(CANCELLED, {"requestId": request_id, "reason": reason}))
            except MCPLabError:
                pass  # the connection is going away anyway; the timeout is what the caller needs to hear

    async def _wait(self, waiter: _Waiter) -> None:
        """Wait for ``waiter``'s response, reading the transport whenever nobody else is."""
        try:
            while waiter.response is None:
                self._raise_if_failed()
                if self._reading:
                    waiter.event = anyio.Event()
                    self._sleeping.append(waiter)
                    try:
                        await waiter.event.wait()
                    finally:
                        self._sleeping.remove(waiter)
                        waiter.event = None
                    continue
                self._reading = True
                try:
                    message = await self.transport.receive()
                except MCPLabError as exc:
                    self._fail(exc)
                    continue
                finally:
                    self._reading = False
                await self._dispatch(message)
        finally:
            self._pass_reading_on()

    def _pass_reading_on(self) -> None:
        """Wake one sleeping waiter so that somebody reads (ours is answered or given up)."""
        if self._reading:
            return
        for other in self._sleeping:
            if not other.event.is_set():
                other.event.set()
                return

    def _fail(self, error: MCPLabError) -> None:
        """The connection is unusable: remember why, and wake every waiter to hear it."""
        if self._failure is None:
            self._failure = error
            if self._lifecycle.state != CLOSED:
                self._lifecycle.close()
        for waiter in self._sleeping:
            waiter.event.set()

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            # A copy per raise: one exception object raised in several tasks would mix tracebacks.
            error = BaseException.__new__(type(self._failure))
            error.args, error.__dict__ = self._failure.args, dict(self._failure.__dict__)
            raise error

    # --- dispatch of what the server sent ------------------------------------------------------
    async def _dispatch(self, message: jsonrpc.Message | JSONRPCError) -> None:
        if isinstance(message, (Response, ErrorResponse)):
            if message.id is not None and message.id in self._abandoned:
                self._abandoned.remove(message.id)  # the spec: ignore a response that comes too late
                return
            try:
                waiter = self._pending.resolve(message)
            except RemoteProtocolError as exc:  # an id nobody asked, or null: the peer is confused
                exc.raw = jsonrpc.encode(message)
                self._fail(exc)
                return
            waiter.response = message
            if waiter.event is not None:
                waiter.event.set()
        elif isinstance(message, Notification):
            await self._notified(message)
        elif isinstance(message, Request):
            await self._answer(message)
        else:
            self._fail(RemoteProtocolError(
                f"the server sent something that is not a JSON-RPC message ({message.message}); "
                f"a server may send MCP messages only (on stdio, logs belong on stderr)", raw=message.raw))

    async def _notified(self, notification: Notification) -> None:
        method, params = notification.method, notification.params or {}
        if method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken"), self.on_progress)
            await _call(callback, params)
        elif method == "notifications/message":
            await _call(self.on_log, params)
        elif method.endswith("/list_changed"):
            await _call(self.on_list_changed, method)
        await _call(self.on_notification, notification)

    async def _answer(self, request: Request) -> None:
        handler = self._handlers.get(request.method)
        if handler is None:
            reply: jsonrpc.Message = ErrorResponse(request.id, METHOD_NOT_FOUND,
                                                   f"this client has no handler for {request.method}")
        else:
            try:
                reply = Response(request.id, await _call(handler, request.params or {}))
            except (RemoteError, JSONRPCError) as exc:
                reply = ErrorResponse(request.id, exc.code, exc.message, exc.data)
            except Exception as exc:  # a broken handler must not leave the server waiting forever
                reply = ErrorResponse(request.id, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        self._lifecycle.prepare_response()
        await self._send(reply)

    # --- the primitives ------------------------------------------------------------------------
    async def _list(self, method: str, key: str, timeout: float | None) -> list:
        items: list = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            result = await self.request(method, {"cursor": cursor} if cursor else None, timeout=timeout)
            page = result.get(key) if isinstance(result, dict) else None
            if not isinstance(page, list):
                raise RemoteProtocolError(f"expected the {method} result to hold an array {key!r}, got {result!r}")
            items.extend(page)
            cursor = result.get("nextCursor")
            if not cursor:
                return items
        raise RemoteProtocolError(f"{method} was still returning a nextCursor after {MAX_PAGES} pages")

    async def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """``tools/list``, every page: the tools a *model* may choose to call."""
        return [Tool.from_json(t) for t in await self._list("tools/list", "tools", timeout)]

    async def call_tool(self, name: str, arguments: dict | None = None, *, timeout: float | None = None,
                        on_progress: Callback | None = None) -> ToolResult:
        """``tools/call``. A failing tool gives ``is_error=True``; an unknown tool raises RemoteError."""
        params = {"name": name, "arguments": arguments or {}}
        return ToolResult.from_json(await self.request("tools/call", params, timeout=timeout,
                                                       on_progress=on_progress))

    async def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        """``resources/list``, every page: data the *application* may read into the context."""
        return [Resource.from_json(r) for r in await self._list("resources/list", "resources", timeout)]

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[ResourceTemplate]:
        return [ResourceTemplate.from_json(r)
                for r in await self._list("resources/templates/list", "resourceTemplates", timeout)]

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ResourceRead:
        return ResourceRead.from_json(await self.request("resources/read", {"uri": uri}, timeout=timeout))

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe``: changes arrive as ``notifications/resources/updated``."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    async def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        """``prompts/list``, every page: templates a *user* picks (a slash command, say)."""
        return [Prompt.from_json(p) for p in await self._list("prompts/list", "prompts", timeout)]

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

    async def ping(self, *, timeout: float | None = None) -> None:
        """``ping``: the server must answer at once with an empty result."""
        await self.request(PING, timeout=timeout)

    async def set_logging_level(self, level: str) -> None:
        """``logging/setLevel``: log lines at ``level`` and above arrive as notifications/message."""
        await self.request("logging/setLevel", {"level": level})

    async def notify_roots_changed(self) -> None:
        """Tell the server the roots changed (it will ask ``roots/list`` again)."""
        await self.notify("notifications/roots/list_changed")


def _static_roots(roots: Sequence[str | dict]) -> Handler:
    listed = [r if isinstance(r, dict) else {"uri": r} for r in roots]
    return lambda params: {"roots": listed}


async def _call(callback: Callback | None, *args: Any) -> Any:
    """Call a caller-supplied callback that may be a plain function or a coroutine function."""
    if callback is None:
        return None
    result = callback(*args)
    if inspect.isawaitable(result):
        result = await result
    return result
