"""What the labs say about the protocol matches the spec, in their words and in their stored outputs.

nbval re-runs every notebook and compares the outputs it stores; these tests pin what those outputs and
the text beside them must show, so that a regression in a server or in a sentence fails here by name.
Each row cites the spec section it checks the lab against.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

LABS = Path(__file__).resolve().parent.parent / "labs"
SPEC = "https://modelcontextprotocol.io/specification/"


@lru_cache(maxsize=None)
def notebook(name: str) -> dict:
    return json.loads((LABS / name).read_text(encoding="utf-8"))


def cell(name: str, cell_id: str) -> dict:
    return next(c for c in notebook(name)["cells"] if c.get("id") == cell_id)


def source(name: str, cell_id: str) -> str:
    return "".join(cell(name, cell_id)["source"])


def words(name: str, cell_id: str) -> str:
    """A markdown cell's text on one line, however it wraps."""
    return " ".join(source(name, cell_id).split())


def output(name: str, cell_id: str) -> str:
    """Everything a code cell stored: its streams and the text of its results."""
    parts = []
    for out in cell(name, cell_id).get("outputs", []):
        text = out.get("text") or out.get("data", {}).get("text/plain", "")
        parts.append("".join(text))
    return "".join(parts)


def position(name: str, cell_id: str) -> int:
    return next(i for i, c in enumerate(notebook(name)["cells"]) if c.get("id") == cell_id)


def cites(text: str, *versions: str) -> bool:
    return all(f"{SPEC}{version}/" in text for version in versions)


# --- Lab 01 -----------------------------------------------------------------------------------------------

def test_lab01_shows_the_reply_to_an_unreadable_message_per_revision():
    # 2025-11-25 and 2026-07-28 "basic", Error Responses: no id when it could not be read, never null;
    # up to 2025-06-18 every error response needs an id, so JSON-RPC's null is kept.
    shown = output("01_jsonrpc.ipynb", "cell-14b").splitlines()
    rows = {line.split()[0] if not line.startswith("JSON") else "JSON-RPC": line for line in shown}
    assert '"id":null' in rows["JSON-RPC"] and '"id":null' in rows["2025-06-18"]
    assert '"id"' not in rows["2025-11-25"] and '"id"' not in rows["2026-07-28"]
    assert cites(source("01_jsonrpc.ipynb", "cell-14a"), "2025-06-18", "2025-11-25", "2026-07-28")
    assert '"id": null' not in source("01_jsonrpc.ipynb", "cell-23").split("section 5")[0]


def test_lab01_words_id_uniqueness_and_the_error_range_as_each_revision_does():
    ids = words("01_jsonrpc.ipynb", "cell-13")
    assert "within the session" in ids and "still waiting for its response" in ids
    assert cites(ids, "2025-11-25", "2026-07-28")
    codes = words("01_jsonrpc.ipynb", "cell-26")
    assert "-32000 to -32019" in codes and "-32020 to -32099" in codes
    assert cites(codes, "2025-11-25", "2026-07-28")
    table = output("01_jsonrpc.ipynb", "cell-27")
    assert re.search(r"-32002\s+Resource not found\s+MCP 2024-11-05 … 2025-11-25", table)
    assert re.search(r"-32020\s+Header mismatch\s+MCP 2026-07-28", table)


# --- Lab 02 and Lab 03 ----------------------------------------------------------------------------------------

def test_lab02_says_roots_and_sampling_are_deprecated_in_2026_07_28():
    text = words("02_handshake.ipynb", "cell-17")
    assert "deprecated in 2026-07-28" in text and "SEP-2577" in text
    assert f"{SPEC}2026-07-28/deprecated" in text


def test_lab03_names_the_revisions_in_which_minus_32002_holds():
    text = words("03_primitives.ipynb", "cell-14")
    assert "2024-11-05 … 2025-11-25" in text and "-32602" in text and cites(text, "2025-11-25", "2026-07-28")
    assert "protocol error: -32002 Resource not found" in output("03_primitives.ipynb", "cell-15")


