"""The official conformance suite's authorization-server scenarios against servers/auth.py.

``conformance authorization --url ISSUER --client-id ID --port P`` runs two scenarios in order:
``authorization-server-metadata-endpoint`` (RFC 8414 metadata: status, content type, fields, issuer,
and CIMD support, 2025-11-25) and ``authorization-code-grant`` (the whole code flow with PKCE S256: it
prints an authorization URL for a person to open, waits for the redirect on 127.0.0.1:P/callback, then
redeems the code and checks the token response, ``Cache-Control: no-store`` included).

Here the person is played by the test: it opens the URL, reads the consent page, presses Approve (the
form servers/auth.py shows a person), and follows the redirect to the suite's callback. The client is
pre-registered (``--client``) as a public client with that callback as its redirect URI.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from http_helpers import NODE_BIN, ROOT
from mcplab.auth.browser import read_forms
from mcplab.server.streamable_http import launch
from test_conformance import read_checks, suite_environment

pytestmark = [pytest.mark.conformance, pytest.mark.http, pytest.mark.subprocess]

SCENARIOS = {
    "authorization-server-metadata-endpoint": ["authorization-server-metadata", "authorization-server-metadata-cimd"],
    "authorization-code-grant": ["authorization-code-grant"],
}


def free_port() -> int:
    # The suite binds its callback port itself; the moment between closing this socket and its bind is
    # the one port race this project accepts, for a tool that takes a number, not a socket.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def approve(url: str) -> str:
    """Open the authorization URL, press Approve on the consent page, follow the redirect; where it led."""
    with httpx.Client(trust_env=False, timeout=30) as browser:
        page = browser.get(url)
        assert page.status_code == 200, page.text
        form = next(f for f in read_forms(page.text) if f["method"] == "post")
        decision = next(b for b in form["buttons"] if b[1] == "approve")
        answer = browser.post(urljoin(url, form["action"]), data=dict([*form["fields"], decision]))
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        browser.get(location)  # the suite's callback server takes the code from here
        return location


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[list[dict] | None, str]]:
    env = suite_environment()
    out: Path = tmp_path_factory.mktemp("authorization")
    port = free_port()
    callback = f"http://127.0.0.1:{port}/callback"
    with launch([sys.executable, str(ROOT / "servers" / "auth.py"), "--client", f"conformance-client::{callback}"]) as server:
        cli = subprocess.Popen([str(NODE_BIN / "conformance"), "authorization", "--url", server.url,
                                "--client-id", "conformance-client", "--port", str(port), "-o", str(out)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        watchdog = threading.Timer(180, cli.kill)  # the suite would wait five minutes for a person
        watchdog.start()
        log, redirected = [], None
        try:
            for line in cli.stdout:
                log.append(line)
                if line.startswith(f"{server.url}/authorize?") and redirected is None:
                    redirected = approve(line.strip())
            cli.wait(timeout=60)
        finally:
            watchdog.cancel()
        text = "".join(log)[-6000:] + f"\nredirected to: {redirected}\n--- server stderr ---\n" + server.stderr()[-2000:]
    return {scenario: (read_checks(out, scenario, "authorization-server-"), text) for scenario in SCENARIOS}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_authorization_server_passes(results, scenario):
    checks, log = results[scenario]
    assert checks, f"{scenario} left no checks.json\n{log}"
    bad = [f"{c['id']}: {c['status']} {c.get('errorMessage') or ''}" for c in checks if c["status"] in ("FAILURE", "WARNING")]
    missing = [check for check in SCENARIOS[scenario]
               if not any(c["id"] == check and c["status"] == "SUCCESS" for c in checks)]
    assert not bad and not missing, f"servers/auth.py fails {scenario}: {bad} {missing}\n{log}"
