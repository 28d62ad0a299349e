"""Red team, malformed input: what a hostile or broken client sends, against the bundled servers as processes.

Each table is one class of attack; the next attack is one more row. A malformed notification is
ignored (nobody answers a notification, and the spec says a malformed cancellation SHOULD be
ignored), in every state of the connection, on every bundled server, over stdio and legacy HTTP:
the server keeps answering, a request in flight still gets its reply, and nothing is logged as a
crash. A malformed answer to a server's question (legacy ``elicitation/create``) is refused with
-32602, exactly as the modern era refuses it, and nothing is written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mcplab.server.streamable_http import launch

from redteam_helpers import RawHTTP, open_session, session_headers
from server_helpers import RawServer, SERVERS, server_argv

pytestmark = pytest.mark.subprocess

VERSION = "2025-11-25"
CAPABILITIES = {"elicitation": {}, "sampling": {}, "roots": {}}

HOSTILE_NOTIFICATIONS = [  # (what, params): each goes out as a notification, never answered
    ("cancel with an array requestId", {"method": "notifications/cancelled", "params": {"requestId": [1]}}),
    ("cancel with an object requestId", {"method": "notifications/cancelled", "params": {"requestId": {"id": 1}}}),
    ("cancel with a null requestId", {"method": "notifications/cancelled", "params": {"requestId": None}}),
    ("cancel with a boolean requestId", {"method": "notifications/cancelled", "params": {"requestId": True}}),
    ("cancel with a float requestId", {"method": "notifications/cancelled", "params": {"requestId": 1.5}}),
    ("cancel with a 100 KB requestId", {"method": "notifications/cancelled", "params": {"requestId": "x" * 100_000}}),
    ("cancel without requestId", {"method": "notifications/cancelled", "params": {"reason": 7}}),
    ("cancel with array params", {"method": "notifications/cancelled", "params": [1, 2]}),
    ("cancel of a request never sent", {"method": "notifications/cancelled", "params": {"requestId": 987654}}),
    ("initialized with array params", {"method": "notifications/initialized", "params": [None]}),
    ("progress with an object token", {"method": "notifications/progress",
                                       "params": {"progressToken": {"a": 1}, "progress": "lots"}}),
    ("roots changed with junk", {"method": "notifications/roots/list_changed", "params": {"roots": [[[]]]}}),
    ("an unknown notification", {"method": "notifications/" + "z" * 5000, "params": {"x": [1] * 1000}}),
    ("a message notification to the server", {"method": "notifications/message", "params": {"level": 3}}),
]

# Per server: a tools/call that stops to ask the client (elicitation/create), so a request is in flight.
ASKING = {
    "weather": ({"name": "get_forecast", "arguments": {"city": "China"}},
                {"action": "accept", "content": {"city": "Beijing"}}),
    "files": ({"name": "write_file", "arguments": {"path": "notes.md", "content": "new notes"}},
              {"action": "accept", "content": {"replace": True}}),
    "conformance": ({"name": "test_elicitation", "arguments": {"message": "who?"}},
                    {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}),
}


def _argv(name: str, root: Path) -> list[str]:
    return server_argv(name, "--root", str(root), "--writable") if name == "files" else server_argv(name)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    served = tmp_path / "root"
    shutil.copytree(SERVERS / "samples", served)
    return served


def _no_crash_logged(server: RawServer) -> None:
    log = b"".join(line for line in server.stderr if line).decode(errors="replace")
    assert "Traceback" not in log and "Error" not in log, log[-2000:]


@pytest.mark.parametrize("state", ["before initialize", "after initialize", "with a request in flight"])
@pytest.mark.parametrize("name", ["weather", "files", "conformance"])
def test_no_malformed_notification_stops_a_stdio_server_in_any_state(name: str, state: str, root: Path) -> None:
    with RawServer(_argv(name, root)) as server:
        if state != "before initialize":
            server.initialize(VERSION, CAPABILITIES)
        asking_id = None
        if state == "with a request in flight":
            call, answer = ASKING[name]
            server.send({"jsonrpc": "2.0", "id": "asking", "method": "tools/call", "params": call})
            question = server.recv()
            assert question["method"] == "elicitation/create", question
            asking_id = question["id"]
        for what, notification in HOSTILE_NOTIFICATIONS:
            server.send({"jsonrpc": "2.0", **notification})
            reply = server.request("ping")
            assert reply.get("result") == {}, f"after {what}: {reply}"
            assert server.process.poll() is None, f"{name} exited after {what}"
        if asking_id is not None:
            server.send({"jsonrpc": "2.0", "id": asking_id, "result": answer})
            reply = server.response("asking")
            assert "result" in reply and not reply["result"].get("isError"), reply
        assert server.close() == 0
        _no_crash_logged(server)


@pytest.mark.http
def test_no_malformed_notification_breaks_a_legacy_http_session_or_its_connection(root: Path) -> None:
    with launch(_argv("files", root)) as process:
        session = open_session(process.url, CAPABILITIES)
        headers = list(session_headers(session).items())
        headers = [(k, v) for k, v in headers if k not in ("Accept", "Content-Type")]
        with RawHTTP(process.url) as wire:  # one keep-alive connection for every row
            for number, (what, notification) in enumerate(HOSTILE_NOTIFICATIONS):
                wire.post(json.dumps({"jsonrpc": "2.0", **notification}).encode(), headers)
                status, reply_headers, body = wire.response()
                assert (status, body) == (202, b""), f"{what}: {status} {reply_headers} {body[:300]!r}"
                wire.post(json.dumps({"jsonrpc": "2.0", "id": number, "method": "ping"}).encode(), headers)
                status, _, body = wire.response()
                assert status == 200 and json.loads(body)["result"] == {}, f"after {what}: {body[:300]!r}"
    assert "Traceback" not in process.stderr(), process.stderr()[-2000:]


# --- answers to the server's questions ------------------------------------------------------------------

WRONG_CONFIRMATIONS = [  # (what, the client's answer to "Replace notes.md?") – none may replace the file
    ("replace as the string 'false'", {"action": "accept", "content": {"replace": "false"}}),
    ("replace as the string 'true'", {"action": "accept", "content": {"replace": "true"}}),
    ("replace as a number", {"action": "accept", "content": {"replace": 1}}),
    ("replace as null", {"action": "accept", "content": {"replace": None}}),
    ("replace left out", {"action": "accept", "content": {}}),
    ("accept without content", {"action": "accept"}),
    ("content as an array", {"action": "accept", "content": [True]}),
    ("content as a string", {"action": "accept", "content": "yes"}),
    ("an unknown action", {"action": "yes please", "content": {"replace": True}}),
    ("no action at all", {"content": {"replace": True}}),
    ("not an object", ["accept"]),
]


def test_a_legacy_elicitation_answer_that_breaks_the_requested_schema_is_refused_and_nothing_is_written(
        root: Path) -> None:
    original = (root / "notes.md").read_bytes()
    with RawServer(_argv("files", root)) as server:
        server.initialize(VERSION, {"elicitation": {}})
        for what, answer in WRONG_CONFIRMATIONS:
            server.answers = {"elicitation/create": lambda params, answer=answer: answer}
            reply = server.request("tools/call", {"name": "write_file",
                                                  "arguments": {"path": "notes.md", "content": "REPLACED"}})
            assert "error" in reply, f"{what}: {reply}"
            assert reply["error"]["code"] == -32602, f"{what}: {reply}"
            assert "requestedSchema" in reply["error"]["message"] or "action" in reply["error"]["message"] \
                or "object" in reply["error"]["message"], reply
            assert (root / "notes.md").read_bytes() == original, f"{what} replaced the file"
        server.answers = {"elicitation/create": lambda params: {"action": "accept", "content": {"replace": True}}}
        reply = server.request("tools/call", {"name": "write_file",
                                              "arguments": {"path": "notes.md", "content": "REPLACED"}})
        assert reply["result"]["content"][0]["text"].startswith("wrote"), reply
    assert (root / "notes.md").read_text() == "REPLACED"  # the right answer still works


@pytest.mark.parametrize("answer", [{"action": "accept", "content": {"city": "Atlantis"}},
                                    {"action": "accept", "content": {"city": 42}}])
def test_a_legacy_elicitation_answer_outside_the_enum_is_refused(answer: dict) -> None:
    with RawServer(server_argv("weather"), answers={"elicitation/create": lambda params: answer}) as server:
        server.initialize(VERSION, {"elicitation": {}})
        reply = server.request("tools/call", {"name": "get_forecast", "arguments": {"city": "China"}})
        assert reply["error"]["code"] == -32602, reply
        assert server.result("ping") == {}


# --- oversized requests: what a connection is asked to hold ----------------------------------------------

MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "redteam", "version": "1"}}
OVERSIZED_LISTENS = [  # (what, resourceSubscriptions of one subscriptions/listen)
    ("101 URIs, one more than a session may watch", [f"file:///f{n:03d}.txt" for n in range(101)]),
    ("one URI of 50,000 characters", ["file:///" + "a" * 50_000]),
]


@pytest.mark.parametrize("what, uris", OVERSIZED_LISTENS, ids=[row[0] for row in OVERSIZED_LISTENS])
def test_a_modern_subscription_asking_to_watch_too_much_is_refused(what: str, uris: list, root: Path) -> None:
    for number in range(101):
        (root / f"f{number:03d}.txt").write_text(str(number))
    with RawServer(server_argv("files", "--root", str(root))) as server:
        reply = server.request("subscriptions/listen", {"_meta": MODERN_META,
                                                        "notifications": {"resourceSubscriptions": uris}})
        assert reply.get("error", {}).get("code") == -32602, f"{what}: {str(reply)[:300]}"
        assert "100" in reply["error"]["message"] or "characters" in reply["error"]["message"], reply
        server.send({"jsonrpc": "2.0", "id": "held", "method": "subscriptions/listen", "params": {
            "_meta": MODERN_META, "notifications": {"resourceSubscriptions": ["file:///f000.txt", "file:///f001.txt"]}}})
        acknowledged = server.recv()  # a reasonable one is acknowledged, and held open
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged", acknowledged
        assert len(acknowledged["params"]["notifications"]["resourceSubscriptions"]) == 2
        assert "result" in server.request("server/discover", {"_meta": MODERN_META})
