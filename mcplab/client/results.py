"""Typed views of what a server returns: small frozen objects that keep the raw JSON beside them.

Theory of operation
-------------------
The client returns these instead of bare dicts so that code reads like the spec's nouns
(``tool.input_schema``, ``result.is_error``), while ``.raw`` always holds the exact JSON object
the server sent, including fields this module does not name (``_meta``, ``icons``, …), so
nothing the wire carried is ever hidden. Parsing is lenient about optional fields and strict
only about the ones the schema requires, raising :class:`~mcplab.wire.errors.RemoteProtocolError`.

Every result of the modern era says what it is in ``resultType`` (2026-07-28, "basic/index"):
``"complete"`` is a final result, ``"input_required"`` asks for input first (``mrtr.py``). A
missing ``resultType`` means ``"complete"`` (that is how a legacy result looks); a value this
client does not know is an error, :class:`UnrecognizedResultType` (:func:`result_type`). List
and read results may be cached: ``ttlMs`` and ``cacheScope`` (2026-07-28, "server/utilities/caching")
appear as ``ttl_ms`` and ``cache_scope`` on :class:`Listing` (what the ``list_*`` methods return)
and :class:`ResourceRead`; both are None when the server did not say (legacy servers never do).

Content blocks (spec "server/tools", "Tool Result") come in five kinds: ``text``, ``image``,
``audio``, ``resource_link`` and ``resource`` (an embedded resource). :meth:`Content.as_text`
turns any of them into text a language model can read; that is what a Host does before handing
a tool result back to the model (``host.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Iterable

from mcplab.i18n import N_, _
from mcplab.wire.errors import RemoteProtocolError

__all__ = ["Content", "Tool", "ToolResult", "Resource", "ResourceTemplate", "ResourceContents",
           "ResourceRead", "Prompt", "PromptMessage", "PromptResult", "Completion", "content_to_text",
           "Listing", "result_type", "UnrecognizedResultType", "COMPLETE", "INPUT_REQUIRED"]

COMPLETE, INPUT_REQUIRED = "complete", "input_required"
RESULT_TYPES = (COMPLETE, INPUT_REQUIRED)


class UnrecognizedResultType(RemoteProtocolError):
    """A result whose ``resultType`` this client does not know: the spec says to treat it as an error."""


def result_type(result: Any) -> str:
    """``result["resultType"]``, ``"complete"`` when absent; an unknown value raises.

    >>> result_type({"content": []}), result_type({"resultType": "input_required"})
    ('complete', 'input_required')
    """
    kind = result.get("resultType", COMPLETE) if isinstance(result, dict) else COMPLETE
    if kind not in RESULT_TYPES:
        raise UnrecognizedResultType(_("the result has resultType {kind}, which this client does not know (it knows "
                                       "{known}); the spec says to treat it as an error", kind=repr(kind),
                                       known=", ".join(RESULT_TYPES)), raw=repr(result))
    return kind


def cache_fields(result: Any) -> tuple[int | None, str | None]:
    """``(ttlMs, cacheScope)`` of a list or read result, None for what the server did not say."""
    if not isinstance(result, dict):
        return None, None
    ttl, scope = result.get("ttlMs"), result.get("cacheScope")
    return (ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 else None,
            scope if scope in ("public", "private") else None)


class Listing(list):
    """Every item of a paginated list, plus how long it may be cached.

    It is a plain list (it prints as one), with ``ttl_ms`` and ``cache_scope`` from the server:
    over several pages, the shortest ``ttlMs`` and the narrower scope (``private`` wins).
    """
    ttl_ms: int | None = None
    cache_scope: str | None = None

    def derive(self, items: Iterable) -> Listing:
        """Other items (typed, or some left out) with this listing's cache fields."""
        derived = Listing(items)
        derived.ttl_ms, derived.cache_scope = self.ttl_ms, self.cache_scope
        return derived

    def add_page(self, items: list, result: Any, first: bool) -> None:
        self.extend(items)
        ttl, scope = cache_fields(result)
        if first:
            self.ttl_ms, self.cache_scope = ttl, scope
            return
        self.ttl_ms = None if ttl is None or self.ttl_ms is None else min(self.ttl_ms, ttl)
        self.cache_scope = (None if scope is None or self.cache_scope is None
                            else "private" if "private" in (scope, self.cache_scope) else "public")


