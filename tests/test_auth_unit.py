"""The pure parts of mcplab/auth: challenges, masks, discovery order, the RFC 9207 table, bearer checks.

Every rule is a row; each wrong input is expected to fail with its own reason. Tokens here are minted
with joserfc from keys made in the test, the way servers/auth.py mints them (RFC 9068 JWTs).
"""

from __future__ import annotations

import json
import time

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from mcplab.auth import discovery
from mcplab.auth.resource import (
    Grant, ResourceServer, ScopePolicy, TokenRejected, prm_path, protected_resource_metadata, validate_bearer,
)
from mcplab.auth.wire import (
    MASK, basic_credentials, bearer_challenge, challenge, mask_form, mask_headers, mask_json, mask_url, parse_challenges,
)

ISSUER, RESOURCE = "http://127.0.0.1:9000", "http://127.0.0.1:8000/mcp"


# --- WWW-Authenticate ---------------------------------------------------------------------------------------

def test_a_challenge_round_trips_through_the_parser():
    header = challenge(error="insufficient_scope", scope="files:read files:write",
                       resource_metadata="http://h/.well-known/oauth-protected-resource/mcp",
                       error_description='needs "write" \\ permission')
    assert parse_challenges(header) == [("bearer", {
        "error": "insufficient_scope", "scope": "files:read files:write",
        "resource_metadata": "http://h/.well-known/oauth-protected-resource/mcp",
        "error_description": 'needs "write" \\ permission'})]


@pytest.mark.parametrize("header, expected", [
    ('Bearer scope="mcp:basic", resource_metadata="http://x/prm"', {"scope": "mcp:basic", "resource_metadata": "http://x/prm"}),
    ('Basic realm="x", Bearer error="invalid_token"', {"error": "invalid_token"}),  # the second challenge
    ("bearer error=invalid_token", {"error": "invalid_token"}),                     # token form, scheme in lower case
    ('Bearer realm="a,b", scope="x"', {"realm": "a,b", "scope": "x"}),              # a comma inside quotes
    ("Bearer", {}),
], ids=["quoted", "two-challenges", "token-value", "comma-in-quotes", "bare"])
def test_the_bearer_challenge_is_read_from_any_plausible_header(header, expected):
    assert bearer_challenge({"www-authenticate": header}) == expected


@pytest.mark.parametrize("header", ["", '"', "Bearer ====", "Bearer scope=\"unterminated", "\x00\x01",
                                    "Bearer " + "a=b, " * 5000, "==="])
def test_a_hostile_header_never_raises(header):
    assert isinstance(parse_challenges(header), list)


def test_no_www_authenticate_header_means_no_challenge():
    assert bearer_challenge({"content-type": "application/json"}) is None


def test_basic_credentials_form_encode_each_part_first():
    # RFC 6749 §2.3.1: "a:b" as an id becomes a%3Ab before base64
    assert basic_credentials("a:b", "s p") == "Basic YSUzQWI6cyUyMHA="


# --- masks -----------------------------------------------------------------------------------------------

def test_masks_hide_every_secret_and_keep_the_rest():
    form = mask_form("grant_type=authorization_code&code=abc&code_verifier=v&client_secret=s&resource=http%3A%2F%2Fh%2Fmcp")
    assert "abc" not in form and "=v&" not in form and "=s&" not in form
    assert form.count(MASK) == 3 and "resource=http://h/mcp" in form and "grant_type=authorization_code" in form
    body = json.loads(mask_json('{"access_token":"t1","refresh_token":"r1","token_type":"Bearer","expires_in":5}'))
    assert body == {"access_token": MASK, "refresh_token": MASK, "token_type": "Bearer", "expires_in": 5}
    assert mask_headers({"Authorization": "Bearer t1", "Accept": "x"}) == {"Authorization": f"Bearer {MASK}", "Accept": "x"}
    assert mask_url("http://c/cb?code=abc&state=s1&iss=http%3A%2F%2Fa") == f"http://c/cb?code={MASK}&state=s1&iss=http://a"
    assert mask_headers({"location": "http://c/cb?code=abc"})["location"] == f"http://c/cb?code={MASK}"


