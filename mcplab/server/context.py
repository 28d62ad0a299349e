"""Who is on the other end: per-connection state, and the per-request context a tool receives.

Theory of operation
-------------------
Three objects, from the outside in:

* :class:`Peer` is what a runner (``stdio.py``, ``streamable_http/``) hands the toolkit: the way back to
  the client. ``post`` queues a message (notification) to the client, ``request`` sends a
  server→client request and waits for its response, ``cancel`` stops work on a request the client
  cancelled. The toolkit never touches a pipe or a socket; only the runner does.
* :class:`ClientState` is what the server knows about one client: the era, the negotiated protocol
  version, the client's capabilities and identity, the log level it chose, its resource
  subscriptions. In the legacy era ``initialize`` fills it once per connection. In the modern era
  (2026-07-28) every request carries the same facts in ``params._meta``, and ``Server.handle`` builds
  a per-request view (a fresh ClientState, never stored) from them: the handlers read the same
  fields either way. ``eras`` is what the server was started to speak; ``era`` is what this
  connection speaks, ``None`` while a dual-era connection has not decided yet (modern.py).
* :class:`Context` is one request seen from inside a tool: its id, its ``_meta``, and the things a tool
  may do while it runs: report progress (only if the request carried a ``progressToken``), log to the
  client (only at or above the client's level), and ask the client for something (sampling,
  elicitation, roots; only if the client declared that capability, and only in a revision that has it).

The legacy way to ask the client is a JSON-RPC request on the same connection; 2026-07-28 replaces it
with "input required" results (mrtr.py): the tool body runs again on the client's retry, and this time
the answer is there. Tools call ``ctx.sample(...)``/``ctx.elicit(...)``/``ctx.ask(...)`` either way:
only :meth:`Context.ask` knows how the question travels.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcplab.lifecycle import ACCEPTED, IDLE, SEND_REQUEST, SERVER, RoleState
from mcplab.wire.errors import LocalProtocolError, MissingRequiredClientCapability
from mcplab.wire.jsonrpc import Message, Notification, RequestId
from mcplab.server import mrtr
from mcplab.server.content import for_version
from mcplab.server.mrtr import InputRequest, InputRequired, Rounds
from mcplab.wire.versions import Era, ServerEra, at_least

log = logging.getLogger("mcplab.server")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""Syslog severities (RFC 5424), lowest first, as ``logging/setLevel`` and ``notifications/message`` use them."""

DEFAULT_LOG_LEVEL = "info"  # before logging/setLevel the server MAY choose what to send (MCP "logging")

class Peer(Protocol):
    """The runner's side of a connection."""

    def post(self, message: Message, *, related_to: RequestId | None = None) -> None:
        """Send a notification to the client soon (``related_to`` names the request it belongs to)."""

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      related_to: RequestId | None = None) -> Any:
        """Send a request to the client and return its result (raise RemoteError on an error response)."""

    def cancel(self, request_id: RequestId) -> None:
        """Stop working on the client's request ``request_id``; no response will be sent for it."""


@dataclass(eq=False)
class ClientState:
    """Everything the server knows about one client (the client side's ``Connection`` is another
    thing: it matches responses to requests)."""
    peer: Peer
    era: Era | None = "legacy"
    # The server's side of the legacy handshake (lifecycle.SERVER_TRANSITIONS): idle → accepted
    # (initialize answered) → operating (notifications/initialized received).
    lifecycle: RoleState = field(default_factory=lambda: RoleState(SERVER))
    version: str | None = None
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] = field(default_factory=dict)
    log_level: str | None = DEFAULT_LOG_LEVEL  # None: send no log messages (modern, no logLevel in _meta)
    server_capabilities: dict[str, Any] = field(default_factory=dict)
    subscriptions: set[str] = field(default_factory=set)
    eras: ServerEra = "legacy"
    rounds: Rounds | None = None  # modern tools/call, resources/read, prompts/get: what the retry brought

    def wants_log(self, level: str) -> bool:
        return self.log_level is not None and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


