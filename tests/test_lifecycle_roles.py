"""Both roles' lifecycle tables, move by move, and the ERROR state a failed send or receive leaves.

The client's handshake through LegacyLifecycle is tested in test_lifecycle.py; here the tables
themselves, the server's side of the handshake as Server.handle walks it, and ERROR on both roles."""

from __future__ import annotations

import os
from functools import partial

import anyio
import pytest

from mcplab import lifecycle
from mcplab.lifecycle import (
    ACCEPTED, CLIENT, CLOSED, ERROR, IDLE, OPERATING, SERVER, TABLES, Event, LegacyLifecycle, ModernLifecycle, RoleState,
    State,
)
from mcplab.server import Context, Server
from mcplab.server.stdio import StdioSession
from mcplab.wire.errors import INTERNAL_ERROR, INVALID_REQUEST, LocalProtocolError, ServerExited
from mcplab.wire.jsonrpc import Notification

from server_helpers import MemorySession

ROWS = [(role, state, event, after) for role, table in TABLES.items() for (state, event), after in table.items()]
ILLEGAL = [(role, state, event) for role, table in TABLES.items() for state in State if state is not ERROR
           for event in Event if (state, event) not in table]


@pytest.mark.parametrize("role, state, event, after", ROWS)
def test_every_row_of_both_tables_is_a_legal_move(role, state, event, after):
    machine = RoleState(role, state)
    assert machine.allows(event)
    assert machine.move(event) is after and machine.state is after


@pytest.mark.parametrize("role, state, event", ILLEGAL)
def test_every_move_outside_the_table_is_refused_naming_role_state_and_event(role, state, event):
    machine = RoleState(role, state)
    assert not machine.allows(event)
    with pytest.raises(LocalProtocolError, match=f"^{role} in state '{state}' cannot '{event}'; legal here: "):
        machine.move(event)
    assert machine.state is state  # a refused move changes nothing


def test_the_server_table_mirrors_the_handshake_the_spec_describes():
    server = RoleState(SERVER)
    walk = [server.move(e) for e in (Event.RECEIVE_PING, Event.RECEIVE_INITIALIZE, Event.RECEIVE_REQUEST,
                                     Event.RECEIVE_INITIALIZED, Event.SEND_REQUEST)]
    assert walk == [IDLE, ACCEPTED, ACCEPTED, OPERATING, OPERATING]


def test_states_and_events_are_sentinels_that_read_as_their_names():
    assert State.IDLE is lifecycle.IDLE and State("idle") is lifecycle.IDLE
    assert (str(IDLE), repr(IDLE), f"{IDLE:6}|", IDLE == "idle") == ("idle", "'idle'", "idle  |", True)
    assert str(Event.SEND_INITIALIZE) == "send initialize"
    # lab 02 prints the client's table this way; its stored output must not change
    first = next(iter(lifecycle.TRANSITIONS.items()))
    (state, event), after = first
    assert f"{state:16} --{event}--> {after}" == "idle             --send initialize--> awaiting-result"


# --- ERROR ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("role", [CLIENT, SERVER])
@pytest.mark.parametrize("state", [s for s in State if s is not ERROR])
def test_a_failure_moves_either_role_to_error_from_any_state(role, state):
    machine = RoleState(role, state)
    broken = BrokenPipeError("the pipe is gone")
    machine.fail(broken)
    assert machine.state is ERROR and not any(machine.allows(e) for e in Event)
    for event in Event:
        with pytest.raises(LocalProtocolError) as caught:
            machine.move(event)
        assert str(caught.value) == (f"{role} in state 'error' cannot '{event}': the connection failed earlier "
                                     f"(BrokenPipeError: the pipe is gone)")
        assert caught.value.__cause__ is broken
    machine.fail(ValueError("later"))
    machine.close()
    assert machine.state is ERROR and machine.failure is broken  # the first failure stays; nothing leaves ERROR


def test_a_client_in_error_refuses_every_request_notification_and_response_naming_the_failure():
    exited = ServerExited("the server exited with code 3", returncode=3)
    legacy = LegacyLifecycle()
    legacy.initialize_request(1)
    legacy.fail(exited)
    modern = ModernLifecycle()
    modern.fail(exited)
    calls = [lambda: legacy.prepare("tools/list", None), lambda: legacy.prepare_notification("x"),
             legacy.prepare_response, legacy.initialized_notification,
             lambda: modern.prepare("tools/list", None), lambda: modern.prepare_notification("notifications/x")]
    for call in calls:
        with pytest.raises(LocalProtocolError, match="^client in state 'error' cannot .*ServerExited: the server "
                                                     "exited with code 3"):
            call()


# --- the server walks its table ------------------------------------------------------------------

def asking_server() -> Server:
    server = Server("asker")

    @server.tool
    async def ask(ctx: Context) -> str:
        """Ask the client for its roots."""
        return str(await ctx.request("roots/list", capability="roots"))

    return server


async def answered(session: MemorySession, capabilities: dict | None = None) -> None:
    """initialize, answered; notifications/initialized not sent yet."""
    await session.result("initialize", {"protocolVersion": "2025-06-18", "capabilities": capabilities or {},
                                        "clientInfo": {"name": "x", "version": "1"}})


