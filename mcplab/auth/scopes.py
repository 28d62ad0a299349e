"""Which OAuth scopes an MCP request needs: a server's scope policy, on its own.

Theory of operation
-------------------
A protected server names the scopes each request needs (spec "basic/authorization", "Scope
Challenge Handling"): ``base`` for every request, plus per-tool scopes for ``tools/call``, so a
token with only ``files:read`` may list and read but not call ``write_file``::

    ScopePolicy(base=("files:read",), tools={"write_file": ("files:write",)})
    tools/call write_file  → needs ("files:read", "files:write")   (403 insufficient_scope without)
    tools/list             → needs ("files:read",)

The policy is plain data, apart from the checks in ``resource.py`` that enforce it: a bundled
server declares its policy when it loads, and a stdio server (which has no tokens) then pays for
this small module only, not for the resource server and its URL handling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["ScopePolicy"]


@dataclass(frozen=True)
class ScopePolicy:
    """Which scopes a request needs: ``base`` for any request, ``tools[name]`` on top for that tool's calls."""

    base: tuple[str, ...] = ()
    tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tools", MappingProxyType({k: tuple(v) for k, v in self.tools.items()}))

    def needed(self, message: Any) -> tuple[str, ...]:
        """The scopes one JSON-RPC message (a decoded dict, or a batch list) needs, base first."""
        needed = list(self.base)
        for item in message if isinstance(message, list) else [message]:
            params = item.get("params") if isinstance(item, dict) else None
            name = params.get("name") if isinstance(params, dict) else None
            # A name that is not a string names no tool: base scopes only, and the MCP layer answers -32602.
            if isinstance(item, dict) and item.get("method") == "tools/call" and isinstance(name, str):
                needed += [s for s in self.tools.get(name, ()) if s not in needed]
        return tuple(needed)

    def all(self) -> tuple[str, ...]:
        """Every scope the server uses, for ``scopes_supported``."""
        return tuple(dict.fromkeys([*self.base, *(s for scopes in self.tools.values() for s in scopes)]))
