"""Checks for lab 04 (the Host): turn an MCP tool into the two function-calling shapes, turn a
model's function call back into ``tools/call``, write a rule for the scripted model, and place
each step of an agent run in its layer.

The shape checks compare with what :mod:`mcplab.client.host` produces; the rule check runs your rule
through :class:`~mcplab.client.host.ScriptedModel` on questions you have not seen.
"""

from __future__ import annotations

import json
from typing import Any

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Texts, _
from mcplab.client.host import CatalogueEntry, Rule, ScriptedModel, function_call_parts
from mcplab.client.results import Tool

__all__ = [
    "check_openai_tool", "check_anthropic_tool", "check_tools_call_for", "check_rule", "check_layers",
    "MCP_TOOL", "MODEL_CALL", "CATALOGUE", "LAYER_STEPS",
]

MCP_TOOL = {  # one entry of a tools/list result
    "name": "get_forecast",
    "description": "Forecast for the next 1–7 days.",
    "inputSchema": {"type": "object",
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1,
                                                                         "maximum": 7}},
                    "required": ["city"]},
}
_ENTRY = CatalogueEntry("get_forecast", "weather", Tool.from_json(MCP_TOOL))


def _shape(answer: Any, expected: dict, what: str, hint: str) -> Feedback:
    if answer == expected:
        return passed(_("the {what} shape: the same JSON Schema, under another name", what=what))
    missing = sorted(set(expected) - set(answer))
    extra = sorted(set(answer) - set(expected))
    if missing or extra:
        return failed(_("top-level keys: missing {missing}, unexpected {extra}", missing=missing or _("none"),
                        extra=extra or _("none")), hint)
    for key in expected:
        if answer[key] != expected[key]:
            return failed(_("{key!r} is not right: expected {expected}", key=key,
                            expected=json.dumps(expected[key], ensure_ascii=False)[:120]), hint)
    return failed(_("not the expected shape"), hint)


@check(N_("a tool in the OpenAI shape, as a dict"), dict)
def check_openai_tool(answer: Any) -> Feedback:
    """MCP_TOOL in the OpenAI function-calling shape."""
    return _shape(answer, _ENTRY.openai(), "OpenAI",
                  _('{"type": "function", "function": {"name", "description", "parameters"}}; '
                    "parameters is the inputSchema unchanged"))


@check(N_("a tool in the Anthropic shape, as a dict"), dict)
def check_anthropic_tool(answer: Any) -> Feedback:
    """MCP_TOOL in the Anthropic tool shape."""
    return _shape(answer, _ENTRY.anthropic(), "Anthropic",
                  _('{"name", "description", "input_schema"}; input_schema is the inputSchema unchanged'))


# --- the way back: a function call becomes tools/call --------------------------------------------

CATALOGUE = {"weather__get_forecast": ("weather", "get_forecast"), "files__get_forecast": ("files", "get_forecast"),
             "read_file": ("files", "read_file")}
MODEL_CALL = {"id": "call_7", "type": "function",
              "function": {"name": "weather__get_forecast", "arguments": '{"city": "Tokyo", "days": 2}'}}


@check(N_("a pair (server, params of tools/call)"), (tuple, list))
def check_tools_call_for(answer: Any) -> Feedback:
    """(server, params of tools/call) for MODEL_CALL, given the host's CATALOGUE."""
    hint = _('look the function name up in CATALOGUE; params are {"name": <the MCP tool name>, '
             '"arguments": <the parsed arguments>}; note that "arguments" arrives as JSON *text*')
    if len(answer) != 2:
        return failed(_('expected a pair: ("server", {"name": ..., "arguments": {...}})'), hint)
    server, params = answer
    name, arguments = function_call_parts(MODEL_CALL)
    expected_server, tool = CATALOGUE[name]
    if server != expected_server:
        return failed(_("the call goes to {server!r}: {name} is that server's tool", server=expected_server,
                        name=name), hint)
    if not isinstance(params, dict) or params.get("name") != tool:
        return failed(_("params must name the tool as the server knows it: {tool!r}, without the prefix",
                        tool=tool), hint)
    if params.get("arguments") != arguments or set(params) - {"name", "arguments"}:
        got = params.get("arguments")
        why = _(" (it is still JSON text: parse it)") if isinstance(got, str) else ""
        return failed(_("arguments should be {arguments}, got {got!r}{why}", arguments=arguments, got=got, why=why),
                      hint)
    return passed(_('weather gets tools/call {"name": "get_forecast", "arguments": {"city": "Tokyo", "days": 2}}'))


