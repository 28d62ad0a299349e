"""``subscriptions/listen``: the modern era's one way to hear about changes. Sans-IO.

Theory of operation
-------------------
Legacy servers push ``notifications/tools/list_changed`` & co. to every initialized connection and
``notifications/resources/updated`` to connections that called ``resources/subscribe``. 2026-07-28 has
no connection to push to, so a client that wants to hear opens a long-lived request
(spec "basic/patterns/subscriptions")::

    → {"id": 9, "method": "subscriptions/listen", "params": {"_meta": {...}, "notifications":
          {"toolsListChanged": true, "resourceSubscriptions": ["file:///notes.md"]}}}
    ← notifications/subscriptions/acknowledged  {"_meta": {subscriptionId: 9}, "notifications": <honoured subset>}
    ← notifications/tools/list_changed          {"_meta": {subscriptionId: 9}}          ... as things change
    ← {"id": 9, "result": {"resultType": "complete", "_meta": {subscriptionId: 9}}}   only if the server ends it

The acknowledgement is the first message of the subscription; it lists only what this server will
honour (a capability it has, a URI it can read). Every notification carries the listen request's id
as ``subscriptionId``, which is how a stdio client tells its subscriptions apart.

The request stays open through the runner's ``Peer.hold(request_id)``: it returns when the runner
ends the subscription gracefully (shutdown: the result above goes out) and raises
``CancelledError`` when the client cancels (``notifications/cancelled`` on stdio, a closed stream on
HTTP: no response then). A runner without ``hold`` cannot keep a request open, so ``server/discover``
then announces no list changes and ``subscriptions/listen`` answers -32601.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcplab.wire.errors import InvalidParams, JSONRPCError
from mcplab.wire.jsonrpc import Notification, Request, RequestId
from mcplab.server.view import MAX_URI, ServerView, find_resource

if TYPE_CHECKING:
    from mcplab.server.context import ClientState, Peer

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LIST_FLAGS = {"toolsListChanged": "tools", "promptsListChanged": "prompts", "resourcesListChanged": "resources"}


@dataclass(eq=False)
class Subscription:
    """One open ``subscriptions/listen`` request: where to send, and what it asked for (honoured part)."""
    peer: Peer
    id: RequestId
    wants: dict[str, Any]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.peer.post(Notification(method, {**(params or {}), "_meta": {META_SUBSCRIPTION_ID: self.id}}),
                       related_to=self.id)


def can_listen(peer: Any) -> bool:
    """Can this runner hold a request open (``Peer.hold``)?"""
    return callable(getattr(peer, "hold", None))


async def listen(server: ServerView, params: dict, conn: ClientState, request: Request) -> dict[str, Any]:
    """``subscriptions/listen``: acknowledge, then deliver notifications until the subscription ends."""
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise InvalidParams("expected params.notifications, a filter such as {\"toolsListChanged\": true}")
    subscription = Subscription(conn.peer, request.id, honour(server, wanted, conn))
    subscription.notify("notifications/subscriptions/acknowledged", {"notifications": subscription.wants})
    server.listeners.append(subscription)
    try:
        await conn.peer.hold(request.id)  # type: ignore[attr-defined]  # can_listen checked it
    finally:
        server.listeners.remove(subscription)
    return {"_meta": {META_SUBSCRIPTION_ID: request.id}}  # the graceful end (spec "subscriptions")


def honour(server: ServerView, wanted: dict[str, Any], conn: ClientState) -> dict[str, Any]:
    """The part of a filter this server will honour; what it cannot is left out (spec: the ack says so)."""
    honoured: dict[str, Any] = {}
    for flag, kind in LIST_FLAGS.items():
        if flag in wanted and not isinstance(wanted[flag], bool):
            raise InvalidParams(f"expected params.notifications.{flag} to be true or false")
        if wanted.get(flag) and kind in conn.server_capabilities:
            honoured[flag] = True
    uris = wanted.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise InvalidParams("expected params.notifications.resourceSubscriptions to be a list of resource URIs")
    # What a subscription holds is bounded as resources/subscribe is (handlers.py): it lives as long as the stream.
    if len(uris) > server.max_subscriptions:
        raise InvalidParams(f"expected at most {server.max_subscriptions} URIs in resourceSubscriptions, got {len(uris)}")
    if any(len(uri) > MAX_URI for uri in uris):
        raise InvalidParams(f"expected resource URIs of at most {MAX_URI} characters in resourceSubscriptions")
    readable = []
    for uri in uris if conn.server_capabilities.get("resources", {}).get("subscribe") else []:
        try:
            find_resource(server, uri, conn)
            readable.append(uri)
        except JSONRPCError:
            pass  # a URI this server cannot read is not honoured, and the ack leaves it out
    if readable:
        honoured["resourceSubscriptions"] = readable
    return honoured


def list_changed(listeners: list[Subscription], kind: str) -> None:
    """``notifications/<kind>/list_changed`` to every subscription that asked for it."""
    flag = next(f for f, k in LIST_FLAGS.items() if k == kind)
    for subscription in list(listeners):
        if subscription.wants.get(flag):
            subscription.notify(f"notifications/{kind}/list_changed")


def resource_updated(listeners: list[Subscription], uri: str) -> None:
    """``notifications/resources/updated`` to every subscription that named ``uri``."""
    for subscription in list(listeners):
        if uri in subscription.wants.get("resourceSubscriptions", ()):
            subscription.notify("notifications/resources/updated", {"uri": uri})
