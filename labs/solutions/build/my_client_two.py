"""My MCP client, part two: it answers its server, reads every page, and speaks 2026-07-28 (solved).

    python my_client_two.py [--era legacy|modern] [--answer FORM-JSON] [--call TOOL ARGUMENTS-JSON]
                            [--timeout SECONDS] -- SERVER COMMAND...
    python my_client_two.py --era modern --answer '{"name": "Ada", "seats": 2}' \\
        --call book_table '{"day": "Friday"}' -- python -m mcplab.grade.desk --era modern

Part one (Lab 10, my_client.py beside this file) is the plumbing: the child process, one line per
message, a read with a timeout, the shutdown. This file imports it and adds what Lab 12 teaches:

* while it waits for an answer, the server may ask *it* something: ``ping`` gets an empty result,
  ``elicitation/create`` gets the user's answer if it fits the form's schema, and anything this
  client did not declare gets -32601 (2025-11-25 "basic/utilities/ping", "client/elicitation");
* ``tools/list`` comes in pages: ask again with each ``nextCursor`` until a page has none
  ("server/utilities/pagination");
* ``--era modern`` speaks 2026-07-28: ``server/discover`` instead of ``initialize``, ``_meta`` on every
  request, and a tool that needs the user answers ``input_required``: the client retries the same call
  with a new id, its answers in ``inputResponses`` and ``requestState`` echoed untouched
  ("basic/patterns/mrtr").

A command line has no dialog box, so the user's answer to any form comes from ``--answer``.
``mcplab grade client-two build/my_client_two.py`` grades it.
"""

from __future__ import annotations

import argparse
import json
import sys

from my_client import CLIENT_INFO, PROTOCOL_VERSION, SPEAKS, ServerError, StdioClient, texts

MODERN_VERSION = "2026-07-28"
CAPABILITIES = {"elicitation": {"form": {}}}  # the one thing this client can be asked: a form for its user
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
METHOD_NOT_FOUND = -32601
TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool}


def fits(schema: dict, content: object) -> str:
    """Step C (§3): why ``content`` does not fit an elicitation's ``requestedSchema``, or "" if it does.

    Elicitation forms are flat: an object of strings, numbers, integers and booleans.
    """
    if not isinstance(content, dict):
        return "the answer is not an object"
    fields = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in content:
            return f"{name} is required"
    for name, value in content.items():
        rule = fields.get(name)
        if rule is None:
            continue  # a field the form did not ask for: JSON Schema allows it unless additionalProperties says no
        kind = TYPES.get(rule.get("type"), object)
        if isinstance(value, bool) and rule.get("type") != "boolean" or not isinstance(value, kind):
            return f"{name} must be of type {rule.get('type')}"
        if "enum" in rule and value not in rule["enum"]:
            return f"{name} must be one of {rule['enum']}"
        if isinstance(value, str) and not rule.get("minLength", 0) <= len(value) <= rule.get("maxLength", len(value)):
            return f"{name} has the wrong length"
        if not isinstance(value, (str, bool)) and not rule.get("minimum", value) <= value <= rule.get("maximum", value):
            return f"{name} is out of range"
    return ""


