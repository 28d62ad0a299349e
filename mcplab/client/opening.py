"""Opening a connection in either era, and finding out which one when asked to (``era="auto"``).

Theory of operation
-------------------
:func:`open_era` walks the steps ``eras.py`` decides, one exchange at a time:

    era="legacy"   initialize → notifications/initialized                (lifecycle/legacy.py)
    era="modern"   server/discover [→ again with a version from -32022]
    era="auto"     server/discover → the answer says modern: done
                                   → the answer says legacy: initialize → notifications/initialized

    → {"id":1,"method":"server/discover","params":{"_meta":{…"2026-07-28"…}}}
    ← {"id":1,"error":{"code":-32601,"message":"Method not found"}}        a legacy server
    → {"id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",…}}

The probe waits at most ``probe_timeout`` seconds: a legacy server may ignore a request that
comes before ``initialize``, and silence counts as "legacy" (spec, stdio "Backward
Compatibility": "does not respond within a reasonable timeout"). Over stdio those seconds count
from the moment the server has read the probe off its stdin (``StdioTransport.wait_read``), not
from the write: a Python server still importing its modules on a busy machine has not been silent
yet, only slow to start, and until it reads the probe waits for it like any request (``timeout``).
Where the transport cannot tell (Windows pipes), the seconds count from the write. The probe is
never cancelled on the wire: a server that has not been initialized has nothing to cancel. Over
HTTP, a refusal of the probe POST comes back as an :class:`~mcplab.wire.errors.HTTPStatusError`
whose body the verdict reads; an answer comes with the HTTP status of the reply that carried it,
which the transport hands back (``reply_status``, ``transports/base.py``; None over stdio): a 404
with -32601 is a modern server's "no such method" (``eras.py``).

Each step puts its lifecycle on the connection (so a ping the server sends during ``initialize`` is
answered by legacy rules); every verdict, with its reason, is returned.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Awaitable, Callable

import anyio

from mcplab.client.connection import Connection
from mcplab.client.eras import FAIL, INITIALIZE, USE, Verdict, error_in, judge_discover, judge_initialize_refusal
from mcplab.transports.base import reply_status
from mcplab.wire.errors import (
    UNSUPPORTED_PROTOCOL_VERSION, HTTPStatusError, RemoteError, RemoteProtocolError, RequestTimeout,
)
from mcplab.wire.jsonrpc import ErrorResponse, Request
from mcplab.lifecycle import DISCOVER as DISCOVER_METHOD
from mcplab.lifecycle import Lifecycle, ModernLifecycle
from mcplab.i18n import _

__all__ = ["EraError", "open_era"]

MAX_STEPS = 4  # probe, probe again with another version, initialize, probe after a refused initialize


class EraError(RemoteProtocolError):
    """No era or version both sides speak, or ``era="modern"`` against a legacy server."""


async def _probe(connection: Connection, lifecycle: ModernLifecycle, timeout: float,
                 silence: float) -> tuple[Any, int | None, bool]:
    """The answer to server/discover (None: silence), its HTTP status, and whether the silence counted
    from the server's read."""
    request = lifecycle.discover_request(connection.ids())
    wait_read = getattr(connection.transport, "wait_read", None)  # stdio only: see the module docstring
    read = False
    try:
        if wait_read is None or silence >= timeout:
            response = await connection.exchange(request, silence, announce=False)
        else:
            beyond = connection.transport.written  # the probe is what the server must read next
            response, read = await _exchange_after_read(connection, request, timeout, silence,
                                                        lambda: wait_read(beyond))
    except RequestTimeout:
        return None, None, False
    except HTTPStatusError as exc:
        return exc, exc.status, False
    return response, reply_status(connection.transport, request.id), read


