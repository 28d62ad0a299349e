"""One function per MCP request method: what the server answers once the request has passed the checks.

Theory of operation
-------------------
``Server.handle`` (toolkit.py) looks a method up in :data:`REQUESTS`, checks the lifecycle and the
capability, and calls the function here with ``(server, params, connection, request)``. Each function
returns the ``result`` object, or raises the JSON-RPC error the client should get (``InvalidParams``
with a sentence saying what was expected). Nothing here reads or writes bytes.

    initialize                 negotiate the version, remember the client, announce capabilities
    ping, logging/setLevel     utilities
    tools/list, tools/call     model-controlled: argument checking, then the tool; failures → isError
    resources/list, …/read     application-controlled: fixed URIs first, then templates in order
    resources/templates/list, resources/subscribe, resources/unsubscribe
    prompts/list, prompts/get  user-controlled: string arguments checked, messages shaped per revision
    completion/complete        choices for a prompt's or a template's argument

Every list is cut into pages (``server.page``: ``catalogue.page`` unless the server's author wrote
their own); every description passes through
``content.for_version`` so a client only sees fields its revision defines.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Callable

from mcplab.lifecycle import RECEIVE_INITIALIZE
from mcplab.wire.errors import InvalidParams, JSONRPCError, LocalProtocolError, RemoteError, RequestTimeout
from mcplab.wire.jsonrpc import Request
from mcplab.server import catalogue, content
from mcplab.server.catalogue import Resource, ResourceTemplate
from mcplab.server.context import LOG_LEVELS, ClientState, Context
from mcplab.server.view import MAX_URI, ServerView, find_resource, not_found
from mcplab.wire.versions import LATEST_LEGACY, LEGACY_VERSIONS, at_least

log = logging.getLogger("mcplab.server")
Result = dict[str, Any]

KEPT_INFO = ("name", "title", "version")  # the clientInfo fields a connection keeps, each cut to 256 characters
KEPT_CAPABILITIES = ("roots", "sampling", "elicitation", "tasks")  # client capabilities a server can act on


def kept_info(info: dict[str, Any]) -> dict[str, str]:
    """What a connection remembers of ``clientInfo``: its short string fields, cut to 256 characters."""
    return {key: info[key][:256] for key in KEPT_INFO if isinstance(info.get(key), str)}


def kept_capabilities(capabilities: dict[str, Any]) -> dict[str, Any]:
    """The client capabilities a server acts on, each with at most 16 flags (``{"form": {}}``, ``True``)."""
    kept: dict[str, Any] = {}
    for name in KEPT_CAPABILITIES:
        declared = capabilities.get(name)
        if isinstance(declared, dict):
            kept[name] = {flag: value if isinstance(value, bool) else {}
                          for flag, value in list(declared.items())[:16]
                          if isinstance(flag, str) and len(flag) <= 64 and isinstance(value, (bool, dict))}
    return kept


# --- lifecycle and utilities -----------------------------------------------------------------------

async def initialize(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    requested = params.get("protocolVersion")
    if not isinstance(requested, str):
        raise InvalidParams("expected params.protocolVersion, a revision string such as \"2025-06-18\"")
    for key in ("capabilities", "clientInfo"):
        if not isinstance(params.get(key, {}), dict):
            raise InvalidParams(f"expected params.{key} to be an object")
    # Version negotiation: echo the client's version if we speak it, else offer our latest.
    conn.version = requested if requested in LEGACY_VERSIONS else LATEST_LEGACY
    # A connection keeps only what it acts on, each part bounded: initialize may be megabytes.
    conn.client_capabilities = kept_capabilities(params.get("capabilities", {}))
    conn.client_info = kept_info(params.get("clientInfo", {}))
    conn.server_capabilities = server.capabilities(conn.version)
    conn.lifecycle.move(RECEIVE_INITIALIZE)  # answered: the client's notifications/initialized comes next
    conn.era = "legacy"  # a dual-era connection that opens with initialize stays legacy (modern.py)
    result: Result = {"protocolVersion": conn.version, "capabilities": conn.server_capabilities,
                      "serverInfo": content.for_version("implementation", server.info, conn.version)}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


async def ping(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    return {}


async def set_level(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    if params.get("level") not in LOG_LEVELS:
        raise InvalidParams(f"expected params.level to be one of {', '.join(LOG_LEVELS)}, got {params.get('level')!r}")
    conn.log_level = params["level"]
    return {}


# --- tools -------------------------------------------------------------------------------------------

async def list_tools(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    return _page(server, [t.descriptor(conn.version) for t in server.tools.values()], params, "tools")


async def call_tool(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    tool, arguments = _named(params, "tool", server.tools), params.get("arguments") or {}
    name = tool.name
    if not isinstance(arguments, dict):
        raise InvalidParams(f"expected params.arguments to be an object, got {_json_type(arguments)}")
    problem = tool.check(arguments)
    if problem:
        message = f"Invalid arguments for tool {name}: {problem}"
        if at_least(conn.version, "2025-11-25"):  # SEP-1303: the model should see it and retry
            return content.error_result(message)
        raise InvalidParams(message)
    try:
        value = await call_author(tool.fn, tool.arguments(arguments), tool.context_param, conn, request)
        if tool.output_schema is not None:
            check_structured(tool, value)
        return content.tool_result(value, conn.version, structured_output=tool.output_schema is not None)
    except JSONRPCError:
        raise
    except (content.ToolError, LocalProtocolError, RequestTimeout) as exc:  # a business error, a client that can't help
        return content.error_result(str(exc))
    except RemoteError as exc:
        return content.error_result(f"{name}: the client answered {exc.method} with error {exc.code}: {exc.message}")
    except Exception as exc:
        log.exception("tool %s failed", name)
        return content.error_result(f"{name} failed: {type(exc).__name__}: {exc}")


def check_structured(tool: Any, value: Any) -> None:
    """A ToolError unless a tool with an outputSchema returned structured output that conforms to it.

    server/tools, "Output Schema": a server MUST provide structured results that conform to the
    schema, at every revision. A ``ToolResult`` that reports a failure (``is_error``) needs none.
    """
    if isinstance(value, content.ToolResult):
        if value.is_error:
            return
        value = value.structured
        if value is None:
            raise content.ToolError(f"{tool.name} has an outputSchema but returned no structured content")
    if wrong := tool.check_output(value):
        raise content.ToolError(f"{tool.name} returned output that does not match its outputSchema: {wrong}")


# --- resources ---------------------------------------------------------------------------------------

async def list_resources(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    listed = [r.descriptor(conn.version) for r in server.resources.values()]
    for template in server.templates:
        if template.lister is not None:
            listed += [content.for_version("resource", item, conn.version) for item in template.lister()]
    return _page(server, listed, params, "resources")


async def list_templates(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    return _page(server, [t.descriptor(conn.version) for t in server.templates], params, "resourceTemplates")


async def read_resource(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    uri = _uri(params)
    target, variables = find_resource(server, uri, conn)
    try:
        value = await call_author(target.fn, variables, target.context_param, conn, request)
    except LookupError as exc:
        raise_not_found_if_said(exc, uri, conn)
        raise
    return {"contents": content.resource_contents(value, uri, target.mime_type)}


async def subscribe(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    uri = _uri(params)
    if len(uri) > MAX_URI:
        raise InvalidParams(f"expected a resource URI of at most {MAX_URI} characters, got {len(uri)} characters")
    target, variables = find_resource(server, uri, conn)
    if uri in conn.subscriptions:
        return {}
    if len(conn.subscriptions) >= server.max_subscriptions:
        raise InvalidParams(f"this session already watches {len(conn.subscriptions)} resources, the most it may "
                            f"({server.max_subscriptions}); unsubscribe from one first")
    if isinstance(target, ResourceTemplate):  # a template matches any URI of its shape: is this one there?
        try:
            await call_author(target.fn, variables, target.context_param, conn, request)
        except LookupError as exc:
            raise_not_found_if_said(exc, uri, conn)
            raise
    conn.subscriptions.add(uri)
    return {}


async def unsubscribe(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    conn.subscriptions.discard(_uri(params))
    return {}


def raise_not_found_if_said(exc: LookupError, uri: str, conn: ClientState) -> None:
    """A resource function says "not there" by raising a bare ``LookupError``: then answer not found.

    Python itself raises only LookupError's subclasses (``KeyError``, ``IndexError``), so one of those is
    a bug in the function, not a missing resource: it is left to propagate, and the toolkit answers
    -32603 with the traceback on stderr instead of hiding it behind "Resource not found".
    """
    if type(exc) is LookupError:
        raise not_found(uri, conn) from None


# --- prompts and completion ----------------------------------------------------------------------------

async def list_prompts(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    return _page(server, [p.descriptor(conn.version) for p in server.prompts.values()], params, "prompts")


async def get_prompt(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    prompt, arguments = _named(params, "prompt", server.prompts), params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise InvalidParams(f"expected params.arguments to be an object of strings, got {_json_type(arguments)}")
    prompt.check_arguments(arguments)
    value = await call_author(prompt.fn, arguments, prompt.context_param, conn, request)
    result: Result = {"messages": content.prompt_messages(value, conn.version)}
    if prompt.description:
        result = {"description": prompt.description, **result}
    return result


async def complete(server: ServerView, params: dict, conn: ClientState, request: Request) -> Result:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise InvalidParams("expected params.ref ({type, name|uri}) and params.argument ({name, value})")
    if ref.get("type") == "ref/prompt" and ref.get("name") in server.prompts:
        completers = server.prompts[ref["name"]].completers
    elif ref.get("type") == "ref/resource" and ref.get("uri") in [t.uri_template for t in server.templates]:
        completers = next(t.completers for t in server.templates if t.uri_template == ref["uri"])
    else:
        raise InvalidParams(f"expected a ref to one of this server's prompts or resource templates, got {ref}")
    return {"completion": catalogue.complete(completers.get(argument["name"]), str(argument.get("value", "")))}


# --- the table and helpers ---------------------------------------------------------------------------

Handler = Callable[[ServerView, dict, ClientState, Request], Any]

REQUESTS: dict[str, tuple[Handler, str | None]] = {
    "initialize": (initialize, None),
    "ping": (ping, None),
    "tools/list": (list_tools, "tools"),
    "tools/call": (call_tool, "tools"),
    "resources/list": (list_resources, "resources"),
    "resources/templates/list": (list_templates, "resources"),
    "resources/read": (read_resource, "resources"),
    "resources/subscribe": (subscribe, "resources"),
    "resources/unsubscribe": (unsubscribe, "resources"),
    "prompts/list": (list_prompts, "prompts"),
    "prompts/get": (get_prompt, "prompts"),
    "completion/complete": (complete, "completions"),
    "logging/setLevel": (set_level, "logging"),
}
"""Every request method the server answers → (its function, the server capability it belongs to)."""


def _page(server: ServerView, items: list[Any], params: dict, what: str) -> Result:
    chunk, next_cursor = server.page(items, params.get("cursor"), what)
    result: Result = {what: chunk}
    if next_cursor:
        result["nextCursor"] = next_cursor
    return result


def _named(params: dict, kind: str, registered: dict[str, Any]) -> Any:
    """The tool or prompt ``params.name`` names, or -32602 saying what was expected and what came."""
    name = params.get("name")
    if not isinstance(name, str):
        raise InvalidParams(f"expected params.name, the name of a {kind} (a string), got {_json_type(name)}")
    if name not in registered:
        raise InvalidParams(f"Unknown {kind}: {name!r}; this server has: {', '.join(registered)}")
    return registered[name]


def _json_type(value: Any) -> str:
    """What came, in JSON's words (``an array``, not ``list``), for an error that names it."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    return {dict: "an object", list: "an array", int: "a number", float: "a number"}.get(type(value), repr(value))


def _uri(params: dict) -> str:
    if not isinstance(params.get("uri"), str):
        raise InvalidParams("expected params.uri, a resource URI (a string)")
    return params["uri"]


async def call_author(fn: Callable, kwargs: dict[str, Any], context_param: str | None, conn: ClientState,
                      request: Request) -> Any:
    """Call a sync or async function of the server's author, passing the request Context if it asks."""
    if context_param:
        meta = request.params.get("_meta") if isinstance(request.params, dict) else None
        kwargs = {**kwargs, context_param: Context(conn, request.id, meta if isinstance(meta, dict) else None)}
    value = fn(**kwargs)
    return await value if inspect.isawaitable(value) else value
