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

:class:`ScriptedModel` stands in for an LLM, offline and deterministic: rules map phrases of
the question to tool calls, and the final answer quotes the tool results. :meth:`Host.run`
drives the loop user → model → host → MCP server → model → user and returns every step.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from mcplab.client import Client
from mcplab.wire.errors import LocalProtocolError, MCPLabError, RemoteError, RequestTimeout, TransportError
from mcplab.client.results import Tool, ToolResult
from mcplab.trace import Trace
from mcplab.transports.base import Transport
from mcplab.transports.stdio import stdio

__all__ = ["Host", "CatalogueEntry", "ServerFailed", "ScriptedModel", "Rule", "AgentRun", "model_text"]

SEPARATOR = "__"
NAME_LIMIT = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


class ServerFailed(TransportError):
    """A server behind the Host is gone; ``server`` names it, ``__cause__`` says how."""

    def __init__(self, server: str, cause: BaseException) -> None:
        super().__init__(f"server {server!r} failed: {cause}")
        self.server = server


@dataclass(frozen=True)
class CatalogueEntry:
    """One tool as the model sees it (``name``) and where it really lives (``server``, ``tool``)."""
    name: str
    server: str
    tool: Tool

    def openai(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.tool.description,
                                                 "parameters": self.tool.input_schema}}

    def anthropic(self) -> dict:
        return {"name": self.name, "description": self.tool.description, "input_schema": self.tool.input_schema}


def model_text(result: ToolResult) -> str:
    """A tool result as the text a model reads: content blocks joined, failures marked."""
    text = result.text
    return f"Error: {text}" if result.is_error else text


def _function_name(name: str) -> str:
    return _NOT_ALLOWED.sub("_", name)[:NAME_LIMIT]


def merge_catalogue(tools: Mapping[str, Sequence[Tool]]) -> list[CatalogueEntry]:
    """Every server's tools in one list; a name offered by two servers gets a server prefix."""
    owners: dict[str, list[str]] = {}
    for server, listed in tools.items():
        for tool in listed:
            owners.setdefault(_function_name(tool.name), []).append(server)
    entries = []
    for server, listed in tools.items():
        for tool in listed:
            name = _function_name(tool.name)
            if len(owners[name]) > 1:
                name = _function_name(f"{server}{SEPARATOR}{tool.name}")
            entries.append(CatalogueEntry(name, server, tool))
    return entries


class Host:
    """Owns one :class:`~mcplab.client.Client` per server; see the module docstring."""

    def __init__(self, servers: Mapping[str, Transport | Sequence[str] | str], **client_options: Any) -> None:
        # A command (a list, or one string) means a stdio server; anything else is a ready transport.
        self.commands = {name: t for name, t in servers.items() if isinstance(t, (str, list, tuple))}
        self.transports = {name: stdio(t) if isinstance(t, (str, list, tuple)) else t for name, t in servers.items()}
        self.client_options = client_options
        self.clients: dict[str, Client] = {}        # the servers in service
        self._all_clients: dict[str, Client] = {}   # and the ones that failed: their traces and processes
        self.failures: dict[str, MCPLabError] = {}
        self.catalogue: list[CatalogueEntry] = []
        self._stale = True  # the catalogue needs a tools/list (never listed, or a list_changed came)

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
        client = Client(self.transports[name], on_list_changed=lambda method: self._mark_stale(), **self.client_options)
        self._all_clients[name] = client
        try:
            self.clients[name] = await client.connect()
        except MCPLabError as exc:
            self.failures[name] = exc

    async def reconnect(self, name: str) -> str:
        """Start server ``name`` again on a new connection (a new process, a new handshake); return its status.

        Crash recovery, one connection at a time: the other servers keep their connections and their
        state. Only a server given as a command can be started again; a ready transport is used once.
        """
        if name not in self.commands:
            raise LocalProtocolError(f"server {name!r} was given as a transport, not a command, so it cannot be "
                                     f"started again; servers given as commands: {', '.join(self.commands) or 'none'}")
        await self._all_clients[name].aclose()  # reap what is left of the old process
        self.failures.pop(name, None)
        self.clients.pop(name, None)
        self.transports[name] = stdio(self.commands[name])
        await self._open(name)
        await self.refresh()
        return self.status()[name]

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
        """``tools/list`` on every live server, merged into :attr:`catalogue`."""
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
        self.catalogue = merge_catalogue(listed)
        self._stale = False
        return self.catalogue

    async def check(self) -> dict[str, str]:
        """``ping`` every server; the ones that are gone or silent are taken out of service."""
        for name, client in list(self.clients.items()):
            try:
                await client.ping(timeout=5)
            except RemoteError:
                pass  # an error response is still an answer: the server is alive
            except (TransportError, RequestTimeout) as exc:
                self._failed(name, exc)
        return self.status()

    def status(self) -> dict[str, str]:
        """Each server: ``"up"`` or what went wrong (first line of the error)."""
        state = {name: "up" for name in self.clients}
        for name, error in self.failures.items():
            state[name] = "failed: " + str(error).splitlines()[0]
        return {name: state[name] for name in self.transports if name in state}

    def eras(self) -> dict[str, str]:
        """Each server in service: the era its connection speaks and the protocol version."""
        return {name: f"{client.era} ({client.protocol_version})" for name, client in self.clients.items()}

    def recent(self) -> dict[str, Trace]:
        """Each server's frames since the last ``recent()``: what a cell put on each wire."""
        return {name: client.recent() for name, client in self._all_clients.items()}

    def catalogue_table(self) -> str:
        """The merged catalogue as a small table: the name the model sees, server, MCP tool name."""
        rows = [("function name", "server", "MCP tool")] + [(e.name, e.server, e.tool.name) for e in self.catalogue]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)

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
        known = ", ".join(e.name for e in self.catalogue) or "none"
        down = [f"{s} ({self.status()[s]})" for s in self.failures]
        raise LocalProtocolError(f"no tool {name!r} in the catalogue (tools: {known})"
                                 + (f"; servers out of service: {', '.join(down)}" if down else ""))

    async def call(self, name: str, arguments: dict | None = None) -> ToolResult:
        """Call a catalogue tool by the name the model sees: one ``tools/call`` on its server."""
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
        """user → model → host → MCP servers → model → user, with every step recorded."""
        run = AgentRun(question)
        run.step("application", "user → host", question)
        if self._stale:
            await self.refresh()
            run.step("distribution", "host → MCP", f"tools/list on {', '.join(self.clients) or 'no server'}: "
                                                    f"{_count(len(self.catalogue), 'tool')}")
        else:
            run.step("distribution", "host", f"catalogue from the last tools/list: "
                                            f"{_count(len(self.catalogue), 'tool')}")
        messages: list[dict] = [{"role": "user", "content": question}]
        for _ in range(max_turns):
            tools = self.openai_tools()
            run.step("mechanism", "host → model", f"{_count(len(tools), 'function schema')} and "
                                                  f"{_count(len(messages), 'message')}")
            reply = model.respond(messages, tools)
            messages.append(reply)
            calls = reply.get("tool_calls") or []
            if not calls:
                run.answer = reply.get("content") or ""
                run.step("model", "model → host", "final answer")
                break
            run.step("model", "model → host", ", ".join(
                f"call {c['function']['name']}({c['function']['arguments']})" for c in calls))
            for call in calls:
                name = call["function"]["name"]
                server = next((e.server for e in self.catalogue if e.name == name), "?")
                try:
                    text = model_text(await self.call_function(call))
                except MCPLabError as exc:  # the model hears about a failure; the loop goes on
                    text = f"Error: {str(exc).splitlines()[0]}"
                run.step("distribution", f"host → {server}", f"tools/call {name} → {_short(text)}")
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
        else:
            run.answer = "(stopped: too many turns)"
        run.messages = messages
        run.step("application", "host → user", run.answer)
        return run


