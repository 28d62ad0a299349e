"""Protocol revisions, eras, and the names MCP puts on the wire besides method names.

Theory of operation
-------------------
An MCP revision is named by its release date. mcplab knows five:

* the **legacy** era, where a connection opens with the ``initialize`` handshake and the
  negotiated version holds for the whole session: 2024-11-05, 2025-03-26, 2025-06-18,
  2025-11-25;
* the **modern** era, 2026-07-28: no handshake and no session; the version, client
  identity and capabilities ride in every request's ``params._meta``, and a client learns
  a server's capabilities with ``server/discover``.

A server that speaks both is **dual-era**: it picks the era from how each connection
(stdio) or request (HTTP) opens.

Versions are never compared as strings: :func:`at_least` compares positions in
:data:`ALL_VERSIONS`, so an unknown version is an error rather than a silent ordering.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from mcplab.i18n import Text, _  # what people read (capabilities_text, DEPRECATED) follows the language

Era = Literal["legacy", "modern"]
ServerEra = Literal["legacy", "modern", "dual"]
ClientEra = Literal["legacy", "modern", "auto"]

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
ALL_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS
LATEST_LEGACY = LEGACY_VERSIONS[-1]
LATEST_MODERN = MODERN_VERSIONS[-1]


def era_of(version: str) -> Era:
    """``"2025-06-18"`` → ``"legacy"``; ``"2026-07-28"`` → ``"modern"``; anything else → ValueError."""
    if version in LEGACY_VERSIONS:
        return "legacy"
    if version in MODERN_VERSIONS:
        return "modern"
    raise ValueError(f"unknown MCP revision {version!r}; known: {', '.join(ALL_VERSIONS)}")


def at_least(version: str, floor: str) -> bool:
    """Is ``version`` the same revision as ``floor`` or a later one?"""
    era_of(version), era_of(floor)  # both must be known revisions
    return ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(floor)


def allows_batches(version: str) -> bool:
    """JSON-RPC batch arrays were allowed in 2025-03-26 only (added then, removed in 2025-06-18)."""
    return version == "2025-03-26"


# --- the `_meta` keys of the modern era (params._meta on every request) ----------------------
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# --- HTTP header names (Streamable HTTP) ------------------------------------------------------
HEADER_PROTOCOL_VERSION = "MCP-Protocol-Version"
HEADER_SESSION_ID = "Mcp-Session-Id"
HEADER_METHOD = "Mcp-Method"
HEADER_NAME = "Mcp-Name"
HEADER_PARAM_PREFIX = "Mcp-Param-"


# --- what 2026-07-28 deprecated ----------------------------------------------------------------------

class Deprecation(NamedTuple):  # a row of the table below; cheaper to define than a frozen dataclass
    """A feature still in the spec but scheduled for removal: new implementations SHOULD NOT adopt it."""
    feature: str
    since: str
    sep: str
    instead: str


DEPRECATED: dict[str, Deprecation] = {
    "roots": Deprecation("Roots", "2026-07-28", "SEP-2577",
                         Text("pass directories or files as tool arguments, resource URIs or server configuration")),
    "sampling": Deprecation("Sampling", "2026-07-28", "SEP-2577", Text("call the model provider's API directly")),
    "logging": Deprecation("Logging", "2026-07-28", "SEP-2577",
                           Text("log to stderr (stdio) or use OpenTelemetry")),
}  # `instead` prints in the current language (mcplab.i18n.Text)
"""Capability name → its deprecation (2026-07-28 "deprecated.mdx", the registry of deprecated features).
They work as before in every revision; the earliest removal is the first revision on or after 2027-07-28."""


def capabilities_text(capabilities: dict[str, Any]) -> str:
    """Capabilities in one line, the deprecated ones marked, flags in brackets.

    >>> capabilities_text({"tools": {"listChanged": True}, "logging": {}})
    'logging (deprecated in 2026-07-28), tools (listChanged)'
    """
    parts = []
    for name, value in sorted(capabilities.items()):
        notes = [_("deprecated in {version}", version=DEPRECATED[name].since)] if name in DEPRECATED else []
        flags = [key for key, on in value.items() if on is True] if isinstance(value, dict) else []
        if notes and flags:
            notes = [f"{notes[0]}; {', '.join(flags)}"]
        elif flags:
            notes = [", ".join(flags)]
        parts.append(f"{name} ({notes[0]})" if notes else name)
    return ", ".join(parts) or "none"
