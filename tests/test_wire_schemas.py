"""Every frame the bundled servers and the client put on a wire during the test run validates against the
official schema of its revision: the happy paths and every error path the suite drives.

tests/wire_log.py records the wires (the client's traces, the raw stdio helper, every in-process HTTP app);
the last test of the session walks them (conftest.py runs it last). The tests before it drive the error
paths of the bundled servers once more over stdio and HTTP, so that this module checks real frames when it
runs on its own too.
"""

from __future__ import annotations

import json

import httpx
import pytest

from conftest import SPEC_DIR, need
from http_helpers import ACCEPT_BOTH, Session, initialize, request, served
from server_helpers import RawServer, modern_params, server_argv

WALK_FLOOR = 10  # frames: fewer means the recording broke, not that everything is fine


@pytest.mark.subprocess
@pytest.mark.parametrize("flags, version", [([], None), (["--era", "legacy"], None), ([], "2025-11-25"),
                                            ([], "2025-06-18"), (["--era", "modern"], "2026-07-28")])
def test_the_error_paths_of_a_stdio_server(flags, version) -> None:
    with RawServer(server_argv("weather", *flags)) as server:
        if version == "2026-07-28":
            server.request("tools/call", modern_params({"name": "get_weather", "arguments": {"city": "Nowhere"}}))
            server.request("tools/list", {"_meta": {}})
            server.request("ping", modern_params())
        elif version:
            server.initialize(version)
            server.request("tools/call", {"name": "nope"})
            server.request("resources/read", {"uri": "weather://city/Atlantis"})
        for line in (b"not json\n", b'{"jsonrpc":"2.0"}\n', b'[1]\n', b'{"jsonrpc":"2.0","id":null,"method":"x"}\n'):
            server.send_raw(line)
            server.recv()
        server.request("no/such/method")
        assert server.close() == 0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn serves on asyncio, in the same loop as the test


@pytest.mark.anyio
@pytest.mark.http
async def test_the_error_paths_of_an_http_server() -> None:
    from mcplab.server.streamable_http import create_app
    from server_helpers import load_server_module

    weather = load_server_module("weather").server
    async with served(create_app(weather)) as url, httpx.AsyncClient(timeout=10) as http:
        for verb, headers, body in (("POST", {"Origin": "http://evil.example"}, json.dumps(initialize())),
                                    ("PUT", {}, ""), ("POST", {"Accept": "application/json"}, "{}"),
                                    ("POST", {}, "not json"), ("POST", {}, json.dumps(request("tools/list", 3))),
                                    ("GET", {"Accept": "text/event-stream"}, "")):
            response = await http.request(verb, url, content=body, headers={**ACCEPT_BOTH, **headers})
            assert response.status_code >= 400
        for version in ("2025-06-18", "2025-11-25"):
            session = Session(http, url)
            await session.open(version)
            await session.call("tools/call", 2, {"name": "nope"})
            await session.call("resources/read", 3, {"uri": "weather://city/Atlantis"})
            assert (await session.post("not json")).status_code == 400
            assert (await session.post(request("ping", 4), **{"MCP-Protocol-Version": "banana"})).status_code == 400


def test_every_frame_the_suite_recorded_validates_against_its_revision() -> None:
    import wire_log
    from mcplab.notebook.schema_check import Schemas

    need(all((SPEC_DIR / v / "schema.json").is_file() for v in ("2024-11-05", "2025-03-26", "2025-06-18",
                                                                  "2025-11-25", "2026-07-28")),
         f"the official schemas are not at {SPEC_DIR.name}/ beside the checkout")
    assert wire_log.ACTIVE, "the wire recorders were not installed (conftest.py installs them when this test runs)"
    checked, problems, exempt = wire_log.walk(Schemas(SPEC_DIR))
    assert checked >= WALK_FLOOR, f"only {checked} frames were recorded"
    shown = "\n".join(map(str, problems[:40]))
    assert not problems, f"{len(problems)} of {checked} frames break their revision's schema:\n{shown}"
