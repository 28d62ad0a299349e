"""The words of the lifecycle: the methods it knows, who this client says it is, and each state and event
as one named constant. Sans-IO, and nothing here moves.

Theory of operation
-------------------
Like h11's sentinels, each state and event is one member of an enum, compared by identity, that reads
as its wire-ish name ("idle", "send initialize") in every message and table printout. They are ``str``
underneath, so a log or a notebook can compare them with plain strings. The tables that say which
event is legal in which state are in :mod:`mcplab.lifecycle.tables`.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from mcplab import __version__

__all__ = [
    "INITIALIZE", "INITIALIZED", "PING", "CANCELLED", "DISCOVER", "CLIENT_INFO", "State", "Event",
    "IDLE", "AWAITING_RESULT", "ACCEPTED", "OPERATING", "CLOSED", "ERROR",
    "SEND_INITIALIZE", "RECEIVE_RESULT", "RECEIVE_ERROR", "SEND_INITIALIZED", "RECEIVE_INITIALIZE",
    "RECEIVE_INITIALIZED", "RECEIVE_PING", "RECEIVE_REQUEST", "SEND_PING", "SEND_REQUEST", "SEND_NOTIFICATION",
    "SEND_RESPONSE", "CLOSE", "CLIENT", "SERVER", "Role", "Table",
]

INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
CANCELLED = "notifications/cancelled"
DISCOVER = "server/discover"
CLIENT_INFO = {"name": "mcplab", "version": __version__}

# --- states and events -------------------------------------------------------------------------


class _Named(str, Enum):
    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class State(_Named):
    """Where one role stands in the lifecycle."""
    IDLE = "idle"                          # nothing exchanged yet
    AWAITING_RESULT = "awaiting-result"    # client: initialize sent, no answer yet
    ACCEPTED = "accepted"                  # initialize answered; notifications/initialized not yet
    OPERATING = "operating"                # the session is open
    CLOSED = "closed"
    ERROR = "error"                        # a send or a receive failed: nothing more can happen


class Event(_Named):
    """What a role does or meets; the tables say in which states each is legal."""
    SEND_INITIALIZE = "send initialize"
    RECEIVE_RESULT = "receive initialize result"
    RECEIVE_ERROR = "receive initialize error"
    SEND_INITIALIZED = "send notifications/initialized"
    RECEIVE_INITIALIZE = "receive initialize"
    RECEIVE_INITIALIZED = "receive notifications/initialized"
    RECEIVE_PING = "receive ping"
    RECEIVE_REQUEST = "receive request"
    SEND_PING = "send ping"
    SEND_REQUEST = "send request"
    SEND_NOTIFICATION = "send notification"
    SEND_RESPONSE = "send response"
    CLOSE = "close"


IDLE, AWAITING_RESULT, ACCEPTED, OPERATING, CLOSED, ERROR = State
(SEND_INITIALIZE, RECEIVE_RESULT, RECEIVE_ERROR, SEND_INITIALIZED, RECEIVE_INITIALIZE, RECEIVE_INITIALIZED,
 RECEIVE_PING, RECEIVE_REQUEST, SEND_PING, SEND_REQUEST, SEND_NOTIFICATION, SEND_RESPONSE, CLOSE) = Event

CLIENT, SERVER = "client", "server"
Role = Literal["client", "server"]
Table = dict[tuple[State, Event], State]