# --- a rule for the scripted model --------------------------------------------------------------

_OFFERED = [{"type": "function", "function": {"name": n}} for n in ("get_weather", "get_forecast", "read_file")]
_QUESTIONS = {"What's the forecast for Tokyo?": "Tokyo", "what is the forecast for Paris": "Paris",
              "Forecast for Seattle, please": "Seattle", "Could I get the forecast for Lima?": "Lima",
              "forecast for Oslo": "Oslo"}
# Questions the rule must leave alone: the model should not reach for get_forecast on these.
_NOT_FORECASTS = ["What's the weather in Paris right now?", "Please read notes.md for Tokyo's office",
                  "Is it raining in Berlin?"]


@check(N_("a Rule"), Rule)
def check_rule(rule: Any) -> Feedback:
    """A Rule that makes the scripted model call get_forecast with the city named in a forecast question,
    and only then."""
    hint = _('Rule(pattern, tool, arguments): a named group in the pattern, (?P<name>...), is filled into the '
             'arguments where they say "{name}"; the pattern should match forecast questions only')
    model = ScriptedModel([rule])

    def ask(question: str) -> dict | Feedback:
        try:
            return model.respond([{"role": "user", "content": question}], _OFFERED)
        except Exception as exc:  # the student's pattern and arguments run here: report, never crash
            return failed(_("the rule broke on {question!r}: {error}: {exc}", question=question,
                            error=type(exc).__name__, exc=exc), hint)

    for question in _NOT_FORECASTS:
        reply = ask(question)
        if isinstance(reply, Feedback):
            return reply
        names = [function_call_parts(call)[0] for call in reply.get("tool_calls") or []]
        if "get_forecast" in names:
            return failed(_("on {question!r}, which asks for no forecast, the model called get_forecast: the "
                            "pattern matches too much", question=question), hint)
    for question, city in _QUESTIONS.items():
        reply = ask(question)
        if isinstance(reply, Feedback):
            return reply
        calls = reply.get("tool_calls") or []
        if len(calls) != 1:
            return failed(_("on {question!r} the model made {count} calls, expected one", question=question,
                            count=len(calls)), hint)
        name, arguments = function_call_parts(calls[0])
        if name != "get_forecast" or arguments != {"city": city}:
            return failed(_("on {question!r} the model called {name}({arguments}), expected "
                            "get_forecast({{'city': {city!r}}})", question=question, name=name,
                            arguments=arguments, city=city), hint)
    return passed(_("the rule picks get_forecast and the city for every forecast question tried"))


# --- the layers of seed 2 -----------------------------------------------------------------------

LAYER_STEPS = Texts({
    "a": "tools/list tells the host which tools the weather server has",
    "b": "the host puts each tool's name, description and schema into the model request as a function",
    "c": "the network weights pick get_weather as the function that fits the question",
    "d": "the agent program keeps the conversation and decides when to answer the user",
    "e": "tools/call carries the city to the weather server",
})
_LAYER = {"a": "distribution", "b": "mechanism", "c": "model", "d": "application", "e": "distribution"}
_LAYER_NAMES = ("application", "distribution", "mechanism", "model")


@check(N_("a dict of step → layer"), dict)
def check_layers(answer: Any) -> Feedback:
    """For each of LAYER_STEPS, its layer: "application", "distribution", "mechanism" or "model"."""
    hint = _("application = your agent; distribution = MCP (where tools come from, how calls travel); "
             "mechanism = function calling (schemas in, call intents out); model = the LLM itself")
    if not isinstance(answer, dict) or set(answer) != set(LAYER_STEPS):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(LAYER_STEPS)), hint)
    for key, expected in _LAYER.items():
        if not isinstance(answer[key], str) or answer[key] not in _LAYER_NAMES:
            return failed(_("{key}: {answer!r} is not one of {names}", key=key, answer=answer[key],
                            names=", ".join(_LAYER_NAMES)), hint)
        if answer[key] != expected:
            return failed(_("{key}: {step} → {expected}, not {answer}", key=key, step=LAYER_STEPS[key],
                            expected=expected, answer=answer[key]), hint)
    return passed(_("MCP distributes tools, function calling hands them to the model: two layers, not rivals"))
