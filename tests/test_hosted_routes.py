"""The hosted routes' files say what the project has: Binder installs an extra that exists and runs
from the repository root, the dev container installs one too and forwards JupyterLab's port, and the
JupyterHub config is valid Python that starts each student's server with the copy step. (Binder and
the dev container need Docker to run, which this suite does not have; the JupyterHub config runs for
real in tests/test_jupyterhub.py.)"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re

from conftest import ROOT

EXTRAS = set(importlib.metadata.metadata("mcplab").get_all("Provides-Extra") or ())


def _installed_extras(command: str) -> set[str]:
    return {extra for group in re.findall(r"""["']\.\[([\w,]+)\]["']""", command) for extra in group.split(",")}


def test_binder_installs_the_lab_extra_from_the_repository_root():
    post_build = ROOT / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "repo2docker runs postBuild only when it is executable"
    text = post_build.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/bash\n") and "set -euo pipefail" in text
    assert _installed_extras(text) == {"lab"} and "lab" in EXTRAS
    assert re.fullmatch(r"python-3\.\d+\n", (ROOT / "binder" / "runtime.txt").read_text())


def test_the_dev_container_installs_the_lab_extra_and_forwards_jupyterlab():
    text = (ROOT / ".devcontainer" / "devcontainer.json").read_text(encoding="utf-8")
    config = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))  # JSON with // comment lines
    assert _installed_extras(config["postCreateCommand"]) == {"lab"}
    assert 8888 in config["forwardPorts"]
    assert "ms-toolsai.jupyter" in config["customizations"]["vscode"]["extensions"]


def test_the_jupyterhub_config_copies_the_course_as_each_student_starts():
    source = (ROOT / "deploy" / "jupyterhub" / "jupyterhub_config.py").read_text(encoding="utf-8")
    ast.parse(source)
    assert "lab --copy-only --dir" in source and "exec " in source and "jupyterhub.singleuser" in source
