"""What handlers return, turned into MCP results for the negotiated revision.

Theory of operation
-------------------
A tool, resource or prompt function returns plain Python; this module shapes it for the wire:

    tool returns               →  CallToolResult
    "Beijing: sunny, 12 °C"    →  {"content": [{"type": "text", "text": "Beijing: sunny, 12 °C"}], "isError": false}
    image(png_bytes)           →  {"content": [{"type": "image", "data": "<base64>", "mimeType": "image/png"}], ...}
    {"days": [...]}            →  structuredContent (when the tool has an outputSchema) + the same JSON as text
    ToolResult(content, ...)   →  exactly that

    resource returns           →  ReadResourceResult contents
    str / bytes / dict|list    →  {"uri", "mimeType", "text"} / {..., "blob": base64} / JSON text
    Contents(...) or a list    →  one entry each, for a resource that needs its own MIME type

    prompt returns             →  GetPromptResult messages
    str / content block        →  one user message;  a list of those or of user(...)/assistant(...) dicts

MCP grew between revisions, so the same value can be legal in one session and not in another. Two tables
say when each field and content type appeared (from the changelogs): :data:`FIELD_SINCE` drops fields
an older client's schema does not know (a tool's ``title`` for a 2025-03-26 session), and
:data:`CONTENT_SINCE` refuses content an older revision cannot carry (audio before 2025-03-26) with a
readable tool error instead of sending a message that breaks the client's schema.
"""

from __future__ import annotations

import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from mcplab.wire.versions import at_least

CONTENT_TYPES = ("text", "image", "audio", "resource", "resource_link")

CONTENT_SINCE = {"text": "2024-11-05", "image": "2024-11-05", "resource": "2024-11-05",
                 "audio": "2025-03-26", "resource_link": "2025-06-18"}
"""The first revision whose content union has each ``type``."""

FIELD_SINCE: dict[tuple[str, str], str] = {
    ("tool", "annotations"): "2025-03-26",
    ("tool", "title"): "2025-06-18",
    ("tool", "outputSchema"): "2025-06-18",
    ("result", "structuredContent"): "2025-06-18",
    ("resource", "title"): "2025-06-18",
    ("prompt", "title"): "2025-06-18",
    ("argument", "title"): "2025-06-18",
    ("implementation", "title"): "2025-06-18",
    ("implementation", "description"): "2025-11-25",
    ("implementation", "websiteUrl"): "2025-11-25",
    ("progress", "message"): "2025-03-26",
}
"""(kind of object, field) → the first revision that defines the field."""


def for_version(kind: str, obj: dict[str, Any], version: str) -> dict[str, Any]:
    """``obj`` without the fields ``version`` does not define yet (``FIELD_SINCE``)."""
    return {key: value for key, value in obj.items()
            if (kind, key) not in FIELD_SINCE or at_least(version, FIELD_SINCE[kind, key])}


# --- content blocks ------------------------------------------------------------------------------

def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def text(value: str) -> dict[str, Any]:
    """``{"type": "text", "text": value}``"""
    return {"type": "text", "text": value}


def image(data: bytes, mime_type: str = "image/png") -> dict[str, Any]:
    """An image block: the bytes travel base64-encoded."""
    return {"type": "image", "data": _b64(data), "mimeType": mime_type}


def audio(data: bytes, mime_type: str = "audio/wav") -> dict[str, Any]:
    """An audio block (MCP 2025-03-26 and later)."""
    return {"type": "audio", "data": _b64(data), "mimeType": mime_type}


def embedded(uri: str, *, text: str | None = None, blob: bytes | None = None,
             mime_type: str = "text/plain") -> dict[str, Any]:
    """A resource embedded in a result: its contents travel inline."""
    return {"type": "resource", "resource": _contents_dict(uri, Contents(text, blob, mime_type))}


def resource_link(uri: str, name: str, *, mime_type: str | None = None, description: str | None = None) -> dict[str, Any]:
    """A pointer to a resource the client may read later (MCP 2025-06-18 and later)."""
    link = {"type": "resource_link", "uri": uri, "name": name}
    if mime_type:
        link["mimeType"] = mime_type
    if description:
        link["description"] = description
    return link


