"""Red team, OAuth on a shared machine: what another user of this host can try against the authorization
server (servers/auth.py) and a protected file server (``--auth``), one row per attack.

Every peer is hostile until checked: a classmate reaches the same loopback ports, registers clients,
asks for scopes, forges ``Host`` headers, frames the consent page, floods the server's tables and
borrows session ids. Each table is one class of attack. A row names what is sent and what must come
back (the HTTP status and the OAuth or JSON-RPC error code), and each test then checks the effect on
the world: no code was issued, no client was registered, nobody else's client, code or token is gone,
the victim's session still answers, and the servers still serve.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from auth_helpers import REDIRECT, make_certificates
from http_helpers import ACCEPT_BOTH, initialize, modern_headers, modern_request
from mcplab.auth.wire import bearer_challenge
from mcplab.server.streamable_http import launch
from redteam_helpers import RawHTTP

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
VICTIM, VICTIM_SECRET = "lab-client", "lab-secret"
OTHER, OTHER_SECRET = "other-client", "other-secret"
PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
pytestmark = [pytest.mark.http, pytest.mark.subprocess]


def _auth_argv(*extra: str) -> list[str]:
    return [sys.executable, str(SERVERS / "auth.py"), "--client", f"{VICTIM}:{VICTIM_SECRET}:{REDIRECT}",
            "--client", f"{OTHER}:{OTHER_SECRET}:{REDIRECT}", *extra]


class World:
    """An authorization server that grants at once, one with its consent page, and a file server trusting the first."""

    def __init__(self, auth: Any, consenting: Any, files: Any, root: Path) -> None:
        self.auth, self.consenting, self.files, self.root = auth, consenting, files, root
        self.http = httpx.Client(trust_env=False, timeout=30)


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorize(http: httpx.Client, issuer: str, client: str, *, verifier: str = "v" * 43, redirect: str = REDIRECT,
              resource: str | None = None, scope: str | None = "files:read") -> httpx.Response:
    params = {"response_type": "code", "client_id": client, "redirect_uri": redirect, "state": "s1",
              "code_challenge": challenge_of(verifier), "code_challenge_method": "S256", "resource": resource,
              "scope": scope}
    return http.get(f"{issuer}/authorize", params={k: v for k, v in params.items() if v is not None})


def answer(reply: httpx.Response) -> dict[str, str]:
    """The query of the redirect an authorization request was answered with ({} if it was not redirected)."""
    if reply.status_code != 302:
        return {}
    return dict(parse_qsl(urlsplit(reply.headers["location"]).query))


def grant(http: httpx.Client, issuer: str, client: str, secret: str | None, *, resource: str | None = None,
          scope: str = "files:read") -> dict[str, Any]:
    """One whole authorization code grant (the server approves at once); the token response."""
    verifier = secrets.token_urlsafe(48)
    code = answer(authorize(http, issuer, client, verifier=verifier, resource=resource, scope=scope))["code"]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier}
    if resource:
        form["resource"] = resource
    if secret is None:
        reply = http.post(f"{issuer}/token", data={**form, "client_id": client})
    else:
        reply = http.post(f"{issuer}/token", data=form, auth=(client, secret))
    assert reply.status_code == 200, reply.text
    return reply.json()


def refresh(http: httpx.Client, issuer: str, client: str, secret: str | None, token: str) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": token}
    if secret is None:
        return http.post(f"{issuer}/token", data={**form, "client_id": client})
    return http.post(f"{issuer}/token", data=form, auth=(client, secret))


def register(http: httpx.Client, issuer: str, **metadata: Any) -> httpx.Response:
    return http.post(f"{issuer}/register", json={"client_name": "classmate", "redirect_uris": [REDIRECT],
                                                 "token_endpoint_auth_method": "none", **metadata})


def still_granting(w: World) -> None:
    assert "code" in answer(authorize(w.http, w.auth.url, VICTIM, resource=w.files.url))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(SERVERS / "samples", root, dirs_exist_ok=True)
    with launch(_auth_argv("--auto-approve")) as auth, launch(_auth_argv()) as consenting, \
         launch([sys.executable, str(SERVERS / "files.py"), "--root", str(root), "--writable",
                 "--auth", auth.url]) as files:
        state = World(auth, consenting, files, root)
        yield state
        state.http.close()


# --- redirect URIs: matched exactly, only a loopback IP's port may vary ------------------------------------

REDIRECTS = [  # (what, redirect_uri sent for the client registered with REDIRECT, a code comes back?)
    ("a fragment after the registered URI", REDIRECT + "#steal", False),
    ("an empty fragment after the registered URI", REDIRECT + "#", False),
    ("userinfo before the loopback host", REDIRECT.replace("http://", "http://evil@"), False),
    ("user and password before the loopback host", REDIRECT.replace("http://", "http://evil:pw@"), False),
    ("the registered URI itself", REDIRECT, True),
    ("the registered URI on another port of the same loopback IP", "http://127.0.0.1:40123/callback", True),
    ("another path on the loopback IP", "http://127.0.0.1:33418/elsewhere", False),
]


@pytest.mark.parametrize("redirect, issued", [row[1:] for row in REDIRECTS], ids=[row[0] for row in REDIRECTS])
def test_a_redirect_uri_gets_a_code_only_when_it_matches_the_registered_one(world, redirect, issued):
    reply = authorize(world.http, world.auth.url, VICTIM, redirect=redirect, resource=world.files.url)
    if issued:
        assert reply.status_code == 302 and reply.headers["location"].startswith(redirect + "?"), reply.text
        assert answer(reply)["code"]
    else:  # never redirected to: a 400 page says why (RFC 6749 §4.1.2.1)
        assert reply.status_code == 400 and "location" not in reply.headers, reply.headers
        assert "invalid_request" in reply.text and "redirect" in reply.text.lower()
    still_granting(world)


UNREGISTRABLE = [  # (what, a redirect URI no client may register: the exact match would then admit it)
    ("a fragment", "http://127.0.0.1:33418/callback#steal"),
    ("userinfo before the loopback host", "http://evil@127.0.0.1:33418/callback"),
    ("userinfo before an https host", "https://127.0.0.1@evil.example/callback"),
]


@pytest.mark.parametrize("uri", [row[1] for row in UNREGISTRABLE], ids=[row[0] for row in UNREGISTRABLE])
def test_a_redirect_uri_with_a_fragment_or_userinfo_cannot_be_registered_or_pre_registered(world, uri):
    reply = register(world.http, world.auth.url, redirect_uris=[uri])  # Authlib's claim check refuses it
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_client_metadata", reply.text
    assert "client_id" not in reply.json()
    started = subprocess.run([*_auth_argv(), "--client", f"late::{uri}", "--port", "0"], input="",
                             capture_output=True, text=True, timeout=60)
    assert started.returncode == 2 and "--client late: the redirect URI must be" in started.stderr, started.stderr
    still_granting(world)


def test_a_client_metadata_document_whose_redirect_uri_has_a_fragment_gets_no_code(tmp_path):
    certificates = make_certificates(tmp_path)
    document = tmp_path / "client.json"
    with launch([sys.executable, str(ROOT / "tests" / "auth_helpers.py"), str(document), str(certificates.cert),
                 str(certificates.key)]) as host, \
         launch(_auth_argv("--auto-approve", "--trust-cimd", "127.0.0.1", "--ca", str(certificates.ca))) as auth, \
         httpx.Client(trust_env=False, timeout=30) as http:
        client_id = f"{host.url}/client.json"
        document.write_text(json.dumps({"client_id": client_id, "client_name": "hostile document",
                                        "redirect_uris": [REDIRECT + "#steal"]}))
        reply = authorize(http, auth.url, client_id, redirect=REDIRECT + "#steal")
        assert reply.status_code == 400 and "location" not in reply.headers, reply.headers
        assert "invalid_client" in reply.text and "fragment" in reply.text
        assert "code" in answer(authorize(http, auth.url, VICTIM))  # the server still grants


# --- scopes: only what the server knows and the client may have --------------------------------------------

def _narrow_client(w: World) -> str:
    reply = register(w.http, w.auth.url, scope="files:read")
    assert reply.status_code == 201, reply.text
    return reply.json()["client_id"]


SCOPES = [  # (what, client (a function of the world), scope asked for, the OAuth error, or None for a code)
    ("an unknown scope", lambda w: VICTIM, "admin:everything", "invalid_scope"),
    ("an unknown scope beside a known one", lambda w: VICTIM, "files:read admin:everything", "invalid_scope"),
    ("a known scope the registered client did not ask for", _narrow_client, "files:read files:write", "invalid_scope"),
    ("the scope the registered client asked for", _narrow_client, "files:read", None),
    ("every scope the bundled servers use", lambda w: VICTIM, "files:read files:write weather:read", None),
]


@pytest.mark.parametrize("client, scope, error", [row[1:] for row in SCOPES], ids=[row[0] for row in SCOPES])
def test_a_scope_is_granted_only_if_the_server_knows_it_and_the_client_may_have_it(world, client, scope, error):
    reply = authorize(world.http, world.auth.url, client(world), scope=scope, resource=world.files.url)
    found = answer(reply)
    if error is None:
        assert found.get("code"), reply.text
    else:  # the client and its redirect URI are good, so the error goes back there, with no code
        assert found.get("error") == error and "code" not in found, reply.text
        assert reply.headers["location"].startswith(REDIRECT) and found["state"] == "s1"
        assert scope.split()[-1] in found.get("error_description", "")
    still_granting(world)


# --- Host: the resource server's own address, never the header's ------------------------------------------

def _raw(url: str, method: str, path: str, host: str) -> tuple[int, dict[str, str], bytes]:
    with RawHTTP(url) as wire:
        body = b"" if method == "GET" else json.dumps(initialize()).encode()
        head = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Accept: application/json, text/event-stream"]
        if body:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        wire.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        return wire.response()


HOSTS = [  # (what, Host header ({port}: the server's), the name the server's address is given with)
    ("userinfo before the host", "evil@127.0.0.1:{port}", "127.0.0.1"),
    ("a path after the port", "127.0.0.1:{port}/evil", "127.0.0.1"),
    ("another port", "127.0.0.1:1", "127.0.0.1"),
    ("a quote after the port", '127.0.0.1:{port}", error="owned', "127.0.0.1"),
    ("the server's own address", "127.0.0.1:{port}", "127.0.0.1"),
    ("the server's other loopback name", "localhost:{port}", "localhost"),
]


@pytest.mark.parametrize("host, name", [row[1:] for row in HOSTS], ids=[row[0] for row in HOSTS])
def test_the_resource_metadata_and_the_challenge_name_the_server_by_its_own_address(world, host, name):
    port = urlsplit(world.files.url).port
    host = host.format(port=port)
    resource = f"http://{name}:{port}/mcp"
    status, _, body = _raw(world.files.url, "GET", PRM_PATH, host)
    assert status == 200 and json.loads(body)["resource"] == resource, body
    status, headers, body = _raw(world.files.url, "POST", "/mcp", host)
    challenge = bearer_challenge(headers)
    assert status == 401 and challenge is not None, (status, headers, body)
    assert challenge["resource_metadata"] == f"http://{name}:{port}{PRM_PATH}", headers
    assert set(challenge) == {"resource_metadata", "scope"}, challenge  # nothing smuggled in
    assert not any(word in headers["www-authenticate"] for word in ("evil", "owned")), headers
    still_granting(world)


# --- registration: JSON only, so no web page can register clients cross-site ---------------------------

CONTENT_TYPES = [  # (what, Content-Type of a registration whose body is good JSON, HTTP status)
    ("text/plain (what a cross-site form may send)", "text/plain", 400),
    ("a form (what a cross-site form may send)", "application/x-www-form-urlencoded", 400),
    ("no Content-Type at all", None, 400),
    ("application/json with a charset", "application/json; charset=utf-8", 201),
]


@pytest.mark.parametrize("content_type, status", [row[1:] for row in CONTENT_TYPES],
                         ids=[row[0] for row in CONTENT_TYPES])
def test_registration_takes_only_a_json_body(world, content_type, status):
    body = json.dumps({"client_name": "from a web page", "redirect_uris": [REDIRECT],
                       "token_endpoint_auth_method": "none"}).encode()
    reply = world.http.post(f"{world.auth.url}/register", content=body,
                            headers={"Content-Type": content_type} if content_type else {})
    assert reply.status_code == status, reply.text
    if status == 201:
        assert reply.json()["client_id"]
    else:  # RFC 7591 §3.2.2: 400, and nothing registered
        assert reply.json()["error"] == "invalid_client_metadata" and "client_id" not in reply.json()
        assert "application/json" in reply.json()["error_description"]
    still_granting(world)


# --- framing: no page of the authorization server can be put in another site's frame -------------------

def _expired_consent(w: World) -> httpx.Response:
    return w.http.post(f"{w.consenting.url}/authorize/consent", data={"consent": "gone", "decision": "approve"})


PAGES = [  # (what, how the page is fetched, its status)
    ("the consent page", lambda w: authorize(w.http, w.consenting.url, VICTIM, resource=w.files.url), 200),
    ("the error page of /authorize", lambda w: authorize(w.http, w.consenting.url, "nobody"), 400),
    ("the error page of an expired consent", _expired_consent, 400),
]


@pytest.mark.parametrize("fetch, status", [row[1:] for row in PAGES], ids=[row[0] for row in PAGES])
def test_every_html_page_refuses_to_be_framed(world, fetch, status):
    page = fetch(world)
    assert page.status_code == status and page.headers["content-type"].startswith("text/html"), page.text
    assert page.headers.get("x-frame-options") == "DENY", page.headers
    assert "frame-ancestors 'none'" in page.headers.get("content-security-policy", ""), page.headers


# --- bounds: a flood fills its own share, never evicts what others hold ------------------------------------

FLOOD = 1001  # one more than the 1,000 entries of each table the server once kept in all, oldest first out


def flood_registrations(http: httpx.Client, issuer: str) -> list[httpx.Response]:
    replies = []
    for _ in range(FLOOD):
        replies.append(register(http, issuer))
        if replies[-1].status_code != 201:
            break
    return replies


def pre_registered_client_survives(http: httpx.Client, issuer: str) -> None:
    replies = flood_registrations(http, issuer)
    assert "code" in answer(authorize(http, issuer, VICTIM)), "the pre-registered client is gone"
    assert replies[0].status_code == 201


def earlier_registration_survives(http: httpx.Client, issuer: str) -> None:
    first = register(http, issuer).json()["client_id"]
    replies = flood_registrations(http, issuer)
    assert "code" in answer(authorize(http, issuer, first)), "the first registered client is gone"
    refused = replies[-1]  # the bound is reached, and the one beyond it is refused, with a reason
    assert refused.status_code == 503 and refused.json()["error"] == "temporarily_unavailable", refused.text
    assert "registered clients" in refused.json()["error_description"]


def refresh_token_survives(http: httpx.Client, issuer: str) -> None:
    victim = grant(http, issuer, VICTIM, VICTIM_SECRET)
    attacker = register(http, issuer, grant_types=["authorization_code", "refresh_token"]).json()["client_id"]
    for _ in range(FLOOD):
        assert "refresh_token" in grant(http, issuer, attacker, None)
    reply = refresh(http, issuer, VICTIM, VICTIM_SECRET, victim["refresh_token"])
    assert reply.status_code == 200 and reply.json()["access_token"], reply.text


def code_survives(http: httpx.Client, issuer: str) -> None:
    verifier = secrets.token_urlsafe(48)
    code = answer(authorize(http, issuer, VICTIM, verifier=verifier))["code"]
    attacker = register(http, issuer).json()["client_id"]
    for _ in range(FLOOD):
        assert "code" in answer(authorize(http, issuer, attacker))
    reply = http.post(f"{issuer}/token", auth=(VICTIM, VICTIM_SECRET), data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier})
    assert reply.status_code == 200 and reply.json()["access_token"], reply.text


FLOODS: list[tuple[str, Callable[[httpx.Client, str], None]]] = [
    ("a thousand registrations leave the pre-registered client", pre_registered_client_survives),
    ("registrations past the bound are refused and evict no earlier client", earlier_registration_survives),
    ("a thousand grants by another client leave a victim's refresh token", refresh_token_survives),
    ("a thousand authorizations by another client leave a victim's unredeemed code", code_survives),
]


@pytest.mark.parametrize("attack", [row[1] for row in FLOODS], ids=[row[0] for row in FLOODS])
def test_a_flood_of_clients_or_grants_evicts_nothing_of_anyone_else(attack):
    with launch(_auth_argv("--auto-approve")) as auth, httpx.Client(trust_env=False, timeout=30) as http:
        attack(http, auth.url)
        assert "code" in answer(authorize(http, auth.url, OTHER))  # and the server still grants


# --- sessions: a legacy session answers only the identity that opened it -----------------------------------

def _token(w: World, client: str, secret: str) -> str:
    return grant(w.http, w.auth.url, client, secret, resource=w.files.url)["access_token"]


def _open(w: World, token: str) -> str:
    reply = w.http.post(w.files.url, json=initialize(), headers={**ACCEPT_BOTH, "Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    w.http.post(w.files.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=_in(session, token))
    return session


def _in(session: str, token: str) -> dict[str, str]:
    return {**ACCEPT_BOTH, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25",
            "Authorization": f"Bearer {token}"}


def _post(w: World, session: str, token: str) -> tuple[int, bytes]:
    reply = w.http.post(w.files.url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                        headers=_in(session, token))
    return reply.status_code, reply.content


def _listen(w: World, session: str, token: str) -> tuple[int, bytes]:
    with w.http.stream("GET", w.files.url, headers={**_in(session, token), "Accept": "text/event-stream"}) as reply:
        return reply.status_code, reply.read() if reply.status_code != 200 else b"(a stream)"


def _delete(w: World, session: str, token: str) -> tuple[int, bytes]:
    reply = w.http.delete(w.files.url, headers=_in(session, token))
    return reply.status_code, reply.content


HIJACKS = [  # (what another client's token does with the victim's session id, how)
    ("a request on it", _post),
    ("its GET stream", _listen),
    ("DELETE it", _delete),
]


@pytest.mark.parametrize("use", [row[1] for row in HIJACKS], ids=[row[0] for row in HIJACKS])
def test_another_clients_token_cannot_use_a_legacy_session_it_did_not_open(world, use):
    mine, theirs = _token(world, VICTIM, VICTIM_SECRET), _token(world, OTHER, OTHER_SECRET)
    session = _open(world, mine)
    status, body = use(world, session, theirs)
    assert status == 404, body
    assert (status, body) == use(world, "0" * 32, theirs)  # word for word an unknown session: nothing says it exists
    reply = world.http.post(world.files.url, json={"jsonrpc": "2.0", "id": 10, "method": "tools/list"},
                            headers=_in(session, mine))
    assert reply.status_code == 200 and reply.json()["result"]["tools"], reply.text  # the owner's session lives on
    assert _post(world, session, _token(world, VICTIM, VICTIM_SECRET))[0] == 200  # a new token of the same client


# --- scope policy: a malformed tool name is the MCP layer's -32602, never a crash -------------------------

NAMES = [  # (what, the tools/call name)
    ("a list", ["write_file"]),
    ("an object", {"name": "write_file"}),
    ("a number", 7),
]


@pytest.mark.parametrize("name", [row[1] for row in NAMES], ids=[row[0] for row in NAMES])
def test_a_tools_call_whose_name_is_not_a_string_is_invalid_params(world, name):
    token = _token(world, VICTIM, VICTIM_SECRET)
    body = modern_request("tools/call", 1, {"name": "write_file", "arguments": {"path": "x.md", "content": "x"}})
    headers = modern_headers(body, Authorization=f"Bearer {token}")
    body["params"]["name"] = name
    headers.pop("Mcp-Name", None)  # a routing header would not match a name that is not a string
    modern = world.http.post(world.files.url, json=body, headers=headers)
    assert modern.status_code == 400 and modern.json()["error"]["code"] == -32602, modern.text
    session = _open(world, token)
    legacy = world.http.post(world.files.url, headers=_in(session, token), json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": {}}})
    assert legacy.status_code == 200 and legacy.json()["error"]["code"] == -32602, legacy.text
    assert not (world.root / "x.md").exists()
    assert _post(world, session, token)[0] == 200  # still serving
