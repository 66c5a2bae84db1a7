"""`codeyard worker` with job kinds for tests (run as `python -m tests.jobs.worker_with_test_kinds
worker ...` from the repository root): `test.sleep` sleeps `seconds`, `test.die` kills its own
process as a crash would, `test.mark` appends `n` to the file `file` (after sleeping
`seconds`, if given)."""

from __future__ import annotations

import os
import signal
import time

from codeyard.cli import main
from codeyard.jobs.handlers import HANDLERS


def sleep(rt, job) -> None:
    time.sleep(job.payload["seconds"])


def die(rt, job) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def mark(rt, job) -> None:
    time.sleep(job.payload.get("seconds", 0))
    with open(job.payload["file"], "a") as marks:
        marks.write(f"{job.payload['n']}\n")


HANDLERS.update({"test.sleep": sleep, "test.die": die, "test.mark": mark})

if __name__ == "__main__":
    main(prog_name="codeyard")
