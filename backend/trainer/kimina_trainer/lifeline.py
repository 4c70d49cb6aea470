"""The trainer lives only as long as the backend that started it.

A trainer left running by a backend that died (kill -9, a crash, a closed terminal) would keep the GPUs busy and post
steps the next backend no longer expects. So, when the backend started us (its pid is in the run config,
`backend_pid`):
- Linux: the kernel sends SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG); a parent already gone by then is
  noticed by comparing getppid() with the pid we were given.
- Everywhere: the backend holds the write end of our stdin; when it dies the pipe reaches end-of-file and a
  watcher thread ends the process at once.
The same pipe carries the backend's graceful stop on Windows, where no signal a process can handle reaches it from
outside (Node's kill is TerminateProcess): a line `stop` calls `on_stop`, as SIGTERM does on POSIX.
SIGKILL rather than a graceful stop: nothing more may reach a backend that has moved on; the run resumes from its
last checkpoint.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
EXIT_ORPHANED = 75


STOP_LINE = b"stop"


def _die() -> None:
    kill = getattr(signal, "SIGKILL", None)  # Windows has none
    if kill is not None:
        os.kill(os.getpid(), kill)
    os._exit(EXIT_ORPHANED)


def set_parent_death_signal() -> bool:
    """Linux only: SIGKILL to us when our parent exits. False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def watch_stdin(on_stop: Callable[[], None] | None = None) -> threading.Thread:
    """Ends the process when stdin reaches end-of-file (the backend holding its write end is gone); a `stop` line
    calls `on_stop`."""
    def watch() -> None:
        # os.read on the raw descriptor: a thread blocked in sys.stdin's buffered reader would hold its lock and
        # abort the interpreter's shutdown ("could not acquire lock for <stdin> at interpreter shutdown")
        pending = b""
        try:
            while chunk := os.read(0, 4096):
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-64:]
                if on_stop is not None and any(line.strip() == STOP_LINE for line in lines):
                    on_stop()
        except OSError:
            pass
        _die()

    thread = threading.Thread(target=watch, name="kimina-lifeline", daemon=True)
    thread.start()
    return thread


def bind_to_backend(backend_pid: int | None, stdin_lifeline: bool = True, on_stop: Callable[[], None] | None = None) -> str:
    """Ties this process's life to the backend's (`backend_pid`: our parent); returns what was set up (for the log)."""
    if not backend_pid or backend_pid <= 0:
        return "none (started by hand)"
    how = []
    if set_parent_death_signal():
        how.append("parent-death signal")
    if os.getppid() != backend_pid:  # the backend died before the signal was armed
        os._exit(EXIT_ORPHANED)
    if stdin_lifeline:
        watch_stdin(on_stop)
        how.append("stdin watch")
    return " + ".join(how) or "none"
