"""Checks for lab 03 (tools, resources, prompts): write an ``inputSchema`` by hand, tell the three
primitives apart by who controls them, tell a tool error from a protocol error, and make two
real calls.

The schema check does not compare text: it validates sample arguments against your schema with
``jsonschema``, as a server would, so any schema that accepts and refuses the right ones passes.
"""

from __future__ import annotations

from typing import Any

from mcplab.exercises._feedback import Feedback, check, failed, passed
from mcplab.i18n import N_, Texts, _
from mcplab.client.results import ResourceRead, ToolResult

__all__ = [
    "check_input_schema", "check_primitive_choice", "check_error_kinds", "check_forecast",
    "check_notes_resource", "CONVERT_SOURCE", "SCENARIOS", "OUTCOMES",
]

# --- 1. a schema by hand ------------------------------------------------------------------------

CONVERT_SOURCE = '''\
def convert(amount: float, currency: str = "CNY") -> str:
    """Convert an amount of US dollars into another currency."""
'''

# Amounts and currencies of every kind: a schema that fits only the currencies in sight is not convert()'s.
_MUST_ACCEPT = [{"amount": 3.5}, {"amount": 3}, {"amount": 10, "currency": "EUR"},
                {"amount": 1250000, "currency": "JPY"}, {"amount": 0.01, "currency": "GBP"}]
_DEFAULTS = {"currency": "CNY"}  # what convert()'s signature says; amount has none
_WHY_REFUSED = Texts({"amount": "amount is required", "number": "amount must be a number, not a string",
                      "currency": "currency must be a string", "object": "the arguments are an object, not an array"})
_MUST_REFUSE = [({}, "amount"), ({"currency": "EUR"}, "amount"), ({"amount": "3.5"}, "number"),
                ({"amount": 3.5, "currency": 7}, "currency"), ([3.5], "object")]


@check(N_("a JSON Schema, as a dict"), dict)
def check_input_schema(answer: Any) -> Feedback:
    """A JSON Schema for the arguments of CONVERT_SOURCE's function, as tools/list would show it."""
    hint = _('{"type": "object", "properties": {name: {"type": ...}}, "required": [...]}; '
             'float is "number", str is "string", and only parameters without a default are required')
    import jsonschema  # here: only this check needs it

    if not isinstance(answer, dict):
        return failed(_("expected a dict, got {kind}", kind=type(answer).__name__), hint)
    try:
        jsonschema.Draft202012Validator.check_schema(answer)
    except jsonschema.SchemaError as exc:
        return failed(_("this is not a valid JSON Schema: {why}", why=exc.message), hint)
    validator = jsonschema.Draft202012Validator(answer)
    if answer.get("type") != "object":
        return failed(_('an inputSchema\'s root must be {"type": "object"}: the arguments are a JSON object'), hint)
    try:
        for arguments in _MUST_ACCEPT:
            if not validator.is_valid(arguments):
                return failed(_("your schema refuses {arguments}, which convert() accepts", arguments=arguments),
                              hint)
        for arguments, why in _MUST_REFUSE:
            if validator.is_valid(arguments):
                return failed(_("your schema accepts {arguments}, but {why}", arguments=arguments,
                                why=_WHY_REFUSED[why]), hint)
    except Exception as exc:  # e.g. a $ref to nowhere, found only when used (referencing's own error types)
        return failed(_("a server could not validate with this schema: {why}", why=str(exc)[:160]), hint)
    properties = answer.get("properties") if isinstance(answer.get("properties"), dict) else {}
    for name, schema in properties.items():
        if not isinstance(schema, dict) or "default" not in schema:
            continue  # a default is optional: the reflection writes it, a hand-written schema may leave it out
        if name not in _DEFAULTS:
            return failed(_("{name} has a default of {default!r} in your schema, but none in convert(): a "
                            "default there would tell the model it may leave it out", name=name,
                            default=schema["default"]), hint)
        if schema["default"] != _DEFAULTS[name] or type(schema["default"]) is not type(_DEFAULTS[name]):
            return failed(_("{name}'s default is {default!r} in your schema but {expected!r} in convert(): the "
                            "model would be told the wrong value", name=name, default=schema["default"],
                            expected=_DEFAULTS[name]), hint)
    return passed(_("accepts what convert() accepts and refuses the rest: the reflection a tool decorator does"))


# --- 2. who controls which primitive ------------------------------------------------------------

SCENARIOS = Texts({
    "a": "mid-answer, the model decides it needs today's exchange rate",
    "b": "the editor attaches the file the user has open to the conversation",
    "c": "the user types /review to start a code-review conversation from a template",
    "d": "the model wants to send an e-mail on the user's behalf",
    "e": "the application puts the project's schema.sql into the context before the first question",
})
_PRIMITIVE = {"a": "tool", "b": "resource", "c": "prompt", "d": "tool", "e": "resource"}
_WHY = Texts({"tool": "the model decides to act: a tool",
              "resource": "the application decides what to read: a resource",
              "prompt": "the user picks a template: a prompt"})


