"""Who may connect: a lab server answers only the user who started it.

Theory of operation
-------------------
"Bind 127.0.0.1" keeps other *machines* out, not other *people*: on a classroom hub every student's
processes share one loopback interface, so a classmate can reach any port a lab opens, and the wire
carries nothing that says who is calling (a consent page that anybody can submit approves for the
student who started it). The kernel knows, though. A connection from this machine is two sockets, and
Linux lists both in ``/proc/net/tcp`` (``tcp6`` for IPv6) with the user id that created each. When a
connection arrives, the server looks up the *other* end, the client's socket, whose local address is
the peer address the server sees and whose remote address is the server's own, and reads its uid:

    server sees peer 127.0.0.1:51234 → row "0100007F:C822 0100007F:1F90 … uid 1001" → a classmate

:func:`admit` decides once per connection, before a byte of the request is read:

* the peer is one of this machine's sockets: admitted only if its uid is ours;
* the peer is not in the table: another machine (admitted only when the server was started on a
  network address, where the user chose to be reachable and ``--auth`` is the lock), otherwise refused;
* the platform keeps no such table (macOS, Windows: laptops with one user): admitted.

A refused connection gets ``403`` and is closed (:class:`PrivateConnection`), and the app never sees it,
so nothing on the wire changes for the owner: no secret header, no token in a trace. The same check sits
in front of every HTTP server the course starts (the bundled servers, the authorization server, the
proxy, the OAuth redirect listener). On a hub whose spawner gives each student a network namespace of
their own (containers), nobody else is ever in the table.

Also here: a request carrying both ``Content-Length`` and ``Transfer-Encoding`` is answered ``400`` and
its connection closed (RFC 9112 §6.1: such a message "ought to be handled as an error", and a server
that answers it must close), so no second request can hide in its body.
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

from mcplab.server.streamable_http.deadlines import HeadDeadline

__all__ = ["PrivateConnection", "protocol_for", "admit", "peer_uid", "NOT_LOCAL", "TABLES"]

TABLES = {socket.AF_INET: "/proc/net/tcp", socket.AF_INET6: "/proc/net/tcp6"}
NOT_LOCAL = -1  # peer_uid: the table exists and holds no socket of that address (another machine)
REFUSED = ("this server answers only the user who started it, and this connection comes from another user "
           "of this machine (uid {uid}); start your own copy of the server instead\n")
AMBIGUOUS = "a request may carry Content-Length or Transfer-Encoding, not both (RFC 9112 section 6.1)\n"


def _hex(address: str) -> str:
    """An address as the kernel prints it: each 32-bit word of the packed address in the machine's order."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    packed = socket.inet_pton(family, address)
    return "".join(f"{int.from_bytes(packed[i:i + 4], sys.byteorder):08X}" for i in range(0, len(packed), 4))


def peer_uid(peer: tuple[Any, ...], local: tuple[Any, ...]) -> int | None:
    """The uid that owns the client's end of the connection ``peer`` → ``local`` (addresses as
    ``getpeername`` / ``getsockname`` give them); :data:`NOT_LOCAL` when no socket of this machine has
    that address; None where the platform keeps no table of sockets."""
    (peer_host, peer_port), (local_host, local_port) = peer[:2], local[:2]
    if peer_host.startswith("::ffff:") and "." in peer_host:  # an IPv4 client of a dual-stack socket
        peer_host, local_host = peer_host[7:], local_host.removeprefix("::ffff:")
    table = TABLES[socket.AF_INET6 if ":" in peer_host else socket.AF_INET]
    wanted = f"{_hex(peer_host)}:{peer_port:04X} {_hex(local_host)}:{local_port:04X} "
    try:
        with open(table, encoding="ascii") as rows:
            for row in rows:
                if wanted in row:  # sl  local  remote  st  queues  tr  retrnsmt  uid ...
                    return int(row.split()[7])
    except FileNotFoundError:
        return None
    return NOT_LOCAL


def admit(peer: Any, local: Any, *, public: bool) -> int | None:
    """None when the connection may go on, else the uid to name in the refusal (-1: unknown).
    ``public``: the server listens on a network address, so peers from other machines are expected."""
    # Not TCP: a Unix socket's peer is a str ('' when unnamed), and its file's mode says who may connect.
    if not isinstance(peer, tuple) or not isinstance(local, tuple) or not peer or not isinstance(peer[0], str):
        return None
    uid = peer_uid(peer, local)
    if uid is None or uid == os.geteuid() or (uid == NOT_LOCAL and public):
        return None
    return uid


async def _refuse(status: int, text: str, send: Any) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": text.encode()})


class PrivateConnection(HeadDeadline):
    """uvicorn's h11 protocol with the head deadline, admitting only the owner's connections and
    refusing a request whose length is said twice. A refused connection is answered, then closed."""

    public = False  # True for a server on a network address: see protocol_for

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        uid = admit(transport.get_extra_info("peername"), transport.get_extra_info("sockname"), public=self.public)
        if uid is not None:
            async def refused(scope: Any, receive: Any, send: Any) -> None:
                await _refuse(403, REFUSED.format(uid=uid), send)

            self.app = refused  # every request on this connection; the first answer closes it
        else:
            self.app = _one_length(self.app)


class PublicConnection(PrivateConnection):
    """The same, for a server listening on a network address: peers from other machines are expected."""

    public = True


def protocol_for(sock: socket.socket) -> type[PrivateConnection]:
    """The connection class for a listening socket: public only when it is bound to a network address."""
    import ipaddress

    host = sock.getsockname()[0] if sock.family in TABLES else "127.0.0.1"
    return PrivateConnection if ipaddress.ip_address(host.split("%")[0]).is_loopback else PublicConnection


def _one_length(app: Any) -> Any:
    async def checked(scope: dict[str, Any], receive: Any, send: Any) -> None:
        names = {name for name, _ in scope.get("headers", ())}
        if b"content-length" in names and b"transfer-encoding" in names:
            await _refuse(400, AMBIGUOUS, send)
            return
        await app(scope, receive, send)

    return checked
