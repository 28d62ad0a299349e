"""``python -m mcplab ...`` is the ``mcplab`` command, e.g. ``python -m mcplab setup`` on a fresh checkout."""

from mcplab.cli import main

raise SystemExit(main())
