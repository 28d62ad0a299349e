"""My MCP client over Streamable HTTP, with nothing but httpx and the standard library (your version).

    python my_http_client.py URL [--era legacy|modern] [--call TOOL ARGUMENTS-JSON]
    python my_http_client.py http://127.0.0.1:8000/mcp --era modern

Every message the client sends is an HTTP POST of one JSON-RPC message to the server's one URL,
saying it accepts both answers a server may choose: a JSON body, or an event stream that carries
notifications about the request and then its response. What changes with the era:

    legacy (2025-11-25)   initialize; keep the Mcp-Session-Id the server assigns and send it back, with
                          MCP-Protocol-Version, on every later request; notifications/initialized (202);
                          tools/list; tools/call; end the session with DELETE
    modern (2026-07-28)   no handshake and no session: server/discover, then each request carries _meta
                          (protocol version, client info and capabilities) and the routing headers
                          Mcp-Method and Mcp-Name that copy its method and name; close the connection

It prints one line per exchange. Fill in the six TODOs (Lab 10, part 10, takes them one by one);
`mcplab grade http-client build/my_http_client.py` grades it, and while a TODO is left its card's
first line names the one that stopped the client. labs/solutions/build/my_http_client.py is one answer.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import sys

import httpx

LEGACY_VERSION = "2025-11-25"                 # the legacy revision we ask for
MODERN_VERSION = "2026-07-28"                 # the revision without a handshake
CLIENT_INFO = {"name": "my-http-client", "version": "0.1.0"}
CAPABILITIES: dict = {}                       # this client offers the server nothing (no roots, no sampling)
ACCEPT = "application/json, text/event-stream"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # the source of Mcp-Name


def header_value(text: str) -> str:
    """A body value as a header may carry it: as is when plain visible ASCII, else the spec's base64 form."""
    plain = all(" " <= ch <= "~" for ch in text) and text == text.strip(" ")
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


class ServerError(Exception):
    """The server answered a request with a JSON-RPC error, or with something that is no answer."""


class HttpClient:
    """One MCP endpoint, one era; ``request`` and ``notify`` are one POST each."""

    def __init__(self, url: str, era: str, timeout: float = 30.0) -> None:
        self.url, self.era = url, era
        self.http = httpx.Client(timeout=timeout)
        self.ids = itertools.count(1)
        self.session_id: str | None = None    # legacy: what the server assigned at initialize
        self.version = LEGACY_VERSION if era == "legacy" else MODERN_VERSION

    def headers(self, message: dict) -> dict[str, str]:
        """Step 1: the headers of one POST (Accept and Content-Type always; the rest by era)."""
        raise NotImplementedError("TODO 1: Accept and Content-Type; then the headers of the era (Lab 10 §10.1, §10.3)")

    def post(self, message: dict) -> httpx.Response:
        body = json.dumps(message).encode("utf-8")
        request = self.http.build_request("POST", self.url, content=body, headers=self.headers(message))
        return self.http.send(request, stream=True)  # stream: an event stream is read as it comes

    def request(self, method: str, params: dict | None = None) -> tuple[dict, httpx.Response]:
        """Step 2: one request, its answer read to the response; (the result, the HTTP response)."""
        if self.era == "modern":
            raise NotImplementedError("TODO 2: _meta: protocol version, clientInfo, clientCapabilities (Lab 10 §10.3)")
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message)
        try:
            reply = self.answer(response, message["id"])
        finally:
            response.close()  # the stream is done with once its response came: close it
        if "error" in reply:
            error = reply["error"]
            raise ServerError(f"{method}: error {error.get('code')}: {error.get('message')}")
        return reply["result"], response

    def answer(self, response: httpx.Response, request_id: int) -> dict:
        """Step 3: the response to ``request_id``, from a JSON body or from an event stream."""
        raise NotImplementedError("TODO 3: a JSON body, or the event stream through read_stream (Lab 10 §10.1, §10.4)")

    def read_stream(self, response: httpx.Response, request_id: int) -> dict:
        """Step 4: read events until the one that holds our response; skip the others."""
        raise NotImplementedError("TODO 4: read events until the response to request_id (Lab 10 §10.4)")

    def notify(self, method: str) -> httpx.Response:
        """A notification: one POST, answered 202 Accepted with no body."""
        response = self.post({"jsonrpc": "2.0", "method": method})
        response.close()
        if response.status_code != 202:
            raise ServerError(f"{method}: HTTP {response.status_code}, expected 202")
        return response

    def open(self) -> str:
        """Step 5: the opening of each era; a line to print."""
        raise NotImplementedError("TODO 5: initialize and initialized (legacy), or server/discover (Lab 10 §10.1, §10.3)")

    def close(self) -> str:
        """Step 6: the end. Legacy: DELETE the session (405 means the server keeps none). Modern: just close."""
        raise NotImplementedError("TODO 6: DELETE the legacy session, then close the connection (Lab 10 §10.2)")


def kind(response: httpx.Response) -> str:
    return response.headers.get("content-type", "").split(";")[0].strip()


def texts(result: dict) -> str:
    """The text blocks of a tool result, one after another."""
    return " ".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A hand-written MCP client over Streamable HTTP.")
    parser.add_argument("url", help="the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    parser.add_argument("--era", choices=("legacy", "modern"), default="legacy")
    parser.add_argument("--call", nargs=2, metavar=("TOOL", "ARGUMENTS"),
                        default=("get_weather", '{"city": "Beijing"}'), help="the tool to call, with a JSON object of arguments")
    args = parser.parse_args(argv)
    client = HttpClient(args.url, args.era)
    try:
        print(client.open())
        result, response = client.request("tools/list")
        print(f"tools/list → {response.status_code} {kind(response)}: "
              + ", ".join(tool["name"] for tool in result["tools"]))
        name, arguments = args.call[0], json.loads(args.call[1])
        result, response = client.request("tools/call", {"name": name, "arguments": arguments})
        print(f"tools/call {name} → {response.status_code} {kind(response)}: {texts(result)}")
        print(client.close())
    except (httpx.HTTPError, ServerError, KeyError, ValueError, NotImplementedError) as exc:
        print(f"my_http_client: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
