"""``mcplab schemas``: the official schemas fetched over real HTTP on 127.0.0.1, each checked against the
digest the package keeps, cached atomically, reused without a request, and one sentence when offline;
the badges read the same folders in the same order."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, need_all_schemas
from schema_helpers import mirror, serving
from mcplab.wire import jsonrpc
from mcplab import notebook, schemas
from mcplab.trace import Trace
from mcplab.wire.versions import ALL_VERSIONS

pytestmark = pytest.mark.http
FAKE = {version: json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": version}).encode()
        for version in ALL_VERSIONS}  # stand-ins, with their digests patched in: the code path is the same


@pytest.fixture(autouse=True)
def no_proxy_for_loopback(monkeypatch):
    # httpx honours HTTP_PROXY from the environment (as a classroom behind a proxy needs), even for 127.0.0.1.
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1")


@pytest.fixture
def fake_digests(monkeypatch):
    monkeypatch.setattr(schemas, "DIGESTS", {v: hashlib.sha256(data).hexdigest() for v, data in FAKE.items()})


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def cached_files(cache: Path) -> list[str]:
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


# --- the download, in process (stand-in files, so these run on every machine) ----------------------------

def test_each_revision_is_downloaded_verified_and_cached_then_reused_without_a_request(tmp_path, fake_digests):
    cache = tmp_path / "cache"
    with serving(mirror(tmp_path / "www", FAKE)) as (url, asked):
        first = schemas.fetch(base_url=url, cache=cache)
        assert [(f.version, f.status) for f in first] == [(v, schemas.DOWNLOADED) for v in ALL_VERSIONS]
        assert asked == [f"/schema/{v}/schema.json" for v in ALL_VERSIONS]
        assert all((cache / v / "schema.json").read_bytes() == FAKE[v] for v in ALL_VERSIONS)
        again = schemas.fetch(base_url=url, cache=cache)
        assert [f.status for f in again] == [schemas.CACHED] * len(ALL_VERSIONS)
        assert len(asked) == len(ALL_VERSIONS)  # the cache was trusted: no second request
    assert cached_files(cache) == [f"{v}/schema.json" for v in ALL_VERSIONS]  # no temporary file left


def test_a_tampered_file_is_refused_and_nothing_is_cached_for_it(tmp_path, fake_digests):
    tampered = {**FAKE, "2025-11-25": FAKE["2025-11-25"].replace(b"2025-11-25", b"2025-11-26")}
    cache = tmp_path / "cache"
    with serving(mirror(tmp_path / "www", tampered)) as (url, _):
        results = {f.version: f for f in schemas.fetch(base_url=url, cache=cache)}
    refused = results["2025-11-25"]
    assert (refused.status, refused.path) == (schemas.REFUSED, None)
    assert "SHA-256" in refused.detail and "refused, nothing cached" in refused.detail
    assert not (cache / "2025-11-25").exists() or cached_files(cache / "2025-11-25") == []
    assert [v for v, f in results.items() if f.status == schemas.DOWNLOADED] == [
        v for v in ALL_VERSIONS if v != "2025-11-25"]
    status, lines = schemas.summary(list(results.values()))
    assert status == 1 and "1 of 5 official schemas are missing in the cache" in lines[0] and "2025-11-25" in lines[0]
    assert lines[-1].startswith("  2025-11-25  refused: ") and lines[1:-1] == [
        f"  {v}  downloaded" for v in ALL_VERSIONS if v != "2025-11-25"]


def test_a_damaged_cached_file_is_fetched_again(tmp_path, fake_digests):
    cache = tmp_path / "cache"
    with serving(mirror(tmp_path / "www", FAKE)) as (url, asked):
        schemas.fetch(base_url=url, cache=cache)
        (cache / "2024-11-05" / "schema.json").write_bytes(b"{}")
        results = schemas.fetch(base_url=url, cache=cache)
    assert [f.status for f in results] == [schemas.DOWNLOADED] + [schemas.CACHED] * 4
    assert asked.count("/schema/2024-11-05/schema.json") == 2
    assert (cache / "2024-11-05" / "schema.json").read_bytes() == FAKE["2024-11-05"]


@pytest.mark.parametrize("files, why", [
    ({}, "answered HTTP 404"),
    ({v: b"x" * (schemas.MAX_BYTES + 1) for v in ALL_VERSIONS}, "more than 2,097,152 bytes: not a schema"),
], ids=["missing upstream", "oversized"])
def test_a_bad_answer_fails_that_revision_with_its_reason_and_caches_nothing(tmp_path, fake_digests, files, why):
    cache = tmp_path / "cache"
    with serving(mirror(tmp_path / "www", files)) as (url, _):
        results = schemas.fetch(base_url=url, cache=cache)
    assert all(f.status == schemas.FAILED and why in f.detail for f in results), results
    assert cached_files(cache) == []


def test_offline_with_an_empty_cache_says_one_sentence_and_asks_once(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/schema"
    results = schemas.fetch(base_url=url, cache=tmp_path / "cache")
    assert [f.status for f in results] == [schemas.FAILED] * len(ALL_VERSIONS)
    assert len({f.detail for f in results}) == 1  # unreachable once: the other files were not tried
    status, lines = schemas.summary(results)
    assert status == 1 and len(lines) == 1
    assert lines[0].startswith(f"mcplab schemas: 127.0.0.1:{url.split(':')[2].split('/')[0]} could not be reached")
    assert "badges stay off" in lines[0] and "nothing else needs them" in lines[0]
    assert cached_files(tmp_path / "cache") == []


def test_an_unknown_revision_is_refused_before_any_request():
    with pytest.raises(ValueError, match="no digest for 2099-01-01"):
        schemas.fetch(["2099-01-01"], base_url="http://127.0.0.1:9/")


# --- the command, as a user runs it (the official files, so their digests are the package's own) ---------

def run_schemas(*args: str, cache_home: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in (schemas.SPEC_DIR_ENV, schemas.BASE_URL_ENV)}
    return subprocess.run([sys.executable, "-m", "mcplab.cli", "schemas", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env={**environ, "XDG_CACHE_HOME": str(cache_home),
                                                      "NO_PROXY": "127.0.0.1", **env})


@pytest.mark.subprocess
def test_the_command_downloads_the_official_files_and_refuses_a_tampered_one(tmp_path):
    official = need_all_schemas()
    files = {v: (official / v / "schema.json").read_bytes() for v in ALL_VERSIONS}
    cache = tmp_path / "cache"
    with serving(mirror(tmp_path / "www", files)) as (url, asked):
        done = run_schemas("--base-url", url, "--cache-dir", str(cache), cache_home=tmp_path / "home-cache")
        assert done.returncode == 0, done.stderr
        assert all(f"{v}  downloaded" in done.stdout for v in ALL_VERSIONS)
        assert all((cache / v / "schema.json").read_bytes() == files[v] for v in ALL_VERSIONS)
        again = run_schemas("--cache-dir", str(cache), cache_home=tmp_path / "home-cache",
                            MCPLAB_SCHEMA_URL=url)
        assert again.returncode == 0 and again.stdout.count("  cached\n") == len(ALL_VERSIONS)
        assert len(asked) == len(ALL_VERSIONS)
    (tmp_path / "www" / "schema" / "2026-07-28" / "schema.json").write_bytes(files["2026-07-28"] + b"\n")
    with serving(tmp_path / "www") as (url, _):
        tampered = run_schemas("--base-url", url, "--cache-dir", str(tmp_path / "other"),
                               cache_home=tmp_path / "home-cache")
    assert tampered.returncode == 1 and "2026-07-28  refused" in tampered.stderr
    assert not (tmp_path / "other" / "2026-07-28").exists() or not any((tmp_path / "other" / "2026-07-28").iterdir())


@pytest.mark.subprocess
def test_the_command_offline_prints_one_sentence_on_stderr_and_exits_1(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/schema"
    done = run_schemas("--base-url", url, "--cache-dir", str(tmp_path / "cache"), cache_home=tmp_path / "c")
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "badges stay off" in done.stderr
    assert not (tmp_path / "cache").exists() or cached_files(tmp_path / "cache") == []


# --- where the badges look ---------------------------------------------------------------------------------

def test_the_lookup_order_is_the_variable_then_shared_then_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(schemas.SPEC_DIR_ENV, raising=False)
    shared = tmp_path / "shared" / "mcp-spec"
    monkeypatch.setattr(schemas, "shared_dir", lambda: shared)
    cache = schemas.cache_dir()
    assert cache == tmp_path / "xdg" / "mcplab" / "mcp-spec" / schemas.PINNED_COMMIT[:12]
    assert schemas.spec_dir() == cache
    shared.mkdir(parents=True)
    assert schemas.spec_dir() == shared
    monkeypatch.setenv(schemas.SPEC_DIR_ENV, str(tmp_path / "mine"))
    assert schemas.spec_dir() == tmp_path / "mine"  # even when it does not exist: badges off, on purpose


def test_the_badges_read_the_cache_that_the_command_filled(tmp_path, monkeypatch):
    official = need_all_schemas()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(schemas.SPEC_DIR_ENV, raising=False)
    monkeypatch.setattr(schemas, "shared_dir", lambda: tmp_path / "no-shared")
    trace = Trace()
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    trace.record("c2s", "stdio", raw, jsonrpc.decode(raw))
    off = notebook.show(trace, version="2025-11-25")
    assert not off.schemas_found and "mcplab schemas" in off._repr_html_()
    files = {v: (official / v / "schema.json").read_bytes() for v in ALL_VERSIONS}
    with serving(mirror(tmp_path / "www", files)) as (url, _):
        assert {f.status for f in schemas.fetch(base_url=url)} == {schemas.DOWNLOADED}
    on = notebook.show(trace, version="2025-11-25")
    assert on.schemas_found and on.checks[1].status == "valid"


def test_the_kept_digests_are_those_of_the_official_files():
    official = need_all_schemas()
    assert set(schemas.DIGESTS) == set(ALL_VERSIONS)
    for version in ALL_VERSIONS:
        assert hashlib.sha256((official / version / "schema.json").read_bytes()).hexdigest() == \
            schemas.DIGESTS[version], version


# --- the suite's own oracle tables name definitions the schemas have -----------------------------------------

def test_every_definition_the_frame_validator_names_is_in_the_schemas():
    """validate_frames() fails on a definition the revision lacks; this finds a misspelt name before that."""
    import client_helpers

    tables = {**client_helpers._REQUESTS, **client_helpers._NOTIFICATIONS}
    folder = need_all_schemas()
    problems = []
    for version in ALL_VERSIONS:
        root = json.loads((folder / version / "schema.json").read_text(encoding="utf-8"))
        defs = root.get("$defs") or root["definitions"]
        methods: dict[str, set[str]] = {}
        for name, definition in defs.items():
            if "const" in definition.get("properties", {}).get("method", {}):
                methods.setdefault(definition["properties"]["method"]["const"], set()).add(name)
        for method, name in tables.items():
            if method in methods and name not in methods[method]:
                problems.append(f"{version}: {method} is {sorted(methods[method])}, not {name}")
        for method, name in client_helpers._RESULTS.items():
            if method in methods and name not in defs:
                problems.append(f"{version}: no result definition {name} for {method}")
    assert problems == []
