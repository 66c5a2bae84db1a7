"""A build's command in its own process group: output into the trace, deadline, abort."""

from __future__ import annotations

import os
import threading
import time

from codeyard.runner import process
from codeyard.runner.trace import Trace

ENV = {"PATH": os.environ["PATH"]}


def _run(tmp_path, script, *, deadline=30.0, aborted=lambda: False, grace=5.0):
    trace = Trace()
    started = time.monotonic()
    result = process.run(["bash", "-c", script], cwd=str(tmp_path), env=ENV, trace=trace,
                         deadline=started + deadline, aborted=aborted, grace=grace)  # fmt: skip
    return result, trace, time.monotonic() - started


def _alive(pid: int) -> bool:
    """Whether PID runs (a zombie left to a parent that does not reap it counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_output_and_exit_code(tmp_path):
    result, trace, _ = _run(tmp_path, "echo out; echo err >&2; exit 3")
    assert result == process.Result(3) and not result.ok
    assert sorted(trace.text().splitlines()) == ["err", "out"]
    assert _run(tmp_path, "true")[0].ok


def test_the_deadline_kills_the_whole_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    result, trace, took = _run(tmp_path, f"sleep 60 & echo $! > {pidfile}; echo started; wait", deadline=1.0)
    assert result.timed_out and not result.ok
    assert took < 5
    assert "started" in trace.text()
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not _alive(child)


def test_a_command_ignoring_sigterm_is_killed_after_the_grace(tmp_path):
    result, _, took = _run(tmp_path, "trap '' TERM; sleep 60", deadline=0.5, grace=0.5)
    assert result.timed_out and took < 5


def test_abort_ends_it(tmp_path):
    flag = threading.Event()
    threading.Timer(0.5, flag.set).start()
    result, _, took = _run(tmp_path, "sleep 60", aborted=flag.is_set)
    assert result.aborted and not result.timed_out and took < 5


def test_background_children_do_not_outlive_the_command(tmp_path):
    pidfile = tmp_path / "child.pid"
    result, _, took = _run(tmp_path, f"sleep 60 > /dev/null & echo $! > {pidfile}; exit 0")
    assert result.ok and took < 5
    time.sleep(0.2)
    assert not _alive(int(pidfile.read_text()))