# --- Lab 05 ---------------------------------------------------------------------------------------------------

def test_lab05_says_should_for_the_priming_event_and_its_stored_stream_has_one():
    # 2025-11-25 transports, Sending Messages to the Server: the server SHOULD immediately send an
    # event with an id and empty data.
    text = source("05_streamable_http.ipynb", "cell-12")
    assert "SHOULD" in text and "may open" not in text and cites(text, "2025-11-25")
    stream = output("05_streamable_http.ipynb", "cell-11").split("text/event-stream")[1]
    first = stream.split("\n\n")[1]
    assert first.splitlines() == ["event: message", "id: 1", "data: "], first


def test_lab05_shows_the_standalone_get_stream_the_client_opens():
    frames = output("05_streamable_http.ipynb", "cell-14")
    assert re.search(r"→ GET .*Mcp-Session-Id: yes", frames) and re.search(r"← GET\s+200", frames)
    assert cites(source("05_streamable_http.ipynb", "cell-06"), "2025-11-25")


# --- Lab 06 ---------------------------------------------------------------------------------------------------

def test_lab06_legacy_client_meets_a_modern_server_over_http_with_400():
    # 2026-07-28 versioning, compatibility matrix: over HTTP, 400 per server validation.
    table = output("06_stateless.ipynb", "7a0d6799")
    row = next(line for line in table.splitlines() if line.startswith("legacy    modern"))
    assert "fails: HTTP 400, -32020" in row and "initialize → 400 -32020" in row and row.endswith("✓")
    assert "7 rows over http: 7 as the spec says" in table
    text = words("06_stateless.ipynb", "d2065488")
    assert "leaves the exact status" not in text and "**400**" in text and cites(text, "2026-07-28")
    solution = "".join(source("solutions/06_stateless_solutions.ipynb", "95f3f484"))
    assert "400" in solution


REMOVED_LIVE = [  # (cell, what its stored output must show)
    ("7e5a0002", "ping                              → -32601"),
    ("7e5a0002", "logging/setLevel                  → -32601"),
    ("7e5a0002", "notifications/roots/list_changed  → no reply"),
    ("7e5a0004", "logLevel in _meta: None  → 0 log messages"),
    ("7e5a0004", "logLevel in _meta: info  → 3 log messages"),
    ("7e5a0006", '"method":"notifications/subscriptions/acknowledged"'),
    ("7e5a0006", '"method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId"'),
    ("7e5a0006", '"method":"notifications/cancelled","params":{"requestId":"listen-1"'),
    ("7e5a0008", "modern (2026-07-28): 4 events; the last event id to resume from: none"),
    ("7e5a0008", "priming: an id, no data"),
    ("7e5a000a", "2025-11-25: resultType (absent)  → read as 'complete'"),
    ("7e5a000c", "2025-11-25: -32002 Resource not found"),
    ("7e5a000c", "2026-07-28: -32602 Resource not found"),
    ("7e5a000e", "conformance: completions, logging (deprecated in 2026-07-28)"),
    ("7e5a000e", "Sampling  deprecated in 2026-07-28 (SEP-2577)"),
]


@pytest.mark.parametrize("cell_id, shown", REMOVED_LIVE, ids=[f"{c}: {s[:40]}" for c, s in REMOVED_LIVE])
def test_lab07_shows_live_what_2026_07_28_removed_replaced_and_deprecated(cell_id, shown):
    assert shown in output("07_scaling.ipynb", cell_id)


def test_lab06_and_lab07_weather_advertises_no_logging_in_its_stored_discovery():
    assert '"logging"' not in output("06_stateless.ipynb", "e1712c4e")
    assert "weather:     completions, prompts" in output("07_scaling.ipynb", "7e5a000e")


