"""The OAuth flow end to end over real HTTP on 127.0.0.1: servers/auth.py, the bundled servers with --auth,
mcplab's client (both eras, three ways to register, refresh, step-up, a denied consent), the official SDK's
client (mcp==2.3.0), and one whole flow over HTTPS with a locally made CA and a client metadata document.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urljoin, urlsplit

import httpx
import pytest

from auth_helpers import REDIRECT, make_certificates
from conftest import need
from mcplab import Client
from mcplab.auth.browser import headless, read_forms, system_browser
from mcplab.auth.client import OAuth
from mcplab.auth.wire import MASK
from mcplab.wire.errors import AuthorizationError, TransportError
from mcplab.server.streamable_http import launch
from mcplab.trace.http_text import render_http
from mcplab.transports.http import http

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
pytestmark = [pytest.mark.anyio, pytest.mark.http, pytest.mark.subprocess]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def authority():
    """servers/auth.py with its consent page on (the headless user agent clicks Approve), one pre-registered client."""
    with launch([sys.executable, str(SERVERS / "auth.py"), "--client", f"lab-client:lab-secret:{REDIRECT}"]) as server:
        yield server


@pytest.fixture(scope="module")
def files(authority, tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(SERVERS / "samples", root, dirs_exist_ok=True)
    with launch([sys.executable, str(SERVERS / "files.py"), "--root", str(root), "--writable",
                 "--auth", authority.url]) as server:
        server.root = root
        yield server


@pytest.fixture(scope="module")
def weather(authority):
    with launch([sys.executable, str(SERVERS / "weather.py"), "--auth", authority.url]) as server:
        yield server


def steps(trace) -> list[str]:
    """The flow's steps as the trace labels them, each once per request/response pair."""
    return [f.http["oauth"] for f in trace.frames if f.http and f.http.get("oauth") and f.direction == "c2s"]


def statuses(trace) -> list[int]:
    return [f.http["status"] for f in trace.frames if f.http and f.direction == "s2c" and f.http.get("status")]


async def test_the_mcplab_client_registers_authorizes_and_steps_up_for_a_write(files):
    transport = http(files.url, auth=OAuth(client_name="lab notebook"))
    async with Client(transport, era="legacy") as client:
        assert "write_file" in [t.name for t in await client.list_tools()]
        assert "MCP notes" in (await client.call_tool("read_file", {"path": "notes.md"})).text
        granted = transport.auth.tokens.scope
        result = await client.call_tool("write_file", {"path": "from-auth.txt", "content": "written with a token"})
    assert not result.is_error and (files.root / "from-auth.txt").read_text() == "written with a token"
    flow, trace = transport.auth, transport.trace
    assert granted == "files:read" and set(flow.tokens.scope.split()) == {"files:read", "files:write"}
    consent = ["user agent: GET authorization page", "user agent: POST authorization page",
               "token (authorization_code)", "the same request, with the new token"]
    assert steps(trace) == ["protected resource metadata", "authorization server metadata",
                            "dynamic client registration", *consent,  # the 401 on initialize
                            *consent]                                 # the 403 on write_file: step-up, no rediscovery
    refusals = [f.http["oauth"] for f in trace.frames if f.http and f.http.get("oauth") and f.direction == "s2c"
                and f.http["oauth"].startswith("refused")]
    assert refusals == ["refused: authorization needed", "refused: insufficient scope"]
    assert 401 in statuses(trace) and 403 in statuses(trace)
    # Secrets never reach the trace, wherever they travelled: headers, forms, JSON bodies, redirects.
    saved = trace.to_jsonl()
    assert flow.tokens.access_token not in saved and flow.tokens.refresh_token not in saved and MASK in saved
    wire = render_http(trace.frames)
    assert "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1" in wire and f"Authorization: Bearer {MASK}" in wire
    assert "protected resource metadata" in trace._repr_html_()


async def test_a_pre_registered_client_in_the_modern_era_refreshes_and_rotates(weather, authority):
    oauth = OAuth(client_id="lab-client", client_secret="lab-secret")
    transport = http(weather.url, auth=oauth)
    async with Client(transport, era="modern") as client:
        assert "Beijing" in (await client.call_tool("get_weather", {"city": "Beijing"})).text
        flow = transport.auth
        assert flow.registrations[flow.issuer].how == "pre-registered"
        old_refresh = flow.tokens.refresh_token
        flow.tokens.expires_at = 0  # as if the access token had run out: the next request refreshes first
        assert "Tokyo" in (await client.call_tool("get_weather", {"city": "Tokyo"})).text
    assert "token (refresh_token)" in steps(transport.trace) and "dynamic client registration" not in steps(transport.trace)
    assert flow.tokens.refresh_token not in (None, old_refresh)
    # Rotation: the refresh token that was used once is refused, with the RFC's code.
    async with httpx.AsyncClient() as raw:
        reply = await raw.post(f"{authority.url}/token", data={"grant_type": "refresh_token", "refresh_token": old_refresh},
                               auth=("lab-client", "lab-secret"))
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"


