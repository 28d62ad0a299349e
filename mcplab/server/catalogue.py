"""The catalogue: what a server offers (tools, resources, resource templates, prompts), as records.

Theory of operation
-------------------
Each decorator in ``toolkit.py`` turns a function into one record here. A record knows how to describe
itself on the wire (``descriptor(version)``: the object ``tools/list`` & co. return) and everything the
toolkit needs to call it: which parameter receives the request ``Context``, which arguments exist,
how to complete an argument.

The three primitives differ in who decides to use them (MCP "server features"):

* a **tool** is model-controlled: the model reads ``inputSchema`` and picks arguments;
* a **resource** is application-controlled: the host decides what to read, by URI. A resource
  template (RFC 6570, levels 1–2: ``{name}`` matches one path segment, ``{+path}`` may span ``/``)
  covers a family of URIs; it may also list its members, which then appear in ``resources/list``;
* a **prompt** is user-controlled: a template the user picks, with string arguments.

Arguments of prompts and templates can be completed (``completion/complete``) from a list of choices or a
function; a ``Literal[...]`` parameter completes from its own choices.

Lists are paginated (MCP "pagination"): :func:`page` cuts a list at an opaque cursor. The cursor is
base64 of ``"<list>:<offset>"``: opaque to the client, readable to a student who decodes it.
"""

from __future__ import annotations

import binascii
import inspect
import re
import typing
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Literal

from mcplab.wire.errors import InvalidParams
from mcplab.server.content import for_version
from mcplab.server.schema import compile_validator, without_header_annotations
from mcplab.wire.versions import at_least

Completer = Callable[[str], Iterable[str]] | Iterable[str]
MAX_COMPLETIONS = 100  # completion/complete returns at most 100 values (MCP "completion")
HEADERS_SINCE = "2026-07-28"  # x-mcp-header in a tool's inputSchema (Streamable HTTP, SEP-2243)


@dataclass(frozen=True, eq=False)  # records are compared by identity
class Tool:
    """One registered tool. Its fields never change after registration; the two schema checkers are
    derived from them once, on the first call (jsonschema loads only then: a server starts without it)."""

    name: str
    fn: Callable
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    context_param: str | None = None
    params: frozenset[str] = frozenset()
    takes_any: bool = False  # the function has **kwargs: pass every argument through
    headers: dict[str, tuple[str, ...]] = field(default_factory=dict)  # x-mcp-header name → argument path

    def descriptor(self, version: str) -> dict[str, Any]:
        tool: dict[str, Any] = {"name": self.name}
        if self.title:
            tool["title"] = self.title
        tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        if self.headers and not at_least(version, HEADERS_SINCE):  # a keyword legacy revisions never had
            tool["inputSchema"] = without_header_annotations(self.input_schema)
        if self.output_schema is not None:
            tool["outputSchema"] = self.output_schema
        if self.annotations:
            tool["annotations"] = self.annotations
        return for_version("tool", tool, version)

    @cached_property
    def check(self) -> Callable[[Any], str | None]:
        """The inputSchema's checker: ``check(arguments)`` → None, or why they are invalid."""
        return compile_validator(self.input_schema)

    @cached_property
    def check_output(self) -> Callable[[Any], str | None]:
        """The outputSchema's checker (a tool without one has nothing to check: every value passes)."""
        return compile_validator(self.output_schema) if self.output_schema is not None else (lambda value: None)

    def arguments(self, given: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments to call with: names the function does not take are dropped."""
        return dict(given) if self.takes_any else {k: v for k, v in given.items() if k in self.params}


@dataclass(eq=False, kw_only=True)
class _Readable:
    """What a resource and a resource template share: the function that reads it, and its description."""
    fn: Callable
    name: str
    description: str = ""
    mime_type: str | None = None
    title: str | None = None
    context_param: str | None = None

    def _descriptor(self, key: str, value: str, version: str) -> dict[str, Any]:
        return for_version("resource", _drop_empty({key: value, "name": self.name, "title": self.title,
                                                    "description": self.description, "mimeType": self.mime_type}),
                           version)


@dataclass(eq=False, kw_only=True)
class Resource(_Readable):
    """One registered resource: a fixed URI and the function that reads it."""
    uri: str

    def descriptor(self, version: str) -> dict[str, Any]:
        return self._descriptor("uri", self.uri, version)


@dataclass(eq=False, kw_only=True)
class ResourceTemplate(_Readable):
    """A family of resources: a URI template, the function that reads a member, how to list and complete them."""
    uri_template: str
    lister: Callable[[], Iterable[dict[str, Any]]] | None = None
    completers: dict[str, Completer] = field(default_factory=dict)
    pattern: re.Pattern = field(init=False)

    def __post_init__(self) -> None:
        self.pattern = compile_uri_template(self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables if ``uri`` belongs to this template: ``{"name": "Beijing"}``."""
        found = self.pattern.fullmatch(uri)
        return {k: _unquote(v) for k, v in found.groupdict().items()} if found else None

    def descriptor(self, version: str) -> dict[str, Any]:
        return self._descriptor("uriTemplate", self.uri_template, version)


@dataclass(eq=False)
class Prompt:
    """One registered prompt: the function that fills it in, its string arguments and how to complete them."""
    name: str
    fn: Callable
    description: str
    arguments: list[dict[str, Any]]
    title: str | None = None
    context_param: str | None = None
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # from Literal[...] hints
    completers: dict[str, Completer] = field(default_factory=dict)

    def descriptor(self, version: str) -> dict[str, Any]:
        prompt = _drop_empty({"name": self.name, "title": self.title, "description": self.description})
        if self.arguments:
            prompt["arguments"] = [for_version("argument", a, version) for a in self.arguments]
        return for_version("prompt", prompt, version)

    def check_arguments(self, given: dict[str, Any]) -> None:
        """Raise InvalidParams unless every required argument is there and each value is allowed."""
        missing = [a["name"] for a in self.arguments if a.get("required") and a["name"] not in given]
        if missing:
            raise InvalidParams(f"prompt {self.name!r} needs the argument(s) {', '.join(map(repr, missing))}",
                                data={"missing": missing})
        for name, value in given.items():
            if not isinstance(value, str):
                raise InvalidParams(f"prompt arguments are strings; {name!r} is {type(value).__name__}")
            if name in self.choices and value not in self.choices[name]:
                raise InvalidParams(f"prompt argument {name!r} must be one of {', '.join(self.choices[name])}; "
                                    f"got {value!r}")


def prompt_arguments(fn: Callable, notes: dict[str, str], skip: type) -> tuple[list[dict], dict, str | None]:
    """A prompt's ``arguments`` list, its Literal choices, and its context parameter, from the signature."""
    hints = typing.get_type_hints(fn)
    arguments, choices, context_param = [], {}, None
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name)
        if hint is skip:
            context_param = name
            continue
        argument: dict[str, Any] = {"name": name}
        if name in notes:
            argument["description"] = notes[name]
        argument["required"] = param.default is param.empty
        if typing.get_origin(hint) is Literal:
            choices[name] = tuple(str(c) for c in typing.get_args(hint))
        arguments.append(argument)
    return arguments, choices, context_param


