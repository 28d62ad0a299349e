"""Shared test fixtures: where the repository and the official schemas are, and how a missing
outside tool is handled: :func:`need` skips with a reason locally and fails under CI=true.

The official schemas are outside data: the suite reads them where the trace viewer does
(``mcplab/schemas.py``: ``$MCPLAB_SPEC_DIR``, else ``../shared/mcp-spec`` beside the checkout,
else the user's cache that ``mcplab schemas`` fills). A test that needs one calls
:func:`need_schema` (or the ``spec_schema`` fixture) at the point it needs it; without the
schemas every such test skips with the same reason, and the run ends with one line that counts them.

nbval's flags are set here rather than in pyproject's ``addopts``, and only when nbval is installed,
so ``pytest`` without the notebook extra still runs the Python tests instead of stopping at an unknown
``--nbval``. (Not in a ``labs/conftest.py``: two top-level ``conftest`` modules would shadow each
other, and the tests import this one by name.) A run of notebooks alone names its flags, e.g.
``pytest --nbval --nbval-current-env --nbval-sanitize-with labs/nbval-sanitize.cfg labs/01_jsonrpc.ipynb``.
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from mcplab import i18n, schemas
from mcplab.wire.versions import ALL_VERSIONS

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup  # anyio's backport on 3.10

ROOT = Path(__file__).resolve().parent.parent

# The suite speaks English whatever the shell chose (mcplab.i18n reads these; kernels and servers inherit
# them): a Chinese-speaking developer's MCPLAB_LANG or zh_CN locale must not change what the English
# notebooks show. A test that wants Chinese sets one of them for itself.
for _name in ("MCPLAB_LANG", "MCPLAB_NOTEBOOK_DIR"):
    os.environ.pop(_name, None)
if i18n.locale_language() != "en":
    os.environ["LC_ALL"] = "C.UTF-8"
IN_CI = os.environ.get("CI", "").lower() == "true"
SPEC_DIR = schemas.spec_dir()  # resolved once, before any test sets $MCPLAB_SPEC_DIR for itself
SCHEMAS_MISSING = ("the official MCP schemas are neither in ../shared/mcp-spec nor in the user's cache "
                   "(`mcplab schemas` downloads them)")


def need(condition: bool, reason: str) -> None:
    """Skip the calling test when ``condition`` is false, or fail it under CI=true."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required under CI=true: {reason}")
    pytest.skip(reason)


def schema_path(version: str) -> Path | None:
    """The official schema of ``version``, where the suite found the schemas, or None."""
    return schemas.schema_file(version, SPEC_DIR)


def need_schema(version: str) -> dict:
    """The official schema of ``version`` as a dict; skip (fail under CI=true) when it is not here."""
    path = schema_path(version)
    need(path is not None, SCHEMAS_MISSING)
    return _load_schema(str(path))


def need_all_schemas() -> Path:
    """The folder holding every revision's schema; skip (fail under CI=true) when one is missing."""
    need(all(schema_path(version) for version in ALL_VERSIONS), SCHEMAS_MISSING)
    return SPEC_DIR


@lru_cache(maxsize=None)
def _load_schema(path: str) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


@pytest.fixture
def spec_schema():
    """``spec_schema(version)`` → the official schema dict, or skip (fail in CI) when absent."""
    return need_schema


# --- nbval, where it is installed ----------------------------------------------------------------------

def pytest_configure(config):
    if not config.pluginmanager.hasplugin("nbval"):
        return
    option = config.option
    if not option.nbval_lax:  # explicit flags win: --nbval-lax, a kernel name, another sanitize file
        option.nbval = True
    option.nbval_current_env = option.nbval_current_env or not option.nbval_kernel_name
    option.nbval_sanitize_with = option.nbval_sanitize_with or str(ROOT / "labs" / "nbval-sanitize.cfg")
    config.pluginmanager.register(ChineseCells(), "mcplab-chinese-cells")


class ChineseCells:
    """A Chinese lab's cell that nbval just ran printed no English prose its stored outputs lack
    (tests/zh_outputs.py; tests/test_zh_outputs.py counts the stored ones). A plugin rather than a
    hook of this file, whose run hooks would reach only the items under tests/, not labs/."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        result = yield
        outputs = getattr(item, "test_outputs", None)
        if type(item).__name__ == "IPyNbCell" and outputs and "zh-CN" in item.path.parts:
            import zh_outputs

            index = next(i for i, cell in enumerate(item.parent.nb.cells) if cell is item.cell)
            new = zh_outputs.new_english(outputs, item.path, index)
            if new:
                pytest.fail(f"{item.path.name} cell {index} printed English its stored outputs do not show: "
                            + " | ".join(new), pytrace=False)
        return result


# --- a skip raised inside a task group ---------------------------------------------------------------

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """``need()`` may be called inside an anyio task group, which wraps every exception in a group:
    a group that holds only skips (or only CI failures) is that skip (or failure). Recent pytest
    releases see through the group themselves; 8.0, the oldest pyproject.toml allows, reports a failure."""
    try:
        return (yield)
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        outcome = (pytest.skip.Exception, pytest.fail.Exception)
        if leaves and all(isinstance(leaf, outcome) for leaf in leaves):
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found += _leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return found


# --- one line at the end: how many tests the missing schemas skipped ---------------------------------

def pytest_terminal_summary(terminalreporter):
    skipped = terminalreporter.stats.get("skipped", [])
    count = sum(1 for report in skipped if SCHEMAS_MISSING in str(report.longrepr))
    if count:
        terminalreporter.write_line(f"mcplab: {count} test{'s' * (count != 1)} skipped without the official "
                                    f"schemas; run `mcplab schemas` online, then the tests again", yellow=True)


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