async def test_a_denied_consent_stops_the_flow_with_access_denied(weather):
    transport = http(weather.url, auth=OAuth(user_agent=headless("deny")))
    with pytest.raises(AuthorizationError) as refused:
        async with Client(transport, era="legacy"):
            pass
    assert refused.value.error == "access_denied" and transport.auth.tokens is None


async def test_a_person_approves_in_a_browser_and_the_loopback_listener_takes_the_code(weather):
    with socket.socket() as probe:  # a free port for the redirect URI (the listener binds it a moment later)
        probe.bind(("127.0.0.1", 0))
        redirect = f"http://127.0.0.1:{probe.getsockname()[1]}/callback"
    seen: list[str] = []

    def person(url: str) -> None:
        # What a browser and its user do, in a thread as a real browser is another process: show the
        # consent page, press Approve, follow the redirect to the client's loopback listener.
        def act() -> None:
            with httpx.Client(trust_env=False, timeout=30) as browser:
                page = browser.get(url)
                form = read_forms(page.text)[0]
                seen.append(page.text)
                answer = browser.post(urljoin(url, form["action"]), data=dict([*form["fields"], ("decision", "approve")]))
                browser.get(answer.headers["location"])

        threading.Thread(target=act, daemon=True).start()

    transport = http(weather.url, auth=OAuth(redirect_uri=redirect, user_agent=system_browser(person, timeout=60)))
    async with Client(transport, era="legacy") as client:
        assert "Beijing" in (await client.call_tool("get_weather", {"city": "Beijing"})).text
    # The page names the application, where it sends the user back (its host), the scope and the resource.
    assert "mcplab" in seen[0] and f"127.0.0.1:{urlsplit(redirect).port}" in seen[0] and "weather:read" in seen[0]
    assert weather.url in seen[0]


async def test_the_official_sdk_client_completes_the_flow_against_our_servers(weather):
    try:
        import httpx2
        import mcp
        from mcp.client.auth import OAuthClientProvider
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    except ImportError:  # pragma: no cover - the test extra is missing
        need(False, "the official SDK (mcp==2.3.0) is not installed")

    class Memory:
        def __init__(self) -> None:
            self.tokens, self.client = None, None

        async def get_tokens(self):
            return self.tokens

        async def set_tokens(self, tokens) -> None:
            self.tokens = tokens

        async def get_client_info(self):
            return self.client

        async def set_client_info(self, info) -> None:
            self.client = info

    arrived: list[str] = []

    async def follow_consent(url: str) -> None:  # the SDK's redirect handler: our headless user agent
        from mcplab.trace import Trace

        async with httpx.AsyncClient() as agent:
            arrived.append(await headless()(agent, Trace(), url, REDIRECT))

    async def callback() -> AuthorizationCodeResult:
        answer = dict(parse_qsl(urlsplit(arrived[-1]).query))
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))

    storage = Memory()
    provider = OAuthClientProvider(weather.url, OAuthClientMetadata(client_name="official SDK", redirect_uris=[REDIRECT]),
                                   storage, redirect_handler=follow_consent, callback_handler=callback)
    async with httpx2.AsyncClient(auth=provider) as http_client:
        async with mcp.Client(streamable_http_client(weather.url, http_client=http_client), mode="auto") as client:
            result = await client.call_tool("get_weather", {"city": "Beijing"})
    assert "Beijing" in result.content[0].text and storage.tokens.scope == "weather:read"
    assert storage.client.client_id and arrived and "iss=" in arrived[0]


async def test_the_whole_flow_runs_over_https_with_a_client_metadata_document(tmp_path):
    certificates = make_certificates(tmp_path)
    cimd = tmp_path / "client.json"
    tls = ["--tls-cert", str(certificates.cert), "--tls-key", str(certificates.key)]
    with launch([sys.executable, str(ROOT / "tests" / "auth_helpers.py"), str(cimd), str(certificates.cert),
                 str(certificates.key)]) as host:
        client_id = f"{host.url}/client.json"
        cimd.write_text(json.dumps({"client_id": client_id, "client_name": "mcplab over TLS",
                                    "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}))
        with launch([sys.executable, str(SERVERS / "auth.py"), *tls, "--trust-cimd", "127.0.0.1",
                     "--ca", str(certificates.ca)]) as authority, \
             launch([sys.executable, str(SERVERS / "weather.py"), *tls, "--auth", authority.url,
                     "--ca", str(certificates.ca)]) as weather:
            assert authority.url.startswith("https://") and weather.url.startswith("https://")
            transport = http(weather.url, auth=OAuth(client_metadata_url=client_id), verify=str(certificates.ca))
            async with Client(transport, era="auto") as client:
                assert "Beijing" in (await client.call_tool("get_weather", {"city": "Beijing"})).text
            # Without the CA, the same client refuses the server's certificate: TLS is really checked.
            with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
                async with Client(http(weather.url, auth=OAuth()), era="legacy"):
                    pass
    flow = transport.auth
    assert flow.registrations[flow.issuer].how == "metadata document" and flow.registrations[flow.issuer].client_id == client_id
    urls = [f.http["url"] for f in transport.trace.frames if f.http and f.http.get("url")]
    assert urls and all(u.startswith("https://127.0.0.1:") for u in urls)
    assert "dynamic client registration" not in steps(transport.trace)
