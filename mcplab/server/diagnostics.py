"""Diagnostic tools the official conformance suite calls on any server: added on request only.

Theory of operation
-------------------
The suite's ``server-stateless`` scenario (2026-07-28, SEP-2575) is generic: it checks the envelope,
``server/discover``, versions and headers of whatever server it meets. Five of its checks need a
tool to poke at the server: one that needs a client capability the request did not declare
(-32021), one that elicits (never a request on the event stream in 2026-07-28), one that logs (only
when the request asked for a ``logLevel``), and two that announce a list change to
``subscriptions/listen`` streams.

``python servers/weather.py --diagnostics`` adds them (``add_to(server)``); without the flag a
teaching server lists only its own tools, as a student expects.
"""

from __future__ import annotations

from mcplab.server.context import Context
from mcplab.server.toolkit import Server

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def add_to(server: Server) -> Server:
    """Register the five diagnostic tools on ``server`` (once) and return it."""
    if "test_missing_capability" in server.tools:
        return server
    server.declare_logging = True  # test_logging_tool logs: a server declares what it really does
    server.memo.clear()

    @server.tool
    async def test_missing_capability(ctx: Context) -> str:
        """Needs the client's sampling capability: without it, -32021 names what is missing."""
        await ctx.sample("Reply with the word Success", max_tokens=10, key="check")
        return "Success"

    @server.tool
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Elicits; in 2026-07-28 that is an input_required result, never a request on the stream."""
        answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
        return f"Hello, {(answer.get('content') or {}).get('name')}!"

    @server.tool
    async def test_logging_tool(ctx: Context) -> str:
        """Logs three messages: a 2026-07-28 client sees them only if its request set a logLevel."""
        for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.info(message, logger="conformance")
        return "Logging test completed"

    @server.tool
    def test_trigger_tool_change() -> str:
        """Announces that the tool list changed (to subscriptions/listen streams that asked)."""
        server.changed("tools")
        return "Announced notifications/tools/list_changed"

    @server.tool
    def test_trigger_prompt_change() -> str:
        """Announces that the prompt list changed (to subscriptions/listen streams that asked)."""
        server.changed("prompts")
        return "Announced notifications/prompts/list_changed"

    return server