@pytest.mark.anyio
async def test_the_server_moves_idle_accepted_operating_as_the_handshake_arrives():
    session = MemorySession(asking_server())
    assert session.connection.lifecycle.state is IDLE
    assert await session.result("ping") == {}  # "basic/lifecycle": only ping may come before initialize
    assert session.connection.lifecycle.state is IDLE
    await answered(session, {"roots": {}})
    assert session.connection.lifecycle.state is ACCEPTED
    result = await session.result("tools/call", {"name": "ask", "arguments": {}})  # too early to ask the client
    assert result["isError"] and "must wait until the client sends notifications/initialized" in str(result)
    await session.notify("notifications/initialized")
    assert session.connection.lifecycle.state is OPERATING
    await session.notify("notifications/initialized")  # a second one is ignored, not a move
    assert session.connection.lifecycle.state is OPERATING


@pytest.mark.anyio
async def test_the_server_refuses_a_request_before_initialize_and_a_second_initialize():
    session = MemorySession(asking_server())
    error = await session.error("tools/list")
    assert error["code"] == INVALID_REQUEST and "expected initialize first" in error["message"]
    await session.initialize("2025-06-18")
    error = await session.error("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                               "clientInfo": {"name": "x", "version": "1"}})
    assert error["code"] == INVALID_REQUEST and "already answered" in error["message"]


@pytest.mark.anyio
async def test_a_server_in_error_refuses_to_ask_the_client_and_names_the_failure():
    session = MemorySession(asking_server(), answers={"roots/list": {"roots": []}})
    await session.initialize("2025-06-18", {"roots": {}})
    ctx = Context(session.connection, 7)
    assert await ctx.request("roots/list", capability="roots") == {"roots": []}  # operating: it asks
    session.connection.lifecycle.fail(BrokenPipeError("stdout is gone"))
    with pytest.raises(LocalProtocolError, match="^server in state 'error' cannot 'send request': the "
                                                 "connection failed earlier \\(BrokenPipeError: stdout is gone\\)"):
        await ctx.request("roots/list", capability="roots")
    assert len(session.peer.requests) == 1  # nothing more was sent


@pytest.mark.anyio
async def test_a_request_reaching_a_server_in_error_is_an_internal_error_naming_the_state():
    session = MemorySession(asking_server())
    await session.initialize("2025-06-18")
    session.connection.lifecycle.fail(BrokenPipeError("stdout is gone"))
    error = await session.error("tools/list")
    assert error["code"] == INTERNAL_ERROR
    assert error["message"] == ("server in state 'error' cannot 'receive request': the connection failed earlier "
                                "(BrokenPipeError: stdout is gone)")


@pytest.mark.anyio
async def test_list_changes_go_only_to_operating_connections():
    server = asking_server()
    waiting, operating, failed = MemorySession(server), MemorySession(server), MemorySession(server)
    await answered(waiting)
    await operating.initialize("2025-06-18")
    await failed.initialize("2025-06-18")
    failed.connection.lifecycle.fail(BrokenPipeError("gone"))
    server.tool(lambda: "x", name="later", description="added later")
    assert [m["method"] for m in operating.notifications] == ["notifications/tools/list_changed"]
    assert waiting.notifications == [] and failed.notifications == []


def test_a_failed_write_to_stdout_puts_the_stdio_connection_in_error_and_drops_later_replies():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the client is gone: nothing reads our stdout
    async def main() -> None:
        async with anyio.create_task_group() as group:  # the runner's group (no request runs here)
            session = StdioSession(asking_server(), partial(os.write, write_end), era="legacy", group=group)
            session.post(Notification("notifications/message", {"level": "info", "data": "hello"}))
            assert session.connection.lifecycle.state is ERROR
            assert isinstance(session.connection.lifecycle.failure, BrokenPipeError)
            session.post(Notification("notifications/message", {"level": "info", "data": "again"}))  # dropped
            assert session.connection.lifecycle.state is ERROR

    try:
        anyio.run(main)
    finally:
        os.close(write_end)


def test_a_runner_session_that_ends_leaves_its_connection_closed_and_a_failed_one_in_error():
    from mcplab.server.streamable_http.session import Session

    read_end, write_end = os.pipe()

    async def main() -> list:
        async with anyio.create_task_group() as group:
            stdio = StdioSession(asking_server(), partial(os.write, write_end), era="legacy", group=group)
            await stdio.close("the client closed stdin")
            http = Session(asking_server(), "s1", group)
            http.close()
            broken = StdioSession(asking_server(), partial(os.write, write_end), era="legacy", group=group)
            broken.connection.lifecycle.fail(BrokenPipeError("gone"))
            await broken.close()
            return [stdio.connection.lifecycle.state, http.connection.lifecycle.state, broken.connection.lifecycle.state]

    try:
        assert anyio.run(main) == [CLOSED, CLOSED, ERROR]
    finally:
        os.close(read_end), os.close(write_end)
