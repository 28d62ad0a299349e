"""Caching hints on modern results (MCP 2026-07-28, "server/utilities/caching"): beginner-safe defaults.

What the server's code defines (tools, prompts, templates, discover) is public and fresh for minutes;
resources are data, private and immediately stale, until the author marks them otherwise. A notes
server must never tell a shared cache to keep one user's notes for a minute."""

from __future__ import annotations

import pytest

from mcplab.wire.jsonrpc import Request
from mcplab.server import Server, modern

from server_helpers import RecordingPeer, envelope


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notes_server(**options) -> Server:
    server = Server("notes", **options)
    notes: list[str] = []

    @server.tool
    def add_note(text: str) -> str:
        """Adds a note."""
        notes.append(text)
        return f"{len(notes)} notes"

    @server.resource("notes://all", mime_type="text/plain")
    def all_notes() -> str:
        """Every note, one a line."""
        return "\n".join(notes)

    @server.resource("notes://note/{n}")
    def one_note(n: str) -> str:
        """One note."""
        return notes[int(n)]

    @server.prompt
    def review() -> str:
        """Review the notes."""
        return "Review my notes."

    return server


async def hints(server: Server, method: str, params: dict | None = None) -> tuple[int, str]:
    reply = await server.handle(Request(1, method, {**(params or {}), "_meta": envelope()}),
                                server.connect(RecordingPeer(), "modern"))
    return reply.result["ttlMs"], reply.result["cacheScope"]


@pytest.mark.anyio
@pytest.mark.parametrize("method, params, expected", [
    ("resources/read", {"uri": "notes://all"}, (0, "private")),
    ("resources/list", {}, (0, "private")),
    ("tools/list", {}, (300_000, "public")),
    ("prompts/list", {}, (300_000, "public")),
    ("resources/templates/list", {}, (300_000, "public")),
    ("server/discover", {}, (3_600_000, "public")),
])
async def test_unmarked_resources_are_private_and_stale_while_the_servers_own_lists_are_public(
        method, params, expected) -> None:
    assert await hints(notes_server(), method, params) == expected


@pytest.mark.anyio
async def test_a_resource_of_mutable_notes_is_never_publicly_cached_by_default() -> None:
    server = notes_server()
    ttl, scope = await hints(server, "resources/read", {"uri": "notes://all"})
    assert scope != "public" and ttl == 0
    assert modern.DEFAULT_CACHE_SCOPE["resources/read"] == "private"


@pytest.mark.anyio
async def test_an_author_marks_resources_public_with_one_scope_or_per_method() -> None:
    marked = notes_server(ttl_ms={"resources/read": 60_000}, cache_scope="public")
    assert await hints(marked, "resources/read", {"uri": "notes://all"}) == (60_000, "public")
    per_method = notes_server(cache_scope={"resources/list": "public"})
    assert await hints(per_method, "resources/list") == (0, "public")
    assert await hints(per_method, "resources/read", {"uri": "notes://all"}) == (0, "private")


@pytest.mark.parametrize("options, says", [
    ({"ttl_ms": {"resources/read": -1}}, "must be a whole number of milliseconds >= 0"),
    ({"ttl_ms": {"resources/read": 1.5}}, "must be a whole number of milliseconds >= 0"),
    ({"ttl_ms": {"tools/call": 10}}, "'tools/call' has no caching hints"),
    ({"cache_scope": "shared"}, "cache_scope must be \"public\" or \"private\", got 'shared'"),
    ({"cache_scope": {"resources/read": "everyone"}}, "must be \"public\" or \"private\""),
])
def test_wrong_cache_hints_are_refused_when_the_server_is_built(options, says) -> None:
    with pytest.raises(ValueError) as refused:
        Server("s", **options)
    assert says in str(refused.value)