def test_masks_leave_bodies_without_secrets_byte_for_byte():
    body = '{"jsonrpc":"2.0","id":1,"result":{}}'
    assert mask_json(body) == body and mask_json("not json") == "not json"


# --- discovery ---------------------------------------------------------------------------------------------

def test_protected_resource_metadata_is_looked_for_in_the_spec_order():
    assert discovery.prm_urls("https://example.com/public/mcp", "https://example.com/custom.json") == [
        "https://example.com/custom.json",
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource"]
    assert discovery.prm_urls("https://example.com") == ["https://example.com/.well-known/oauth-protected-resource"]
    assert prm_path("/mcp") == "/.well-known/oauth-protected-resource/mcp"


def test_issuer_metadata_is_looked_for_in_the_spec_order():
    assert discovery.as_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration"]
    assert discovery.as_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration"]


@pytest.mark.parametrize("resource, matches", [
    ("http://127.0.0.1:8000/mcp", True),
    ("http://127.0.0.1:8000", True),                 # the root names every path on the origin
    ("http://127.0.0.1:8000/", True),
    ("https://evil.example.com/mcp", False),         # another origin: the auth/resource-mismatch attack
    ("http://127.0.0.1:8001/mcp", False),            # another port is another server
    ("https://127.0.0.1:8000/mcp", False),           # another scheme
    ("http://127.0.0.1:8000/other", False),          # a sibling path
    ("http://127.0.0.1:8000/mcp2", False),           # a prefix that is not a parent
    ("http://127.0.0.1:8000/mcp#frag", False),       # RFC 8707: no fragment
    (None, False), (42, False),
])
def test_the_metadata_must_name_this_server(resource, matches):
    assert discovery.resource_matches(resource, "http://127.0.0.1:8000/mcp") is matches


def test_scope_selection_and_the_step_up_union():
    assert discovery.select_scope("a b", ["c"]) == "a b"          # the challenge is authoritative
    assert discovery.select_scope(None, ["c", "d"]) == "c d"      # else everything the metadata lists
    assert discovery.select_scope(None, None) is None             # else no scope parameter at all
    assert discovery.union("mcp:basic", "mcp:write mcp:basic") == "mcp:basic mcp:write"
    assert discovery.union(None, None) is None


@pytest.mark.parametrize("iss, advertised, accepted", [
    (ISSUER, True, True),                 # advertised, present, equal
    (None, True, False),                  # advertised, absent: reject
    (ISSUER, False, True),                # not advertised, present: still compared
    ("https://evil.example.com", False, False),
    (None, False, True),                  # neither: proceed
    (ISSUER + "/", True, False),          # no normalisation: a trailing slash is another issuer
    (ISSUER.upper(), True, False),        # no case folding
    ("http://127.0.0.1:9000:80", True, False),
])
def test_the_rfc9207_table(iss, advertised, accepted):
    assert (discovery.check_iss(iss, ISSUER, advertised) is None) is accepted


# --- the resource server's checks ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def key():
    return ECKey.generate_key("P-256", parameters={"alg": "ES256"}, auto_kid=True)


def mint(key, *, typ="at+jwt", alg="ES256", **overrides):
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "exp": now + 60, "iat": now, "sub": "student", "client_id": "c1",
              "jti": "j1", "scope": "files:read"}
    claims.update(overrides)
    return jwt.encode({"alg": alg, "typ": typ}, {k: v for k, v in claims.items() if v is not None}, key)


def test_a_good_token_gives_its_grant(key):
    grant = validate_bearer(mint(key), keys=KeySet([key]), issuer=ISSUER, audience=RESOURCE)
    assert grant == Grant("student", "c1", frozenset({"files:read"}), RESOURCE, ISSUER, grant.expires_at)


def tamper(token: str) -> str:
    head, payload, signature = token.split(".")
    return ".".join([head, payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1], signature])