def user(content: str | dict[str, Any]) -> dict[str, Any]:
    """A prompt message from the user."""
    return {"role": "user", "content": text(content) if isinstance(content, str) else content}


def assistant(content: str | dict[str, Any]) -> dict[str, Any]:
    """A prompt message from the assistant (a prefilled answer)."""
    return {"role": "assistant", "content": text(content) if isinstance(content, str) else content}


@dataclass(frozen=True)
class ToolResult:
    """A tool result spelled out: content blocks, optional structured content, the error flag."""
    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False


@dataclass(frozen=True)
class Contents:
    """One entry of a resource's contents: ``text`` or ``blob`` bytes, with a MIME type."""
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None


class ToolError(Exception):
    """Raise from a tool to report a business error: the model sees the message, ``isError`` is true."""


class ContentNotSupported(ToolError):
    """The value needs a newer revision than this session negotiated."""


# --- shaping results -----------------------------------------------------------------------------

def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in CONTENT_TYPES


def _blocks(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [text(value)]
    if _is_block(value):
        return [value]
    if isinstance(value, list) and value and all(_is_block(v) or isinstance(v, str) for v in value):
        return [text(v) if isinstance(v, str) else v for v in value]
    return [text(json.dumps(value, ensure_ascii=False, indent=2))]


def check_content(blocks: list[dict[str, Any]], version: str) -> None:
    """Raise :class:`ContentNotSupported` when a block's type is newer than ``version``."""
    for block in blocks:
        since = CONTENT_SINCE.get(block.get("type"), "2024-11-05")
        if not at_least(version, since):
            raise ContentNotSupported(f"this result holds {block['type']} content, which MCP added in {since}; "
                                      f"this session negotiated {version}")


def tool_result(value: Any, version: str, *, structured_output: bool = False) -> dict[str, Any]:
    """The ``tools/call`` result for whatever a tool returned."""
    if isinstance(value, ToolResult):
        content, structured, is_error = list(value.content), value.structured, value.is_error
    elif structured_output:
        # With an outputSchema the value is the structured result, whatever it looks like (a dict with
        # "type": "text" is still data); it SHOULD also go out as JSON text, for clients that read
        # only content.
        content, structured, is_error = [text(json.dumps(value, ensure_ascii=False))], value, False
    else:
        content, structured, is_error = _blocks(value), None, False
    check_content(content, version)
    result: dict[str, Any] = {"content": content, "isError": is_error}
    if structured is not None and at_least(version, FIELD_SINCE["result", "structuredContent"]):
        result["structuredContent"] = structured
    return result


def error_result(message: str) -> dict[str, Any]:
    """A tool execution error: a normal result the model can read and correct itself from."""
    return {"content": [text(message)], "isError": True}


def _contents_dict(uri: str, contents: Contents) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": uri}
    if contents.mime_type:
        entry["mimeType"] = contents.mime_type
    if contents.blob is not None:
        entry["blob"] = _b64(contents.blob)
    else:
        entry["text"] = contents.text if contents.text is not None else ""
    return entry


def resource_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """The ``contents`` list of a ``resources/read`` result for what a resource function returned."""
    if isinstance(value, Contents):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(v, Contents) for v in value):
        return [_contents_dict(uri, v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return [_contents_dict(uri, Contents(blob=bytes(value), mime_type=mime_type or "application/octet-stream"))]
    if isinstance(value, str):
        return [_contents_dict(uri, Contents(text=value, mime_type=mime_type or "text/plain"))]
    return [_contents_dict(uri, Contents(text=json.dumps(value, ensure_ascii=False, indent=2),
                                         mime_type=mime_type or "application/json"))]


def prompt_messages(value: Any, version: str) -> list[dict[str, Any]]:
    """The ``messages`` of a ``prompts/get`` result for what a prompt function returned."""
    items = value if isinstance(value, list) else [value]
    messages = []
    for item in items:
        if isinstance(item, dict) and "role" in item and "content" in item:
            messages.append(item)
        elif isinstance(item, str) or _is_block(item):
            messages.append(user(item))
        else:
            raise TypeError(f"a prompt returns text, content blocks or user()/assistant() messages, not {item!r}")
    check_content([m["content"] for m in messages], version)
    return messages
