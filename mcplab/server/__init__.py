"""The server toolkit the bundled servers are built on.

    from mcplab.server import Server, Context, run

    server = Server("weather")

    @server.tool
    def get_weather(city: str) -> str:
        '''查询指定城市的当前天气'''
        return "Beijing 晴，12 摄氏度"

    if __name__ == "__main__":
        run(server)

Modules, one idea each: ``schema`` (a function's signature → JSON Schema; argument checking),
``catalogue`` (tool/resource/prompt records, URI templates, completion, pagination), ``content``
(return values → MCP results, per revision), ``context`` (per-connection state, the per-request
``Context``), ``toolkit`` (``Server``: registration and the sans-IO ``handle``), ``handlers`` (one
function per request method), ``modern`` (the 2026-07-28 era: eras, ``_meta``, ``server/discover``),
``mrtr`` (asking the client as ``input_required`` results), ``subscriptions`` (``subscriptions/listen``),
``stdio`` (the stdio runner), ``runner`` (command-line flags → runner), ``confine`` (a folder served
without escapes, even while links change: the file server's sandbox); ``streamable_http/`` (the
``/mcp`` endpoint and its process).

Layer: one of the two sides, above ``lifecycle`` (whose server table it walks), ``wire`` and
``portable``; the runner may wrap an HTTP app in the resource-server checks of ``auth`` (``--auth``).
It never imports the client side or the transports. The bundled servers, ``ecosystem``, the notebook
views, the graders and the command line build on it.
"""

from mcplab.server.content import (
    Contents, ToolError, ToolResult, assistant, audio, embedded, image, resource_link, text, user,
)
from mcplab.server.context import ClientState, Context, Peer
from mcplab.server.mrtr import InputRequest, elicitation, roots, sampling
from mcplab.server.runner import arguments, run
from mcplab.server.toolkit import Server

__all__ = [
    "Server", "Context", "ClientState", "Peer", "run", "arguments",
    "ToolError", "ToolResult", "Contents",
    "text", "image", "audio", "embedded", "resource_link", "user", "assistant",
    "InputRequest", "elicitation", "sampling", "roots",
]