@check(N_("a dict of scenario → \"tool\", \"resource\" or \"prompt\""), dict)
def check_primitive_choice(answer: Any) -> Feedback:
    """For each of SCENARIOS: "tool", "resource" or "prompt"."""
    hint = _("tools are model-controlled, resources application-controlled, prompts user-controlled")
    if not isinstance(answer, dict) or set(answer) != set(SCENARIOS):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(SCENARIOS)), hint)
    for key, expected in _PRIMITIVE.items():
        if answer[key] != expected:
            return failed(_("{key}: {scenario} → {why}, not {answer!r}", key=key, scenario=SCENARIOS[key],
                            why=_WHY[expected], answer=answer[key]), hint)
    return passed(_("model → tools, application → resources, user → prompts"))


# --- 3. isError or a protocol error -------------------------------------------------------------

OUTCOMES = Texts({
    "a": 'tools/call get_weather with {"city": "Atlantis"} (the weather server)',
    "b": 'tools/call of a tool named "get_wether" (a typo)',
    "c": "resources/read of weather://city/Atlantis",
    "d": 'tools/call read_file with {"path": "../secret.txt"} (the file server)',
    "e": 'tools/call get_forecast with {"city": "Tokyo", "days": 9} (days must be 1–7)',
})
_KIND = {"a": "isError", "b": "protocol error", "c": "protocol error", "d": "isError", "e": "isError"}
_BECAUSE = Texts({
    "a": "the tool ran and failed in a way the model can fix (a normal result with isError: true)",
    "b": "there is no such tool: the request itself is wrong, so a JSON-RPC error (-32602)",
    "c": "resources have no isError: a missing resource is the error -32002",
    "d": "the tool ran and refused the path; the model should hear why (isError: true)",
    "e": "since 2025-11-25 bad tool arguments are a tool error, so the model can correct itself",
})


@check(N_("a dict of outcome → \"isError\" or \"protocol error\""), dict)
def check_error_kinds(answer: Any) -> Feedback:
    """For each of OUTCOMES: "isError" or "protocol error" (what the bundled servers answer)."""
    hint = _("isError is a *result*: the call worked and the tool reports a failure to the model; a protocol "
             "error is a JSON-RPC error response: the request itself could not be served")
    if not isinstance(answer, dict) or set(answer) != set(OUTCOMES):
        return failed(_("expected a dict with the keys {keys}", keys=sorted(OUTCOMES)), hint)
    for key, expected in _KIND.items():
        if answer[key] != expected:
            return failed(_("{key}: {expected}, not {answer!r}: {because}", key=key, expected=expected,
                            answer=answer[key], because=_BECAUSE[key]), hint)
    return passed(_("tool failures are results the model reads; unknown tools and missing resources are errors"))


# --- 4 and 5. two real calls --------------------------------------------------------------------

@check(N_("the ToolResult that call_tool returns"), ToolResult)
def check_forecast(result: Any) -> Feedback:
    """The result of calling get_forecast for Tokyo, 5 days, on the weather server."""
    hint = _("call the forecast tool through the weather client, with the city and the number of days the "
             "question names, and pass the ToolResult it returns")
    if result.is_error:
        return failed(_("the tool reported an error: {text}", text=result.text), hint)
    data = result.structured if isinstance(result.structured, dict) else {}
    days = data.get("days") if isinstance(data.get("days"), list) else []
    if data.get("city") != "Tokyo" or len(days) != 5:
        return failed(_("expected Tokyo and 5 days in structuredContent, got {city!r} and {days} days",
                        city=data.get('city'), days=len(days)), hint)
    return passed(_("5 days for Tokyo, as structuredContent (and the same JSON as text, for older clients)"))


@check(N_("the ResourceRead that read_resource returns"), (ResourceRead, ToolResult))
def check_notes_resource(read: Any) -> Feedback:
    """notes.md read from the file server as a *resource* (not with the read_file tool)."""
    hint = _("ask the files client for the resource (not a tool) by its file:// URI, and pass what it returns")
    if isinstance(read, ToolResult):
        return failed(_("this came from a tool; read it as a resource, the way an application attaches a file"),
                      hint)
    if not isinstance(read, ResourceRead):
        return failed(_("expected the ResourceRead that read_resource returns, got {kind}", kind=type(read).__name__),
                      hint)
    uris = [c.uri for c in read.contents]
    if uris != ["file:///notes.md"] or not read.text.startswith("# MCP notes"):
        return failed(_("expected the contents of file:///notes.md, got {uris}", uris=uris), hint)
    return passed(_("file:///notes.md, read by the application: URIs are relative to the served folder"))
