"""The package's front door: what ``import mcplab`` offers, and that it loads nothing until asked."""

from __future__ import annotations

import inspect
import subprocess
import sys

import mcplab
from mcplab.wire import errors


def test_every_exception_of_the_error_tree_is_importable_from_mcplab():
    tree = {name for name, value in vars(errors).items()
            if inspect.isclass(value) and issubclass(value, Exception) and value.__module__ == errors.__name__}
    assert tree == set(mcplab._ERRORS)
    for name in tree:
        assert getattr(mcplab, name) is getattr(errors, name) and name in mcplab.__all__


def test_import_mcplab_loads_no_error_module_or_client_until_a_name_is_used():
    code = ("import sys, mcplab\n"
            "assert not {'mcplab.wire.errors', 'mcplab.client.client', 'anyio'} & set(sys.modules), sys.modules\n"
            "from mcplab import RemoteError\n"
            "assert 'mcplab.wire.errors' in sys.modules and 'mcplab.client.client' not in sys.modules\n"
            "print(RemoteError.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "mcplab.wire.errors"
