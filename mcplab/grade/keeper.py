"""Every process a student's program starts, ended with it: a keeper process on Linux, its process group elsewhere.

Theory of operation
-------------------
A grader runs code that is still being written, on a machine a whole class shares, so whatever that
code starts must be gone when the card is printed: a forked copy that outlived the process we started,
a grandchild left in its group, a daemon that called setsid() to leave group and session both. A
process group reaches only the first two. On Linux the grader therefore starts the command through a
keeper, this file run as a script by a fresh interpreter, which

    1. makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4): an orphan anywhere
       below it is handed to it rather than to init, so every process the program ever made stays
       below the keeper, whatever it did to its group or session
    2. starts the command in a session of its own, on the three pipes it was given, and lets go of
       them: the grader's end-of-file must mean that the student's processes closed them
    3. talks with the grader on a socket, one line at a time:
           keeper → grader    started PID | error ERRNO | unkept ERRNO | exit CODE | ended COUNT
           grader → keeper    term (SIGTERM to the program's group, while the program lives) | end
    4. on ``end``, or when the grader's end of the socket closes (the grader itself was stopped),
       SIGKILLs every process below it, round after round, until it has no child left; then exits

"Below it" is a walk of /proc by parent pid; as the subreaper, a keeper with no child has no
descendant either. The keeper is in a session of its own, so a Ctrl-C in the grader's terminal
ends the grader, whose socket closing then ends the tree. What the keeper cannot survive is being
killed itself (the program is its child and may do that): its status then stands for the program's.
Where the kernel refuses a subreaper (``unkept``), the grader takes the portable route.

:class:`Tree` is the grader's side, the same verbs on either route: ``poll``, ``wait``, ``terminate``,
``end``. Where there is no keeper (:data:`KEEPER` false: not Linux, or a test forcing the other route)
the program is started in a group of its own and ``end`` is SIGKILL to that group (portable.end),
which misses a process that left the group. This file imports only the standard library at the top:
the keeper runs isolated (``python -I``), apart from mcplab and from the student's folder.
"""

from __future__ import annotations

import ctypes
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Sequence

KEEPER = sys.platform.startswith("linux") and os.path.isdir("/proc/self")
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
ENDING = 30.0  # seconds the keeper may take to end a tree: SIGKILL is quick, a machine under load is not


class Tree:
    """A command started for a grader, and everything it starts; ``returncode`` once the command exited."""

    def __init__(self, argv: Sequence[str], *, stdin: Any, stdout: Any, stderr: Any, cwd: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.argv = list(argv)
        self.returncode: int | None = None
        self._socket: socket.socket | None = None
        self._heard, self._ended, self._said = b"", False, ""
        start = dict(stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd, env=env, bufsize=0)
        if KEEPER and self._keep(start):
            return
        from mcplab import portable

        self.process = subprocess.Popen(self.argv, **start, **portable.new_group())
        self.pid = self.process.pid

    def _keep(self, start: dict[str, Any]) -> bool:
        """Start the command under a keeper; False if this system would not let it keep a tree."""
        ours, theirs = socket.socketpair()
        with theirs:
            # Its own session: a Ctrl-C aimed at the grader's terminal ends the grader, not the keeper
            # (whose socket then closes, and it ends the tree).
            self.process = subprocess.Popen([sys.executable, "-I", os.path.abspath(__file__), str(theirs.fileno()),
                                             *self.argv], **start, pass_fds=(theirs.fileno(),), start_new_session=True)
        self._socket = ours
        while not self._said and not self._ended:
            self._listen(None)
        word, _, value = self._said.partition(" ")
        if word == "started":
            self.pid = int(value)
            return True
        code = self.process.wait()
        ours.close()
        self._socket, self._ended = None, False
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()
        if word == "error":  # the command itself could not be started: as Popen would say it
            raise OSError(int(value), os.strerror(int(value)), self.argv[0])
        if word == "unkept":  # no subreaper here (an old kernel, a sandbox): the process group will have to do
            return False
        raise RuntimeError(f"the grader's keeper stopped before starting {self.argv[0]} (status {code})")

    # --- the grader's verbs ------------------------------------------------------------------------
    @property
    def stdin(self) -> Any:
        return self.process.stdin

    @property
    def stdout(self) -> Any:
        return self.process.stdout

    @property
    def stderr(self) -> Any:
        return self.process.stderr

    def fileno(self) -> int | None:
        """A descriptor that turns readable when the command exits (the keeper's socket), or None."""
        return self._socket.fileno() if self._socket is not None else None

    def poll(self) -> int | None:
        """The command's exit status (negative: the signal that ended it), or None while it runs."""
        if self._socket is None:
            self.returncode = self.process.poll()
        else:
            self._listen(0.0)
        return self.returncode

    def wait(self, timeout: float) -> int:
        """The command's exit status; ``subprocess.TimeoutExpired`` if it still runs after ``timeout``."""
        if self._socket is None:
            self.returncode = self.process.wait(timeout)
            return self.returncode
        deadline = time.monotonic() + timeout
        while True:
            self._listen(max(0.0, deadline - time.monotonic()))  # at least one look, even at timeout 0
            if self.returncode is not None:
                return self.returncode
            if self._ended or time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.argv, timeout)

    def terminate(self) -> None:
        """SIGTERM to the command's process group: what the stdio transport sends a server that stays."""
        if self._socket is None:
            from mcplab import portable

            portable.end(self.process, hard=False)
        else:
            self._say(b"term")

    def end(self) -> None:
        """SIGKILL to every process of the tree (the group only, where there is no keeper); then reap."""
        if self._socket is None:
            from mcplab import portable

            portable.end(self.process, hard=True)
            self.returncode = self.process.wait()
            return
        if not self._ended:
            self._say(b"end")
            deadline = time.monotonic() + ENDING
            while not self._ended and (left := deadline - time.monotonic()) > 0:
                self._listen(left)
        self._socket.close()
        try:
            self.process.wait(ENDING)
        except subprocess.TimeoutExpired:  # a keeper that could not end its tree in time: say so, do not hang
            self.process.kill()
            raise RuntimeError(f"the grader could not end the processes of {self.argv[0]} within {ENDING:g} s")

    # --- the socket --------------------------------------------------------------------------------
    def _say(self, line: bytes) -> None:
        try:
            self._socket.sendall(line + b"\n")  # type: ignore[union-attr]
        except OSError:  # the keeper is gone (it was killed): it has nothing left to end
            self._ended = True

    def _listen(self, timeout: float | None) -> None:
        """Read what the keeper said within ``timeout`` seconds (None: until it says something)."""
        if self._socket is None or self._ended:
            return
        self._socket.settimeout(timeout)
        try:
            data = self._socket.recv(4096)
        except (BlockingIOError, socket.timeout):
            return
        except OSError:
            data = b""
        if not data:  # the keeper exited: after "ended", or killed (by the program itself, most likely)
            self._ended = True
            if self.returncode is None and self._said:  # killed: its status stands for the program's
                self.returncode = self.process.wait()
            return
        *lines, self._heard = (self._heard + data).split(b"\n")
        for line in lines:
            word, _, value = line.decode("ascii", "replace").partition(" ")
            if word == "exit":
                self.returncode = int(value)
            elif word == "ended":
                self._ended = True
            else:  # started, error or unkept: the first thing it says
                self._said = line.decode("ascii", "replace")


