"""``python -m mcplab ...`` is the ``mcplab`` command, e.g. ``python -m mcplab setup`` on a fresh checkout."""

from mcplab.cli import main

if __name__ == "__main__":  # importing the module (a tool walking the package) runs nothing
    raise SystemExit(main())
