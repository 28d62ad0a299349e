"""Conformance: the fixtures the official MCP conformance suite calls by name.

    python servers/conformance.py                            # stdio
    python servers/conformance.py --http --port 0 [--era ...] # Streamable HTTP (the suite's server scenarios)

The suite (``@modelcontextprotocol/conformance``) connects as a client and runs scenarios such as
``tools-call-image`` or ``prompts-get-with-args``; each one calls a fixture by name and checks the
shape of what comes back. This file is that list of fixtures, built on the same toolkit as the other
servers, so passing the suite says the toolkit speaks MCP, not that one server was tuned for a test.

    tools      test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
               test_multiple_content_types, test_error_handling, test_tool_with_progress,
               test_tool_with_logging, test_sampling, test_elicitation,
               test_elicitation_sep1034_defaults (SEP-1034), test_elicitation_sep1330_enums (SEP-1330),
               json_schema_2020_12_tool (SEP-1613: an explicit 2020-12 schema kept as written)
    2026-07-28 test_input_required_result_{elicitation, sampling, list_roots, request_state,
               multiple_inputs, multi_round, tampered_state, capabilities} (SEP-2322, MRTR),
               test_missing_capability, test_streaming_elicitation, test_logging_tool,
               test_trigger_tool_change, test_trigger_prompt_change (SEP-2575, stateless: from
               mcplab/server/diagnostics.py, which any server adds with --diagnostics),
               test_header_param (SEP-2243: an x-mcp-header argument)
    resources  test://static-text, test://static-binary, test://watched-resource, test://template/{id}/data
    prompts    test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
               test_prompt_with_image, test_input_required_result_prompt (MRTR on prompts/get)
    completion the arguments of test_prompt_with_arguments

A fixture the negotiated revision cannot express (audio before 2025-03-26, elicitation before
2025-06-18) answers with a tool error that says so. The MRTR fixtures are ordinary tools that ask
(``ctx.elicit``, ``ctx.sample``, ``ctx.ask``): a legacy client gets server→client requests, a
2026-07-28 client ``input_required`` results, from the same body.
"""

from __future__ import annotations

import asyncio
import json
import struct
import zlib
from typing import Annotated

from mcplab.server import (
    Context, Server, ToolError, audio, elicitation, embedded, image, roots, run, sampling, text, user,
)
from mcplab.server.diagnostics import add_to as add_diagnostics
from mcplab.wire.versions import at_least


def png_pixel(red: int, green: int, blue: int) -> bytes:
    """A 1×1 PNG of one colour: signature, IHDR, IDAT (one filtered row), IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1×1, 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes([0, red, green, blue])))
            + chunk(b"IEND", b""))


def wav_silence(samples: int = 800, rate: int = 8000) -> bytes:
    """A tenth of a second of 8-bit mono silence as a WAV file: RIFF header, fmt chunk, data chunk."""
    data = bytes([128]) * samples  # 128 is the zero line of unsigned 8-bit audio
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)  # PCM, mono, rate, byte rate, block align, bits
    return (b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(data)) + b"WAVE"
            + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data)


def need(ctx: Context, version: str, feature: str) -> None:
    """Refuse, as a tool error, a feature the session's revision does not have."""
    if not at_least(ctx.version, version):
        raise ToolError(f"{feature} need MCP {version} or later; this session negotiated {ctx.version}")


RED_PIXEL = png_pixel(255, 0, 0)

# declare_logging=True: test_tool_with_logging sends log messages (a capability deprecated in 2026-07-28, which
# the suite still calls), so this server declares it; the teaching servers never log, and do not.
server = Server("mcplab-conformance", "1.0.0", title="mcplab conformance fixtures", declare_logging=True)


# --- tools ---------------------------------------------------------------------------------------

@server.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> dict:
    """Returns a 1×1 red PNG as image content."""
    return image(RED_PIXEL, "image/png")


@server.tool
def test_audio_content() -> dict:
    """Returns a short silent WAV as audio content."""
    return audio(wav_silence(), "audio/wav")


@server.tool
def test_embedded_resource() -> dict:
    """Returns an embedded text resource."""
    return embedded("test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain")


@server.tool
def test_multiple_content_types() -> list:
    """Returns text, an image and an embedded resource in one result."""
    return [text("Multiple content types test:"), image(RED_PIXEL, "image/png"),
            embedded("test://mixed-content-resource", text=json.dumps({"test": "data", "value": 123}),
                     mime_type="application/json")]


@server.tool
def test_error_handling() -> str:
    """Always fails, as a tool execution error (isError: true)."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 (of 100), 50 ms apart, if the request carries a progressToken."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)
        await ctx.report_progress(progress, total=100, message=f"step {step + 1} of 3")
    return f"Progress test completed (token: {ctx.progress_token!r})"


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info-level log messages, 50 ms apart."""
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(0.05)
        await ctx.info(message, logger="conformance")
    return "Logging test completed: sent 3 log messages"


