"""A fresh clone on a user's machine: no ../shared beside it, nothing in the schema cache. The suite's
collection has no error there, the tests that need no schema pass, the ones that do skip with the one
reason and a count; once ``mcplab schemas`` has filled the user's cache, they run from it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SCHEMAS_MISSING, need_all_schemas
from mcplab.wire.versions import ALL_VERSIONS
from schema_helpers import mirror, serving

pytestmark = pytest.mark.subprocess
# Files that mix tests needing a schema with tests that need none (each kind in memory or a subprocess).
SAMPLE = ["tests/test_lifecycle.py", "tests/test_notebook_views.py", "tests/test_server_schema.py"]
PLUGINS = ["-p", "no:cacheprovider", "-p", "no:nbval"]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The tracked files in a folder with no ../shared beside it, and a user's environment with an empty cache."""
    home = tmp_path_factory.mktemp("user")
    copy = home / "course" / "mcplab"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    env = {key: value for key, value in os.environ.items() if key != "CI" and not key.startswith("MCPLAB_")}
    env.update(XDG_CACHE_HOME=str(home / "cache"), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    return copy, env


def pytest_in(copy: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", *PLUGINS, *args], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=900)


def counts(output: str) -> dict[str, int]:
    """pytest's last line, ``3 failed, 40 passed, 2 skipped in 1.2s``, as a dict."""
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|deselected)", output)}


def test_the_whole_suite_collects_without_an_error_in_a_fresh_clone(clone):
    copy, env = clone
    assert not (copy.parent.parent / "shared").exists()
    done = pytest_in(copy, env, "--collect-only", "-q")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", done.stdout.splitlines()[-1]), done.stdout[-500:]


def test_without_any_schema_the_tests_pass_or_skip_with_the_one_reason_and_a_count(clone):
    copy, env = clone
    done = pytest_in(copy, env, *SAMPLE)
    tally = counts(done.stdout.splitlines()[-1])
    assert done.returncode == 0 and "failed" not in tally and "error" not in tally and "errors" not in tally, \
        done.stdout[-3000:]
    assert tally["passed"] > 50 and tally["skipped"] > 10
    reasons = set(re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", done.stdout, re.M))
    assert reasons <= {SCHEMAS_MISSING, "the official schema examples are only in ../shared/mcp-spec, not in the cache"}
    noted = re.search(r"^mcplab: (\d+) tests skipped without the official schemas", done.stdout, re.M)
    assert noted and int(noted.group(1)) == tally["skipped"]


def test_after_mcplab_schemas_the_same_tests_read_the_users_cache(clone, tmp_path):
    official = need_all_schemas()
    copy, env = clone
    files = {v: (official / v / "schema.json").read_bytes() for v in ALL_VERSIONS}
    with serving(mirror(tmp_path / "www", files)) as (url, asked):
        fetched = subprocess.run([sys.executable, "-m", "mcplab", "schemas"], cwd=copy,
                                 env={**env, "MCPLAB_SCHEMA_URL": url}, capture_output=True, text=True, timeout=120)
    assert fetched.returncode == 0, fetched.stderr
    assert len(asked) == len(ALL_VERSIONS)
    assert all(f"{v}  downloaded" in fetched.stdout for v in ALL_VERSIONS)
    cache = Path(env["XDG_CACHE_HOME"]) / "mcplab" / "mcp-spec"
    assert sorted(p.parent.name for p in cache.glob("*/*/schema.json")) == sorted(ALL_VERSIONS)
    done = pytest_in(copy, env, *SAMPLE)
    tally = counts(done.stdout.splitlines()[-1])
    assert done.returncode == 0 and "failed" not in tally, done.stdout[-3000:]
    assert SCHEMAS_MISSING not in done.stdout and tally.get("skipped", 0) <= 1  # the examples live in ../shared only
