"""mcplab.auth.story: the authorization flow in a trace, as steps with the spec section and RFC of each."""

from __future__ import annotations

import pytest

from mcplab.auth import story
from mcplab.trace import Trace

FLOW = [  # (direction, method, status, label, url): what the client records for a 401, a whole flow, a retry
    ("c2s", "POST", None, None, None),
    ("s2c", "POST", 401, "refused: authorization needed", "http://127.0.0.1:8001/mcp"),
    ("c2s", "GET", None, "protected resource metadata", "http://127.0.0.1:8001/.well-known/oauth-protected-resource/mcp"),
    ("s2c", "GET", 200, "protected resource metadata", "http://127.0.0.1:8001/.well-known/oauth-protected-resource/mcp"),
    ("c2s", "GET", None, "authorization server metadata", "http://127.0.0.1:9000/.well-known/oauth-authorization-server"),
    ("s2c", "GET", 200, "authorization server metadata", "http://127.0.0.1:9000/.well-known/oauth-authorization-server"),
    ("c2s", "GET", None, "user agent: GET authorization page", "http://127.0.0.1:9000/authorize?state=x&code_challenge=y"),
    ("s2c", "GET", 302, "user agent: GET authorization page", "http://127.0.0.1:9000/authorize?state=x&code_challenge=y"),
    ("c2s", "POST", None, "token (authorization_code)", "http://127.0.0.1:9000/token"),
    ("s2c", "POST", 200, "token (authorization_code)", "http://127.0.0.1:9000/token"),
    ("c2s", "POST", None, "the same request, with the new token", "http://127.0.0.1:8001/mcp"),
    ("s2c", "POST", 200, None, None),
    ("c2s", "POST", None, None, None),                     # notifications/initialized: not part of the flow
    ("s2c", "POST", 202, None, None),
    ("c2s", "POST", None, None, None),                     # a call answered with an event stream...
    ("s2c", "POST", 200, None, None),
    ("s2c", "POST", None, None, None),                     # ... whose later events carry no status
]


def trace_of(rows) -> Trace:
    trace = Trace()
    trace.note("a note is no exchange")
    for direction, method, status, label, url in rows:
        head = {"method": method, "status": status, "headers": {}}
        if label:
            head.update(oauth=label, url=url)
        trace.record(direction, "http", "{}", None, http=head)
    return trace


def test_steps_pair_each_labelled_request_with_its_answer_and_leave_other_traffic_out():
    found = story.steps(trace_of(FLOW).frames)
    assert [(s.method, s.path, s.status, s.label) for s in found] == [
        ("POST", "/mcp", 401, "refused: authorization needed"),
        ("GET", "/.well-known/oauth-protected-resource/mcp", 200, "protected resource metadata"),
        ("GET", "/.well-known/oauth-authorization-server", 200, "authorization server metadata"),
        ("GET", "/authorize", 302, "user agent: GET authorization page"),
        ("POST", "/token", 200, "token (authorization_code)"),
        ("POST", "/mcp", 200, "the same request, with the new token")]


def test_the_table_names_a_section_and_an_rfc_for_every_step_and_no_port_or_query():
    text = story.table(trace_of(FLOW).frames)
    assert "8001" not in text and "9000" not in text and "state=" not in text
    lines = text.splitlines()
    assert len(lines) == 12 and lines[0].split() == ["1", "POST", "/mcp", "401", "refused:", "authorization", "needed"]
    assert lines[1].strip() == "Authorization Server Location · RFC 9728 §5.1, RFC 6750 §3"
    assert lines[3].strip().endswith("RFC 9728 §3") and lines[9].strip().endswith("RFC 8707 §2")


@pytest.mark.parametrize("label", sorted(story.SOURCES))
def test_every_source_links_both_revisions_of_the_authorization_chapter(label):
    source = story.SOURCES[label]
    assert source.url_2025.startswith(story.SPEC_2025 + "#") and source.url_2026.startswith(story.SPEC_2026)
    assert "#" in source.url_2026 and source.section and "RFC" in source.rfcs or "OAuth 2.1" in source.rfcs


def test_every_label_the_client_writes_has_a_source():
    import inspect

    from mcplab.auth import browser, client

    text = inspect.getsource(client) + inspect.getsource(browser)
    for label in ("protected resource metadata", "authorization server metadata", "dynamic client registration",
                  "refused: authorization needed", "refused: insufficient scope", "the same request, with the new token"):
        assert label in text and label in story.SOURCES
    assert 'f"token ({form[\'grant_type\']})"' in text and "token (authorization_code)" in story.SOURCES
    assert 'f"user agent: {method} authorization page"' in text