@server.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model (sampling/createMessage) and returns its answer.

    Args:
        prompt: The prompt to send to the model.
    """
    reply = await ctx.sample(prompt, max_tokens=100)
    answer = reply.get("content", {})
    return f"LLM response: {answer.get('text', answer) if isinstance(answer, dict) else answer}"


@server.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email (elicitation/create) and returns the answer.

    Args:
        message: The message to show the user.
    """
    schema = {"type": "object",
              "properties": {"username": {"type": "string", "description": "User's response"},
                             "email": {"type": "string", "description": "User's email address"}},
              "required": ["username", "email"]}
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicits a form whose fields all carry default values (SEP-1034)."""
    need(ctx, "2025-11-25", "default values for every field type (SEP-1034)")
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "description": "Your name", "default": "John Doe"},
        "age": {"type": "integer", "description": "Your age", "default": 30},
        "score": {"type": "number", "description": "Your score", "default": 95.5},
        "status": {"type": "string", "description": "Your status", "enum": ["active", "inactive", "pending"],
                   "default": "active"},
        "verified": {"type": "boolean", "description": "Verified?", "default": True}}}
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}"


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicits the five enum shapes of SEP-1330: untitled/titled, single/multi-select, legacy enumNames."""
    need(ctx, "2025-11-25", "titled and multi-select enums (SEP-1330)")
    schema = {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "title": "Untitled single", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "title": "Titled single", "oneOf": [
            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "title": "Legacy titled", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "title": "Untitled multi",
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "title": "Titled multi", "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"}]}}}}
    answer = await ctx.elicit("Please pick from each kind of enum", schema)
    return f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}"


JSON_SCHEMA_2020_12 = {  # every 2020-12 keyword here must survive tools/list untouched (SEP-1613, SEP-2106)
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                   "phone": {"type": "string"}, "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(**contact: object) -> str:
    """Accepts a contact described by a JSON Schema 2020-12 input schema."""
    return f"Received contact: {json.dumps(contact, sort_keys=True)}"


# --- 2026-07-28: multi round-trip requests (SEP-2322) and the stateless checks (SEP-2575) -----------

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CONFIRM_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def said(reply: dict) -> str:
    """The text of a sampling result."""
    content = reply.get("content")
    return content.get("text", "") if isinstance(content, dict) else json.dumps(content)


def field(answer: dict, name: str) -> object:
    """One field of an elicitation result's form (None if declined or left out)."""
    return (answer.get("content") or {}).get(name)


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (elicitation, key user_name), then greets them."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    return f"Hello, {field(answer, 'name')}!"


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question (sampling, key capital_question)."""
    reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model said: {said(reply)}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots (key client_roots)."""
    found = await ctx.list_roots(key="client_roots")
    return "Client roots: " + (", ".join(r["uri"] for r in found) or "none")


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Keeps a value in requestState from the first round on, and asks for a confirmation."""
    ctx.state.setdefault("check", "state-ok")  # sealed into requestState; back on the retry
    answer = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    return f"{ctx.state['check']}: confirmed={field(answer, 'ok')}"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks three things in one round: a name, a greeting from the model, the client's roots."""
    ctx.state.setdefault("asked", ["user_name", "greeting", "client_roots"])
    answers = await ctx.ask(user_name=elicitation("What is your name?", NAME_FORM),
                            greeting=sampling("Generate a greeting", max_tokens=50), client_roots=roots())
    found = len(answers["client_roots"].get("roots", []))
    return f"{said(answers['greeting'])} {field(answers['user_name'], 'name')} ({found} roots)"


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """A two-step wizard: each step is a round of its own; answers of step 1 ride in requestState."""
    ctx.state.setdefault("steps", 2)
    name = await ctx.elicit("Step 1: What is your name?", NAME_FORM, key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}, key="step2")
    return f"{field(name, 'name')} likes {field(color, 'color')}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Like request_state: the suite changes requestState and expects a JSON-RPC error."""
    ctx.state.setdefault("check", "sealed")
    answer = await ctx.elicit("Please confirm", CONFIRM_FORM, key="confirm")
    return f"{ctx.state['check']}: confirmed={field(answer, 'ok')}"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what this request's client declared it can answer."""
    wanted = {"user_name": elicitation("What is your name?", NAME_FORM),
              "sample_input": sampling("Say hello", max_tokens=20), "client_roots": roots()}
    kinds = {"user_name": "elicitation", "sample_input": "sampling", "client_roots": "roots"}
    asks = {key: request for key, request in wanted.items() if ctx.can_ask(kinds[key])}
    if not asks:
        return "Nothing to ask: the request declared none of elicitation, sampling, roots"
    return f"Answered: {', '.join(await ctx.ask(asks))}"


add_diagnostics(server)  # test_missing_capability, test_streaming_elicitation, test_logging_tool, test_trigger_*


@server.tool
def test_header_param(region: Annotated[str, {"x-mcp-header": "Region"}]) -> str:
    """Echoes region, which a 2026-07-28 HTTP client also sends as the Mcp-Param-Region header.

    Args:
        region: A region name, e.g. us-west1.
    """
    return f"Region: {region}"


# --- resources -----------------------------------------------------------------------------------

@server.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed binary resource: a 1×1 red PNG."""
    return RED_PIXEL


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients subscribe to."""
    return "This resource can be subscribed to."


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> str:
    """One resource per id: the id is substituted into the data."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


# --- prompts -------------------------------------------------------------------------------------

@server.prompt
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(complete={"arg1": ["paris", "park", "party", "test", "testing"], "arg2": ["world", "wonder"]})
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument.
        arg2: Second test argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed.
    """
    return [user(embedded(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")),
            user("Please process the embedded resource above.")]


@server.prompt
def test_prompt_with_image() -> list:
    """A prompt that carries an image."""
    return [user(image(RED_PIXEL, "image/png")), user("Please analyze the image above.")]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for context first, if the client can ask (MRTR on prompts/get)."""
    context = "general"
    if ctx.can_ask("elicitation"):
        answer = await ctx.elicit("What context should the prompt use?", {
            "type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
            key="user_context")
        context = field(answer, "context") or context
    return f"Use this context: {context}"


if __name__ == "__main__":
    run(server)
