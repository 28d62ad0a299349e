"""nbval checks every notebook here when it is installed: each cell's output against the stored one.

The flags live here rather than in pyproject's ``addopts`` so that ``pytest`` without nbval (the
notebook extra not installed) still runs the Python tests instead of stopping at an unknown
``--nbval`` flag. Explicit flags win: ``--nbval-lax``, ``-p no:nbval`` or another sanitize file.
"""

from __future__ import annotations

from pathlib import Path

SANITIZE = Path(__file__).resolve().parent / "nbval-sanitize.cfg"


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("nbval"):
        return
    option = config.option
    if not option.nbval_lax:
        option.nbval = True
    option.nbval_current_env = option.nbval_current_env or not option.nbval_kernel_name
    option.nbval_sanitize_with = option.nbval_sanitize_with or str(SANITIZE)
