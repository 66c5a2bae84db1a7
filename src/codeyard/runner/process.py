"""Running one command of a build: its own process group, output into the trace, a deadline and an
abort (cancel or shutdown). Ending it ends the whole group, so a command's children (`sleep &`)
go with it."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .trace import Trace

# After SIGTERM, the group has this long before SIGKILL.
KILL_GRACE = 5.0
# After the command ends, its output is read for at most this long (a daemon child keeping the
# pipe open is killed with the group first).
DRAIN = 5.0
READ_SIZE = 64 * 1024


@dataclass(frozen=True)
class Result:
    exit_code: int | None
    timed_out: bool = False
    aborted: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.aborted


def run(argv: list[str], *, cwd: str, env: dict[str, str], trace: Trace, deadline: float,
        aborted: Callable[[], bool], grace: float = KILL_GRACE) -> Result:
    """Run ARGV until it exits, DEADLINE (time.monotonic()) passes, or ABORTED() turns true."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    reader = threading.Thread(target=_pump, args=(process.stdout, trace), daemon=True)
    reader.start()
    timed_out = was_aborted = False
    while True:
        try:
            code = process.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        if aborted():
            was_aborted = True
        elif time.monotonic() >= deadline:
            timed_out = True
        else:
            continue
        terminate_group(process, grace)
        code = process.wait()
        break
    kill_group(process.pid)  # whatever the command left running in the background
    reader.join(DRAIN)
    return Result(code, timed_out, was_aborted)


def terminate_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM to the process group, SIGKILL after GRACE seconds if its leader still runs."""
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    kill_group(process.pid)


def kill_group(pgid: int) -> None:
    _signal_group(pgid, signal.SIGKILL)


def _signal_group(pgid: int, number: int) -> None:
    try:
        os.killpg(pgid, number)
    except (ProcessLookupError, PermissionError):
        pass


def _pump(stream, trace: Trace) -> None:
    with stream:
        while True:
            chunk = os.read(stream.fileno(), READ_SIZE)
            if not chunk:
                return
            trace.write(chunk)
