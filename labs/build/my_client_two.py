"""My MCP client, part two: it answers its server, reads every page, and speaks 2026-07-28. Yours to write.

    python my_client_two.py [--era legacy|modern] [--answer FORM-JSON] [--call TOOL ARGUMENTS-JSON]
                            [--timeout SECONDS] -- SERVER COMMAND...
    python build/my_client_two.py --era modern --answer '{"name": "Ada", "seats": 2}' \\
        --call book_table '{"day": "Friday"}' -- python -m mcplab.grade.desk --era modern

Part one is yours already: this file imports StdioClient from my_client.py beside it (Lab 10), so
its pipes, its reads with a timeout and its shutdown are the ones you wrote. Grade part one first
(`mcplab grade client labs/build/my_client.py`): part two stands on it. Client adds six steps,
each built in a cell of Lab 12 first; main() at the bottom is written.
A command line has no dialog box, so the user's answer to any form comes from --answer.
Grade it with `mcplab grade client-two labs/build/my_client_two.py`, or in the lab: grade.client_two(...).
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
TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool}  # JSON Schema → Python


def fits(schema: dict, content: object) -> str:
    """Step C (§3): why ``content`` does not fit an elicitation's ``requestedSchema``, or "" if it does.

    Elicitation forms are flat: an object of strings, numbers, integers and booleans.
    """
    raise NotImplementedError("TODO C: say why content does not fit the schema, or return \"\" (Lab 12 §3)")


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
                if "id" in reply:
                    raise NotImplementedError("TODO A: the server asked something: send it self.respond(reply), "
                                              "then keep waiting (Lab 12 §2)")
                continue  # a notification needs no answer
            if reply.get("id") != request_id:
                continue
            if "error" in reply:
                raise ServerError(reply["error"])
            return reply["result"]

    def respond(self, request: dict) -> dict:
        """Step B (§2): the response to one request of the server's."""
        raise NotImplementedError("TODO B: {} for ping, the form's answer for elicitation/create, -32601 for the "
                                  "rest (Lab 12 §2)")

    def elicit(self, params: dict) -> dict:
        """Step C (§3): the user's answer to a form, if it fits the form's schema; else cancel."""
        raise NotImplementedError("TODO C: accept with self.answer if it fits the form, else cancel (Lab 12 §3)")

    # --- lists in pages --------------------------------------------------------------------------
    def list_tools(self) -> tuple[list[dict], int]:
        """Step D (§4): every tool, page after page until one comes without nextCursor; and the pages."""
        raise NotImplementedError("TODO D: tools/list, then again with each nextCursor until there is none "
                                  "(Lab 12 §4)")

    # --- 2026-07-28 ------------------------------------------------------------------------------
    def stamp(self, params: dict | None) -> dict:
        """Step E (§5): what every 2026-07-28 request carries in its params."""
        raise NotImplementedError("TODO E: params plus _meta: the protocol version, capabilities, clientInfo "
                                  "(Lab 12 §5)")

    def open(self) -> str:
        """Legacy: part one's handshake, declaring elicitation. Modern (§5): server/discover."""
        if self.era == "modern":
            raise NotImplementedError("TODO E: server/discover, and check that MODERN_VERSION is among its "
                                      "supportedVersions (Lab 12 §5)")
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
        raise NotImplementedError("TODO F: tools/call; on input_required answer inputRequests and retry with "
                                  "inputResponses and requestState (Lab 12 §6)")


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
