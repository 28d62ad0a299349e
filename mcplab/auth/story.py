"""The authorization flow as a story: each HTTP exchange of a trace, the step it is, and the rule behind it.

Theory of operation
-------------------
The client (client.py) labels every exchange of the flow in the trace (``http["oauth"]``): the 401 or
403 that started it, the metadata fetches, registration, the user agent's pages, the token request,
and the request sent again with the token. :func:`steps` pairs each labelled request with its answer
and :func:`table` prints them one per line, with the section of the spec's authorization chapter and
the RFC each comes from (:data:`SOURCES`), and nothing that changes from run to run (no port, no
query string, no token). Links to both revisions of the chapter are in :data:`SOURCES` too: 2025-11-25
is one page, 2026-07-28 splits it into several.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urlsplit

from mcplab.i18n import N_, _

__all__ = ["Source", "SOURCES", "Step", "steps", "table", "SPEC_2025", "SPEC_2026"]

SPEC_2025 = "https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization"
SPEC_2026 = "https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization"


@dataclass(frozen=True)
class Source:
    """Where a step's rules are written: the chapter's section (both revisions) and the RFC sections."""
    section: str
    url_2025: str
    url_2026: str
    rfcs: str


def _source(section: str, anchor: str, page_2026: str, rfcs: str, anchor_2026: str | None = None) -> Source:
    return Source(section, f"{SPEC_2025}#{anchor}", f"{SPEC_2026}{page_2026}#{anchor_2026 or anchor}", rfcs)


_DISCOVERY = "/authorization-server-discovery"
SOURCES = {
    N_("refused: authorization needed"): _source(
        "Authorization Server Location", "authorization-server-location", _DISCOVERY,
        "RFC 9728 §5.1, RFC 6750 §3"),
    N_("protected resource metadata"): _source(
        "Protected Resource Metadata Discovery Requirements", "protected-resource-metadata-discovery-requirements",
        _DISCOVERY, "RFC 9728 §3"),
    N_("authorization server metadata"): _source(
        "Authorization Server Metadata Discovery", "authorization-server-metadata-discovery", _DISCOVERY,
        "RFC 8414 §3"),
    N_("dynamic client registration"): _source(
        "Dynamic Client Registration", "dynamic-client-registration", "/client-registration", "RFC 7591 §3"),
    N_("user agent: GET authorization page"): _source(
        "Authorization Code Protection; Resource Parameter Implementation", "authorization-code-protection", "",
        "OAuth 2.1 §4.1.1, RFC 7636 §4.3 (S256), RFC 8707 §2", "authorization-flow-steps"),
    N_("user agent: POST authorization page"): _source(
        "Authorization Flow Steps (2026-07-28: Authorization Response Validation)", "authorization-flow-steps", "",
        "OAuth 2.1 §4.1.2, RFC 9207 §2", "authorization-response-validation"),
    N_("token (authorization_code)"): _source(
        "Authorization Flow Steps; Resource Parameter Implementation", "authorization-flow-steps", "",
        "OAuth 2.1 §4.1.3, RFC 7636 §4.5, RFC 8707 §2"),
    N_("token (refresh_token)"): _source(
        "Token Theft (2026-07-28: Refresh Tokens)", "token-theft", "", "OAuth 2.1 §4.3", "refresh-tokens"),
    N_("the same request, with the new token"): _source(
        "Token Requirements", "token-requirements", "", "OAuth 2.1 §5.1.1 (RFC 6750 §2.1)"),
    N_("refused: insufficient scope"): _source(
        "Scope Challenge Handling; Step-Up Authorization Flow", "scope-challenge-handling", "",
        "RFC 6750 §3.1"),
}


@dataclass(frozen=True)
class Step:
    """One exchange of the flow: what it is, the request line (path only), the status that came back."""
    label: str
    method: str
    path: str
    status: int | None

    @property
    def source(self) -> Source | None:
        return SOURCES.get(self.label)


def steps(frames: Iterable[Any]) -> list[Step]:
    """The exchanges of the authorization flow in a trace's frames, in order (other MCP traffic left out)."""
    found: list[Step] = []
    pending: Any = None
    for frame in frames:
        head = frame.http if frame.channel == "http" else None
        if not head:
            continue
        if frame.direction == "c2s":
            pending = frame
            continue
        if pending is None or not head.get("status"):
            continue  # a later event of the same event stream, or an answer to nothing we sent
        label = (pending.http.get("oauth") or head.get("oauth") or "")
        if label:
            url = pending.http.get("url") or head.get("url") or ""
            found.append(Step(label, pending.http.get("method") or "POST", urlsplit(url).path or "/mcp",
                              head.get("status")))
        pending = None
    return found


def table(frames: Iterable[Any]) -> str:
    """:func:`steps` as lines: number, request, status, the step; under each, the spec section and RFCs."""
    lines = []
    for n, step in enumerate(steps(frames), 1):
        lines.append(f"{n:>2}  {step.method:<4} {step.path:<44} {step.status or '':>3}  {_(step.label)}")
        if step.source:
            lines.append(f"      {step.source.section} · {step.source.rfcs}")
    return "\n".join(lines)
