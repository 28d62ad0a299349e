"""Hostile and mistaken input to the authorization parts, one row each: the RFC's error, and the servers keep serving.

Authorization server (servers/auth.py): RFC 6749 §5.2 / OAuth 2.1 error codes at the token endpoint,
§4.1.2.1 at the authorization endpoint (an error goes back to a redirect URI only once the client and
the URI are known to be good), RFC 8707 ``invalid_target``, RFC 7591 §3.2.2 at registration.
Resource server (``--auth``): RFC 6750 §3.1 ``invalid_token`` 401, ``insufficient_scope`` 403,
``invalid_request`` 400. After every row, a good request succeeds against the same process.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey

from auth_helpers import REDIRECT
from http_helpers import modern_headers, modern_request
from mcplab.auth.wire import bearer_challenge
from mcplab.server.streamable_http import launch

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "servers"
CLIENT, SECRET = "lab-client", "lab-secret"
pytestmark = [pytest.mark.http, pytest.mark.subprocess]


class World:
    """Two authorization servers (the second with two-second codes and tokens) and a server trusting each."""

    def __init__(self, main, short, files, weather) -> None:
        self.main, self.short, self.files, self.weather = main, short, files, weather
        self.http = httpx.Client(trust_env=False, timeout=30)

    def code(self, issuer: str, *, verifier: str, resource: str, scope: str = "files:read", **extra: str) -> httpx.Response:
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        params = {"response_type": "code", "client_id": CLIENT, "redirect_uri": REDIRECT, "state": "s1",
                  "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource, "scope": scope,
                  **extra}
        return self.http.get(f"{issuer}/authorize", params={k: v for k, v in params.items() if v is not None})

    def redeem(self, issuer: str, code: str, *, verifier: str, resource: str, redirect: str = REDIRECT,
               secret: str = SECRET) -> httpx.Response:
        return self.http.post(f"{issuer}/token", auth=(CLIENT, secret), data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "code_verifier": verifier,
            "resource": resource})

    def token(self, issuer: str | None = None, resource: str | None = None, scope: str = "files:read") -> str:
        issuer, resource = issuer or self.main.url, resource or self.files.url
        verifier = secrets.token_urlsafe(48)
        code = query(self.code(issuer, verifier=verifier, resource=resource, scope=scope))["code"]
        reply = self.redeem(issuer, code, verifier=verifier, resource=resource)
        assert reply.status_code == 200, reply.text
        return reply.json()["access_token"]

    def call(self, url: str, token: str | None, method: str = "tools/list", params: dict | None = None,
             query_token: bool = False) -> httpx.Response:
        body = modern_request(method, 1, params)
        headers = modern_headers(body, **({"Authorization": f"Bearer {token}"} if token and not query_token else {}))
        return self.http.post(url, json=body, headers=headers, params={"access_token": token} if query_token else None)


def query(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302, response.text
    return dict(parse_qsl(urlsplit(response.headers["location"]).query))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    shutil.copytree(SERVERS / "samples", root, dirs_exist_ok=True)
    client = ["--client", f"{CLIENT}:{SECRET}:{REDIRECT}", "--auto-approve"]
    with launch([sys.executable, str(SERVERS / "auth.py"), *client]) as main, \
         launch([sys.executable, str(SERVERS / "auth.py"), *client, "--code-ttl", "2", "--access-ttl", "2"]) as short, \
         launch([sys.executable, str(SERVERS / "files.py"), "--root", str(root), "--writable", "--auth", main.url]) as files, \
         launch([sys.executable, str(SERVERS / "weather.py"), "--auth", short.url]) as weather:
        state = World(main, short, files, weather)
        yield state
        state.http.close()


# --- the authorization server -------------------------------------------------------------------------------

def wrong_verifier(w: World) -> httpx.Response:
    code = query(w.code(w.main.url, verifier="a" * 43, resource=w.files.url))["code"]
    return w.redeem(w.main.url, code, verifier="b" * 43, resource=w.files.url)


def reused_code(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.main.url, verifier=verifier, resource=w.files.url))["code"]
    assert w.redeem(w.main.url, code, verifier=verifier, resource=w.files.url).status_code == 200
    return w.redeem(w.main.url, code, verifier=verifier, resource=w.files.url)


def expired_code(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.short.url, verifier=verifier, resource=w.weather.url, scope="weather:read"))["code"]
    time.sleep(2.2)  # the short server's codes live two seconds
    return w.redeem(w.short.url, code, verifier=verifier, resource=w.weather.url)


def foreign_redirect_at_token(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.main.url, verifier=verifier, resource=w.files.url))["code"]
    return w.redeem(w.main.url, code, verifier=verifier, resource=w.files.url, redirect="http://127.0.0.1:1/elsewhere")


def other_resource_at_token(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.main.url, verifier=verifier, resource=w.files.url))["code"]
    return w.redeem(w.main.url, code, verifier=verifier, resource=w.weather.url)


def wrong_secret(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.main.url, verifier=verifier, resource=w.files.url))["code"]
    return w.redeem(w.main.url, code, verifier=verifier, resource=w.files.url, secret="not-the-secret")


def non_ascii_secret(w: World) -> httpx.Response:
    verifier = secrets.token_urlsafe(48)
    code = query(w.code(w.main.url, verifier=verifier, resource=w.files.url))["code"]
    return w.redeem(w.main.url, code, verifier=verifier, resource=w.files.url, secret="密码")


def oversized(w: World) -> httpx.Response:
    return w.http.post(f"{w.main.url}/token", content=b"grant_type=authorization_code&code=" + b"x" * 200_000,
                       headers={"Content-Type": "application/x-www-form-urlencoded"})


def unknown_client(w: World) -> httpx.Response:
    return w.http.post(f"{w.main.url}/token", data={"grant_type": "authorization_code", "code": "x",
                                                    "client_id": "nobody", "code_verifier": "v" * 43})


def unsupported_grant(w: World) -> httpx.Response:
    return w.http.post(f"{w.main.url}/token", auth=(CLIENT, SECRET), data={"grant_type": "password", "username": "u",
                                                                            "password": "p"})


TOKEN_ENDPOINT = {  # name: (what is sent, HTTP status, OAuth error)
    "wrong PKCE verifier": (wrong_verifier, 400, "invalid_grant"),
    "reused code": (reused_code, 400, "invalid_grant"),
    "expired code": (expired_code, 400, "invalid_grant"),
    "foreign redirect URI at the token endpoint": (foreign_redirect_at_token, 400, "invalid_grant"),
    "another resource than the code was for": (other_resource_at_token, 400, "invalid_grant"),
    "wrong client secret": (wrong_secret, 401, "invalid_client"),
    "a client secret that is not ASCII": (non_ascii_secret, 401, "invalid_client"),
    "an oversized request": (oversized, 413, "invalid_request"),
    # RFC 6749 §5.2: 401 when the client authenticated with the Authorization header, else 400
    "unknown client": (unknown_client, 400, "invalid_client"),
    "unsupported grant type": (unsupported_grant, 400, "unsupported_grant_type"),
}


@pytest.mark.parametrize("send, status, error", TOKEN_ENDPOINT.values(), ids=list(TOKEN_ENDPOINT))
def test_the_token_endpoint_answers_bad_input_with_the_rfc_error(world, send, status, error):
    reply = send(world)
    assert (reply.status_code, reply.json().get("error")) == (status, error), reply.text
    assert world.token()  # and the server still issues tokens


def test_a_reused_code_also_revokes_what_its_first_use_obtained(world):
    verifier = secrets.token_urlsafe(48)
    code = query(world.code(world.main.url, verifier=verifier, resource=world.files.url))["code"]
    first = world.redeem(world.main.url, code, verifier=verifier, resource=world.files.url).json()
    assert world.redeem(world.main.url, code, verifier=verifier, resource=world.files.url).json()["error"] == "invalid_grant"
    refreshed = world.http.post(f"{world.main.url}/token", auth=(CLIENT, SECRET),
                                data={"grant_type": "refresh_token", "refresh_token": first["refresh_token"]})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant"  # OAuth 2.1 §4.1.3


AUTHORIZE_REDIRECTED = {  # errors sent back to the (registered) redirect URI: name → (extra params, error)
    "no PKCE challenge": ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
    "plain PKCE": ({"code_challenge_method": "plain"}, "invalid_request"),
    "resource with a fragment": ({"resource": "http://127.0.0.1:1/mcp#part"}, "invalid_target"),
    "resource that is not a URI": ({"resource": "mcp.example.com"}, "invalid_target"),
    "unsupported response type": ({"response_type": "token"}, "unsupported_response_type"),
}


@pytest.mark.parametrize("extra, error", AUTHORIZE_REDIRECTED.values(), ids=list(AUTHORIZE_REDIRECTED))
def test_the_authorization_endpoint_redirects_its_errors_to_the_registered_uri(world, extra, error):
    params = {"resource": world.files.url, **extra}
    reply = world.code(world.main.url, verifier=secrets.token_urlsafe(48), **params)
    answer = query(reply)
    assert reply.headers["location"].startswith(REDIRECT) and answer["error"] == error and answer["state"] == "s1"
    assert answer["iss"] == world.main.url and "code" not in answer  # RFC 9207: iss on error responses too
    assert world.token()


@pytest.mark.parametrize("client_id, redirect", [("lab-client", "http://evil.example/cb"), ("nobody", REDIRECT)],
                         ids=["foreign redirect URI", "unknown client"])
def test_the_authorization_endpoint_never_redirects_to_an_unchecked_uri(world, client_id, redirect):
    reply = world.http.get(f"{world.main.url}/authorize", params={
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "code_challenge": "c" * 43,
        "code_challenge_method": "S256", "state": "s1", "resource": world.files.url})
    assert reply.status_code == 400 and "location" not in reply.headers
    assert ("invalid_client" if client_id == "nobody" else "invalid_request") in reply.text
    assert world.token()


@pytest.mark.parametrize("body, error", [
    ({"client_name": "x", "redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),  # not loopback, not https
    ({"client_name": "x", "redirect_uris": []}, "invalid_redirect_uri"),
    ({"client_name": "x", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"},
     "invalid_client_metadata"),
    (b"not json", "invalid_client_metadata"),
    ([1, 2], "invalid_client_metadata"),
], ids=["http non-loopback redirect", "no redirect", "unsupported auth method", "not JSON", "not an object"])
def test_registration_refuses_bad_metadata(world, body, error):
    content = body if isinstance(body, bytes) else None
    reply = world.http.post(f"{world.main.url}/register", content=content, json=None if content else body,
                            headers={"Content-Type": "application/json"})
    assert reply.status_code == 400 and reply.json()["error"] == error, reply.text
    good = world.http.post(f"{world.main.url}/register", json={"client_name": "ok", "redirect_uris": [REDIRECT]})
    assert good.status_code == 201 and good.json()["client_id"]


# --- the resource server --------------------------------------------------------------------------------------

def tampered(token: str) -> str:
    head, payload, signature = token.split(".")
    flipped = payload[:10] + ("A" if payload[10] != "A" else "B") + payload[11:]
    return ".".join([head, flipped, signature])


def forged(w: World) -> str:
    """A token with every claim right, signed by a key the authorization server never had."""
    now = int(time.time())
    return jwt.encode({"alg": "ES256", "typ": "at+jwt"}, {
        "iss": w.main.url, "aud": w.files.url, "exp": now + 60, "iat": now, "sub": "student", "client_id": CLIENT,
        "jti": "x", "scope": "files:read files:write"}, ECKey.generate_key("P-256"))


def expired_token(w: World) -> httpx.Response:
    token = w.token(w.short.url, w.weather.url, "weather:read")
    time.sleep(2.2)  # the short server's tokens live two seconds
    return w.call(w.weather.url, token)


RESOURCE_SERVER = {  # name: (request, status, OAuth error or None, what the description must say)
    "no token": (lambda w: w.call(w.files.url, None), 401, None, "needs an access token"),
    "token for another audience": (lambda w: w.call(w.files.url, w.token(resource=w.weather.url)), 401,
                                   "invalid_token", "not for this server"),
    "token from another authorization server": (lambda w: w.call(w.files.url, w.token(w.short.url, w.files.url)), 401,
                                                "invalid_token", "signature"),
    "expired token": (expired_token, 401, "invalid_token", "expired"),
    "tampered token": (lambda w: w.call(w.files.url, tampered(w.token())), 401, "invalid_token", "signature"),
    "forged signature": (lambda w: w.call(w.files.url, forged(w)), 401, "invalid_token", "signature"),
    "missing scope": (lambda w: w.call(w.files.url, w.token(), "tools/call",
                                       {"name": "write_file", "arguments": {"path": "x.txt", "content": "x"}}),
                      403, "insufficient_scope", "files:write"),
    "token in the query string": (lambda w: w.call(w.files.url, w.token(), query_token=True), 400,
                                  "invalid_request", "query string"),
}


@pytest.mark.parametrize("send, status, error, says", RESOURCE_SERVER.values(), ids=list(RESOURCE_SERVER))
def test_the_resource_server_answers_bad_tokens_with_the_rfc_error(world, send, status, error, says):
    reply = send(world)
    challenge = bearer_challenge(reply.headers)
    assert reply.status_code == status and challenge is not None, reply.text
    assert challenge.get("error") == error and says in reply.json()["error_description"]
    assert challenge["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
    if error == "insufficient_scope":  # every scope the operation needs, in one challenge (2026-07-28)
        assert challenge["scope"] == "files:read files:write"
    assert not (ROOT / "x.txt").exists()
    good = world.call(world.files.url, world.token())
    assert good.status_code == 200 and good.json()["result"]["tools"], good.text  # still serving


def test_the_consent_page_shows_a_hostile_client_name_as_text(tmp_path):
    hostile = '<script>alert("owned")</script>'
    with launch([sys.executable, str(SERVERS / "auth.py")]) as authority, httpx.Client(trust_env=False) as http:
        client_id = http.post(f"{authority.url}/register", json={"client_name": hostile, "redirect_uris": [REDIRECT],
                                                                 "token_endpoint_auth_method": "none"}).json()["client_id"]
        params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
                  "code_challenge": "c" * 43, "code_challenge_method": "S256", "scope": "files:read"}
        page = http.get(f"{authority.url}/authorize", params=params)
        assert page.status_code == 200 and hostile not in page.text
        assert "&lt;script&gt;" in page.text and "127.0.0.1:33418" in page.text  # the redirect host, shown plainly
        # a scope the server does not know never reaches the page: it goes back to the client as invalid_scope
        refused = http.get(f"{authority.url}/authorize", params={**params, "scope": "<b>x</b>"})
        assert refused.status_code == 302 and "error=invalid_scope" in refused.headers["location"]
        assert http.get(f"{authority.url}/.well-known/oauth-authorization-server").status_code == 200


def test_a_401_challenge_names_the_scope_the_request_needs(world):
    # 2025-11-25 "basic/authorization", Scope Selection Strategy: the server SHOULD name the scope needed in
    # its WWW-Authenticate challenge, so a client asks for no more and no less.
    challenge = bearer_challenge(world.call(world.files.url, None).headers)
    assert challenge is not None and challenge["scope"] == "files:read"


def test_a_tool_that_needs_a_scope_says_so_in_its_description(world):
    tools = world.call(world.files.url, world.token()).json()["result"]["tools"]
    described = {tool["name"]: tool["description"] for tool in tools}
    assert "files:write scope" in described["write_file"]
    assert "scope" not in described["read_file"]  # reading needs only what every token has


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.org"])
def test_the_authorization_server_refuses_to_listen_beyond_this_machine(host):
    reply = subprocess.run([sys.executable, str(SERVERS / "auth.py"), "--host", host, "--port", "0"],
                           capture_output=True, text=True, timeout=60)
    assert reply.returncode == 2, reply.stderr  # argparse's usage error, before any socket is bound
    assert f"this authorization server listens on this machine only, not on {host}" in reply.stderr
