"""Run Python the way mcplab meets Windows, as far as Linux can pretend (a helper, not a test).

    python tests/windows_like.py SCRIPT [ARGS...]      run SCRIPT as __main__
    python tests/windows_like.py -c CODE               run CODE

What changes before SCRIPT or CODE runs:
* ``fcntl``, ``termios``, ``tty`` and ``pty`` cannot be imported (Windows has none of them): a
  meta-path finder refuses them, so an unguarded import fails exactly as it would there;
* asyncio's loop cannot watch a descriptor: ``add_reader``/``add_writer`` raise NotImplementedError,
  as Windows' proactor loop does;
* ``mcplab.portable`` takes the Windows column for what can be forced on Linux: pipes are served by
  threads, and a child is ended with terminate()/kill() rather than signals to its group.

What cannot be pretended: ``CREATE_NEW_PROCESS_GROUP`` (POSIX refuses ``creationflags``), Windows'
own pipes, paths and console signals. Those rows are only read as a table (tests/test_portable.py).
"""

from __future__ import annotations

import asyncio
import importlib.abc
import runpy
import sys

HIDDEN = frozenset({"fcntl", "termios", "tty", "pty"})


class RefusePosixModules(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: this process pretends to be Windows)",
                                      name=name)
        return None


class CannotWatchLoop(asyncio.SelectorEventLoop):
    """An event loop that, like Windows' proactor loop, cannot wait for a descriptor to be ready."""

    def add_reader(self, fd, callback, *args):
        raise NotImplementedError("this loop cannot watch file descriptors (like Windows' proactor loop)")

    def add_writer(self, fd, callback, *args):
        raise NotImplementedError("this loop cannot watch file descriptors (like Windows' proactor loop)")


class CannotWatchPolicy(asyncio.DefaultEventLoopPolicy):
    def new_event_loop(self):
        return CannotWatchLoop()


def pretend() -> None:
    for name in HIDDEN:
        sys.modules.pop(name, None)
    sys.meta_path.insert(0, RefusePosixModules())
    asyncio.set_event_loop_policy(CannotWatchPolicy())
    from mcplab import portable

    portable.WATCHES_PIPES = False
    portable.SIGNALS_GROUPS = False


if __name__ == "__main__":
    pretend()
    if sys.argv[1] == "-c":
        code, sys.argv = sys.argv[2], ["-c", *sys.argv[3:]]
        exec(compile(code, "<windows_like -c>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
