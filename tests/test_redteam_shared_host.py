"""Red team, a shared host: another user of the same machine against every server a lab starts.

On a classroom hub every student's processes share one loopback interface, so "it only listens on
127.0.0.1" keeps out other machines, not classmates. Each row starts a server the way a lab does and
then plays the classmate: a second Unix user (``nobody``, run with ``setpriv``, with the standard
library only) sends it what the attack would send first. The server must answer 403 with its sentence,
write nothing, and go on serving its owner, whose same request (the control) is not refused.

The rows need root (to become another user), as CI has; elsewhere they skip with that reason.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode, urlsplit

import anyio
import httpx
import pytest

from conftest import ROOT, need
from mcplab.ecosystem import balancer, proxy
from mcplab.server.streamable_http import launch
from mcplab.server.streamable_http import owner

pytestmark = [pytest.mark.subprocess, pytest.mark.http]

SERVERS = ROOT / "servers"
PY = "python"
WEATHER = [PY, str(SERVERS / "weather.py")]
NOBODY = 65534
REFUSAL = "answers only the user who started it"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}

# What the classmate runs: one HTTP request with the standard library, printing the status and the body.
PROBE = r"""
import http.client, json, ssl, sys
url, method, path, body, headers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
scheme, _, rest = url.partition("://")
hostport = rest.split("/")[0]
if scheme == "https":
    conn = http.client.HTTPSConnection(hostport, timeout=60, context=ssl._create_unverified_context())
else:
    conn = http.client.HTTPConnection(hostport, timeout=60)