WRONG_TOKENS = {
    "signed by another key": (lambda key: mint(ECKey.generate_key("P-256")), "signature"),
    "tampered payload": (lambda key: tamper(mint(key)), "signature"),
    "not a JWT": (lambda key: "opaque-token", "signature"),
    "an ID token, not an access token": (lambda key: mint(key, typ="JWT"), "typ"),
    "another issuer": (lambda key: mint(key, iss="http://127.0.0.1:9999"), "issued by"),
    "expired": (lambda key: mint(key, exp=int(time.time()) - 1), "expired"),
    "no expiry": (lambda key: mint(key, exp=None), "no expiry"),
    "another audience": (lambda key: mint(key, aud="http://127.0.0.1:8001/mcp"), "not for this server"),
    "no audience": (lambda key: mint(key, aud=None), "not for this server"),
    "audience list without us": (lambda key: mint(key, aud=["http://a/mcp", "http://b/mcp"]), "not for this server"),
}


@pytest.mark.parametrize("make, reason", WRONG_TOKENS.values(), ids=list(WRONG_TOKENS))
def test_every_wrong_token_is_refused_with_its_own_reason(key, make, reason):
    with pytest.raises(TokenRejected) as refused:
        validate_bearer(make(key), keys=KeySet([key]), issuer=ISSUER, audience=RESOURCE)
    assert refused.value.error == "invalid_token" and refused.value.status == 401
    assert reason in refused.value.description


def test_an_audience_list_that_names_us_is_accepted(key):
    grant = validate_bearer(mint(key, aud=["http://a/mcp", RESOURCE]), keys=KeySet([key]), issuer=ISSUER,
                            audience=RESOURCE)
    assert grant.audience == RESOURCE


def test_a_scope_policy_adds_a_tools_scope_to_its_calls_only():
    policy = ScopePolicy(base=("files:read",), tools={"write_file": ("files:write",)})
    assert policy.needed({"method": "tools/list"}) == ("files:read",)
    assert policy.needed({"method": "tools/call", "params": {"name": "write_file"}}) == ("files:read", "files:write")
    assert policy.needed({"method": "tools/call", "params": {"name": "read_file"}}) == ("files:read",)
    assert policy.needed([{"method": "ping"}, {"method": "tools/call", "params": {"name": "write_file"}}]) == (
        "files:read", "files:write")
    assert policy.needed({"method": "tools/call", "params": "write_file"}) == ("files:read",)  # malformed: base only
    assert policy.all() == ("files:read", "files:write")


@pytest.mark.parametrize("name", [["write_file"], {"name": "write_file"}, 7, None],
                         ids=["a list", "an object", "a number", "null"])
def test_a_tools_call_name_that_is_not_a_string_needs_the_base_scopes_only(name):
    policy = ScopePolicy(base=("files:read",), tools={"write_file": ("files:write",)})
    assert policy.needed({"method": "tools/call", "params": {"name": name}}) == ("files:read",)
    assert policy.needed([{"method": "tools/call", "params": {"name": name}}]) == ("files:read",)


@pytest.mark.parametrize("host, origin", [
    (None, "http://127.0.0.1:8000"), ("localhost", "http://localhost:8000"), ("::1", "http://[::1]:8000"),
    ("evil.example", "http://127.0.0.1:8000"), ("evil@127.0.0.1", "http://127.0.0.1:8000"),
], ids=["its own name", "another of its names", "IPv6 loopback", "a foreign name", "userinfo"])
def test_a_resource_server_names_itself_by_its_own_address_only(host, origin):
    server = ResourceServer(ISSUER, scheme="http", port=8000, path="/mcp", hosts=["127.0.0.1", "localhost", "::1"])
    assert server.resource(host) == origin + "/mcp"
    assert server.metadata_url(host) == origin + "/.well-known/oauth-protected-resource/mcp"


def test_the_protected_resource_metadata_document():
    document = protected_resource_metadata(RESOURCE, [ISSUER], ("files:read",), "Files")
    assert document == {"resource": RESOURCE, "authorization_servers": [ISSUER], "bearer_methods_supported": ["header"],
                        "scopes_supported": ["files:read"], "resource_name": "Files"}