def compile_uri_template(template: str) -> re.Pattern:
    """``"weather://city/{name}"`` → a regex with one named group per variable."""
    parts, pos = [], 0
    for var in re.finditer(r"\{(\+?)(\w+)\}", template):
        parts.append(re.escape(template[pos:var.start()]))
        parts.append(f"(?P<{var.group(2)}>{'.+' if var.group(1) else '[^/]+'})")
        pos = var.end()
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts))


def complete(completer: Completer | None, value: str) -> dict[str, Any]:
    """The ``completion`` object: choices starting with ``value`` (case-insensitive), at most 100."""
    if completer is None:
        values: list[str] = []
    elif callable(completer):
        values = [str(v) for v in completer(value)]
    else:
        values = [c for c in completer if str(c).lower().startswith(value.lower())]
    return {"values": values[:MAX_COMPLETIONS], "total": len(values), "hasMore": len(values) > MAX_COMPLETIONS}


def page(items: list[Any], cursor: Any, what: str, size: int) -> tuple[list[Any], str | None]:
    """One page of ``items`` starting at ``cursor``, and the cursor of the next page (or None)."""
    start = 0
    if cursor is not None:
        start = _read_cursor(cursor, what)
    end = start + size
    next_cursor = binascii.b2a_base64(f"{what}:{end}".encode(), newline=False).decode() if end < len(items) else None
    return items[start:end], next_cursor


def _read_cursor(cursor: Any, what: str) -> int:
    try:
        kind, _, offset = binascii.a2b_base64(str(cursor).encode()).decode().partition(":")
        if kind == what and offset.isdigit():
            return int(offset)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidParams(f"expected a cursor from an earlier {what} result's nextCursor, got {cursor!r}")


def _unquote(value: str) -> str:
    """Percent-decode a URI part ("%20" → " "); urllib.parse is imported only when there is one."""
    if "%" not in value:
        return value
    from urllib.parse import unquote

    return unquote(value)


def _drop_empty(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v not in (None, "")}
