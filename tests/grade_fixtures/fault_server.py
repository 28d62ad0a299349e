"""A hand-written dual-era stdio server (no mcplab toolkit) that the server grader must pass in full, and
that breaks exactly one graded rule when started with ``--fault NAME`` (tests/test_grade_server.py).

    python tests/grade_fixtures/fault_server.py [--fault NAME] [--no-null-id]

It speaks only json and sys: initialize or server/discover (the first request decides the era), two
tools (add, find), a resource and a template, a prompt. Each fault is named after the report-card line
it must fail, and nothing else: a new grader check gets a new fault here.
"""

from __future__ import annotations

import json
import sys
import time

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
FAULTS = ("legacy-open", "modern-open", "stdout", "schema", "tools", "resources", "prompts", "malformed-line",
          "unknown-tool", "eof", "brief-tools", "brief-resource", "brief-prompt", "brief-tool-error")
FAULT = sys.argv[sys.argv.index("--fault") + 1] if "--fault" in sys.argv else None
CACHEABLE = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
             "resources/read")
ITEMS = {"apple": "a red fruit", "pear": "a green fruit"}

TOOLS = [
    {"name": "add", "description": "Adds two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]}},
    {"name": "find", "description": "Describes an item of the shop.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
]
if FAULT == "brief-tools":
    TOOLS = TOOLS[1:]


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def capabilities() -> dict:
    caps: dict = {"tools": {}}
    if FAULT != "brief-resource":
        caps["resources"] = {}
    if FAULT != "brief-prompt":
        caps["prompts"] = {}
    return caps


def text(value: str) -> list:
    return [{"type": "text", "text": value}]


def call_tool(params: dict) -> dict:
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name not in [t["name"] for t in TOOLS]:
        if FAULT == "unknown-tool":
            return {"content": text(f"no tool {name}"), "isError": True}
        raise Failure(-32602, f"Unknown tool: {name}")
    if name == "add":
        if FAULT == "tools":
            raise Failure(-32603, "add crashed")
        return {"content": text(str(arguments["a"] + arguments["b"])), "isError": False}
    item = arguments.get("name")
    if item in ITEMS:
        return {"content": text(ITEMS[item]), "isError": False}
    if FAULT == "brief-tool-error":
        return {"content": text("nothing found"), "isError": False}
    return {"content": text(f"no item named {item!r}; try {', '.join(ITEMS)}"), "isError": True}


def read(params: dict, era: str) -> dict:
    uri = params.get("uri", "")
    if uri == "shop://readme":
        if FAULT == "resources":
            raise Failure(-32603, "the readme is gone")
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "A shop of two items."}]}
    name = uri.removeprefix("shop://items/")
    if uri.startswith("shop://items/") and name in ITEMS:
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": ITEMS[name]}]}
    raise Failure(-32002 if era == "legacy" else -32602, f"Resource not found: {uri}")


def answer(method: str, params: dict, era: str, asked: str | None) -> dict:
    if method == "initialize":
        info = {"name": "fault-server"} if FAULT == "schema" else {"name": "fault-server", "version": "1.0.0"}
        version = "2099-01-01" if FAULT == "legacy-open" else asked if asked in LEGACY else LEGACY[-1]
        return {"protocolVersion": version, "capabilities": capabilities(), "serverInfo": info}
    if method == "server/discover":
        if FAULT == "modern-open":
            raise Failure(-32601, "Method not found: server/discover")
        return {"supportedVersions": [MODERN, *reversed(LEGACY)], "capabilities": capabilities()}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call_tool(params)
    if method == "resources/list" and "resources" in capabilities():
        return {"resources": [{"uri": "shop://readme", "name": "readme"}]}
    if method == "resources/templates/list" and "resources" in capabilities():
        return {"resourceTemplates": [{"uriTemplate": "shop://items/{name}", "name": "item"}]}
    if method == "resources/read" and "resources" in capabilities():
        return read(params, era)
    if method == "prompts/list" and "prompts" in capabilities():
        return {"prompts": [{"name": "greet", "description": "Greets someone.",
                             "arguments": [{"name": "name", "required": True}]}]}
    if method == "prompts/get" and "prompts" in capabilities():
        if FAULT == "prompts":
            raise Failure(-32603, "the prompt is broken")
        who = (params.get("arguments") or {}).get("name", "you")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"Say hello to {who}."}}]}
    raise Failure(-32601, f"Method not found: {method}")


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve() -> None:
    era = None
    if FAULT == "stdout":
        print("fault-server ready")
        sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            if FAULT != "malformed-line":  # JSON-RPC 2.0 says "id": null; 2025-11-25 lets it be left out
                no_id = "--no-null-id" in sys.argv
                send({"jsonrpc": "2.0", **({} if no_id else {"id": None}),
                      "error": {"code": -32700, "message": "Parse error"}})
            continue
        if "id" not in message or "method" not in message:
            continue  # a notification: nothing to answer
        params = message.get("params") or {}
        meta = params.get("_meta") or {}
        modern = meta.get("io.modelcontextprotocol/protocolVersion") == MODERN
        if era is None and message["method"] in ("initialize", "server/discover"):
            era = "modern" if modern or message["method"] == "server/discover" else "legacy"
        try:
            result = answer(message["method"], params, era or "legacy", params.get("protocolVersion"))
        except Failure as failure:
            send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": failure.code, "message": str(failure)}})
            continue
        if era == "modern":
            result = {"resultType": "complete", **result}
            if message["method"] in CACHEABLE:
                result.update(ttlMs=0, cacheScope="private")
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    if FAULT == "eof":
        time.sleep(60)  # ignores the end of its input: the grader has to stop it


if __name__ == "__main__":
    serve()
