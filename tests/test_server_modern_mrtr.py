"""Multi round-trip requests (2026-07-28) in memory: a tool that asks the client answers input_required,
runs again on the retry, keeps earlier answers in a sealed requestState, and refuses tampered, expired
or transplanted state; the same tool body sends server→client requests to a legacy client. The
conformance fixtures are driven the way the official suite drives them."""

from __future__ import annotations

import json

import pytest

from mcplab.wire.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcplab.server import Context, Server, ToolError, elicitation, mrtr, roots, sampling

from server_helpers import MemorySession, ModernSession, load_server_module

ALL = {"elicitation": {}, "sampling": {}, "roots": {}}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
REPLY = {"role": "assistant", "content": {"type": "text", "text": "Paris."}, "model": "m", "stopReason": "endTurn"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def answer(key: str, request: dict) -> dict:
    """What a client sends back for one input request."""
    if request["method"] == "sampling/createMessage":
        return REPLY
    if request["method"] == "roots/list":
        return {"roots": [{"uri": "file:///work", "name": "work"}]}
    fields = request["params"]["requestedSchema"]["properties"]
    values = {"name": "Ada", "color": "teal", "ok": True, "context": "tests", "replace": True, "city": "Shanghai"}
    return {"action": "accept", "content": {k: values[k] for k in fields}}


def asking_server() -> Server:
    server = Server("asker")
    runs: list[str] = []

    @server.tool
    async def greet(ctx: Context) -> str:
        """Asks a name, then greets."""
        runs.append("greet")
        reply = await ctx.elicit("Name?", NAME)
        return f"Hello, {reply['content']['name']}!"

    @server.tool
    async def survey(ctx: Context) -> str:
        """Three questions in one round, then one more."""
        first = await ctx.ask(who=elicitation("Name?", NAME), model=sampling("Capital?"), where=roots())
        again = await ctx.elicit("Name again?", NAME, key="again")
        return json.dumps([first["who"]["content"], first["model"]["content"]["text"],
                           first["where"]["roots"][0]["uri"], again["content"]])

    @server.tool
    async def counter(ctx: Context) -> str:
        """Keeps ctx.state across rounds."""
        ctx.state["rounds"] = ctx.state.get("rounds", 0) + 1
        await ctx.elicit("One", NAME, key="one")
        await ctx.elicit("Two", NAME, key="two")
        return f"rounds seen by the state: {ctx.state['rounds']}"

    @server.tool
    async def swallow(ctx: Context) -> str:
        """A careless except Exception must not hide the question."""
        try:
            return (await ctx.elicit("Name?", NAME))["content"]["name"]
        except Exception:
            raise ToolError("asking failed") from None

    server.runs = runs  # type: ignore[attr-defined]
    return server


@pytest.mark.anyio
async def test_a_tool_that_elicits_answers_input_required_then_completes_on_the_retry() -> None:
    server = asking_server()
    session = ModernSession(server, capabilities=ALL)
    result, rounds = await session.complete("tools/call", {"name": "greet"}, answer)
    assert rounds == [{"resultType": "input_required", "_meta": rounds[0]["_meta"], "inputRequests": {
        "elicitation-1": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": NAME}}}}]
    assert result["content"][0]["text"] == "Hello, Ada!"
    assert server.runs == ["greet", "greet"]  # the body ran once per round


@pytest.mark.anyio
async def test_several_questions_go_out_in_one_round_and_earlier_answers_ride_in_request_state() -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    result, rounds = await session.complete("tools/call", {"name": "survey"}, answer)
    assert [sorted(r["inputRequests"]) for r in rounds] == [["model", "where", "who"], ["again"]]
    assert "requestState" not in rounds[0] and "requestState" in rounds[1]
    assert json.loads(result["content"][0]["text"]) == [{"name": "Ada"}, "Paris.", "file:///work", {"name": "Ada"}]


@pytest.mark.anyio
async def test_ctx_state_survives_every_round() -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    result, rounds = await session.complete("tools/call", {"name": "counter"}, answer)
    assert len(rounds) == 2 and all("requestState" in r for r in rounds)
    assert rounds[0]["requestState"] != rounds[1]["requestState"]
    assert result["content"][0]["text"] == "rounds seen by the state: 3"


@pytest.mark.anyio
async def test_input_required_is_not_swallowed_by_a_tools_except_exception() -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    assert (await session.result("tools/call", {"name": "swallow"}))["resultType"] == "input_required"


@pytest.mark.anyio
async def test_a_missing_answer_is_asked_again_and_extra_answers_are_ignored() -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    again = await session.result("tools/call", {"name": "greet", "inputResponses": {"wrong": {"action": "accept"}}})
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["elicitation-1"]
    done = await session.result("tools/call", {"name": "greet", "inputResponses": {
        "elicitation-1": {"action": "accept", "content": {"name": "Bo"}}, "extra": {"x": 1}, "more": 5}})
    assert done["content"][0]["text"] == "Hello, Bo!"


@pytest.mark.anyio
@pytest.mark.parametrize("responses, says", [
    (None, "inputResponses"),
    ([], "inputResponses"),
    ({"elicitation-1": 12345}, "inputResponses.elicitation-1"),
    ({"elicitation-1": {"action": "maybe"}}, "action"),
    ({"elicitation-1": {"action": "accept", "content": "Ada"}}, "content"),
    ({"elicitation-1": {"action": "accept", "content": {"name": 7}}}, "requestedSchema"),
    ({"elicitation-1": {"action": "accept", "content": {}}}, "requestedSchema"),
])
async def test_a_malformed_answer_is_invalid_params(responses, says) -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    error = await session.error("tools/call", {"name": "greet", "inputResponses": responses})
    assert error["code"] == INVALID_PARAMS and says in error["message"]


@pytest.mark.anyio
async def test_a_declined_elicitation_reaches_the_tool() -> None:
    weather = load_server_module("weather").server
    session = ModernSession(weather, capabilities={"elicitation": {}})
    first = await session.result("tools/call", {"name": "get_forecast", "arguments": {"city": "China"}})
    assert first["inputRequests"]["which_city"]["params"]["requestedSchema"]["properties"]["city"]["enum"] == [
        "Beijing", "Shanghai", "Guangzhou", "Chengdu"]
    declined = await session.result("tools/call", {"name": "get_forecast", "arguments": {"city": "China"},
                                                   "inputResponses": {"which_city": {"action": "decline"}}})
    assert declined["isError"] and "No city chosen" in declined["content"][0]["text"]


@pytest.mark.anyio
async def test_the_weather_server_asks_which_city_and_then_forecasts_it() -> None:
    weather = load_server_module("weather").server
    result, rounds = await ModernSession(weather, capabilities={"elicitation": {}}).complete(
        "tools/call", {"name": "get_forecast", "arguments": {"city": "china", "days": 1}}, answer)
    assert len(rounds) == 1 and result["structuredContent"]["city"] == "Shanghai"
    unasked = await ModernSession(weather).result("tools/call", {"name": "get_forecast",
                                                                 "arguments": {"city": "China"}})
    assert unasked["isError"] and "Unknown city 'China'" in unasked["content"][0]["text"]  # no elicitation: as before


# --- requestState is sealed -----------------------------------------------------------------------------

async def state_of(session: ModernSession, arguments: dict | None = None) -> str:
    first = await session.result("tools/call", {"name": "counter", "arguments": arguments or {}})
    return first["requestState"]


@pytest.mark.anyio
@pytest.mark.parametrize("change", [
    lambda s: s + "-TAMPERED", lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"), lambda s: "x" + s,
    lambda s: s.split(".")[0], lambda s: "", lambda s: s.replace(".", ".."),
])
async def test_a_tampered_request_state_is_refused(change) -> None:
    session = ModernSession(asking_server(), capabilities=ALL)
    state = await state_of(session)
    accepted = {"action": "accept", "content": {"name": "A"}}
    error = await session.error("tools/call", {"name": "counter", "requestState": change(state),
                                               "inputResponses": {"one": accepted}})
    assert error["code"] == INVALID_PARAMS and "integrity" in error["message"]


@pytest.mark.anyio
async def test_request_state_from_another_process_is_refused() -> None:
    state = await state_of(ModernSession(asking_server(), capabilities=ALL))
    error = await ModernSession(asking_server(), capabilities=ALL).error(
        "tools/call", {"name": "counter", "requestState": state})
    assert "integrity" in error["message"]


@pytest.mark.anyio
async def test_a_shared_state_key_lets_another_process_take_the_retry() -> None:
    one, two = Server("a", state_key=b"k" * 32), Server("b", state_key=b"k" * 32)
    for server in (one, two):
        server.tool(asking_server().tools["counter"].fn, name="counter", description="c")
    state = await state_of(ModernSession(one, capabilities=ALL))
    retry = await ModernSession(two, capabilities=ALL).result("tools/call", {"name": "counter", "requestState": state})
    assert retry["resultType"] == "input_required"


@pytest.mark.anyio
async def test_request_state_is_bound_to_the_request_it_came_with() -> None:
    server = asking_server()
    session = ModernSession(server, capabilities=ALL)
    state = await state_of(session)
    for params in ({"name": "counter", "arguments": {"other": 1}}, {"name": "greet"}):
        error = await session.error("tools/call", {**params, "requestState": state})
        assert error["code"] == INVALID_PARAMS and "another request" in error["message"]


def test_request_state_expires() -> None:
    key = b"k" * 32
    token = mrtr.seal({"for": mrtr.request_digest("tools/call", {"name": "t"}), "exp": 100, "answers": {},
                       "state": {}}, key)
    assert mrtr.read_retry("tools/call", {"name": "t", "requestState": token}, key, now=99).state == {}
    with pytest.raises(Exception, match="expired"):
        mrtr.read_retry("tools/call", {"name": "t", "requestState": token}, key, now=101)


def test_request_state_is_readable_but_not_forgeable() -> None:
    token = mrtr.seal({"answers": {"q": 1}}, b"k" * 32)
    body, mac = token.split(".")
    assert mrtr.unseal(token, b"k" * 32) == {"answers": {"q": 1}}
    assert json.loads(mrtr._unb64(body)) == {"answers": {"q": 1}}  # a student can decode it
    forged = mrtr._b64(json.dumps({"answers": {"q": 2}}).encode()) + "." + mac
    with pytest.raises(Exception, match="integrity"):
        mrtr.unseal(forged, b"k" * 32)


# --- capabilities -----------------------------------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("declared, missing", [
    ({}, {"elicitation": {}}),
    ({"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
    ({"sampling": {}}, {"elicitation": {}}),
])
async def test_asking_without_the_capability_is_32021_naming_it(declared, missing) -> None:
    error = await ModernSession(asking_server(), capabilities=declared).error("tools/call", {"name": "greet"})
    assert error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY and error["data"] == {"requiredCapabilities": missing}


@pytest.mark.anyio
async def test_only_tools_resources_and_prompts_may_ask() -> None:
    server = Server("s")
    server.tool(lambda: "x", name="x", description="x")
    server.resource("s://r/{n}", lister=lambda: [{"uri": "s://r/1", "name": "r"}])(lambda n: n)
    assert mrtr.MRTR_METHODS == {"tools/call", "resources/read", "prompts/get"}
    result = await ModernSession(server, capabilities=ALL).result("resources/read", {"uri": "s://r/1"})
    assert result["resultType"] == "complete"


# --- one body, two eras -----------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_the_same_tool_body_sends_requests_to_a_legacy_client() -> None:
    legacy = MemorySession(asking_server(), answers={
        "elicitation/create": {"action": "accept", "content": {"name": "Cy"}}, "sampling/createMessage": REPLY,
        "roots/list": {"roots": [{"uri": "file:///legacy"}]}})
    await legacy.initialize("2025-11-25", {"elicitation": {}, "sampling": {}, "roots": {}})
    assert (await legacy.result("tools/call", {"name": "greet"}))["content"][0]["text"] == "Hello, Cy!"
    survey = await legacy.result("tools/call", {"name": "survey"})
    assert json.loads(survey["content"][0]["text"])[2] == "file:///legacy"
    assert [m for m, _ in legacy.peer.requests] == ["elicitation/create", "elicitation/create",
                                                    "sampling/createMessage", "roots/list", "elicitation/create"]


# --- the conformance fixtures, as the official suite drives them ------------------------------------------

@pytest.fixture(scope="module")
def conformance():
    return load_server_module("conformance")


@pytest.mark.anyio
@pytest.mark.parametrize("tool, rounds, text", [
    ("test_input_required_result_elicitation", 1, "Hello, Ada!"),
    ("test_input_required_result_sampling", 1, "Paris."),
    ("test_input_required_result_list_roots", 1, "file:///work"),
    ("test_input_required_result_request_state", 1, "state-ok"),
    ("test_input_required_result_multiple_inputs", 1, "Ada"),
    ("test_input_required_result_multi_round", 2, "Ada likes teal"),
    ("test_input_required_result_tampered_state", 1, "confirmed=True"),
    ("test_streaming_elicitation", 1, "Hello, Ada!"),
    ("test_missing_capability", 1, "Success"),
])
async def test_each_mrtr_fixture_completes_after_its_rounds(conformance, tool, rounds, text) -> None:
    result, asked = await ModernSession(conformance.server, capabilities=ALL).complete(
        "tools/call", {"name": tool, "arguments": {}}, answer)
    assert len(asked) == rounds and text in result["content"][0]["text"] and not result["isError"]


@pytest.mark.anyio
async def test_the_fixtures_the_suite_wants_state_from_send_it_from_round_one(conformance) -> None:
    session = ModernSession(conformance.server, capabilities=ALL)
    for tool in ("request_state", "multiple_inputs", "multi_round", "tampered_state"):
        first = await session.result("tools/call", {"name": f"test_input_required_result_{tool}", "arguments": {}})
        assert first["inputRequests"] and isinstance(first["requestState"], str), tool
    multiple = await session.result("tools/call", {"name": "test_input_required_result_multiple_inputs"})
    assert {r["method"] for r in multiple["inputRequests"].values()} == {
        "elicitation/create", "sampling/createMessage", "roots/list"}


@pytest.mark.anyio
async def test_the_capabilities_fixture_asks_only_what_was_declared(conformance) -> None:
    first = await ModernSession(conformance.server, capabilities={"sampling": {}}).result(
        "tools/call", {"name": "test_input_required_result_capabilities", "arguments": {}})
    assert [r["method"] for r in first["inputRequests"].values()] == ["sampling/createMessage"]


@pytest.mark.anyio
async def test_the_missing_capability_fixture_names_sampling(conformance) -> None:
    error = await ModernSession(conformance.server).error("tools/call", {"name": "test_missing_capability"})
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.anyio
async def test_the_prompt_fixture_asks_on_prompts_get(conformance) -> None:
    result, asked = await ModernSession(conformance.server, capabilities=ALL).complete(
        "prompts/get", {"name": "test_input_required_result_prompt"}, answer)
    assert list(asked[0]["inputRequests"]) == ["user_context"]
    assert result["messages"][0]["content"]["text"] == "Use this context: tests"


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["tools/list", "prompts/list"])
async def test_list_methods_never_answer_input_required(conformance, method) -> None:
    result = await ModernSession(conformance.server, capabilities=ALL).result(method, {})
    assert result["resultType"] == "complete"


@pytest.mark.anyio
async def test_files_asks_before_replacing_a_file(tmp_path) -> None:
    files = load_server_module("files")
    (tmp_path / "notes.md").write_text("old")
    server = files.create_server(tmp_path, writable=True)
    session = ModernSession(server, capabilities={"elicitation": {}})
    call = {"name": "write_file", "arguments": {"path": "notes.md", "content": "new"}}
    first = await session.result("tools/call", call)
    assert list(first["inputRequests"]) == ["confirm_replace"] and (tmp_path / "notes.md").read_text() == "old"
    declined = await session.result("tools/call", {**call, "inputResponses": {"confirm_replace": {
        "action": "accept", "content": {"replace": False}}}})
    assert "unchanged" in declined["content"][0]["text"] and (tmp_path / "notes.md").read_text() == "old"
    result, _ = await session.complete("tools/call", call, answer)
    assert result["content"][0]["text"] == "wrote 3 bytes to notes.md" and (tmp_path / "notes.md").read_text() == "new"
    fresh = await session.result("tools/call", {"name": "write_file", "arguments": {"path": "new.md", "content": "x"}})
    assert fresh["resultType"] == "complete" and (tmp_path / "new.md").read_text() == "x"
    listed = await session.result("resources/list")
    assert listed["ttlMs"] == 0  # a writable server changes its own files: no caching
