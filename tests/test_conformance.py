"""The official MCP conformance suite, @modelcontextprotocol/conformance@0.2.0-alpha.12, at the 2025-11-25
requirements (the legacy wire), on Node 22 from .node/ (``make test`` installs both).

Server side: each bundled server is started with ``--http`` on 127.0.0.1:0 and the suite runs once per
server (``conformance server --requirements 2025-11-25 -o DIR``); each scenario's ``checks.json`` is then
a test of its own. ``servers/conformance.py`` must pass every required scenario; the weather and file
servers every *generic* one (see GENERIC). A scenario passes when its checks.json exists, has no
FAILURE, and the checks that prove it really ran (MUST_SUCCEED) are SUCCESS: some scenarios "pass"
with no checks at all when nothing happened.

Client side: every legacy client scenario that is not about authorization, run with
``tests/conformance/client_adapter.py`` (this project's Client over its HTTP transport). A client
scenario passes only with no FAILURE and no WARNING, a clean exit, and its key checks SUCCESS.

The suite's mock servers would listen on every interface; ``tests/conformance/loopback.cjs`` keeps
them on 127.0.0.1. The CLI's own output is captured (and shown when a test fails).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import need
from http_helpers import LOOPBACK_PRELOAD, NODE_BIN, ROOT
from mcplab.server.http import launch

pytestmark = [pytest.mark.conformance, pytest.mark.http, pytest.mark.subprocess]

SUITE = "0.2.0-alpha.12"
REQUIREMENTS = "2025-11-25"
ADAPTER = ROOT / "tests" / "conformance" / "client_adapter.py"
WIRE = "wire-schema-valid"  # every message through the suite's own client matched the revision's schema

# The required server scenarios of 2025-11-25 in this suite version, and the checks that must be SUCCESS.
MUST_SUCCEED: dict[str, list[str]] = {
    "server-initialize": ["server-initialize", "server-session-id-visible-ascii", WIRE],
    "logging-set-level": ["logging-set-level", WIRE],
    "ping": ["ping", WIRE],
    "completion-complete": ["completion-complete", WIRE],
    "tools-list": ["tools-list", "tools-name-format", WIRE],
    "tools-call-simple-text": ["tools-call-simple-text", WIRE],
    "tools-call-image": ["tools-call-image", WIRE],
    "tools-call-audio": ["tools-call-audio", WIRE],
    "tools-call-embedded-resource": ["tools-call-embedded-resource", WIRE],
    "tools-call-mixed-content": ["tools-call-mixed-content", WIRE],
    "tools-call-with-logging": ["tools-call-with-logging", WIRE],
    "tools-call-error": ["tools-call-error", WIRE],
    "tools-call-with-progress": ["tools-call-with-progress", WIRE],
    "tools-call-sampling": ["tools-call-sampling", WIRE],
    "tools-call-elicitation": ["tools-call-elicitation", WIRE],
    "elicitation-sep1034-defaults": [f"elicitation-sep1034-{kind}-default"
                                     for kind in ("string", "integer", "number", "enum", "boolean")] + [WIRE],
    "server-sse-multiple-streams": ["server-accepts-multiple-post-streams"],
    "elicitation-sep1330-enums": [f"elicitation-sep1330-{kind}" for kind in (
        "untitled-single", "titled-single", "legacy-enumnames", "untitled-multi", "titled-multi")] + [WIRE],
    "resources-list": ["resources-list", WIRE],
    "resources-read-text": ["resources-read-text", WIRE],
    "resources-read-binary": ["resources-read-binary", WIRE],
    "resources-templates-read": ["resources-templates-read", WIRE],
    "resources-subscribe": ["resources-subscribe", WIRE],
    "resources-unsubscribe": ["resources-unsubscribe", WIRE],
    "prompts-list": ["prompts-list", WIRE],
    "prompts-get-simple": ["prompts-get-simple", WIRE],
    "prompts-get-with-args": ["prompts-get-with-args", WIRE],
    "prompts-get-embedded-resource": ["prompts-get-embedded-resource", WIRE],
    "prompts-get-with-image": ["prompts-get-with-image", WIRE],
    "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
}

# Generic: the scenario needs nothing but MCP itself (no fixture the suite calls by name), so every
# server that offers the feature must pass it. Everything else calls fixtures (test_simple_text,
# test://static-text, test_prompt_with_arguments, test://watched-resource ...) only conformance.py has.
GENERIC: dict[str, str] = {
    "server-initialize": "the handshake, and a session id of visible ASCII",
    "ping": "every server answers ping with {}",
    "logging-set-level": "every server that declares logging (all three do) answers logging/setLevel with {}",
    "tools-list": "lists whatever tools the server has; each needs a name, a description and a schema",
    "resources-list": "lists whatever resources the server has",
    "prompts-list": "lists whatever prompts the server has; each needs a description",
    "server-sse-multiple-streams": "three concurrent POSTs of tools/list on one session",
    "dns-rebinding-protection": "the transport's Host/Origin check, whatever the server serves",
}
# Not scored at 2025-11-25 ("added after release") but generic and about this transport: held to it too.
EXTRA = {"server-session-lifecycle": ["server-session-initialized-accepted", "server-session-delete-accepted",
                                      "server-session-terminated-returns-404"]}

# The legacy client scenarios that are not about authorization (auth/* needs an OAuth client).
CLIENT_MUST_SUCCEED: dict[str, list[str]] = {
    "initialize": ["mcp-client-initialization"],
    "tools_call": ["tool-add-numbers", WIRE],
    "elicitation-sep1034-client-defaults": [f"client-elicitation-sep1034-{kind}-default"
                                            for kind in ("string", "integer", "number", "enum", "boolean")],
    "sse-retry": ["client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"],
    # not scored at 2025-11-25 (added after release), but a client should keep schemas as they are
    "json-schema-2020-12-preservation": ["json-schema-2020-12-client-tool-found", "json-schema-2020-12-client-"
                                         "echo-completed", "json-schema-2020-12-client-$schema-preserved",
                                         "sep-2106-client-anchor-keyword-preserved", WIRE],
}

SERVER_CASES = ([("conformance", s) for s in [*MUST_SUCCEED, *EXTRA]]
                + [(name, s) for name in ("weather", "files") for s in [*GENERIC, *EXTRA]])


def suite_environment() -> dict[str, str]:
    binary = NODE_BIN / "conformance"
    need(binary.exists() and (NODE_BIN / "node").exists(),
         f"the conformance suite is not installed in .node/; run: make .node/.installed "
         f"(npm install --prefix .node node@22.23.3 @modelcontextprotocol/conformance@{SUITE})")
    env = {**os.environ, "PATH": f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "NODE_OPTIONS": f"--require {LOOPBACK_PRELOAD}"}
    version = subprocess.run([str(binary), "--version"], env=env, capture_output=True, text=True, timeout=60)
    need(version.stdout.strip() == SUITE, f"expected conformance {SUITE} in .node/, got {version.stdout.strip()!r}")
    return env


def read_checks(out: Path, scenario: str, prefix: str = "") -> list[dict] | None:
    """The checks of ``scenario`` in a run's output folder; None if it left no checks.json (a crash)."""
    pattern = re.compile(rf"^{re.escape(prefix + scenario)}-\d{{4}}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{{3}}Z$")
    for folder in out.iterdir() if out.is_dir() else ():
        if pattern.match(folder.name) and (folder / "checks.json").is_file():
            return json.loads((folder / "checks.json").read_text(encoding="utf-8"))
    return None