async def _exchange_after_read(connection: Connection, request: Request, timeout: float, silence: float,
                               wait_read: Callable[[], Awaitable[bool]]) -> tuple[Any, bool]:
    """Exchange ``request``, giving up ``silence`` seconds after the server has read it, or at ``timeout``
    if it never does; return the response (None when given up) and whether the server read it."""
    written = anyio.current_time()
    response: Any = None
    failure: Exception | None = None
    read = False

    async def shorten_once_read(scope: anyio.CancelScope) -> None:
        nonlocal read
        read = await wait_read()
        since = anyio.current_time() if read else written  # cannot tell: count from the write, as before
        scope.deadline = min(scope.deadline, since + silence)

    async with anyio.create_task_group() as tg:
        tg.start_soon(shorten_once_read, tg.cancel_scope)
        try:
            response = await connection.exchange(request, timeout, announce=False)
        except Exception as exc:  # raised after the group, not wrapped in an exception group
            failure = exc
        tg.cancel_scope.cancel()  # answered (or failed): stop watching the pipe
    if failure is not None:
        raise failure
    return response, read and response is None


async def open_era(connection: Connection, plan: Verdict, make_lifecycle: Callable[[str, str], Lifecycle], *,
                   asked_era: str, timeout: float, probe_timeout: float) -> list[Verdict]:
    """Run the opening exchanges from ``plan`` on, leaving ``connection.lifecycle`` the one in force;
    return every verdict, in order."""
    decisions, verdict, attempt = [plan], plan, 0
    # A dual-era client says in the trace why it speaks the era it ends up speaking (spec: SDKs probe
    # and fall back; a student reading the trace should not have to guess why).
    note = connection.transport.trace.note if asked_era == "auto" else (lambda text: None)
    note(f"era: {plan.reason}")
    for _step in range(MAX_STEPS):  # not "_": that is the translation function here
        lifecycle = make_lifecycle("legacy" if verdict.step == INITIALIZE else "modern", verdict.version)
        connection.lifecycle = lifecycle
        if verdict.step == INITIALIZE:
            request = lifecycle.initialize_request(connection.ids())
            # initialize MUST NOT be cancelled (spec "cancellation"), so no notification on timeout.
            response = await connection.exchange(request, timeout, announce=False)
            turn = judge_initialize_refusal(response) if isinstance(response, ErrorResponse) else None
            if turn is not None and asked_era == "auto":
                decisions.append(verdict := turn)
                note(f"era: {turn.reason}")
                continue
            lifecycle.accept_initialize(response)
            await connection.send(lifecycle.initialized_notification())
            return decisions
        attempt += 1
        silence, asked = (probe_timeout if asked_era == "auto" else timeout), verdict.version
        answer, status, after_read = await _probe(connection, lifecycle, timeout, silence)
        verdict = judge_discover(answer, asked, status=status, attempt=attempt)
        if after_read and verdict.step == INITIALIZE:  # say which silence: the machine's speed is not in it
            verdict = replace(verdict, reason=_(
                "server/discover ({asked}) got no answer within {seconds:g} s of the server reading it: "
                "a silent server is legacy (spec, stdio backward compatibility); fall back to initialize",
                asked=asked, seconds=silence))
        decisions.append(verdict)
        note(f"era: {verdict.reason}")
        if verdict.step == USE:
            lifecycle.use_version(verdict.version)
            lifecycle.accept_discover(answer.result)
            return decisions
        if verdict.era == "legacy" and asked_era == "modern":
            raise EraError(verdict.reason + _(". This client was asked for era='modern', and a modern client cannot "
                                              "talk to a legacy server: use era='auto' (or 'legacy')"))
        if verdict.step == FAIL:
            raise _failure(answer, verdict)
    raise EraError(_("could not settle on an era: {reasons}", reasons=_("; then ").join(d.reason for d in decisions)))


def _failure(answer: Any, verdict: Verdict) -> Exception:
    """What to raise when opening gives up: the server's own error when it sent one, else why."""
    error = error_in(answer)
    if isinstance(answer, HTTPStatusError) and error is None:
        return answer  # an HTTP failure (a 500, a 401) that says nothing about eras
    if error is not None and error.code != UNSUPPORTED_PROTOCOL_VERSION:
        return RemoteError(error.code, error.message, error.data, method=DISCOVER_METHOD)
    return EraError(verdict.reason)
