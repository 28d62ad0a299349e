"""The client the official conformance suite drives: mcplab's Client over the Streamable HTTP transport.

    npx conformance client --command "PYTHON tests/conformance/client_adapter.py" --scenario NAME \\
        --spec-version 2025-11-25|2026-07-28

The harness starts a mock server for the scenario, appends its URL to the command, and says which
scenario runs in ``MCP_CONFORMANCE_SCENARIO`` and at which revision in
``MCP_CONFORMANCE_PROTOCOL_VERSION``. At a legacy revision the client opens with ``initialize``
(``era="legacy"``: the suite checks every message against that revision's schema, and
``server/discover`` is not in it); at 2026-07-28 it opens with ``era="auto"``, the dual-era probe.
This script does what each scenario asks a client to do, with nothing but the public API
(``Client``, ``http``), and exits 0; any error exits 1 and goes to stderr, which the harness keeps
beside its checks.

    initialize                            connect (initialize + initialized), list the tools, close
    tools_call                            call add_numbers with two numbers
    elicitation-sep1034-client-defaults   answer the server's elicitation with every field's default
    sse-retry                             call test_reconnection: the stream closes early, the transport
                                          waits the retry time and resumes with GET + Last-Event-ID
    json-schema-2020-12-preservation      echo a tool's inputSchema back exactly as received
    request-metadata                      (2026) the first request is refused with -32022: retry with a
                                          version the server names, then use the server
    sep-2322-client-request-state         (2026) call the four MRTR tools; answer each elicitation
    http-standard-headers                 (2026) one request of each kind: the routing headers on each
    http-custom-headers                   (2026) the calls MCP_CONFORMANCE_CONTEXT lists: Mcp-Param-* headers
    http-invalid-tool-headers             (2026) call every tool list_tools kept (the invalid ones are gone)
    json-schema-ref-no-deref              (2026) list the tools; a network $ref is never fetched
    auth/*                                connect with OAuth (mcplab/auth/client.py), list the tools, call
                                          test-tool: the mock server answers 401 (or 403) until the flow
                                          has run; pre-registered credentials come in MCP_CONFORMANCE_CONTEXT,
                                          and the suite's fixed URL is this client's metadata document (CIMD).
                                          The scenarios where the client must refuse end in an exit code 1.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcplab import Client  # noqa: E402
from mcplab.auth.client import OAuth  # noqa: E402
from mcplab.transports.http import http  # noqa: E402
from mcplab.wire.versions import MODERN_VERSIONS  # noqa: E402

SAMPLE = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the suite's fixed client metadata document


def oauth_for(scenario: str) -> OAuth | None:
    """The OAuth settings an auth/ scenario needs: pre-registered credentials from the suite's context."""
    if not scenario.startswith("auth/"):
        return None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
    return OAuth(client_name="mcplab conformance client", redirect_uri="http://localhost:3000/callback",
                 client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                 client_metadata_url=CIMD_URL)


def accept_with_defaults(params: dict) -> dict:
    """Accept an elicitation, filling each field with its schema default, or a plain value of its type."""
    fields = params.get("requestedSchema", {}).get("properties", {})
    return {"action": "accept", "content": {name: field["default"] if "default" in field else
                                            SAMPLE.get(field.get("type"), "yes") for name, field in fields.items()}}


def sample_arguments(schema: dict) -> dict:
    """Arguments for a tool we know nothing about: a plain value for every required property."""
    properties = schema.get("properties", {})
    return {name: SAMPLE.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required", [])}


async def run(scenario: str, url: str, version: str) -> None:
    modern = version in MODERN_VERSIONS
    # listen=True: some legacy mock servers send their server→client requests on the standalone GET stream.
    async with Client(http(url, listen=not modern, auth=oauth_for(scenario)), era="auto" if modern else "legacy",
                      elicitation=accept_with_defaults, timeout=20) as client:
        tools = {}
        if "tools" in client.server_capabilities:
            tools = {tool.name: tool for tool in await client.list_tools()}
        if scenario == "tools_call":
            print((await client.call_tool("add_numbers", {"a": 5, "b": 3})).text)
        elif scenario == "elicitation-sep1034-client-defaults":
            print((await client.call_tool("test_client_elicitation_defaults", {})).text)
        elif scenario == "sse-retry":
            print((await client.call_tool("test_reconnection", {})).text)
        elif scenario == "json-schema-2020-12-preservation":
            schema = tools["json_schema_2020_12_tool"].input_schema
            print((await client.call_tool("json_schema_echo", {"schema": schema})).text)
        elif scenario == "sep-2322-client-request-state":
            for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
                         "test_mrtr_no_result_type"):
                print(name, (await client.call_tool(name, {})).text)
        elif scenario == "http-standard-headers":
            await exercise_every_method(client, tools)
        elif scenario == "http-custom-headers":
            context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT", "{}"))
            for call in context.get("toolCalls", []):
                print(call["name"], (await client.call_tool(call["name"], call.get("arguments", {}))).text)
        elif scenario.startswith("auth/"):
            print((await client.call_tool("test-tool", {})).text)
        elif scenario == "http-invalid-tool-headers":
            print("left out:", ", ".join(sorted(client.rejected_tools)))
            for name, tool in tools.items():
                print(name, (await client.call_tool(name, sample_arguments(tool.input_schema))).text)
        print(f"{scenario}: {len(tools)} tools; {client.era} era, protocol {client.protocol_version}")
        print(f"why: {client.era_reason}")


async def exercise_every_method(client: Client, tools: dict[str, Any]) -> None:
    """tools/call, resources/list and /read, prompts/list and /get: each sends its routing headers."""
    for name, tool in tools.items():
        await client.call_tool(name, sample_arguments(tool.input_schema))
    if "resources" in client.server_capabilities:
        for resource in await client.list_resources():
            await client.read_resource(resource.uri)
    if "prompts" in client.server_capabilities:
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt.name)


def main() -> int:
    scenario, url = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize"), sys.argv[-1]
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    try:
        anyio.run(run, scenario, url, version)
    except Exception as exc:  # the harness reads the exit code; the reason goes to stderr
        print(f"client_adapter: {scenario} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