def test_lab07_cites_the_spec_for_each_removed_or_deprecated_feature():
    for cell_id in ("7e5a0001", "7e5a0003", "7e5a0005", "7e5a0007", "7e5a0009", "7e5a000b", "7e5a000d"):
        assert cites(source("07_scaling.ipynb", cell_id), "2026-07-28"), cell_id


def test_lab06_teaches_the_base64_sentinel_before_exercise_2_asks_for_it():
    taught = position("06_stateless.ipynb", "6b1c0e21")
    assert "=?base64?" in source("06_stateless.ipynb", "6b1c0e21") and taught < position("06_stateless.ipynb", "3b2b5929")
    assert "Mcp-Param-City: =?base64?5LiK5rW3?=" in output("06_stateless.ipynb", "6b1c0e22")


def test_lab06_exercise_3_asks_about_stdio_and_lab07_exercise_2_separates_the_spec_from_the_servers_choice():
    assert "over stdio" in words("06_stateless.ipynb", "436f2c54")
    two = words("07_scaling.ipynb", "eb18eb0d")
    assert "MUST reject state that fails verification" in two and "names neither" in two and cites(two, "2026-07-28")


def test_lab07_puts_the_state_expiry_beside_the_time_a_user_may_take():
    text = words("07_scaling.ipynb", "5c01b703")
    assert "a second or an hour" not in text and "15 minutes" in text


# --- Lab 08 ---------------------------------------------------------------------------------------------------

def test_lab08_dates_the_registry_preview_to_2025_09_08():
    text = source("08_economics.ipynb", "e10df0b9")
    assert "8 September 2025" in text and "preview" in text and "late 2025" not in text
    assert "2025-09-08-mcp-registry-preview" in text


# --- Lab 15 -----------------------------------------------------------------------------------------------

def test_lab15_says_what_the_stored_initialize_replies_declare_and_no_logging():
    # 2025-11-25 "server/utilities/logging", Capabilities: a server that emits log messages declares
    # `logging`; ours never log, so the stored replies must not show it and the text must not claim it.
    for cell_id in ("15_ecosystem-11", "15_ecosystem-17"):
        shown = output("15_ecosystem.ipynb", cell_id)
        assert "capabilities" in shown and "capabilities.logging" not in shown, cell_id
    for cell_id in ("15_ecosystem-12", "15_ecosystem-18"):
        said = words("15_ecosystem.ipynb", cell_id)
        assert "ours declares `logging`" not in said and "`logging`, and" not in said, cell_id
    assert "no `logging`" in words("15_ecosystem.ipynb", "15_ecosystem-12")
    assert "Neither declares `logging`" in words("15_ecosystem.ipynb", "15_ecosystem-18")


def test_lab15_shows_seed_2s_survey_in_stored_outputs_kinds_sdks_and_the_registry():
    kinds = output("15_ecosystem.ipynb", "15_ecosystem-kinds")
    for family in ("files and code", "databases", "browsers", "SaaS"):
        assert family in kinds
    assert "Streamable HTTP + OAuth 2.1" in kinds and "servers/files.py" in kinds
    assert position("15_ecosystem.ipynb", "15_ecosystem-26") < position("15_ecosystem.ipynb", "15_ecosystem-kinds")
    assert "github.com/modelcontextprotocol/python-sdk" in output("15_ecosystem.ipynb", "15_ecosystem-27")
    registry = output("15_ecosystem.ipynb", "15_ecosystem-29")
    assert '"name": "io.github.mcplab/weather"' in registry and "registry.modelcontextprotocol.io/v0/servers" in registry


# --- issue 31's corrections, each against the spec text it cites --------------------------------------------

def test_lab05_says_only_the_clients_messages_are_posts_and_names_no_event_type_for_streamable_http():
    # 2025-11-25 transports: every JSON-RPC message sent from the client is a new POST; the server's come
    # back in the reply (or a GET stream). 2024-11-05 HTTP+SSE: server messages are SSE "message" events.
    assert "every client message is one POST" in words("05_streamable_http.ipynb", "cell-00")
    events = words("05_streamable_http.ipynb", "cell-10")
    assert "each `event: message`" not in events
    assert "Streamable HTTP names no event type" in events and "2024-11-05" in events


