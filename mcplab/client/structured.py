"""A client's side of structured tool output: check ``structuredContent`` against the tool's ``outputSchema``.

Theory of operation
-------------------
A tool may declare an ``outputSchema`` in its ``tools/list`` descriptor (server/tools, "Output Schema",
2025-06-18 and later). Then the server MUST return results whose ``structuredContent`` conforms to it,
and a client SHOULD validate them. The schema never comes with the call: a client that validates keeps
the descriptor from the tool list and, when a result arrives, checks the object against it before a
program relies on it. The wire shows nothing of this: the check happens in the client, after the
response frame has crossed.

:func:`check` is that check, pure: a tool (its descriptor or the :class:`~mcplab.client.results.Tool`
that ``list_tools`` returns) and a result in, a :class:`Verdict` out. The rules, in order:

* a tool without an ``outputSchema`` promises nothing: there is nothing to check;
* a result with ``isError: true`` reports a failure the model should read; it is not checked;
* a declared schema and no ``structuredContent`` at all breaks the server's MUST;
* an object the schema refuses breaks it too; the verdict names where and why (JSON Schema 2020-12
  unless the schema names another dialect in ``$schema``).

A verdict that is not ``ok`` means: do not hand that object on as data. The result's text content is
still the server's words, and the client may show them, but the structured part is the server's
broken promise, to be reported, not used. ``Client.call_tool`` itself checks nothing (it returns what
came); a lab calls this function to see the rule work. jsonschema is imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mcplab.i18n import _

__all__ = ["Verdict", "check"]


@dataclass(frozen=True)
class Verdict:
    """What a validating client concludes about one result: ``ok`` and, when not, every problem found."""
    ok: bool
    checked: bool                   # False when there was nothing to check (no schema, or an error result)
    problems: tuple[str, ...] = ()
    summary: str = ""

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        lines = [("✓ " if self.ok else "✗ ") + self.summary]
        lines += [f"  - {problem}" for problem in self.problems]
        return "\n".join(lines)


def check(tool: Any, result: Any) -> Verdict:
    """Check ``result`` (a ToolResult or the raw result dict) against ``tool``'s outputSchema.

    >>> check({"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object",
    ...        "required": ["n"]}}, {"content": [], "structuredContent": {}}).problems
    ("(the object): 'n' is a required property",)
    """
    name, schema = _tool(tool)
    raw = _raw(result)
    if schema is None:
        return Verdict(True, False, summary=_("{name} declares no outputSchema: nothing to check", name=name))
    if raw.get("isError") is True:
        return Verdict(True, False, summary=_("{name} reported an error (isError: true): a failure to read, "
                                              "not structured output to check", name=name))
    if "structuredContent" not in raw:
        return Verdict(False, True, (_("no structuredContent in the result"),),
                       _("{name} declares an outputSchema but its result carries no structuredContent: the "
                         "server broke its MUST", name=name))
    problems = _problems(schema, raw["structuredContent"])
    if problems:
        return Verdict(False, True, problems, _("{name}'s structuredContent does not conform to its outputSchema: "
                                                "do not use it as data", name=name))
    return Verdict(True, True, summary=_("{name}'s structuredContent conforms to its outputSchema", name=name))


def _tool(tool: Any) -> tuple[str, dict | None]:
    if isinstance(tool, Mapping):
        name, schema = tool.get("name"), tool.get("outputSchema")
    elif hasattr(tool, "output_schema") and hasattr(tool, "name"):
        name, schema = tool.name, tool.output_schema
    else:
        raise TypeError(f"expected a tool from tools/list (a Tool or its descriptor dict), got {type(tool).__name__}")
    if schema is not None and not isinstance(schema, Mapping):
        raise TypeError(f"expected the tool's outputSchema to be a JSON object, got {type(schema).__name__}")
    return str(name), dict(schema) if schema is not None else None


def _raw(result: Any) -> Mapping:
    raw = getattr(result, "raw", result)
    if not isinstance(raw, Mapping):
        raise TypeError(f"expected a tools/call result (a ToolResult or its dict), got {type(result).__name__}")
    return raw


def _problems(schema: dict, value: Any) -> tuple[str, ...]:
    """Every refusal of ``value`` by ``schema``, each as "where: why", in a stable order."""
    import jsonschema  # here: only a validating client needs it, and only when a schema was declared

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(schema).iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    return tuple(f"{_where(error.absolute_path)}: {error.message}" for error in errors)


def _where(path: Any) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path).lstrip(".")
    return where or _("(the object)")
