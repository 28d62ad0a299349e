"""Both roles' legacy handshake as two tables of the same shape, and the one walker that steps through
either. Sans-IO.

Theory of operation
-------------------
A legacy connection (revisions 2024-11-05 … 2025-11-25, spec "basic/lifecycle") opens in three steps:
``initialize``, its answer, ``notifications/initialized``. Each role's legal moves are one row each of
its table: :data:`TRANSITIONS` for the client, :data:`SERVER_TRANSITIONS` for the server (the same
states, the moves mirrored). As in h11's ``_state.py``, the code that walks a table never asks which
role it plays: :class:`RoleState` is a role, a state and :data:`TABLES`. Any move the table lacks
raises :class:`~mcplab.wire.errors.LocalProtocolError` naming the role, the state and the event, with
the moves that are legal there. A send or a receive that fails puts either role in ``error`` for
good; every later move raises, naming what failed.

:class:`Lifecycle` is what a client holds in either era (:mod:`~mcplab.lifecycle.legacy`,
:mod:`~mcplab.lifecycle.modern`), so the client and its connection never ask which one it is.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcplab.lifecycle.states import (
    ACCEPTED, AWAITING_RESULT, CLIENT, CLOSE, CLOSED, ERROR, IDLE, OPERATING, RECEIVE_ERROR, RECEIVE_INITIALIZE,
    RECEIVE_INITIALIZED, RECEIVE_PING, RECEIVE_REQUEST, RECEIVE_RESULT, SEND_INITIALIZE, SEND_INITIALIZED,
    SEND_NOTIFICATION, SEND_PING, SEND_REQUEST, SEND_RESPONSE, SERVER, Event, Role, State, Table,
)
from mcplab.i18n import _
from mcplab.wire.errors import LocalProtocolError
from mcplab.wire.versions import Era

__all__ = ["TRANSITIONS", "SERVER_TRANSITIONS", "TABLES", "RoleState", "Lifecycle"]

#: (state, event) → next state: every legal move of the client, and nothing else.
TRANSITIONS: Table = {
    (IDLE, SEND_INITIALIZE): AWAITING_RESULT,
    # "The client SHOULD NOT send requests other than pings before the server has
    # responded to the initialize request"; a ping from the server must be answered.
    (AWAITING_RESULT, SEND_PING): AWAITING_RESULT,
    (AWAITING_RESULT, SEND_RESPONSE): AWAITING_RESULT,
    (AWAITING_RESULT, RECEIVE_RESULT): ACCEPTED,
    (AWAITING_RESULT, RECEIVE_ERROR): CLOSED,
    (ACCEPTED, SEND_INITIALIZED): OPERATING,
    (ACCEPTED, SEND_RESPONSE): ACCEPTED,
    (OPERATING, SEND_PING): OPERATING,
    (OPERATING, SEND_REQUEST): OPERATING,
    (OPERATING, SEND_NOTIFICATION): OPERATING,
    (OPERATING, SEND_RESPONSE): OPERATING,
    **{(state, CLOSE): CLOSED for state in (IDLE, AWAITING_RESULT, ACCEPTED, OPERATING, CLOSED)},
}

#: The same handshake seen from the server: the same states, the moves mirrored.
SERVER_TRANSITIONS: Table = {
    # "basic/lifecycle", Initialization: the handshake MUST be the first interaction; a ping may come first.
    (IDLE, RECEIVE_PING): IDLE,
    (IDLE, RECEIVE_INITIALIZE): ACCEPTED,       # the move is made when the answer is ready to go
    (ACCEPTED, RECEIVE_PING): ACCEPTED,
    (ACCEPTED, RECEIVE_REQUEST): ACCEPTED,      # the client may ask as soon as it has the answer
    (ACCEPTED, RECEIVE_INITIALIZED): OPERATING,
    (OPERATING, RECEIVE_PING): OPERATING,
    (OPERATING, RECEIVE_REQUEST): OPERATING,
    # "The server SHOULD NOT send requests other than pings and logging before receiving the
    # initialized notification": requests and list changes wait for OPERATING.
    (OPERATING, SEND_REQUEST): OPERATING,
    (OPERATING, SEND_NOTIFICATION): OPERATING,
    **{(state, CLOSE): CLOSED for state in (IDLE, ACCEPTED, OPERATING, CLOSED)},
}

#: Each role's table; both have the same shape, and the code that walks them does not know the role.
TABLES: dict[str, Table] = {CLIENT: TRANSITIONS, SERVER: SERVER_TRANSITIONS}


class RoleState:
    """One role's place in its table. A failed send or receive moves it to ERROR for good (as h11's
    ``process_error``: no table row leads there, any state can); every later move then raises,
    naming the role, the state and what failed."""

    def __init__(self, role: Role, state: State = IDLE) -> None:
        self.role, self.state = role, state
        self.failure: BaseException | None = None  # what moved the role to ERROR

    def allows(self, event: Event) -> bool:
        return (self.state, event) in TABLES[self.role]

    def move(self, event: Event) -> State:
        """Take one step of the role's table, or raise naming the role, the state and the event."""
        if self.state is ERROR:
            error = LocalProtocolError(_("{role} in state 'error' cannot '{event}': the connection failed earlier "
                                         "({failure})", role=self.role, event=event,
                                         failure=f"{type(self.failure).__name__}: {self.failure}"))
            raise error from self.failure
        table = TABLES[self.role]
        try:
            self.state = table[(self.state, event)]
        except KeyError:
            legal = sorted(e for (s, e) in table if s == self.state)
            raise LocalProtocolError(_("{role} in state '{state}' cannot '{event}'; legal here: {legal}",
                                       role=self.role, state=self.state, event=event,
                                       legal=", ".join(legal) or _("nothing"))) from None
        return self.state

    def fail(self, failure: BaseException) -> None:
        """A send or a receive failed: ERROR from now on (the first failure is the one remembered)."""
        if self.state is not ERROR:
            self.state, self.failure = ERROR, failure

    def close(self) -> None:
        if self.state is not ERROR:
            self.move(CLOSE)


class Lifecycle(Protocol):
    """A client's lifecycle in either era (:class:`LegacyLifecycle`, :class:`ModernLifecycle`): what the
    client and its connection use, so neither needs to know which era it holds."""
    role: Role
    era: Era
    state: State
    requested_version: str
    capabilities: dict[str, Any]
    result: dict[str, Any] | None

    @property
    def version(self) -> str | None: ...
    @property
    def server_capabilities(self) -> dict[str, Any]: ...
    @property
    def server_info(self) -> dict[str, Any]: ...
    @property
    def instructions(self) -> str | None: ...
    def prepare(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None: ...
    def prepare_notification(self, method: str) -> None: ...
    def prepare_response(self) -> None: ...
    def fail(self, failure: BaseException) -> None: ...
    def close(self) -> None: ...