def test_lab05_keeps_the_bare_202_out_of_the_2024_11_05_text_and_says_when_http_sse_may_be_removed():
    # 2026-07-28 deprecated.mdx: HTTP+SSE deprecated in 2025-03-26, earliest removal three months after
    # SEP-2596 reaches Final.
    text = words("05_streamable_http.ipynb", "cell-22")
    assert "answered with a bare `202`" not in text
    assert "the 2024-11-05 text does not say" in text
    assert "deprecated since (2025-03-26)" in text
    assert "eligible for removal three months after SEP-2596" in text and f"{SPEC}2026-07-28/deprecated" in text


def test_lab06_says_a_legacy_server_may_assign_a_session():
    # 2025-11-25 transports, Session Management: a server MAY assign a session id at initialization.
    assert "a server MAY assign an `Mcp-Session-Id` (sessions are optional)" in words("06_stateless.ipynb", "01f956e7")


def test_lab07_counts_four_deprecations_in_2026_07_28_dynamic_client_registration_among_them():
    # 2026-07-28 deprecated.mdx: Roots, Sampling, Logging (SEP-2577) and Dynamic Client Registration.
    section = words("07_scaling.ipynb", "7e5a0001")
    assert "four features are on their way out" in section
    assert "Roots, Sampling, Logging; Dynamic Client Registration" in section
    assert "first revision released on or after 2027-07-28" in section
    summary = words("07_scaling.ipynb", "7c0a0004")
    assert "deprecated four features: Roots, Sampling, Logging and Dynamic Client Registration" in summary


def test_lab07_words_the_must_on_request_state_with_its_condition():
    # 2026-07-28 mrtr.mdx: if requestState influences authorization, resource access or business logic,
    # servers MUST protect its integrity and MUST reject state that fails verification.
    for cell_id in ("eb18eb0d", "7c0a0004"):
        text = words("07_scaling.ipynb", cell_id)
        assert "influences authorization, resource access or business logic" in text, cell_id


def test_lab07_resumes_from_the_priming_events_id_not_the_last_events():
    shown = output("07_scaling.ipynb", "7e5a0008").splitlines()
    legacy = next(line for line in shown if line.startswith("legacy"))
    assert legacy.endswith("the last event id to resume from: 1") and "priming: an id, no data" in shown[1]
    modern = next(line for line in shown if line.startswith("modern"))
    assert modern.endswith("none: this stream has no event ids")


def test_lab08_bounds_only_the_ratio_of_the_two_costs():
    text = words("08_economics.ipynb", "90a40c87")
    assert "bounded by the smaller of N and M" not in text
    assert "Only its ratio is bounded" in text and "989,900" in text
    assert 100 * 10_000 - (100 + 10_000) == 989_900


def test_lab10_says_should_not_for_taking_stderr_for_an_error():
    # 2026-07-28 stdio: clients MAY capture, forward or ignore stderr and SHOULD NOT assume it is an error.
    text = words("10_build_client.ipynb", "df0577b5")
    assert "SHOULD NOT take a line there for an error" in text and "must not take" not in text


def test_lab13_says_dynamic_registration_is_deprecated_in_2026_07_28_with_application_type_a_must():
    # 2026-07-28 client-registration.mdx: DCR deprecated; clients MUST specify an application_type.
    text = words("13_authorization.ipynb", "13_authorization-06")
    assert "deprecated in 2026-07-28, where a client using it MUST send an `application_type`" in text


def test_labs_09_and_10_explain_why_an_offline_card_has_no_schema_tick():
    for name, cell_id in (("09_build_server.ipynb", "c166378c"), ("10_build_client.ipynb", "5a5c88ab")):
        text = words(name, cell_id)
        assert "the official schemas are not available here" in text and "`mcplab schemas`" in text, name
        assert "✓" in text, name
