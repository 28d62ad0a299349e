"""My MCP server: yours to write (Lab 09), on mcplab's server toolkit (open mcplab/server/ beside it).

    python build/my_server.py                  # stdio: it waits for JSON-RPC lines on stdin
    mcplab grade server labs/build/my_server.py     # the report card; in the lab: grade.server(...)

The brief. A small server of your own choosing (a to-do list, a unit converter, a glossary, a
quiz ...) with:
  1. two tools or more, each argument with a type (type hints do it: str, int, float, bool, Literal[...]);
  2. a resource (a fixed URI) or a resource template (a URI with {variables});
  3. a prompt;
  4. a tool that reports a failure as a tool error (isError: true) when it is asked for something it
     cannot do, for example an item that does not exist.
The grader builds arguments from your tools' schemas (defaults, Literal choices, examples, types), so
it can call every tool; it also tries unlikely values and empty strings, which is where your tool error should show.
"""

from __future__ import annotations

from typing import Literal  # noqa: F401  Literal["a", "b"]: an argument with a fixed set of choices

from mcplab.server import Server, ToolError, run  # noqa: F401

# TODO 0: give your server a name of its own, and instructions that say what it is for.
server = Server("my-server", "0.1.0")

# Your server's data lives here, in this process (Lab 09 §9 says what that means).
ITEMS: dict[int, dict] = {}

# TODO 1 (Lab 09 §2): a tool with typed arguments:       @server.tool
# TODO 2 (Lab 09 §2, §3): a second tool, which raises ToolError("...") for an item it does not have
# TODO 3 (Lab 09 §4): a resource or a resource template:  @server.resource("myserver://...")
# TODO 4 (Lab 09 §5): a prompt:                           @server.prompt


if __name__ == "__main__":
    run(server)
