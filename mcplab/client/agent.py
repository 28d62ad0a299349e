"""The agent's side of the Host: the catalogue as function schemas, a model's calls, a scripted model, a run.

Theory of operation
-------------------
:func:`merge_catalogue` puts every server's tools in one list of :class:`CatalogueEntry`: each keeps
its own name unless two servers offer the same one; then both become ``server__tool`` (names stay
within ``[A-Za-z0-9_-]{1,64}``, which both model APIs require). An entry turns itself into either
common function-calling shape (``openai()``, ``anthropic()``), and :func:`model_text` turns a
result's content blocks into the text a model reads.

:class:`ScriptedModel` stands in for an LLM, offline and deterministic: rules map phrases of the
question to tool calls, and the final answer quotes the tool results. It speaks the OpenAI chat
shape, as the Host's loop (:meth:`mcplab.client.host.Host.run`) does. :func:`function_call_parts` reads a
model's call in either common shape (OpenAI, Anthropic); :class:`AgentRun` is what one run did, each
step tagged with its layer (application, distribution, mechanism, model: seed 2's layering).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from mcplab.client.results import Tool, ToolResult
from mcplab.i18n import _

__all__ = ["CatalogueEntry", "merge_catalogue", "model_text", "function_call_parts", "AgentRun", "Rule",
           "ScriptedModel", "SEPARATOR"]

SEPARATOR = "__"  # between a server's name and a tool's when two servers offer the same name
NAME_LIMIT = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


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
    """A tool result as the text a model reads: content blocks joined, failures marked.

    The mark is the host's own word, not the server's, so it is in the host's language (``错误：`` in a
    Chinese lab, as the host's "Denied: ..." is); the result's text after it is the server's, as sent.
    """
    text = result.text
    return _("Error: {text}", text=text) if result.is_error else text


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


def function_call_parts(call: dict) -> tuple[str, dict]:
    """(name, arguments) from an OpenAI tool call or an Anthropic ``tool_use`` block."""
    if "function" in call:
        function = call["function"]
        arguments = function.get("arguments") or "{}"
        return function["name"], json.loads(arguments) if isinstance(arguments, str) else arguments
    if call.get("type") == "tool_use" or "input" in call:
        return call["name"], dict(call.get("input") or {})
    raise ValueError(f"expected an OpenAI tool call or an Anthropic tool_use block, got {call!r}")


def short(text: str, limit: int = 70) -> str:
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
        width = max(len(who) for _layer, who, _what in self.steps)
        # str(what): a step may be a Said, whose value (the English) code reads and which prints translated
        return "\n".join(f"[{layer:<12}] {who.ljust(width)}  {short(str(what), 90)}" for layer, who, what in self.steps)

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
            return self.answer(messages)
        offered = [t["function"]["name"] for t in tools]
        found = []
        for rule in self.rules:
            for match in re.finditer(rule.pattern, last["content"], re.IGNORECASE):
                name = next((n for n in offered if n == rule.tool or n.endswith(SEPARATOR + rule.tool)), None)
                if name is not None:
                    found.append((match.start(), name, rule.call_for(match)))
        if not found:
            return {"role": "assistant", "content": _("I have no tool that helps with that question.")}
        calls = [{"id": f"call_{i}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                 for i, (_start, name, args) in enumerate(sorted(found, key=lambda f: f[0]), 1)]
        return {"role": "assistant", "content": None, "tool_calls": calls}

    def answer(self, messages: list[dict], leave_out: frozenset[str] = frozenset()) -> dict:
        """The final answer: every tool result of the conversation quoted, but the calls in ``leave_out``."""
        results = [m for m in messages if m["role"] == "tool" and m["tool_call_id"] not in leave_out]
        calls = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
        lines = [f"- {calls.get(r['tool_call_id'], '?')}: {r['content']}" for r in results]
        return {"role": "assistant", "content": _("Here is what I found:") + "\n" + "\n".join(lines)}
