"""What the modules beside the stdio engine say about it is what their code does.

A student reading ``client/opening.py`` or ``server/peer.py`` next to a lab takes their theory of
operation at its word. Each test reads one claim against the code it describes: the names a docstring
gives are the names the code calls, and what a table is said to hold is what it holds while a request
runs. ``DROPPED`` (from the lab pointers' test) are the names the stdio engine lost in its plain rewrite.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import anyio

from mcplab.server import Server
from mcplab.server.streamable_http.session import Session
from mcplab.wire.jsonrpc import Notification, Request

from test_lab_pointers import DROPPED

ROOT = Path(__file__).resolve().parent.parent
OPENING = ROOT / "mcplab" / "client" / "opening.py"
PEER = ROOT / "mcplab" / "server" / "peer.py"


def docstring(path: Path) -> str:
    """A module's docstring on one line, however it wraps."""
    return " ".join((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split())


def called(path: Path) -> set[str]:
    """The names a module calls, as ``f(...)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def test_opening_says_the_probe_answer_gets_its_http_status_from_the_transport_as_the_code_does():
    assert "reply_status" in called(OPENING)  # the code asks the transport (transports/base.py) ...
    said = docstring(OPENING)
    assert "reply_status" in said  # ... and the theory of operation says so
    assert "from the trace" not in said


def test_opening_and_peer_name_nothing_the_plain_stdio_engine_dropped():
    for path in (OPENING, PEER):
        text = path.read_text(encoding="utf-8")  # comments too: a reader follows those as well
        named = [name for name in DROPPED if re.search(rf"\b{name}\b", text)]
        assert not named, f"{path.relative_to(ROOT)} names {named}"


def test_peer_says_its_tasks_are_cancel_scopes_and_nothing_the_runners_no_longer_keep():
    said = docstring(PEER)
    assert "cancel scope" in said
    assert "asyncio task" not in said and "in line" not in said


def test_a_legacy_http_session_keeps_a_running_request_as_the_cancel_scope_that_notifications_cancelled_ends():
    ended: list[str] = []

    async def main() -> tuple[object, bool]:
        started = anyio.Event()
        server = Server("waits", "1.0")

        @server.tool
        async def wait_here() -> str:
            """Wait until cancelled."""
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                ended.append("wait_here")
            return "never"

        async with anyio.create_task_group() as group:  # the app's group: requests outlive their POST
            session = Session(server, "s1", group)
            await session.answer(Request(1, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}))
            await session.receive(Notification("notifications/initialized"))
            group.start_soon(session.answer, Request(2, "tools/call", {"name": "wait_here", "arguments": {}}))
            with anyio.fail_after(30):  # an event, bounded for a loaded machine
                await started.wait()
            held = session.tasks[2]
            await session.receive(Notification("notifications/cancelled", {"requestId": 2, "reason": "test"}))
            with anyio.fail_after(30):
                while session.tasks:  # the task's own cleanup takes it out of the table
                    await anyio.sleep(0.01)
            session.close()
            return held, held.cancel_called

    held, cancelled = anyio.run(main)
    assert isinstance(held, anyio.CancelScope) and cancelled
    assert ended == ["wait_here"]  # the tool itself was stopped, not only forgotten
