"""Capabilities, both eras: what a client declares, and which server capability each request needs.
Sans-IO.

Theory of operation
-------------------
A client declares only what it has a handler for (:func:`client_capabilities`), and refuses, before
anything is sent, a request whose server capability the server never declared: the legacy era checks
against the ``initialize`` result (:class:`~mcplab.lifecycle.legacy.LegacyLifecycle`), the modern era
against ``server/discover`` (:class:`~mcplab.lifecycle.modern.ModernLifecycle`). Both ask
:func:`required_capability`, which knows that ``completion/complete`` needed no capability before
2025-03-26.
"""

from __future__ import annotations

from typing import Any

from mcplab.wire.versions import LATEST_LEGACY, at_least, era_of

__all__ = ["REQUIRED_CAPABILITY", "client_capabilities", "required_capability"]

#: The server capability each client request needs: (capability, sub-capability or None).
#: completion/complete has a capability from 2025-03-26 on; 2024-11-05 declared none for it.
REQUIRED_CAPABILITY: dict[str, tuple[str, str | None]] = {
    "tools/list": ("tools", None), "tools/call": ("tools", None),
    "resources/list": ("resources", None), "resources/templates/list": ("resources", None),
    "resources/read": ("resources", None),
    "resources/subscribe": ("resources", "subscribe"), "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts", None), "prompts/get": ("prompts", None),
    "completion/complete": ("completions", None),
    "logging/setLevel": ("logging", None),
}


def client_capabilities(*, sampling: bool = False, elicitation: bool = False, roots: bool = False,
                        version: str = LATEST_LEGACY) -> dict[str, Any]:
    """The ``capabilities`` object a client declares: only what it has a handler for."""
    capabilities: dict[str, Any] = {}
    if roots:  # 2026-07-28 dropped roots.listChanged with notifications/roots/list_changed
        capabilities["roots"] = {} if era_of(version) == "modern" else {"listChanged": True}
    if sampling:
        capabilities["sampling"] = {}
    if elicitation and at_least(version, "2025-06-18"):  # elicitation arrived in 2025-06-18
        capabilities["elicitation"] = {}
    return capabilities



def required_capability(method: str, version: str) -> tuple[str, str | None] | None:
    """The server capability ``method`` needs under ``version``, or None when it needs none."""
    if method == "completion/complete" and not at_least(version, "2025-03-26"):
        return None
    return REQUIRED_CAPABILITY.get(method)