conn.request(method, path, body=body.encode() or None, headers=headers)
reply = conn.getresponse()
print(json.dumps({"status": reply.status, "body": reply.read(4096).decode("utf-8", "replace")}))
"""


def _system_python() -> str:
    return next((p for p in ("/usr/bin/python3", shutil.which("python3") or "") if p and os.access(p, os.X_OK)),
                sys.executable)


def as_user(uid: int | None, url: str, method: str = "POST", path: str | None = None, body: Any = INITIALIZE,
            headers: dict[str, str] | None = None) -> dict:
    """One request to ``url`` from user ``uid`` (None: ourselves); its status and body."""
    text = body if isinstance(body, str) else json.dumps(body)
    parts = urlsplit(url)
    argv = [_system_python(), "-c", PROBE, url, method, path or (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), text,
            json.dumps(ACCEPT if headers is None else headers)]
    if uid is not None:
        argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd="/", env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def second_user() -> None:
    need(hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("setpriv") is not None,
         "playing another user of this machine needs root and setpriv (util-linux)")
    need(Path(owner.TABLES[socket.AF_INET]).exists(), "telling users apart needs Linux's /proc/net/tcp")


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("the student's notes\n", encoding="utf-8")
    return docs


# --- every server a lab starts -----------------------------------------------------------------------------

def weather(tmp_path: Path) -> list[Any]:                      # Labs 05, 06, 07, 12
    return [launch(WEATHER)]


def weather_ipv6(tmp_path: Path) -> list[Any]:                 # the same over ::1 (the tcp6 table)
    need(socket.has_ipv6 and _ipv6_loopback(), "no IPv6 loopback here")
    return [launch(WEATHER, host="::1")]


def weather_modern(tmp_path: Path) -> list[Any]:               # Lab 06's matrix, one of its eras
    return [launch([*WEATHER, "--era", "modern"])]


def fixtures(tmp_path: Path) -> list[Any]:                     # Labs 05, 07: the conformance fixtures
    return [launch([PY, str(SERVERS / "conformance.py")])]


def files_writable(tmp_path: Path) -> list[Any]:               # the file server that can write
    return [launch([PY, str(SERVERS / "files.py"), "--root", str(_folder(tmp_path)), "--writable"])]


def careless(tmp_path: Path) -> list[Any]:                     # Lab 14's deliberately careless variant
    return [launch([PY, "-m", "mcplab.exercises.careless", "--root", str(_folder(tmp_path)), "--any-host"])]


def bookshelf(tmp_path: Path) -> list[Any]:                    # Lab 09, the student's own server over HTTP
    return [launch([PY, str(ROOT / "labs" / "build" / "bookshelf.py")])]


def weather_tls(tmp_path: Path) -> list[Any]:                  # Lab 13, over TLS
    trustme = pytest.importorskip("trustme")
    certificate = trustme.CA().issue_cert("127.0.0.1")
    cert, key = tmp_path / "server.pem", tmp_path / "server.key"
    certificate.cert_chain_pems[0].write_to_path(str(cert))
    certificate.private_key_pem.write_to_path(str(key))
    return [launch([*WEATHER, "--tls-cert", str(cert), "--tls-key", str(key)])]


def mcplab_proxy(tmp_path: Path) -> list[Any]:                 # Lab 07's proxy, in front of a weather server
    backend = launch(WEATHER)
    return [proxy.start([backend.url]), backend]


def nginx(tmp_path: Path) -> list[Any]:                        # Labs 07 and 12's real load balancer
    need(balancer.find_nginx() is not None, "nginx is not installed (make test installs it as root)")
    backends = proxy.launch_all([WEATHER] * 3)
    return [balancer.start([b.url for b in backends], use="nginx").process, *backends]


LAB_SERVERS: list[tuple[str, Callable[[Path], list[Any]]]] = [
    ("weather", weather), ("weather on ::1", weather_ipv6), ("weather, modern only", weather_modern),
    ("conformance fixtures", fixtures), ("files --writable", files_writable), ("the careless variant", careless),
    ("bookshelf (Lab 09)", bookshelf), ("weather over TLS", weather_tls), ("mcplab's proxy", mcplab_proxy),
    ("nginx in front of three", nginx),
]


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("what, start", LAB_SERVERS, ids=[row[0] for row in LAB_SERVERS])
def test_another_user_of_the_machine_is_refused_by_every_lab_server(tmp_path, what, start) -> None:
    processes = start(tmp_path)
    try:
        url = processes[0].url
        stranger = as_user(NOBODY, url)
        assert stranger["status"] == 403 and REFUSAL in stranger["body"], (what, stranger)
        mine = as_user(None, url)  # the control: the same request, from the user who started it
        assert mine["status"] != 403 and REFUSAL not in mine["body"], (what, mine)
    finally:
        proxy.stop_all(processes)


# --- Lab 13's takeover, step by step --------------------------------------------------------------------

@pytest.fixture
def lab13(tmp_path: Path):
    """Lab 13's two servers, started as the lab starts them: the authorization server with its consent
    page, and the writable file server that trusts it."""
    docs = _folder(tmp_path)
    auth = launch([PY, str(SERVERS / "auth.py")])
    files = launch([PY, str(SERVERS / "files.py"), "--root", str(docs), "--writable", "--auth", auth.url])
    try:
        yield auth, files, docs
    finally:
        proxy.stop_all([files, auth])


def test_the_lab13_takeover_fails_at_its_first_step_and_writes_nothing(lab13) -> None:
    auth, files, docs = lab13
    before = sorted(p.name for p in docs.iterdir())
    issuer = auth.url.rstrip("/")  # the authorization server's banner names its issuer
    registration = {"client_name": "a classmate", "redirect_uris": ["http://127.0.0.1:1/cb"],
                    "token_endpoint_auth_method": "none", "grant_types": ["authorization_code"],
                    "response_types": ["code"]}
    steps = [  # what the takeover sent, in order: each must be refused where it lands
        ("register a client", dict(url=issuer, path="/register", body=registration,
                                   headers={"Content-Type": "application/json"})),
        ("open the consent page", dict(url=issuer, method="GET", path="/authorize?client_id=x&response_type=code",
                                       body="", headers={})),
        ("approve on the consent page", dict(url=issuer, path="/authorize", body="consent=x&approve=1",
                                             headers={"Content-Type": "application/x-www-form-urlencoded"})),
        ("redeem a code", dict(url=issuer, path="/token", body="grant_type=authorization_code&code=x",
                               headers={"Content-Type": "application/x-www-form-urlencoded"})),
        ("call write_file", dict(url=files.url, body={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "write_file", "arguments": {"path": "pwned_by_another_user.txt", "content": "x"}}})),
    ]
    for what, request in steps:
        reply = as_user(NOBODY, **request)
        assert reply["status"] == 403 and REFUSAL in reply["body"], (what, reply)
    assert sorted(p.name for p in docs.iterdir()) == before
    mine = as_user(None, issuer, path="/register", body=registration, headers={"Content-Type": "application/json"})
    assert mine["status"] == 201, mine  # the student who started it still registers


def test_the_consent_page_approves_only_for_the_user_who_started_the_server(lab13) -> None:
    """The owner's browser walks the flow to the consent page; the classmate, given the very page (its consent
    id and all), submits Approve: refused, and the owner's flow still completes."""
    from mcplab.auth.browser import read_forms

    auth, _, _ = lab13
    issuer = auth.url.rstrip("/")  # the authorization server's banner names its issuer

    async def owner_reaches_the_consent_page() -> tuple[str, dict]:
        import base64
        import hashlib
        import secrets

        async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
            client = (await http.post(f"{issuer}/register", json={
                "client_name": "mine", "redirect_uris": ["http://127.0.0.1:9/cb"], "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code"], "response_types": ["code"]})).json()
            verifier = secrets.token_urlsafe(48)
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            page = await http.get(f"{issuer}/authorize", params={
                "client_id": client["client_id"], "response_type": "code", "redirect_uri": "http://127.0.0.1:9/cb",
                "code_challenge": challenge, "code_challenge_method": "S256", "state": "s"})
            assert page.status_code == 200, page.text
            return page.text, client

    html, _ = anyio.run(owner_reaches_the_consent_page)
    form = next(f for f in read_forms(html) if f["method"] == "post")
    approve = next(b for b in form["buttons"] if b[1] == "approve")
    reply = as_user(NOBODY, issuer, path=form["action"], body=urlencode([*form["fields"], approve]),
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply["status"] == 403 and REFUSAL in reply["body"], reply


def test_the_oauth_redirect_listener_takes_the_code_only_from_its_own_user(tmp_path) -> None:
    """``system_browser`` waits on a loopback port for the browser to bring the code back: a classmate
    who sends a code of their own first (a login CSRF) is refused, and the user's own code is the one taken."""
    import threading

    from mcplab.auth.browser import system_browser

    with socket.create_server(("127.0.0.1", 0)) as free:
        port = free.getsockname()[1]
    redirect_uri = f"http://127.0.0.1:{port}/callback"
    seen: dict[str, dict] = {}

    def browser(url: str) -> None:  # called on the event loop: the requests go from a thread
        def visit() -> None:
            seen["classmate"] = as_user(NOBODY, f"{redirect_uri}?code=theirs&state=s", method="GET", body="", headers={})
            seen["mine"] = as_user(None, f"{redirect_uri}?code=mine&state=s", method="GET", body="", headers={})

        threading.Thread(target=visit, daemon=True).start()

    async def sign_in() -> str:
        return await system_browser(opener=browser, timeout=120)(None, None, "http://auth.invalid/authorize", redirect_uri)

    arrived = anyio.run(sign_in)
    assert "code=mine" in arrived and "theirs" not in arrived, arrived
    assert seen["classmate"]["status"] == 403 and REFUSAL in seen["classmate"]["body"], seen


# --- the look-up itself --------------------------------------------------------------------------------

def test_the_peer_of_a_connection_of_ours_is_found_with_our_uid() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.create_connection(listener.getsockname()) as c:
        accepted, peer = listener.accept()
        with accepted:
            assert owner.peer_uid(peer, accepted.getsockname()) == os.geteuid()
            assert owner.admit(peer, accepted.getsockname(), public=False) is None


def test_a_peer_that_is_no_socket_of_this_machine_is_refused_unless_the_server_is_public() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        local = listener.getsockname()
        far = ("127.0.0.1", 1)  # no socket of this machine has port 1 connected to our listener
        assert owner.peer_uid(far, local) == owner.NOT_LOCAL
        assert owner.admit(far, local, public=False) == owner.NOT_LOCAL
        assert owner.admit(far, local, public=True) is None


def test_a_platform_without_a_socket_table_admits_every_connection(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(owner.TABLES, socket.AF_INET, str(tmp_path / "no-such-table"))
    assert owner.peer_uid(("127.0.0.1", 5), ("127.0.0.1", 6)) is None
    assert owner.admit(("127.0.0.1", 5), ("127.0.0.1", 6), public=False) is None


@pytest.mark.parametrize("peer, local", [("", ""), ("", "/run/x.sock"), (None, None)],
                         ids=["an unnamed Unix socket", "a named Unix socket", "no address at all"])
def test_a_connection_that_is_not_tcp_is_left_to_the_sockets_file_mode(peer, local) -> None:
    assert owner.admit(peer, local, public=False) is None


def test_a_server_on_a_network_address_still_refuses_another_local_user() -> None:
    with launch(WEATHER, host="0.0.0.0") as server:
        port = urlsplit(server.url).port
        stranger = as_user(NOBODY, f"http://127.0.0.1:{port}/mcp")
        assert stranger["status"] == 403 and REFUSAL in stranger["body"], stranger