class _Compact:
    """A repr that leaves out ``raw`` and the optional fields the server did not send."""

    def __repr__(self) -> str:
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)  # type: ignore[arg-type]
                 if f.repr and getattr(self, f.name) not in (None, "", (), {})]
        return f"{type(self).__name__}({', '.join(shown)})"


def _need(obj: Any, key: str, what: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise RemoteProtocolError(_("expected {what} to be an object with {key}, got {obj}", what=_(what),
                                    key=repr(key), obj=repr(obj)))
    return obj[key]


def _objects(obj: dict, key: str, what: str) -> list:
    value = obj.get(key, [])
    if not isinstance(value, list):
        raise RemoteProtocolError(_("expected {what} {key} to be an array, got {value}", what=_(what),
                                    key=repr(key), value=repr(value)))
    return value


@dataclass(frozen=True, repr=False)
class Content(_Compact):
    """One content block: ``{"type": "text", "text": "..."}`` and its four siblings."""
    type: str
    text: str | None = None          # text blocks, and embedded text resources
    mime_type: str | None = None
    uri: str | None = None           # resource_link and embedded resources
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> Content:
        kind = _need(obj, "type", N_("a content block"))
        if kind == "resource":
            inner = _need(obj, "resource", N_("an embedded resource block"))
            return cls(kind, inner.get("text"), inner.get("mimeType"), inner.get("uri"), obj)
        return cls(kind, obj.get("text"), obj.get("mimeType"), obj.get("uri"), obj)

    def as_text(self) -> str:
        """What a model should read for this block (binary data is described, not inlined)."""
        if self.type == "text":
            return self.text or ""
        if self.type in ("image", "audio"):
            size = len(self.raw.get("data", "")) * 3 // 4
            return f"[{self.type}: {self.mime_type or 'unknown type'}, about {size} bytes]"
        if self.type == "resource_link":
            name = self.raw.get("name")
            return f"[resource link: {self.uri}" + (f" ({name})]" if name else "]")
        if self.type == "resource":
            if self.text is not None:
                return f"[resource {self.uri}]\n{self.text}"
            return f"[resource {self.uri}: binary, {self.mime_type or 'unknown type'}]"
        return f"[{self.type} content]"


def content_to_text(blocks: tuple[Content, ...] | list[Content]) -> str:
    """All blocks as one text, one block per paragraph."""
    return "\n".join(block.as_text() for block in blocks)


@dataclass(frozen=True, repr=False)
class Tool(_Compact):
    """An entry of ``tools/list``: a name, a description and a JSON Schema for the arguments."""
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict, repr=False)
    title: str | None = None
    output_schema: dict | None = field(default=None, repr=False)
    annotations: dict | None = field(default=None, repr=False)
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> Tool:
        return cls(_need(obj, "name", N_("a tool")), obj.get("description") or "",
                   _need(obj, "inputSchema", N_("a tool")), obj.get("title"), obj.get("outputSchema"),
                   obj.get("annotations"), obj)

    @property
    def parameters(self) -> list[str]:
        """Argument names, required ones first."""
        properties = list(self.input_schema.get("properties", {}))
        required = [p for p in self.input_schema.get("required", []) if p in properties]
        return required + [p for p in properties if p not in required]

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, parameters={self.parameters!r}, description={self.description!r})"


@dataclass(frozen=True)
class ToolResult:
    """The answer to ``tools/call``. ``is_error`` means the *tool* failed (the call itself worked)."""
    content: tuple[Content, ...]
    is_error: bool = False
    structured: dict | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> ToolResult:
        blocks = tuple(Content.from_json(b) for b in _objects(_dict(obj, N_("a tools/call result")),
                                                                 "content", N_("a tools/call result")))
        return cls(blocks, bool(obj.get("isError", False)), obj.get("structuredContent"), obj)

    @property
    def text(self) -> str:
        return content_to_text(self.content)

    def __repr__(self) -> str:
        extra = f", structured={self.structured!r}" if self.structured is not None else ""
        return f"ToolResult(text={self.text!r}, is_error={self.is_error}{extra})"


