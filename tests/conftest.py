"""Shared test fixtures: where the repository and the official schemas are, and how a
missing outside tool is handled (skip with a reason locally, fail under CI=true)."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The suite speaks English whatever the shell chose (mcplab.i18n reads these; kernels and servers inherit
# them): a Chinese-speaking developer's MCPLAB_LANG must not change what the English notebooks show.
for _name in ("MCPLAB_LANG", "MCPLAB_NOTEBOOK_DIR"):
    os.environ.pop(_name, None)
SPEC_DIR = ROOT.parent / "shared" / "mcp-spec"
IN_CI = os.environ.get("CI", "").lower() == "true"


def need(condition: bool, reason: str) -> None:
    """Skip the calling test when ``condition`` is false, or fail it under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required under CI=true: {reason}")
    pytest.skip(reason)


@lru_cache(maxsize=None)
def _load_schema(version: str) -> dict:
    return json.loads((SPEC_DIR / version / "schema.json").read_text(encoding="utf-8"))


@pytest.fixture
def spec_schema():
    """``spec_schema(version)`` → the official schema dict, or skip (fail in CI) when absent."""

    def load(version: str) -> dict:
        need((SPEC_DIR / version / "schema.json").is_file(),
             f"the official schemas are not at {SPEC_DIR.name}/ beside the checkout")
        return _load_schema(version)

    return load


# --- the end-of-session walk of every recorded frame (tests/wire_log.py, tests/test_wire_schemas.py) ---------

WIRE_WALK = "test_wire_schemas.py::test_every_frame_the_suite_recorded_validates_against_its_revision"


def pytest_collection_modifyitems(config, items):
    """When the walk is part of the run, record every wire from here on and run the walk last."""
    walk = [item for item in items if item.nodeid.endswith(WIRE_WALK)]
    if walk:
        import wire_log

        wire_log.install()
        items[:] = [item for item in items if item not in walk] + walk


def pytest_unconfigure(config):
    import sys

    if "wire_log" in sys.modules:
        sys.modules["wire_log"].uninstall()
