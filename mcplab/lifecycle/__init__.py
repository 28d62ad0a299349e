"""The lifecycle of a connection, both roles, both eras: what may be sent or received now, what to send
first, and how to stamp every request after that. Sans-IO.

Layer: lifecycle, on the wire; imports the wire (and the version string of ``mcplab``), nothing else.

Theory of operation
-------------------
Read it in this order, each module one idea:

- :mod:`~mcplab.lifecycle.states`: the words. The methods the lifecycle knows, ``clientInfo``, and
  each state and event as one named constant (h11's sentinels).
- :mod:`~mcplab.lifecycle.tables`: both roles' legacy handshake as two tables of the same shape
  (:data:`TRANSITIONS` for the client, :data:`SERVER_TRANSITIONS` for the server), the one walker
  that steps through either without asking which role it plays (:class:`RoleState`, with its ERROR
  state), and :class:`Lifecycle`, the type a client holds in either era.
- :mod:`~mcplab.lifecycle.capabilities`: what a client declares, and which server capability each
  request needs (both eras refuse a request the server never declared, before sending it).
- :mod:`~mcplab.lifecycle.legacy`: ``initialize``, the check of its answer, and the client's
  session that follows (:class:`LegacyLifecycle`).
- :mod:`~mcplab.lifecycle.modern`: 2026-07-28, no handshake: every request stamped with ``_meta``
  (:func:`stamp`, :class:`ModernLifecycle`).

Every name is importable from here (``from mcplab.lifecycle import TRANSITIONS``), as the labs do.
"""

from __future__ import annotations

from mcplab.lifecycle.capabilities import REQUIRED_CAPABILITY, client_capabilities, required_capability
from mcplab.lifecycle.legacy import LegacyLifecycle, UnsupportedVersion, check_initialize_result, initialize_request
from mcplab.lifecycle.modern import REMOVED_IN_MODERN, ModernLifecycle, check_discover_result, stamp
from mcplab.lifecycle.states import (
    ACCEPTED, AWAITING_RESULT, CANCELLED, CLIENT, CLIENT_INFO, CLOSE, CLOSED, DISCOVER, ERROR, IDLE, INITIALIZE,
    INITIALIZED, OPERATING, PING, RECEIVE_ERROR, RECEIVE_INITIALIZE, RECEIVE_INITIALIZED, RECEIVE_PING,
    RECEIVE_REQUEST, RECEIVE_RESULT, SEND_INITIALIZE, SEND_INITIALIZED, SEND_NOTIFICATION, SEND_PING, SEND_REQUEST,
    SEND_RESPONSE, SERVER, Event, Role, State, Table,
)
from mcplab.lifecycle.tables import SERVER_TRANSITIONS, TABLES, TRANSITIONS, Lifecycle, RoleState

__all__ = [
    "INITIALIZE", "INITIALIZED", "PING", "CANCELLED", "DISCOVER", "TRANSITIONS", "SERVER_TRANSITIONS", "TABLES",
    "State", "Event", "RoleState", "Lifecycle", "CLIENT", "SERVER", "CLIENT_INFO",
    "REMOVED_IN_MODERN", "LegacyLifecycle", "ModernLifecycle", "UnsupportedVersion", "initialize_request",
    "check_initialize_result", "required_capability", "client_capabilities", "stamp", "check_discover_result",
    # the sentinels, one name each, and the names of the table's types
    "IDLE", "AWAITING_RESULT", "ACCEPTED", "OPERATING", "CLOSED", "ERROR",
    "SEND_INITIALIZE", "RECEIVE_RESULT", "RECEIVE_ERROR", "SEND_INITIALIZED", "RECEIVE_INITIALIZE",
    "RECEIVE_INITIALIZED", "RECEIVE_PING", "RECEIVE_REQUEST", "SEND_PING", "SEND_REQUEST", "SEND_NOTIFICATION",
    "SEND_RESPONSE", "CLOSE", "Role", "Table", "REQUIRED_CAPABILITY",
]