@dataclass(frozen=True, repr=False)
class Resource(_Compact):
    """An entry of ``resources/list``: something the application may read by ``uri``."""
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> Resource:
        return cls(_need(obj, "uri", N_("a resource")), obj.get("name") or "", obj.get("description") or "",
                   obj.get("mimeType"), obj)


@dataclass(frozen=True, repr=False)
class ResourceTemplate(_Compact):
    """An entry of ``resources/templates/list``: a URI template (RFC 6570) such as ``file:///{path}``."""
    uri_template: str
    name: str
    description: str = ""
    mime_type: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> ResourceTemplate:
        return cls(_need(obj, "uriTemplate", N_("a resource template")), obj.get("name") or "",
                   obj.get("description") or "", obj.get("mimeType"), obj)


@dataclass(frozen=True, repr=False)
class ResourceContents(_Compact):
    """One item of a ``resources/read`` result: text, or base64 ``blob``."""
    uri: str
    text: str | None = None
    blob: str | None = None
    mime_type: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> ResourceContents:
        return cls(_need(obj, "uri", N_("resource contents")), obj.get("text"), obj.get("blob"),
                   obj.get("mimeType"), obj)


@dataclass(frozen=True)
class ResourceRead:
    """The answer to ``resources/read``: one or more contents (a directory may give several)."""
    contents: tuple[ResourceContents, ...]
    raw: dict = field(default_factory=dict, repr=False, compare=False)
    ttl_ms: int | None = field(default=None, repr=False, compare=False)
    cache_scope: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> ResourceRead:
        items = _objects(_dict(obj, N_("a resources/read result")), "contents", N_("a resources/read result"))
        return cls(tuple(ResourceContents.from_json(c) for c in items), obj, *cache_fields(obj))

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.contents if c.text is not None)

    def __repr__(self) -> str:
        return f"ResourceRead(uris={[c.uri for c in self.contents]!r}, text={self.text!r})"


@dataclass(frozen=True, repr=False)
class Prompt(_Compact):
    """An entry of ``prompts/list``: a template the *user* picks, with named string arguments."""
    name: str
    description: str = ""
    arguments: tuple[dict, ...] = ()
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> Prompt:
        return cls(_need(obj, "name", N_("a prompt")), obj.get("description") or "",
                   tuple(_objects(obj, "arguments", N_("a prompt"))), obj)


@dataclass(frozen=True, repr=False)
class PromptMessage(_Compact):
    role: str
    content: Content

    @classmethod
    def from_json(cls, obj: Any) -> PromptMessage:
        return cls(_need(obj, "role", N_("a prompt message")),
                   Content.from_json(_need(obj, "content", N_("a prompt message"))))


@dataclass(frozen=True, repr=False)
class PromptResult(_Compact):
    """The answer to ``prompts/get``: messages ready to start a conversation with."""
    messages: tuple[PromptMessage, ...]
    description: str = ""
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> PromptResult:
        items = _objects(_dict(obj, N_("a prompts/get result")), "messages", N_("a prompts/get result"))
        return cls(tuple(PromptMessage.from_json(m) for m in items), obj.get("description") or "", obj)


@dataclass(frozen=True, repr=False)
class Completion(_Compact):
    """The answer to ``completion/complete``: suggested values for one argument."""
    values: tuple[str, ...]
    total: int | None = None
    has_more: bool = False
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, obj: Any) -> Completion:
        completion = _need(obj, "completion", N_("a completion/complete result"))
        return cls(tuple(_objects(completion, "values", N_("a completion"))), completion.get("total"),
                   bool(completion.get("hasMore", False)), obj)


def _dict(obj: Any, what: str) -> dict:
    if not isinstance(obj, dict):
        raise RemoteProtocolError(_("expected {what} to be a JSON object, got {obj}", what=_(what), obj=repr(obj)))
    return obj