class Client(StdioClient):
    """Part one's client, taught to answer its server, to page, and to speak 2026-07-28."""

    def __init__(self, command: list[str], timeout: float = 10.0, era: str = "legacy",
                 answer: object = None) -> None:
        super().__init__(command, timeout)
        self.era = era
        self.answer = answer  # what the user typed into any form the server shows

    # --- the server asks too ---------------------------------------------------------------------
    def request(self, method: str, params: dict | None = None) -> dict:
        """Step A (§2): part one's request, answering each request of the server's while it waits."""
        request_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if self.era == "modern":
            params = self.stamp(params)
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            try:
                reply = self.receive()
            except TimeoutError:
                if method != "initialize":  # never cancel initialize (utilities "cancellation")
                    self.notify("notifications/cancelled", {"requestId": request_id, "reason": "timed out"})
                raise
            if "method" in reply:
                if "id" in reply:  # a request of the server's: it waits for our answer as we wait for its
                    self.send(self.respond(reply))
                continue  # a notification needs no answer
            if reply.get("id") != request_id:
                continue
            if "error" in reply:
                raise ServerError(reply["error"])
            return reply["result"]

    def respond(self, request: dict) -> dict:
        """Step B (§2): the response to one request of the server's."""
        method = request.get("method")
        if method == "ping":
            return {"jsonrpc": "2.0", "id": request["id"], "result": {}}
        if method == "elicitation/create":
            return {"jsonrpc": "2.0", "id": request["id"], "result": self.elicit(request.get("params") or {})}
        return {"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": METHOD_NOT_FOUND, "message": f"this client does not offer {method}"}}

    def elicit(self, params: dict) -> dict:
        """Step C (§3): the user's answer to a form, if it fits the form's schema; else cancel."""
        problem = fits(params.get("requestedSchema") or {}, self.answer)
        if problem:
            print(f"my_client_two: the answer does not fit the form ({problem}): cancelled", file=sys.stderr)
            return {"action": "cancel"}
        return {"action": "accept", "content": self.answer}

    # --- lists in pages --------------------------------------------------------------------------
    def list_tools(self) -> tuple[list[dict], int]:
        """Step D (§4): every tool, page after page until one comes without nextCursor; and the pages."""
        tools, cursor, pages = [], None, 0
        while True:
            page = self.request("tools/list", {"cursor": cursor} if cursor is not None else None)
            tools += page.get("tools", [])
            pages += 1
            cursor = page.get("nextCursor")
            if cursor is None:
                return tools, pages

    # --- 2026-07-28 ------------------------------------------------------------------------------
    def stamp(self, params: dict | None) -> dict:
        """Step E (§5): what every 2026-07-28 request carries in its params."""
        meta = {META_VERSION: MODERN_VERSION, META_CAPABILITIES: CAPABILITIES, META_CLIENT_INFO: CLIENT_INFO}
        return {**(params or {}), "_meta": meta}

    def open(self) -> str:
        """Legacy: part one's handshake, declaring elicitation. Modern (§5): server/discover."""
        if self.era == "modern":
            result = self.request("server/discover")
            if MODERN_VERSION not in result.get("supportedVersions", []):
                raise ValueError(f"the server speaks {result.get('supportedVersions')}, not {MODERN_VERSION}")
            version = MODERN_VERSION
        else:
            result = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": CAPABILITIES,
                                                 "clientInfo": CLIENT_INFO})
            version = result.get("protocolVersion")
            if version not in SPEAKS:
                raise ValueError(f"the server answered protocol version {version!r}; this client speaks "
                                 f"{', '.join(SPEAKS)}, so it disconnects")
            self.notify("notifications/initialized")
        server = result.get("serverInfo") or result.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
        return f"server: {server.get('name')} {server.get('version')} (protocol {version})"

    def call_tool(self, name: str, arguments: dict) -> dict:
        """Step F (§6): tools/call; on input_required, answer and retry (a new id) until it completes."""
        params = {"name": name, "arguments": arguments}
        while True:
            result = self.request("tools/call", params)
            if result.get("resultType") != "input_required":
                return result
            answers = {}
            for key, asked in (result.get("inputRequests") or {}).items():
                if asked.get("method") != "elicitation/create":
                    raise ValueError(f"the server asked {asked.get('method')}, which this client did not declare")
                answers[key] = self.elicit(asked.get("params") or {})
            params = {"name": name, "arguments": arguments, "inputResponses": answers}
            if "requestState" in result:
                params["requestState"] = result["requestState"]  # opaque: back exactly as it came


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A hand-written MCP client over stdio, part two.")
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy", help="the protocol era to speak")
    parser.add_argument("--answer", type=json.loads, help="the user's answer to a form, as a JSON object")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"), help="call TOOL with a JSON object")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each answer")
    parser.add_argument("server", nargs=argparse.REMAINDER, help="-- then the server's command")
    args = parser.parse_args(argv)
    command = args.server[1:] if args.server[:1] == ["--"] else args.server
    if not command:
        parser.error("give the server's command after --, e.g. -- python ../servers/weather.py")
    if command[0] in ("python", "python3"):
        command[0] = sys.executable
    try:
        with Client(command, args.timeout, args.era, args.answer) as client:
            print(client.open())
            tools, pages = client.list_tools()
            print(f"tools ({pages} pages):", ", ".join(tool["name"] for tool in tools))
            if args.call:
                name, arguments = args.call[0], json.loads(args.call[1])
                result = client.call_tool(name, arguments)
                print(f"{name} →" + (" (the tool reports an error)" if result.get("isError") else ""))
                print(texts(result))
    except (OSError, ValueError, TimeoutError, ServerError, NotImplementedError) as exc:
        print(f"my_client_two: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
