"""The official MCP conformance suite, @modelcontextprotocol/conformance@0.2.0-alpha.12, at both requirement
sets it knows: 2025-11-25 (the legacy wire: initialize, sessions) and 2026-07-28 (the modern wire: no session,
``_meta`` and routing headers on every request), on Node 22 from .node/ (``make test`` installs both).

Server side: each bundled server is started with ``--http`` on 127.0.0.1:0 (``--era dual``, the default: one
URL serves both wires) and the suite runs once per server and revision (``conformance server --requirements
REV -o DIR``); each scenario's ``checks.json`` is then a test of its own. ``servers/conformance.py`` must pass
every required scenario of both revisions, and every 2026-07-28 one once more when started ``--era modern``;
the weather and file servers every *generic* one (see GENERIC). Every server is started with ``--diagnostics``,
which adds the five tools the generic ``server-stateless`` scenario pokes with (mcplab/server/diagnostics.py).
A scenario passes when its checks.json exists, has no FAILURE, and
the checks that prove it really ran (MUST_SUCCEED) are SUCCESS: some scenarios "pass" with no checks at all
when nothing happened.

Client side: every client scenario of both revisions, the ``auth/*`` ones included (not the extension ones),
and the two 2025-03-26 authorization fallbacks, run with ``tests/conformance/client_adapter.py`` (this project's
Client over its HTTP transport, with OAuth for ``auth/*``; ``era="legacy"`` at 2025-11-25, ``era="auto"`` at
2026-07-28), four at a time. A client scenario passes only with no FAILURE and no WARNING, a clean exit of the
suite's CLI (a scenario in which the client must refuse, like ``auth/resource-mismatch``, ends the client
with an error and the CLI with 0), and its key checks SUCCESS.

The suite's mock servers would listen on every interface; ``tests/conformance/loopback.cjs`` keeps them on
127.0.0.1. The CLI's own output is captured (and shown when a test fails).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import need
from http_helpers import LOOPBACK_PRELOAD, NODE_BIN, ROOT
from mcplab.server.streamable_http import launch

pytestmark = [pytest.mark.conformance, pytest.mark.http, pytest.mark.subprocess]

SUITE = "0.2.0-alpha.12"
LEGACY, MODERN = "2025-11-25", "2026-07-28"
ADAPTER = ROOT / "tests" / "conformance" / "client_adapter.py"
JOBS = 4             # suite runs at once (see suite_runs)
CLIENT_DEADLINE = 120  # seconds the harness gives a client before it calls it hung (its default: 30)
WIRE = "wire-schema-valid"  # every message through the suite's own client matched the revision's schema

# The required server scenarios of each revision in this suite version, and the checks that must be SUCCESS.
MUST_SUCCEED: dict[str, dict[str, list[str]]] = {LEGACY: {
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
}, MODERN: {
    "server-stateless": [  # the per-request envelope, discover, versions, headers, 404s, subscriptions
        "sep-2575-request-meta-invalid-missing-meta", "sep-2575-request-meta-invalid-missing-protocol-version",
        "sep-2575-request-meta-invalid-missing-client-capabilities", "sep-2575-http-server-meta-invalid-400",
        "sep-2575-request-meta-client-info-optional", "sep-2575-server-implements-discover",
        "sep-2575-server-identifies-in-result-meta", "sep-2575-server-declares-prompts-in-discover",
        "sep-2575-discover-capabilities-match-handlers", "sep-2575-server-unsupported-version-error",
        "sep-2575-http-server-unsupported-version-400", "sep-2575-http-server-header-mismatch-400",
        "sep-2575-server-rejects-undeclared-capability", "sep-2575-missing-capability-http-400",
        *(f"sep-2575-http-server-method-not-found-404-{m}" for m in (
            "initialize", "ping", "logging-setlevel", "resources-subscribe", "resources-unsubscribe")),
        "sep-2575-http-server-method-not-found-404", "sep-2575-http-server-no-independent-requests-on-stream",
        "sep-2575-server-no-log-without-loglevel", "sep-2575-server-sends-subscription-ack",
        "sep-2575-server-tags-subscription-id", "sep-2575-server-honors-notification-filter",
        "sep-2575-server-sends-prompts-list-changed-on-subscription",
        "sep-2575-server-sends-tools-list-changed-on-subscription", "sep-2575-http-server-error-jsonrpc-id"],
    "completion-complete": ["completion-complete", WIRE],
    "tools-list": ["tools-list", "tools-name-format", "tools-list-deterministic-order", WIRE],
    **{f"tools-call-{kind}": [f"tools-call-{kind}", WIRE] for kind in (
        "simple-text", "image", "audio", "embedded-resource", "mixed-content", "error", "with-progress")},
    "server-sse-multiple-streams": ["server-accepts-multiple-post-streams"],
    "resources-list": ["resources-list", WIRE],
    "resources-read-text": ["resources-read-text", WIRE],
    "resources-read-binary": ["resources-read-binary", WIRE],
    "resources-templates-read": ["resources-templates-read", WIRE],
    "sep-2164-resource-not-found": ["sep-2164-no-empty-contents", "sep-2164-error-code", "sep-2164-data-uri", WIRE],
    "prompts-list": ["prompts-list", WIRE],
    "prompts-get-simple": ["prompts-get-simple", WIRE],
    "prompts-get-with-args": ["prompts-get-with-args", WIRE],
    "prompts-get-embedded-resource": ["prompts-get-embedded-resource", WIRE],
    "prompts-get-with-image": ["prompts-get-with-image", WIRE],
    "dns-rebinding-protection": ["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
    "caching": [f"sep-2549-{what}-caching-hints" for what in (
        "tools-list", "prompts-list", "resources-list", "resources-templates-list", "resources-read")]
               + ["sep-2549-ttl-non-negative", "sep-2549-cache-scope-valid", WIRE],
    "input-required-result-basic-elicitation": ["sep-2322-elicitation-incomplete", "sep-2322-elicitation-complete",
                                                WIRE],
    "input-required-result-basic-sampling": ["sep-2322-sampling-incomplete", "sep-2322-sampling-complete", WIRE],
    "input-required-result-basic-list-roots": ["sep-2322-list-roots-incomplete", "sep-2322-list-roots-complete",
                                               WIRE],
    "input-required-result-request-state": ["sep-2322-request-state-incomplete", "sep-2322-request-state-complete",
                                            WIRE],
    "input-required-result-multiple-input-requests": ["sep-2322-multiple-inputs-incomplete",
                                                      "sep-2322-multiple-inputs-complete", WIRE],
    "input-required-result-multi-round": ["sep-2322-multi-round-r1", "sep-2322-multi-round-r2",
                                          "sep-2322-multi-round-r3", WIRE],
    "input-required-result-missing-input-response": ["sep-2322-missing-response-rerequests", WIRE],
    "input-required-result-non-tool-request": ["sep-2322-non-tool-incomplete", "sep-2322-non-tool-complete", WIRE],
    "input-required-result-result-type": ["sep-2322-result-type-included", WIRE],
    "input-required-result-unsupported-methods": ["sep-2322-not-on-unsupported-requests", WIRE],
    "input-required-result-tampered-state": ["sep-2322-reject-tampered-state", WIRE],
    "input-required-result-capability-check": ["sep-2322-respect-client-capabilities", WIRE],
    "input-required-result-ignore-extra-params": ["sep-2322-ignore-unexpected-params", WIRE],
    "input-required-result-validate-input": ["sep-2322-validate-input-responses", "sep-2322-error-on-protocol-error",
                                             WIRE],
}}

# Not scored (added after release, or pending), but about this transport: held to them too.
EXTRA: dict[str, dict[str, list[str]]] = {LEGACY: {
    "server-session-lifecycle": ["server-session-initialized-accepted", "server-session-delete-accepted",
                                 "server-session-terminated-returns-404"],
}, MODERN: {
    "http-header-validation": ["sep-2243-server-reject-invalid-headers", "sep-2243-server-reject-error-code",
                               "sep-2243-server-accepts-whitespace-header-value",
                               "sep-2243-header-name-case-insensitive", WIRE],
    "http-custom-header-server-validation": ["sep-2243-server-decode-base64", "sep-2243-server-reject-invalid-param-chars",
                                             "sep-2243-server-reject-param-mismatch",
                                             "sep-2243-server-validate-param-match", WIRE],
}}

# Generic: the scenario needs nothing but MCP itself (no fixture the suite calls by name), so every server
# that offers the feature must pass it. Everything else calls fixtures (test_simple_text, test://static-text,
# test_prompt_with_arguments, test_input_required_result_* ...) only conformance.py has.
GENERIC: dict[str, dict[str, str]] = {LEGACY: {
    "server-initialize": "the handshake, and a session id of visible ASCII",
    "ping": "every server answers ping with {}",
    "logging-set-level": "every server that declares logging answers logging/setLevel with {} (started with "
                         "--diagnostics, whose tools log, all three declare it)",
    "tools-list": "lists whatever tools the server has; each needs a name, a description and a schema",
    "resources-list": "lists whatever resources the server has",
    "prompts-list": "lists whatever prompts the server has; each needs a description",
    "server-sse-multiple-streams": "three concurrent POSTs of tools/list on one session",
    "dns-rebinding-protection": "the transport's Host/Origin check, whatever the server serves",
    "server-session-lifecycle": "initialized accepted, DELETE ends the session, its id then gets 404",
}, MODERN: {
    "server-stateless": "the envelope, discover, versions, header mismatch, 404s, subscriptions, with the "
                        "diagnostic tools --diagnostics adds to any server",
    "tools-list": "a deterministic list; each tool with a name, a description and a schema",
    "resources-list": "lists whatever resources the server has",
    "prompts-list": "lists whatever prompts the server has; each needs a description",
    "caching": "ttlMs and cacheScope on every list result and on reading the first resource",
    "sep-2164-resource-not-found": "an unknown URI is -32602 with data.uri",
    "server-sse-multiple-streams": "three concurrent POSTs of tools/list, no session",
    "dns-rebinding-protection": "the transport's Host/Origin check, whatever the server serves",
    "http-header-validation": "routing headers checked against the body, names case-insensitive",
}}
HEADER_PARAMETERS = {"conformance", "weather"}  # servers with an x-mcp-header tool parameter

# The client scenarios of each revision that are not about authorization (auth/* needs an OAuth client),
# and the checks that must be SUCCESS (a check id may repeat: the count says how often, at least).
PRESERVATION = ["json-schema-2020-12-client-tool-found", "json-schema-2020-12-client-echo-completed",
                "json-schema-2020-12-client-$schema-preserved", "sep-2106-client-anchor-keyword-preserved", WIRE]
CLIENT_MUST_SUCCEED: dict[str, dict[str, list[str]]] = {LEGACY: {
    "initialize": ["mcp-client-initialization"],
    "tools_call": ["tool-add-numbers", WIRE],
    "elicitation-sep1034-client-defaults": [f"client-elicitation-sep1034-{kind}-default"
                                            for kind in ("string", "integer", "number", "enum", "boolean")],
    "sse-retry": ["client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"],
    "json-schema-2020-12-preservation": PRESERVATION,  # not scored (added after release)
}, MODERN: {
    "tools_call": ["tool-add-numbers", WIRE],
    "request-metadata": ["sep-2575-client-retry-supported-version", "sep-2575-http-client-sends-version-header",
                         "sep-2575-client-populates-meta", "sep-2575-client-sends-client-info",
                         "sep-2575-http-version-header-matches-meta"],
    "sep-2322-client-request-state": ["sep-2322-client-request-state-echoed", "sep-2322-client-jsonrpc-id-different",
                                      "sep-2322-client-no-state-omitted", "sep-2322-client-parallel-isolation",
                                      "sep-2322-default-result-type-complete"],
    # Mcp-Method on tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get; Mcp-Name
    # on the three that name something: nine SUCCESS rows of one id (an unexercised method would be SKIPPED).
    "http-standard-headers": ["sep-2243-client-includes-standard-headers"] * 9,
    "http-custom-headers": ["sep-2243-client-supports-custom-headers", "sep-2243-client-mirrors-designated-params",
                            "sep-2243-client-encode-values", "sep-2243-client-base64-unsafe",
                            "sep-2243-client-omit-null"],
    "http-invalid-tool-headers": ["sep-2243-client-reject-invalid-tool", "sep-2243-x-mcp-header-not-empty",
                                  "sep-2243-x-mcp-header-primitive-only", "sep-2243-x-mcp-header-unique",
                                  "sep-2243-x-mcp-header-charset"],
    "json-schema-ref-no-deref": ["sep-2106-no-network-ref-deref"],
    "json-schema-2020-12-preservation": PRESERVATION,  # not scored (added after release)
}}
NOT_SCORED = {"json-schema-2020-12-preservation"}

# The client auth/ scenarios: the suite's own mock authorization server and a protected mock MCP server;
# the adapter connects with OAuth (mcplab/auth/client.py). The checks each scenario must show as SUCCESS.
PRM = ["prm-pathbased-requested"]
FLOW = ["authorization-server-metadata", "authorization-request", "pkce-code-challenge-sent", "pkce-s256-method-used",
        "token-request", "pkce-code-verifier-sent", "pkce-verifier-matches-challenge", "valid-bearer-token"]
RESOURCE = ["resource-parameter-in-authorization", "resource-parameter-in-token", "resource-parameter-valid-uri",
            "resource-parameter-consistency", "resource-parameter-matches-prm"]  # RFC 8707, as published in the PRM


def auth_checks(dcr: list[str]) -> dict[str, list[str]]:
    """The auth/ scenarios both revisions require; ``dcr``: what a dynamic registration must show."""
    return {
        **{f"auth/metadata-{v}": PRM + dcr + FLOW + RESOURCE for v in ("default", "var1", "var2", "var3")},
        "auth/basic-cimd": PRM + FLOW + ["cimd-client-id-used"],
        **{f"auth/scope-{s}": PRM + dcr + FLOW + [f"scope-{s}"]
           for s in ("from-www-authenticate", "from-scopes-supported", "omitted-when-undefined")},
        "auth/scope-step-up": PRM + dcr + FLOW + ["authorization-request", "token-request", "scope-step-up-initial",
                                                  "scope-step-up-escalation"],
        "auth/scope-retry-limit": PRM + dcr + ["authorization-request", "scope-retry-limit"],
        **{f"auth/token-endpoint-auth-{m}": PRM + dcr + FLOW + ["token-endpoint-auth-method"] + RESOURCE
           for m in ("basic", "post", "none")},
        "auth/pre-registration": PRM + FLOW + ["pre-registration-auth"],
    }


DCR_MODERN = ["client-registration", "sep-837-application-type-present"]  # 2026-07-28 adds application_type
CLIENT_MUST_SUCCEED[LEGACY].update(auth_checks(["client-registration"]))
CLIENT_MUST_SUCCEED[MODERN].update(auth_checks(DCR_MODERN))
CLIENT_MUST_SUCCEED[MODERN]["auth/scope-step-up"] += ["sep-2350-scope-union-on-reauth"]
CLIENT_MUST_SUCCEED[MODERN].update({
    "auth/resource-mismatch": PRM + ["resource-mismatch-rejected"],  # the client refuses: no authorization request
    "auth/offline-access-scope": PRM + FLOW + ["sep-2207-offline-access-requested"],
    "auth/offline-access-not-supported": PRM + DCR_MODERN + FLOW + ["sep-2207-offline-access-not-requested"],
    "auth/authorization-server-migration": PRM * 2 + DCR_MODERN * 2 + FLOW + [
        "sep-2352-reregister-on-as-change", "sep-2352-no-reuse-on-as-change", "sep-2352-no-cross-as-credential-reuse"],
    "auth/iss-supported": PRM + DCR_MODERN + FLOW + ["sep-2468-client-compare-iss-supported"],
    "auth/iss-not-advertised": PRM + DCR_MODERN + FLOW + ["sep-2468-client-proceed-no-iss"],
    # the four where the client must refuse the authorization response before any token request
    "auth/iss-supported-missing": PRM + DCR_MODERN + ["authorization-request", "sep-2468-client-reject-missing-iss"],
    "auth/iss-wrong-issuer": PRM + DCR_MODERN + ["authorization-request", "sep-2468-client-compare-iss-supported"],
    "auth/iss-unexpected": PRM + DCR_MODERN + ["authorization-request", "sep-2468-client-compare-iss-unadvertised"],
    "auth/iss-normalized": PRM + DCR_MODERN + ["authorization-request", "sep-2468-client-no-normalization"],
    "auth/metadata-issuer-mismatch": PRM + ["authorization-server-metadata", "sep-2468-client-validate-metadata-issuer"],
})
# Not required by either revision, run for the 2025-03-26 fallbacks the client keeps (no resource metadata:
# the server's origin is the issuer; no issuer metadata: /authorize, /token, /register).
BACKCOMPAT = "2025-03-26"
CLIENT_MUST_SUCCEED[BACKCOMPAT] = {
    "auth/2025-03-26-oauth-metadata-backcompat": ["client-registration"] + FLOW,
    "auth/2025-03-26-oauth-endpoint-fallback": ["client-registration", "authorization-request", "token-request",
                                                "valid-bearer-token"],
}


def server_cases() -> list[tuple[str, str, str, str]]:
    """(server, --era, revision, scenario) for every scenario a server is held to."""
    cases = []
    for revision in (LEGACY, MODERN):
        cases += [("conformance", "dual", revision, s) for s in [*MUST_SUCCEED[revision], *EXTRA[revision]]]
        for name in ("weather", "files"):
            scenarios = [*GENERIC[revision]]
            if revision == MODERN and name in HEADER_PARAMETERS:
                scenarios.append("http-custom-header-server-validation")
            cases += [(name, "dual", revision, s) for s in scenarios]
    cases += [("conformance", "modern", MODERN, s) for s in [*MUST_SUCCEED[MODERN], *EXTRA[MODERN]]]
    return cases


SERVER_CASES = server_cases()
CLIENT_CASES = [(revision, s) for revision in CLIENT_MUST_SUCCEED for s in CLIENT_MUST_SUCCEED[revision]]


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
    group, _, name = (prefix + scenario).rpartition("/")  # auth/metadata-default lands in auth/metadata-default-<time>
    out = out / group if group else out
    pattern = re.compile(rf"^{re.escape(name)}-\d{{4}}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{{3}}Z$")
    for folder in out.iterdir() if out.is_dir() else ():
        if pattern.match(folder.name) and (folder / "checks.json").is_file():
            return json.loads((folder / "checks.json").read_text(encoding="utf-8"))
    return None


def run_server_suite(name: str, era: str, revision: str, out: Path, env: dict[str, str]) -> str:
    """One ``conformance server --requirements REVISION`` run against ``servers/NAME.py --era ERA``; its log."""
    with launch([sys.executable, str(ROOT / "servers" / f"{name}.py"), "--era", era, "--diagnostics"]) as server:
        cli = subprocess.run([str(NODE_BIN / "conformance"), "server", "--url", server.url,
                              "--requirements", revision, "-o", str(out)],
                             env=env, capture_output=True, text=True, timeout=300)
        return cli.stdout[-4000:] + cli.stderr[-2000:] + "\n--- server stderr ---\n" + server.stderr()[-2000:]


def run_client_scenario(revision: str, scenario: str, out: Path, env: dict[str, str]) -> tuple[int, str]:
    """``conformance client --scenario SCENARIO --spec-version REVISION`` with the adapter as the client:
    the CLI's exit status and its output."""
    cli = subprocess.run([str(NODE_BIN / "conformance"), "client", "--command", f"{sys.executable} {ADAPTER}",
                          "--scenario", scenario, "--spec-version", revision, "-o", str(out),
                          "--timeout", str(CLIENT_DEADLINE * 1000)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=CLIENT_DEADLINE + 60)
    return cli.returncode, cli.stdout


@pytest.fixture(scope="session")
def suite_runs(tmp_path_factory):
    """Every suite run this file needs, JOBS at a time: (server results, client results).

    No two runs share anything (each client scenario has its own mock server on its own port, each server
    suite its own server), so they run side by side, but only a few at once: started all together (24
    runs, each a Node process beside a Python one) they starved each other on 2 cores until the harness's
    own deadlines fired (a client killed at 30 s, a fetch that failed). The client deadline is also widened
    from the harness's 30 s: it only stops a hung client, and what a scenario checks does not depend on it.
    """
    env = suite_environment()
    need(" " not in sys.executable + str(ADAPTER), "the suite splits --command on spaces: the paths must have none")
    root = tmp_path_factory.mktemp("conformance")
    runs = sorted({(name, era, revision) for name, era, revision, _ in SERVER_CASES})
    outs = {run: root / "-".join(run) for run in runs}
    with ThreadPoolExecutor(JOBS) as pool:  # the long server suites first, so the short client runs fill in
        server_runs = {run: pool.submit(run_server_suite, *run, outs[run], env) for run in runs}
        client_runs = {case: pool.submit(run_client_scenario, *case, root / "client" / case[0] / case[1], env)
                       for case in CLIENT_CASES}
    servers = {}
    for (name, era, revision), out in outs.items():
        scenarios = [*MUST_SUCCEED[revision], *EXTRA[revision], *GENERIC[revision]]
        servers[name, era, revision] = ({s: read_checks(out, s, "server-") for s in scenarios},
                                        server_runs[name, era, revision].result())
    results = {}
    for (revision, scenario), run in client_runs.items():
        returncode, log = run.result()
        folder = root / "client" / revision / scenario
        stderr = "".join(p.read_text(errors="replace") for p in folder.rglob("stderr.txt"))
        results[revision, scenario] = (returncode, read_checks(folder, scenario),
                                       log[-4000:] + "\n--- client stderr ---\n" + stderr[-2000:])
    return servers, results


def explain(checks: list[dict], must: list[str], bad: set[str]) -> list[str]:
    problems = [f"{c['id']}: {c['status']} {c.get('errorMessage') or ''}".strip()
                for c in checks if c["status"] in bad]
    for check_id in dict.fromkeys(must):
        wanted = must.count(check_id)
        got = sum(c["id"] == check_id and c["status"] == "SUCCESS" for c in checks)
        if got < wanted:
            problems.append(f"{check_id}: expected SUCCESS{f' {wanted} times' if wanted > 1 else ''}, got "
                            f"{[c['status'] for c in checks if c['id'] == check_id] or 'no such check'}")
    return problems


@pytest.mark.parametrize("server, era, revision, scenario", SERVER_CASES,
                         ids=[f"{n}-{e}-{r}-{s}" for n, e, r, s in SERVER_CASES])
def test_server_scenario_passes(suite_runs, server, era, revision, scenario):
    results, log = suite_runs[0][server, era, revision]
    checks = results[scenario]
    assert checks, f"{scenario} left no checks.json for servers/{server}.py --era {era} (it crashed or never ran)\n{log}"
    must = MUST_SUCCEED[revision].get(scenario) or EXTRA[revision][scenario]
    problems = explain(checks, must, {"FAILURE"})
    assert not problems, f"servers/{server}.py --era {era} fails {scenario} at {revision}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("revision, scenario", CLIENT_CASES, ids=[f"{r}-{s}" for r, s in CLIENT_CASES])
def test_client_scenario_passes(suite_runs, revision, scenario):
    returncode, checks, log = suite_runs[1][revision, scenario]
    assert checks, f"{scenario} at {revision} left no checks.json\n{log}"
    problems = explain(checks, CLIENT_MUST_SUCCEED[revision][scenario], {"FAILURE", "WARNING"})
    assert not problems and returncode == 0, (f"the client fails {scenario} at {revision} (CLI exit {returncode}):"
                                              f"\n  " + "\n  ".join(problems) + f"\n{log}")


@pytest.mark.parametrize("revision", [LEGACY, MODERN])
def test_the_required_lists_match_the_suite(revision):
    """If the pinned suite ever lists other required scenarios, MUST_SUCCEED and CLIENT_MUST_SUCCEED must follow."""
    env = suite_environment()
    listing = subprocess.run([str(NODE_BIN / "conformance"), "list", "--requirements", revision],
                             env=env, capture_output=True, text=True, timeout=60).stdout
    required = listing.split("Run and reported")[0]
    servers = required.split("Server scenarios")[1].split("Client scenarios")[0]
    clients = required.split("Client scenarios")[1]
    listed_servers = set(re.findall(r"^\s+- (\S+)", servers, re.MULTILINE))
    listed_clients = set(re.findall(r"^\s+- (\S+)", clients, re.MULTILINE))
    assert listed_servers == set(MUST_SUCCEED[revision]), sorted(listed_servers ^ set(MUST_SUCCEED[revision]))
    ours = set(CLIENT_MUST_SUCCEED[revision]) - NOT_SCORED
    assert listed_clients == ours, sorted(listed_clients ^ ours)