@pytest.fixture(scope="session")
def server_run(tmp_path_factory):
    """``server_run(name)`` → (checks by scenario, the CLI's output): one suite run per server, cached."""
    @lru_cache(maxsize=None)
    def run(name: str) -> tuple[dict[str, list[dict] | None], str]:
        env = suite_environment()
        out = tmp_path_factory.mktemp(f"conformance-{name}")
        with launch([sys.executable, str(ROOT / "servers" / f"{name}.py")]) as server:
            cli = subprocess.run([str(NODE_BIN / "conformance"), "server", "--url", server.url,
                                  "--requirements", REQUIREMENTS, "-o", str(out)],
                                 env=env, capture_output=True, text=True, timeout=300)
            log = cli.stdout[-4000:] + cli.stderr[-2000:] + "\n--- server stderr ---\n" + server.stderr()[-2000:]
        return {s: read_checks(out, s, "server-") for s in [*MUST_SUCCEED, *EXTRA]}, log
    return run


@pytest.fixture(scope="session")
def client_runs(tmp_path_factory):
    """Every client scenario at once (each has its own mock server on its own port)."""
    env = suite_environment()
    need(" " not in sys.executable + str(ADAPTER), "the suite splits --command on spaces: the paths must have none")
    command = f"{sys.executable} {ADAPTER}"
    out = tmp_path_factory.mktemp("conformance-client")
    running = {scenario: subprocess.Popen(
        [str(NODE_BIN / "conformance"), "client", "--command", command, "--scenario", scenario,
         "--spec-version", REQUIREMENTS, "-o", str(out / scenario)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for scenario in CLIENT_MUST_SUCCEED}
    results = {}
    for scenario, process in running.items():
        log, _ = process.communicate(timeout=120)
        results[scenario] = (process.returncode, read_checks(out / scenario, scenario), log[-4000:])
    return results


def explain(checks: list[dict], must: list[str], bad: set[str]) -> list[str]:
    problems = [f"{c['id']}: {c['status']} {c.get('errorMessage') or ''}".strip() for c in checks if c["status"] in bad]
    for check_id in must:
        if not any(c["id"] == check_id and c["status"] == "SUCCESS" for c in checks):
            problems.append(f"{check_id}: expected SUCCESS, got "
                            f"{[c['status'] for c in checks if c['id'] == check_id] or 'no such check'}")
    return problems


@pytest.mark.parametrize("server, scenario", SERVER_CASES, ids=[f"{n}-{s}" for n, s in SERVER_CASES])
def test_server_scenario_passes(server_run, server, scenario):
    results, log = server_run(server)
    checks = results[scenario]
    assert checks, f"{scenario} left no checks.json for servers/{server}.py (it crashed or never ran)\n{log}"
    problems = explain(checks, MUST_SUCCEED.get(scenario) or EXTRA[scenario], {"FAILURE"})
    assert not problems, f"servers/{server}.py fails {scenario}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("scenario", list(CLIENT_MUST_SUCCEED))
def test_client_scenario_passes(client_runs, scenario):
    returncode, checks, log = client_runs[scenario]
    assert checks, f"{scenario} left no checks.json\n{log}"
    problems = explain(checks, CLIENT_MUST_SUCCEED[scenario], {"FAILURE", "WARNING"})
    assert not problems and returncode == 0, (f"the client fails {scenario} (CLI exit {returncode}):\n  "
                                              + "\n  ".join(problems) + f"\n{log}")


def test_the_required_list_matches_the_suite():
    """If the pinned suite ever lists other required scenarios, MUST_SUCCEED must follow."""
    env = suite_environment()
    listing = subprocess.run([str(NODE_BIN / "conformance"), "list", "--server", "--requirements", REQUIREMENTS],
                             env=env, capture_output=True, text=True, timeout=60).stdout
    required = listing.split("Server scenarios")[1].split("Client scenarios")[0]
    listed = set(re.findall(r"^\s+- (\S+)", required, re.MULTILINE))
    assert listed == set(MUST_SUCCEED), f"suite lists {sorted(listed ^ set(MUST_SUCCEED))} differently"