# --- the keeper itself (run as a script) ---------------------------------------------------------------

def descendants(root: int) -> list[int]:
    """Every process below ``root``, found by parent pid in /proc (zombies included)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so cut at the last one
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Keeper:
    """The keeper's state: the program it started, the socket to the grader, the SIGCHLD wake-up pipe."""

    def __init__(self, control: socket.socket, program: subprocess.Popen) -> None:
        self.control = control
        self.program = program
        self.wake, wake_write = os.pipe()
        os.set_blocking(self.wake, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # only to wake the selector
        self.ended: set[int] = set()

    def tell(self, line: str) -> None:
        try:
            self.control.sendall(line.encode("ascii") + b"\n")
        except OSError:
            pass  # the grader is gone; the tree is ended all the same

    def reap(self) -> bool:
        """Collect every child that has exited (telling the program's status); False when no child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.program.pid:
                self.program.returncode = os.waitstatus_to_exitcode(status)
                self.tell(f"exit {self.program.returncode}")

    def end(self) -> None:
        """SIGKILL everything below us, round after round, until no child is left."""
        while True:
            below = descendants(os.getpid())
            # A setuid program keeps its real uid, the student's, so it can be killed too.
            for pid in below:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.ended.update(below)
            if not self.reap():
                return
            # Wait for the next death (SIGCHLD), but not for ever: an orphan handed to us after the
            # walk is found by the next one.
            select.select([self.wake], [], [], 0.1)
            self._drain_wake()

    def _drain_wake(self) -> None:
        try:
            while os.read(self.wake, 4096):
                pass
        except BlockingIOError:
            pass

    def serve(self) -> None:
        self.reap()  # the program may have exited before our SIGCHLD handler was there to hear it
        selector = selectors.DefaultSelector()
        selector.register(self.control, selectors.EVENT_READ, "grader")
        selector.register(self.wake, selectors.EVENT_READ, "child")
        heard = b""
        while True:
            for key, _ in selector.select():
                if key.data == "child":
                    self._drain_wake()
                    self.reap()
                    continue
                data = self.control.recv(4096)
                *lines, heard = (heard + data).split(b"\n")
                if b"end" in lines or not data:
                    self.end()
                    self.tell(f"ended {len(self.ended)}")
                    return
                if b"term" in lines and self.program.returncode is None:
                    # Not yet reaped, so the group id is still the program's: it cannot name a stranger.
                    try:
                        os.killpg(self.program.pid, signal.SIGTERM)
                    except (ProcessLookupError, PermissionError):
                        pass


def keep(control_fd: int, argv: list[str]) -> int:
    control = socket.socket(fileno=control_fd)
    control.set_inheritable(False)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        control.sendall(f"unkept {ctypes.get_errno()}\n".encode("ascii"))
        return 1
    try:
        program = subprocess.Popen(argv, start_new_session=True)
    except OSError as exc:
        control.sendall(f"error {exc.errno}\n".encode("ascii"))
        return 1
    keeper = Keeper(control, program)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # let go of the program's pipes
        os.dup2(null, fd)
    os.close(null)
    keeper.tell(f"started {program.pid}")
    keeper.serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(keep(int(sys.argv[1]), sys.argv[2:]))
