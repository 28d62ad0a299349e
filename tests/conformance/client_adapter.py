"""The client the official conformance suite drives: mcplab's Client over the Streamable HTTP transport.

    npx conformance client --command "PYTHON tests/conformance/client_adapter.py" --scenario NAME \\
        --spec-version 2025-11-25

The harness starts a mock server for the scenario, appends its URL to the command, and says which
scenario runs in ``MCP_CONFORMANCE_SCENARIO``. This script does what each scenario asks a client to
do, with nothing but the public API (``Client``, ``http``), and exits 0; any error exits 1 and goes
to stderr, which the harness keeps beside its checks.

    initialize                            connect (initialize + initialized), list the tools, close
    tools_call                            call add_numbers with two numbers
    elicitation-sep1034-client-defaults   answer the server's elicitation with every field's default
    sse-retry                             call test_reconnection: the stream closes early, the transport
                                          waits the retry time and resumes with GET + Last-Event-ID
    json-schema-2020-12-preservation      echo a tool's inputSchema back exactly as received
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcplab import Client  # noqa: E402
from mcplab.transports.http import http  # noqa: E402


def accept_with_defaults(params: dict) -> dict:
    """Accept an elicitation, filling every field of the requested form with its schema default."""
    fields = params.get("requestedSchema", {}).get("properties", {})
    return {"action": "accept",
            "content": {name: field["default"] for name, field in fields.items() if "default" in field}}


async def run(scenario: str, url: str) -> None:
    # listen=True: some mock servers send their server→client requests on the standalone GET stream.
    async with Client(http(url, listen=True), elicitation=accept_with_defaults, timeout=20) as client:
        tools = {}
        if "tools" in client.server_capabilities:
            tools = {tool.name: tool for tool in await client.list_tools()}
        if scenario == "tools_call":
            result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
            print(result.text)
        elif scenario == "elicitation-sep1034-client-defaults":
            print((await client.call_tool("test_client_elicitation_defaults", {})).text)
        elif scenario == "sse-retry":
            print((await client.call_tool("test_reconnection", {})).text)
        elif scenario == "json-schema-2020-12-preservation":
            schema = tools["json_schema_2020_12_tool"].input_schema
            print((await client.call_tool("json_schema_echo", {"schema": schema})).text)
        print(f"{scenario}: {len(tools)} tools; protocol {client.protocol_version}")


def main() -> int:
    scenario, url = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize"), sys.argv[-1]
    try:
        anyio.run(run, scenario, url)
    except Exception as exc:  # the harness reads the exit code; the reason goes to stderr
        print(f"client_adapter: {scenario} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