# --- the flow in a trace -----------------------------------------------------------------------------------

def test_an_authorization_exchange_reads_as_such_in_every_view():
    from mcplab.notebook.schema_check import check_frames
    from mcplab.trace import Trace
    from mcplab.trace.http_text import render_http

    trace = Trace()
    url = "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
    trace.record("c2s", "http", "", None, http={"method": "GET", "status": None, "headers": {"Host": "127.0.0.1:9000"},
                                                 "url": url, "oauth": "authorization server metadata"})
    trace.record("s2c", "http", '{"issuer": "http://127.0.0.1:9000"}', None,
                 http={"method": "GET", "status": 200, "headers": {}, "url": url, "oauth": "authorization server metadata"})
    assert repr(trace) == "<Trace: 2 frames: 2 authorization exchanges>"
    assert "GET /.well-known/oauth-authorization-server" in trace.text().splitlines()[0]
    assert "authorization server metadata" in trace._repr_html_()
    assert render_http(trace.frames).startswith("GET /.well-known/oauth-authorization-server HTTP/1.1\nHost: 127.0.0.1:PORT")
    assert check_frames(trace.frames, "2025-11-25", book=object()) == {}  # OAuth, not MCP: no schema applies
    assert Trace.from_jsonl(trace.to_jsonl()).frames[1].http["oauth"] == "authorization server metadata"


# --- the authorization server's own tables and rules (servers/auth.py, loaded as a module) -----------------

@pytest.fixture(scope="module")
def authority_module():
    import importlib.util
    import sys

    from server_helpers import SERVERS

    # registered under its name while it runs: its dataclasses look their module up there
    spec = importlib.util.spec_from_file_location("mcplab_test_servers.auth", SERVERS / "auth.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


class Entry:
    def __init__(self, client_id: str, spent: bool = False) -> None:
        self.client_id, self.spent = client_id, spent


def test_a_ledger_makes_room_from_the_clients_own_entries_and_refuses_when_only_others_are_left(authority_module):
    ledger = authority_module.Ledger("entries", lambda entry: entry.spent, per_client=2, total=3)
    ledger.put("v1", Entry("victim"))
    ledger.put("f1", Entry("flood"))
    ledger.put("f2", Entry("flood"))
    ledger.put("f3", Entry("flood"))  # its own oldest goes, never the victim's
    assert "v1" in ledger and "f1" not in ledger and {"f2", "f3"} <= set(ledger.entries)
    with pytest.raises(authority_module.Full) as full:
        ledger.put("t1", Entry("third"))  # full of live entries: refused, nothing evicted
    assert full.value.error == "temporarily_unavailable" and full.value.status_code == 503
    assert "3 live entries" in full.value.description
    assert set(ledger.entries) == {"v1", "f2", "f3"}
    ledger.entries["f2"].spent = True
    ledger.put("t1", Entry("third"))  # a spent entry makes room
    assert set(ledger.entries) == {"v1", "f3", "t1"} and ledger.pop("t1").client_id == "third"
    assert "third" not in ledger.owners  # an emptied client leaves nothing behind


@pytest.mark.parametrize("uri, portless", [
    ("http://127.0.0.1:33418/callback", "http://127.0.0.1/callback"),
    ("http://[::1]:8/cb?x=1", "http://[::1]/cb?x=1"),
    ("http://127.0.0.1/callback", "http://127.0.0.1/callback"),
    ("http://127.0.0.1:33418/callback#frag", None),
    ("http://evil@127.0.0.1:33418/callback", None),
    ("http://127.0.0.1:33418@evil.example/callback", None),
    ("http://localhost:33418/callback", None),  # a name, not an IP: exact match only (RFC 8252 §8.3)
    ("https://127.0.0.1:33418/callback", None),
], ids=["IPv4", "IPv6 with a query", "no port", "a fragment", "userinfo", "a port-like userinfo", "localhost", "https"])
def test_only_a_plain_loopback_ip_redirect_uri_may_vary_its_port(authority_module, uri, portless):
    assert authority_module.without_port(uri) == portless
