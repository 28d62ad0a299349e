"""The user agent: who takes the authorization URL to the authorization server and brings the answer back.

Theory of operation
-------------------
In the authorization code flow the client never talks to the authorization endpoint itself: it hands
a URL to the user's browser, the user signs in and approves, and the server redirects the browser to
the client's ``redirect_uri`` with ``code``, ``state`` (and ``iss``) in the query (OAuth 2.1 §4.1).
A user agent here is ``async (http, trace, url, redirect_uri) -> the URL the browser was sent back to``.

:func:`headless` plays the browser without one, for labs and tests: it GETs the URL, and while the
server answers with an HTML page holding a form (a consent page), it submits the form pressing the
Approve button (or Deny); it stops at the redirect that points at ``redirect_uri``, without
following it (nothing listens there). Every step lands in the trace, like every other exchange.

:func:`system_browser` is the real thing for a person: it opens the URL in the default browser and
waits on the loopback ``redirect_uri`` (RFC 8252 §7.3) for the one request that brings the answer.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any, Awaitable, Callable
from urllib.parse import urljoin, urlsplit

from mcplab.auth.steps import exchange
from mcplab.wire.errors import AuthorizationError

__all__ = ["headless", "system_browser", "UserAgent", "read_forms"]

UserAgent = Callable[[Any, Any, str, str], Awaitable[str]]
MAX_STEPS = 6  # pages and redirects followed before the agent gives up


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append({"action": attributes.get("action", ""), "method": attributes.get("method", "get").lower(),
                               "fields": [], "buttons": []})
        elif self.forms and tag == "input" and attributes.get("name"):
            if attributes.get("type", "text").lower() in ("submit", "button"):
                self.forms[-1]["buttons"].append((attributes["name"], attributes.get("value", "")))
            else:
                self.forms[-1]["fields"].append((attributes["name"], attributes.get("value", "")))
        elif self.forms and tag == "button" and attributes.get("name"):
            self.forms[-1]["buttons"].append((attributes["name"], attributes.get("value", "")))


def read_forms(page: str) -> list[dict[str, Any]]:
    """The forms of an HTML page: action, method, fields (hidden and text inputs), buttons (name, value)."""
    parser = _Forms()
    parser.feed(page)
    return parser.forms


def _is_redirect_uri(url: str, redirect_uri: str) -> bool:
    got, want = urlsplit(url), urlsplit(redirect_uri)
    return (got.scheme, got.hostname, got.path) == (want.scheme, want.hostname, want.path)


def headless(decision: str = "approve") -> UserAgent:
    """A user agent that approves (or, with ``decision="deny"``, denies) every consent page it is shown."""

    async def agent(http: Any, trace: Any, url: str, redirect_uri: str) -> str:
        method, data = "GET", None
        for _ in range(MAX_STEPS):
            response = await exchange(http, trace, method, url, step=f"user agent: {method} authorization page",
                                      data=data)
            if response.is_redirect:
                url, method, data = urljoin(url, response.headers["location"]), "GET", None
                if _is_redirect_uri(url, redirect_uri):
                    return url
                continue
            forms = [f for f in read_forms(response.text) if f["method"] == "post"] if response.status_code == 200 else []
            if not forms:
                raise AuthorizationError(f"the authorization server answered {response.status_code} with no "
                                         f"consent form: {response.text[:300]}")
            form = forms[0]
            button = next((b for b in form["buttons"] if b[1] == decision), None)
            if button is None:
                raise AuthorizationError(f"the consent page has no {decision!r} button")
            url, method, data = urljoin(url, form["action"] or url), "POST", dict([*form["fields"], button])
        raise AuthorizationError(f"the authorization server did not send the browser back within {MAX_STEPS} steps")

    return agent


def system_browser(opener: Callable[[str], Any] | None = None, timeout: float = 300.0) -> UserAgent:
    """A user agent for a person: open the URL in a browser, wait for the redirect on the loopback port."""

    async def agent(http: Any, trace: Any, url: str, redirect_uri: str) -> str:
        import webbrowser

        import anyio
        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import HTMLResponse
        from starlette.routing import Route

        from mcplab.server.streamable_http.owner import protocol_for
        from mcplab.server.streamable_http.process import bind

        target = urlsplit(redirect_uri)
        if target.scheme != "http" or target.hostname not in ("127.0.0.1", "localhost", "::1") or not target.port:
            raise AuthorizationError(f"system_browser needs a loopback redirect_uri with a port, got {redirect_uri}")
        arrived: list[str] = []
        done = anyio.Event()

        async def callback(request: Request) -> HTMLResponse:
            arrived.append(str(request.url).replace(f"{request.url.scheme}://{request.url.netloc}",
                                                    f"{target.scheme}://{target.netloc}", 1))
            done.set()
            return HTMLResponse("<!doctype html><p>Done: you can close this tab and go back to the notebook.</p>")

        sock = bind(target.hostname, target.port)
        # protocol_for: the code arrives here, so only this user's own browser may deliver it (owner.py).
        server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route(target.path or "/", callback)]),
                                               log_config=None, access_log=False, http=protocol_for(sock)))
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: server.serve(sockets=[sock]))
            (opener or webbrowser.open)(url)
            with anyio.fail_after(timeout):
                await done.wait()
            server.should_exit = True
        return arrived[0]

    return agent