def function_call_parts(call: dict) -> tuple[str, dict]:
    """(name, arguments) from an OpenAI tool call or an Anthropic ``tool_use`` block."""
    if "function" in call:
        function = call["function"]
        arguments = function.get("arguments") or "{}"
        return function["name"], json.loads(arguments) if isinstance(arguments, str) else arguments
    if call.get("type") == "tool_use" or "input" in call:
        return call["name"], dict(call.get("input") or {})
    raise ValueError(f"expected an OpenAI tool call or an Anthropic tool_use block, got {call!r}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _short(text: str, limit: int = 70) -> str:
    line = text.replace("\n", " ")
    return line if len(line) <= limit else line[:limit - 1] + "…"


@dataclass
class AgentRun:
    """What happened in one :meth:`Host.run`: each step tagged with its layer, and the answer."""
    question: str
    steps: list[tuple[str, str, str]] = field(default_factory=list)
    answer: str = ""
    messages: list[dict] = field(default_factory=list)

    def step(self, layer: str, who: str, what: str) -> None:
        self.steps.append((layer, who, what))

    def __repr__(self) -> str:
        width = max(len(who) for _, who, _ in self.steps)
        return "\n".join(f"[{layer:<12}] {who.ljust(width)}  {_short(what, 90)}" for layer, who, what in self.steps)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))


@dataclass(frozen=True)
class Rule:
    """When ``pattern`` (a regex) occurs in the question, call ``tool`` with ``arguments``: a dict
    whose string values may name the pattern's groups, e.g. ``{"city": "{city}"}``."""
    pattern: str
    tool: str
    arguments: Mapping[str, str] | Callable[[re.Match], dict] = field(default_factory=dict)

    def call_for(self, match: re.Match) -> dict:
        if callable(self.arguments):
            return self.arguments(match)
        return {key: value.format(**match.groupdict()) for key, value in self.arguments.items()}


class ScriptedModel:
    """A deterministic, offline stand-in for a model that does function calling.

    It speaks the OpenAI chat shape: given messages and function schemas it answers either
    ``{"role": "assistant", "tool_calls": [...]}`` or a final ``{"role": "assistant", "content"}``.
    A rule's tool is found in the offered functions by its name, or by ``server__name``.
    """

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = list(rules)

    def respond(self, messages: list[dict], tools: list[dict]) -> dict:
        last = messages[-1]
        if last["role"] == "tool":
            results = [m for m in messages if m["role"] == "tool"]
            calls = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
            lines = [f"- {calls.get(r['tool_call_id'], '?')}: {r['content']}" for r in results]
            return {"role": "assistant", "content": "Here is what I found:\n" + "\n".join(lines)}
        offered = [t["function"]["name"] for t in tools]
        found = []
        for rule in self.rules:
            for match in re.finditer(rule.pattern, last["content"], re.IGNORECASE):
                name = next((n for n in offered if n == rule.tool or n.endswith(SEPARATOR + rule.tool)), None)
                if name is not None:
                    found.append((match.start(), name, rule.call_for(match)))
        if not found:
            return {"role": "assistant", "content": "I have no tool that helps with that question."}
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                 for i, (_, name, args) in enumerate(sorted(found, key=lambda f: f[0]), 1)]
        return {"role": "assistant", "content": None, "tool_calls": calls}