class Context:
    """One request, as a tool (or resource or prompt function) sees it.

    Declare a parameter annotated ``Context`` and the toolkit passes it in::

        @server.tool
        async def slow_sum(n: int, ctx: Context) -> str:
            for i in range(n):
                await ctx.report_progress(i + 1, total=n)
    """

    def __init__(self, connection: ClientState, request_id: RequestId, meta: dict[str, Any] | None = None) -> None:
        self.connection = connection
        self.request_id = request_id
        self.meta = meta or {}
        self._last_progress: float | None = None
        self._asked = 0
        self._state: dict[str, Any] = {}

    @property
    def version(self) -> str:
        return self.connection.version or ""

    @property
    def progress_token(self) -> str | int | None:
        return self.meta.get("progressToken")

    # --- notifications ---------------------------------------------------------------------------

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """``notifications/progress``, if the request asked for it; ``progress`` must increase each time."""
        if self.progress_token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise ValueError(f"progress must increase with each notification (MCP 'progress'): "
                             f"{progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._post("notifications/progress", for_version("progress", params, self.version))

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """``notifications/message`` at ``level``, sent only if the client's level lets it through.

        Logging is deprecated in 2026-07-28 (SEP-2577): a new server logs to stderr (Python's
        ``logging``) instead. A server that still sends log messages declares it: ``Server(declare_logging=True)``.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
        if "logging" not in self.connection.server_capabilities:
            # A capability the server never declared must not be used: said on stderr, not on the wire.
            log.warning("a %s log message was not sent: this server does not declare the logging capability "
                        "(Server(..., declare_logging=True)); logging is deprecated in 2026-07-28, stderr is the "
                        "place for logs", level)
            return
        if not self.connection.wants_log(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self._post("notifications/message", params)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    def _post(self, method: str, params: dict[str, Any]) -> None:
        self.connection.peer.post(Notification(method, params), related_to=self.request_id)

    # --- asking the client -----------------------------------------------------------------------

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared: at initialize (legacy), or in this request's ``_meta`` (modern)."""
        return self.connection.client_capabilities

    def can_ask(self, capability: str) -> bool:
        """Could this request ask the client for ``capability`` ("elicitation", "sampling", "roots")?"""
        conn = self.connection
        method = {c: m for m, c in mrtr.CAPABILITY.items()}.get(capability)
        if method is None:
            raise ValueError(f"the client can be asked for {', '.join(mrtr.CAPABILITY.values())}, not {capability!r}")
        if conn.era == "modern":
            return conn.rounds is not None and not mrtr.missing_capabilities([InputRequest(method)],
                                                                             conn.client_capabilities)
        return (capability in conn.client_capabilities and conn.lifecycle.allows(SEND_REQUEST)
                and at_least(self.version or "2024-11-05", mrtr.SINCE[method]))

    @property
    def state(self) -> dict[str, Any]:
        """A small JSON-able dict kept across the rounds of one request (it rides in ``requestState``)."""
        rounds = self.connection.rounds
        return rounds.state if rounds is not None else self._state

    async def ask(self, requests: dict[str, InputRequest] | None = None, /, **named: InputRequest) -> dict[str, Any]:
        """Ask the client one or more things at once; returns each key → the client's result.

        >>> await ctx.ask(user_name=mrtr.elicitation("Name?", schema), greeting=mrtr.sampling("Say hi"))

        Legacy: one server→client request per key, in order. Modern: every key still unanswered goes
        out in one ``input_required`` result, and this body runs again when the client retries.
        """
        asked = {**(requests or {}), **named}
        conn = self.connection
        if conn.era != "modern":
            return {key: await self.request(r.method, r.params, capability=mrtr.CAPABILITY[r.method],
                                             since=mrtr.SINCE[r.method]) for key, r in asked.items()}
        missing = mrtr.missing_capabilities(asked.values(), conn.client_capabilities)
        if missing:  # spec "basic": the server MUST NOT rely on what the client did not declare
            raise MissingRequiredClientCapability(
                f"this request needs the client capabilities {', '.join(missing)}, which its _meta did not "
                f"declare", data={"requiredCapabilities": missing})
        if conn.rounds is None:
            raise LocalProtocolError("in MCP 2026-07-28 only tools/call, resources/read and prompts/get can ask "
                                     "the client something (as input_required results)")
        answers, unanswered = {}, {}
        for key, request in asked.items():
            found, answer = conn.rounds.lookup(key, request)
            if found:
                answers[key] = answer
            else:
                unanswered[key] = request
        if unanswered:
            raise InputRequired(unanswered)
        return answers

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      capability: str | None = None, since: str = "2024-11-05", key: str | None = None) -> Any:
        """Send a server→client request and return its result (modern: ask it as an input request).

        Legacy: refuses (LocalProtocolError, nothing sent) when the session's revision predates
        ``since``, the client did not declare ``capability``, or the client has not finished initializing.
        """
        conn = self.connection
        if conn.era == "modern":
            if method not in mrtr.CAPABILITY:
                raise LocalProtocolError(f"a 2026-07-28 server sends no requests; {method} cannot be asked "
                                         f"(only {', '.join(mrtr.CAPABILITY)} travel as input requests)")
            key = key or self._next_key(method)
            return (await self.ask({key: InputRequest(method, params)}))[key]
        if not at_least(self.version, since):
            raise LocalProtocolError(f"{method} needs MCP {since} or later; this session negotiated {self.version}")
        if capability and capability not in conn.client_capabilities:
            declared = ", ".join(conn.client_capabilities) or "none"
            raise LocalProtocolError(f"{method} needs the client's {capability!r} capability, which this client "
                                     f"did not declare (it declared: {declared})")
        if conn.lifecycle.state in (IDLE, ACCEPTED):
            # "basic/lifecycle", Initialization: the server SHOULD NOT send requests other than pings
            # and logging before receiving notifications/initialized.
            raise LocalProtocolError(f"{method} must wait until the client sends notifications/initialized")
        conn.lifecycle.move(SEND_REQUEST)  # once closed or in ERROR, this raises and names why
        answer = await conn.peer.request(method, params, related_to=self.request_id)
        if method in mrtr.CAPABILITY:  # the client's answer is input like any other: the modern era's checks
            return mrtr.check_answer(method, InputRequest(method, params), answer,
                                     where=f"the client's answer to {method}")
        return answer

    def _next_key(self, method: str) -> str:
        self._asked += 1  # the n-th question of this run: the same n on every run of a deterministic body
        return f"{mrtr.CAPABILITY[method]}-{self._asked}"

    async def sample(self, prompt: str | list[dict[str, Any]], *, max_tokens: int = 100, key: str | None = None,
                     **params: Any) -> dict[str, Any]:
        """``sampling/createMessage``: ask the client's model; returns ``{"role", "content", "model", ...}``.

        Sampling is deprecated in 2026-07-28 (SEP-2577): a new server calls a model provider's API itself.
        """
        request = mrtr.sampling(prompt, max_tokens=max_tokens, **params)
        return await self.request(request.method, request.params, capability="sampling", key=key)

    async def elicit(self, message: str, schema: dict[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """``elicitation/create`` (form mode): ask the user; returns ``{"action", "content"?}``."""
        form = self.connection.client_capabilities.get("elicitation")
        if self.connection.era != "modern" and isinstance(form, dict) and form and "form" not in form:
            raise LocalProtocolError("this client declared only URL-mode elicitation, not form mode")
        request = mrtr.elicitation(message, schema)
        return await self.request(request.method, request.params, capability="elicitation", since="2025-06-18",
                                  key=key)

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """``roots/list``: the directories the client lets this server work in.

        Roots are deprecated in 2026-07-28 (SEP-2577): a new server takes directories as tool
        arguments, resource URIs or its own configuration.
        """
        result = await self.request("roots/list", capability="roots", key=key)
        return list(result.get("roots", []))
