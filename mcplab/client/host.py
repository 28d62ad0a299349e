"""The Host: many servers, one client each, one tool catalogue, and a model that picks tools.

Theory of operation
-------------------
MCP has three roles (spec "architecture"): the **host** is the application the user runs; it
owns one **client** per **server**, and each client/server pair is its own connection, its own
handshake and its own trust boundary, so a server that crashes takes only its own tools with it,
and :meth:`Host.reconnect` starts that one again while the others keep their connections.
Each connection also has its own era: with ``Host(servers, era="auto")`` every client probes its
server, so one host can hold legacy and modern servers side by side (:meth:`Host.eras`).

    user ─▶ Host ─┬─ Client ─stdio─▶ weather server      tools/list, tools/call
                  └─ Client ─stdio─▶ files server
                  │
                  └─ model: sees every tool as a function schema, answers with function calls

Where MCP sits against function calling (the layering of seed 2, bottom to top): the *model*
reads function schemas and emits call intents; *function calling* is the mechanism (a JSON
Schema per function in, ``{"name", "arguments"}`` out); *MCP* is distribution: where the tools
come from (``tools/list``) and how a call travels (``tools/call``); the *application* (this
Host) glues them together. :meth:`Host.openai_tools` and :meth:`Host.anthropic_tools` turn the
catalogue into the two common function-calling shapes; :meth:`Host.call_function` turns a
model's call (either shape) back into ``tools/call``; :func:`model_text` turns a result's
content blocks into text for the model.

The catalogue keeps each tool's own name unless two servers offer the same one; then both
become ``server__tool`` (names stay within ``[A-Za-z0-9_-]{1,64}``, which both model APIs
require), and :meth:`Host.catalogue_table` shows the mapping.

:class:`~mcplab.client.agent.ScriptedModel` stands in for an LLM, offline and deterministic (agent.py).
:meth:`Host.run` drives the loop user → model → host → MCP server → model → user and returns
every step.

**What the host believes** (trust.py; spec server/tools, "User Interaction Model" and "Security
Considerations"). A server's words reach the model, so the host stands between them, with the user:

* every tool listed is *pinned* (a digest of its definition). A tool seen for the first time is
  offered to the model unless its text is flagged; a flagged one, or one whose definition changed
  since it was pinned (a ``list_changed`` "rug pull"), is *withheld* until the user says yes.
  :meth:`Host.review` shows the user every description in full, with its flags.
* a call the *model* asks for in :meth:`Host.run` runs only if :func:`~mcplab.client.trust.consent_reason`
  finds no reason to ask, or the user says yes; a refusal goes back to the model as a tool result
  saying so. ``host.call(...)`` is the application's own call (its user asked), so it is not asked about.
* a result whose text is flagged reaches the model quoted as data, with the host's warning.
* ``ask``: the user, a function ``Question -> bool`` (or awaitable). Without one, nobody can say
  yes: whatever needs a question is refused. ``trust``: the servers whose annotations the user
  believes; :meth:`Host.allow` allows one tool for the rest of a connection. One
  :class:`~mcplab.client.trust.Permission` per connection.
* a server that crashed is started again (:meth:`Host.reconnect`) when the next run begins, up to
  ``max_restarts`` times; a call that was under way when it crashed is reported, never repeated
  (it may have done half its work).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass, replace
from typing import Any, Awaitable, Callable, Iterable, Mapping, Sequence

from mcplab.client import trust
from mcplab.client.agent import (  # noqa: F401  (merge_catalogue re-exported: tests and labs import it from here)
    AgentRun, CatalogueEntry, Rule, ScriptedModel, function_call_parts, merge_catalogue, model_text, short,
)
from mcplab.client import Client
from mcplab.client.eras import EraCache
from mcplab.wire.errors import LocalProtocolError, MCPLabError, RemoteError, RequestTimeout, TransportError
from mcplab.i18n import N_, Joined, Said, _, columns
from mcplab.client.results import Tool, ToolResult
from mcplab.trace import Trace
from mcplab.transports.base import Transport
from mcplab import place
from mcplab.client.trust import Permission, Question

__all__ = ["Host", "CatalogueEntry", "ServerFailed", "ScriptedModel", "Rule", "AgentRun", "model_text",
           "function_call_parts", "Ask", "Pin"]

Ask = Callable[[Question], "bool | Awaitable[bool]"]
# Why a tool is withheld (changed since approved?, was there a user to ask?): kept in English in the run's
# record and in Host.withheld, shown in the user's language by review().
WITHHELD = {(True, True): N_("changed since it was approved, and the user said no"),
            (True, False): N_("changed since it was approved, and there is no one to ask"),
            (False, True): N_("flagged, and the user said no"),
            (False, False): N_("flagged, and there is no one to ask")}
MAX_RESTARTS = 3  # times one server is started again after crashing, in a host's life


TOOLS = (N_("{n} tool"), N_("{n} tools"))  # the playground counts with the same pair (notebook/inspector.py)


def _tools(n: int) -> Said:
    return Said(*TOOLS, n)


class ServerFailed(TransportError):
    """A server behind the Host is gone; ``server`` names it, ``__cause__`` says how."""

    def __init__(self, server: str, cause: BaseException) -> None:
        super().__init__(_("server {server} failed: {cause}", server=repr(server), cause=cause))
        self.server = server


@dataclass(frozen=True)
class Pin:
    """A tool definition the user approved (or the host took on first sight): its digest and its text."""
    digest: str
    definition: Mapping[str, Any]


class Host:
    """Owns one :class:`~mcplab.client.Client` per server; see the module docstring."""

    def __init__(self, servers: Mapping[str, Transport | Sequence[str] | str], *, ask: Ask | None = None,
                 trust: Iterable[str] = (), max_restarts: int = MAX_RESTARTS, **client_options: Any) -> None:
        # A command (a list, or one string) means a server started as place.local allows; else a ready transport.
        self.commands = {name: t for name, t in servers.items() if isinstance(t, (str, list, tuple))}
        self.transports = {name: place.local(t) if isinstance(t, (str, list, tuple)) else t for name, t in servers.items()}
        unknown = set(trust) - set(servers)
        if unknown:
            raise ValueError(_("trust names servers this host does not have: {unknown} (servers: {servers})",
                               unknown=sorted(unknown), servers=", ".join(servers)))
        # One memory of eras for this host's clients: a server started again after a crash (reconnect)
        # is opened in the era it spoke, with no second probe. The host owns it; no other host shares it.
        given = client_options.pop("era_cache", None)  # (an empty cache is falsy: test for None)
        self.era_cache: EraCache = EraCache() if given is None else given
        self.client_options = client_options
        self.clients: dict[str, Client] = {}        # the servers in service
        self._all_clients: dict[str, Client] = {}   # and the ones that failed: their traces and processes
        self.failures: dict[str, MCPLabError] = {}
        self.catalogue: list[CatalogueEntry] = []
        self._stale = True  # the catalogue needs a tools/list (never listed, or a list_changed came)
        self.ask = ask
        self.permissions = {name: Permission(trusted=name in set(trust)) for name in servers}
        self.listed: dict[str, list[Tool]] = {}            # what each server listed last, offered or not
        self.pins: dict[tuple[str, str], Pin] = {}          # (server, tool) → the definition approved
        self.withheld: dict[tuple[str, str], str] = {}      # (server, tool) → why the model does not get it
        self._refused: dict[tuple[str, str], tuple[str, str]] = {}  # (server, tool) → (digest refused, why)
        self.questions: list[tuple[Question, bool]] = []    # every question asked, and the answer
        self.max_restarts, self.restarts = max_restarts, {name: 0 for name in servers}

    async def __aenter__(self) -> Host:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> Host:
        """Start every server and run its handshake; one that fails is recorded, not fatal."""
        for name in self.transports:
            await self._open(name)
        await self.refresh()
        return self

    async def _open(self, name: str) -> None:
        client = Client(self.transports[name], on_list_changed=lambda method: self._mark_stale(),
                        era_cache=self.era_cache, **self.client_options)
        self._all_clients[name] = client
        try:
            self.clients[name] = await client.connect()
        except MCPLabError as exc:
            self.failures[name] = exc

    async def reconnect(self, name: str) -> str:
        """Start server ``name`` again on a new connection (a new process, a new handshake); return its status.

        Crash recovery, one connection at a time: the other servers keep their connections and their
        state. Only a server given as a command can be started again; a ready transport is used once.
        The pins stay: a restarted server whose tools are unchanged is not asked about again.
        """
        if name not in self.commands:
            raise LocalProtocolError(_("server {name} was given as a transport, not a command, so it cannot be "
                                       "started again; servers given as commands: {commands}", name=repr(name),
                                       commands=", ".join(self.commands) or _("none")))
        await self._all_clients[name].aclose()  # reap what is left of the old process
        self.failures.pop(name, None)
        self.clients.pop(name, None)
        self.transports[name] = place.local(self.commands[name])
        await self._open(name)
        await self.refresh()
        return self.status()[name]

    async def recover(self) -> dict[str, str]:
        """Start again every failed server that can be (given as a command, restarts left); their new status."""
        restarted = {}
        for name in list(self.failures):
            if name in self.commands and self.restarts[name] < self.max_restarts:
                self.restarts[name] += 1
                restarted[name] = await self.reconnect(name)
        return restarted

    async def aclose(self) -> None:
        """Close every connection, failed ones too (a dead server's process still needs reaping)."""
        for client in self._all_clients.values():
            await client.aclose()

    def _mark_stale(self) -> None:
        self._stale = True

    def _failed(self, name: str, error: MCPLabError) -> ServerFailed:
        """Take a broken server out of service and say which one it was."""
        self.failures[name] = error
        self.clients.pop(name, None)
        self.catalogue = [entry for entry in self.catalogue if entry.server != name]
        failure = ServerFailed(name, error)
        failure.__cause__ = error
        return failure

    async def refresh(self) -> list[CatalogueEntry]:
        """``tools/list`` on every live server; the tools the host admits, merged into :attr:`catalogue`."""
        listed: dict[str, list[Tool]] = {}
        for name, client in list(self.clients.items()):
            if "tools" not in client.server_capabilities:
                continue
            try:
                listed[name] = await client.list_tools()
            except RemoteError:
                continue  # an answer, if an error one: the server is alive but lists no tools now
            except (TransportError, RequestTimeout) as exc:
                self._failed(name, exc)
        self.listed = listed
        self._stale = False  # before asking: a list_changed that comes while the user thinks counts
        self.catalogue = merge_catalogue(await self._admit(listed))
        return self.catalogue

    # --- what the host believes (trust.py) --------------------------------------------------------
    async def _admit(self, listed: Mapping[str, Sequence[Tool]]) -> dict[str, list[Tool]]:
        """The tools the model may see: pinned ones unchanged, new unflagged ones, and what the user approves."""
        admitted: dict[str, list[Tool]] = {}
        self.withheld = {key: why for key, why in self.withheld.items() if key[0] not in listed}  # listed anew below
        for server, tools in listed.items():
            others = {t.name for s, ts in listed.items() if s != server for t in ts}
            admitted[server] = []
            for tool in tools:
                key, digest = (server, tool.name), trust.pin(tool.raw)
                pinned = self.pins.get(key)
                if pinned is not None and pinned.digest == digest:
                    admitted[server].append(tool)
                    continue
                flags = trust.flag(trust.definition_text(tool.raw), others=others)
                if pinned is None and not flags:  # first sight, nothing suspicious: adding the server approved it
                    self.pins[key] = Pin(digest, tool.raw)
                    admitted[server].append(tool)
                    continue
                reasons = tuple(str(f) for f in flags)
                if pinned is not None:
                    reasons = tuple(_("changed: {change}", change=line)
                                    for line in trust.changes(pinned.definition, tool.raw)) + reasons
                refused = self._refused.get(key)
                if refused is not None and refused[0] == digest:  # asked already about exactly this definition
                    self.withheld[key] = refused[1]
                    continue
                question = Question("changed tool" if pinned else "new tool", server, tool.name,
                                    trust.definition_text(tool.raw), reasons)
                if await self._ask(question):
                    self.pins[key] = Pin(digest, tool.raw)
                    admitted[server].append(tool)
                else:
                    why = WITHHELD[pinned is not None, bool(self.ask)]
                    self._refused[key] = (digest, why)
                    self.withheld[key] = why
        return admitted

    async def _ask(self, question: Question) -> bool:
        """The user's answer (no user: no)."""
        answer = False
        if self.ask is not None:
            reply = self.ask(question)
            answer = bool(await reply) if inspect.isawaitable(reply) else bool(reply)
        self.questions.append((question, answer))
        return answer

    def allow(self, server: str, tool: str) -> Permission:
        """Let the model call ``tool`` on ``server`` without asking, for the rest of this connection."""
        permission = self.permissions[server]
        self.permissions[server] = replace(permission, always=permission.always | {tool})
        return self.permissions[server]

    async def _consent(self, entry: CatalogueEntry, arguments: dict) -> str | None:
        """None if the model's call may run; else the refusal the model is told."""
        reason = trust.consent_reason(entry.tool.raw, self.permissions[entry.server])
        if reason is None:
            return None
        shown = json.dumps(arguments, ensure_ascii=False)
        if await self._ask(Question("call", entry.server, entry.tool.name, shown, (reason,))):
            return None
        if self.ask:
            return _("Denied: {call} was not called: the user did not allow it.", call=f"{entry.name}({shown})")
        return _("Denied: {call} was not called: there is no one to ask, so it was not run.",
                 call=f"{entry.name}({shown})")

    def _for_model(self, entry: CatalogueEntry, result: ToolResult) -> tuple[str, tuple[trust.Flag, ...]]:
        """A result as the model reads it: text, or quoted as data with a warning when the text is flagged."""
        text = model_text(result)
        names = {e.tool.name for e in self.catalogue} | {e.name for e in self.catalogue}
        flags = trust.flag(text, others=names - {entry.tool.name, entry.name}, where=trust.RESULT)
        return (trust.as_data(entry.server, entry.tool.name, text, flags), flags) if flags else (text, flags)

    def review(self) -> str:
        """Every tool each server listed, as the user should see it: offered or withheld, flags, full text."""
        blocks = []
        for server, tools in self.listed.items():
            others = {t.name for s, ts in self.listed.items() if s != server for t in ts}
            for tool in tools:
                state = self.withheld.get((server, tool.name))
                flags = trust.flag(trust.definition_text(tool.raw), others=others)
                shown = _("withheld: {why}", why=_(state)) if state else _("offered to the model")
                lines = [f"{server} · {tool.name} · {shown}"]
                lines += [f"    {line}" for line in trust.definition_text(tool.raw).splitlines()]
                lines += [f"    ⚠ {f}" for f in flags]  # the same words the question showed
                blocks.append("\n".join(lines))
        return "\n".join(blocks)

    # --- state --------------------------------------------------------------------------------------
    async def check(self) -> dict[str, str]:
        """``ping`` every server; the ones that are gone or silent are taken out of service.

        A ping waits as long as any request of the host's (``timeout``, 30 s unless told): a live server
        on a busy machine may take seconds to answer, and a shorter wait would take it for a dead one.
        """
        for name, client in list(self.clients.items()):
            try:
                await client.ping()
            except RemoteError:
                pass  # an error response is still an answer: the server is alive
            except (TransportError, RequestTimeout) as exc:
                self._failed(name, exc)
        return self.status()

    def status(self) -> dict[str, str]:
        """Each server: ``"up"`` or what went wrong (first line of the error)."""
        state = {name: "up" for name in self.clients}
        for name, error in self.failures.items():
            state[name] = Said("failed: {error}", error=str(error).splitlines()[0])  # English to code, shown translated
        return {name: state[name] for name in self.transports if name in state}

    def eras(self) -> dict[str, str]:
        """Each server in service: the era its connection speaks and the protocol version."""
        return {name: f"{client.era} ({client.protocol_version})" for name, client in self.clients.items()}

    def recent(self) -> dict[str, Trace]:
        """Each server's frames since the last ``recent()``: what a cell put on each wire."""
        return {name: client.recent() for name, client in self._all_clients.items()}

    def catalogue_table(self) -> str:
        """The merged catalogue as a small table: the name the model sees, server, MCP tool name."""
        head = (_("function name"), _("server"), _("MCP tool"))
        rows = [head] + [(e.name, e.server, e.tool.name) for e in self.catalogue]
        widths = [max(columns(row[i]) for row in rows) for i in range(3)]
        return "\n".join("  ".join(cell + " " * (w - columns(cell)) for cell, w in zip(row, widths)).rstrip()
                         for row in rows)

    # --- function calling ------------------------------------------------------------------------
    def openai_tools(self) -> list[dict]:
        """``[{"type": "function", "function": {name, description, parameters}}, ...]``"""
        return [entry.openai() for entry in self.catalogue]

    def anthropic_tools(self) -> list[dict]:
        """``[{name, description, input_schema}, ...]``"""
        return [entry.anthropic() for entry in self.catalogue]

    def entry(self, name: str) -> CatalogueEntry:
        for entry in self.catalogue:
            if entry.name == name:
                return entry
        known = ", ".join(e.name for e in self.catalogue) or _("none")
        down = [f"{s} ({self.status()[s]})" for s in self.failures]
        held = [f"{s}.{t} ({_(why)})" for (s, t), why in self.withheld.items()]
        raise LocalProtocolError(_("no tool {name} in the catalogue (tools: {known})", name=repr(name), known=known)
                                 + ("; " + _("servers out of service: {down}", down=", ".join(down)) if down else "")
                                 + ("; " + _("withheld: {held}", held=", ".join(held)) if held else ""))

    async def call(self, name: str, arguments: dict | None = None) -> ToolResult:
        """Call a catalogue tool by the name the model sees: one ``tools/call`` on its server.

        The application's own call: no question is asked (the model's calls go through :meth:`run`).
        """
        entry = self.entry(name)
        client = self.clients[entry.server]
        try:
            return await client.call_tool(entry.tool.name, arguments or {})
        except TransportError as exc:
            raise self._failed(entry.server, exc) from exc

    async def call_function(self, call: dict) -> ToolResult:
        """A model's function call, in OpenAI or Anthropic shape, as ``tools/call``.

        OpenAI:    {"type": "function", "function": {"name": ..., "arguments": "<JSON text>"}}
        Anthropic: {"type": "tool_use", "name": ..., "input": {...}}
        """
        name, arguments = function_call_parts(call)
        return await self.call(name, arguments)

    # --- the agent loop --------------------------------------------------------------------------
    async def run(self, question: str, model: ScriptedModel, *, max_turns: int = 4) -> AgentRun:
        """user → model → host → MCP servers → model → user, with every step recorded.

        Before the model's first turn, crashed servers are started again (:meth:`recover`) and a
        stale catalogue is listed again (which may ask the user about changed tools). Each call the
        model asks for passes :meth:`_consent` first; a refusal is the tool's answer to the model.
        """
        run = AgentRun(question)
        run.step("application", "user → host", question)
        for name, status in (await self.recover()).items():
            run.step("distribution", f"host → {name}", Said("started again after a crash (a new process): {status}",
                                                            status=status))
        if self._stale:
            await self.refresh()
            run.step("distribution", "host → MCP", Said("tools/list on {servers}: {tools}",
                                                        servers=", ".join(self.clients) or Said("no server"),
                                                        tools=_tools(len(self.catalogue))))
        else:
            run.step("distribution", "host", Said("catalogue from the last tools/list: {tools}",
                                                  tools=_tools(len(self.catalogue))))
        for server, tool in self.withheld:
            run.step("application", "host", Said("withheld from the model: {tool} of {server} ({why})", tool=tool,
                                                 server=server, why=Said(self.withheld[server, tool])))
        messages: list[dict] = [{"role": "user", "content": question}]
        for _turn in range(max_turns):
            tools = self.openai_tools()
            run.step("mechanism", "host → model", Said("{schemas} and {messages}",
                                                       schemas=Said("{n} function schema", "{n} function schemas",
                                                                    len(tools)),
                                                       messages=Said("{n} message", "{n} messages", len(messages))))
            reply = model.respond(messages, tools)
            messages.append(reply)
            calls = reply.get("tool_calls") or []
            if not calls:
                run.answer = reply.get("content") or ""
                run.step("model", "model → host", Said("final answer"))
                break
            run.step("model", "model → host", Joined(", ", (
                Said("call {call}", call=f"{c['function']['name']}({c['function']['arguments']})") for c in calls)))
            for call in calls:
                text = await self._run_call(call, run)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        else:
            run.answer = _("(stopped: too many turns)")
        run.messages = messages
        run.step("application", "host → user", run.answer)
        return run

    async def _run_call(self, call: dict, run: AgentRun) -> str:
        """One call the model asked for: consent, ``tools/call``, the result as the model will read it."""
        name = call["function"]["name"]
        server = next((e.server for e in self.catalogue if e.name == name), "?")
        try:
            entry = self.entry(name)
            arguments = function_call_parts(call)[1]
            asked = len(self.questions)
            denied = await self._consent(entry, arguments)
            if len(self.questions) > asked:
                answer = Said("no") if denied else Said("yes")
                run.step("application", "host → user", Said("allow {tool} on {server}? {answer}",
                                                             tool=entry.tool.name, server=server, answer=answer))
            if denied:
                return denied
            text, flags = self._for_model(entry, await self.call(name, arguments))
        except (MCPLabError, ValueError) as exc:  # the model hears about a failure; the loop goes on
            text = _("Error: {text}", text=str(exc).splitlines()[0])  # the host's words, in its language
            flags = ()
        shown = json.loads(text)["result"] if flags else text
        run.step("distribution", f"host → {server}", f"tools/call {name} → {short(shown)}")
        if flags:
            run.step("application", "host", Said("flagged the result ({rules}): handed to the model as data, with a "
                                                 "warning", rules=Joined(", ", (Said(f.rule) for f in flags))))
        return text
