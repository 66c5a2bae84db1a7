"""20 runners polling at once over 200 pending builds: every build handed out exactly once
(SQLite and PostgreSQL: each thread has its own connections, as separate server processes would),
by the lean claim on the fast connection and by the claim in a session (projects with build hooks)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from codeyard.db.models import Build
from codeyard.services.ci import builds, handout, queue, runners

from .conftest import job

THREADS = 20
PIPELINES = 10
JOBS = 20
RETRIES = 20


def claim_in_session(rt, runner) -> int | None:
    with rt.db.transaction() as session:
        claimed = queue.claim(session, rt.db, runner)
        if claimed is None:
            return None
        builds.started(session, rt, claimed.build)
        return claimed.build.id


def claim_lean(rt, runner) -> int | None:
    job = handout.next_job(rt.db, runner)
    assert job is not handout.HOOKED
    return None if job is None else job.build.id


@pytest.mark.parametrize("claim", [claim_lean, claim_in_session], ids=["lean", "session"])
def test_twenty_runners_take_two_hundred_builds_once_each(runner_api, ci, rt, projects, alice, claim):
    project = projects.create(alice, name="Busy")
    for n in range(PIPELINES):
        ci.pipeline(project, [job(f"job{i}") for i in range(JOBS)], sha=f"{n:040x}")
    tokens = [runner_api.shared() for _ in range(THREADS)]
    taken: dict[int, list[int]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def poll(token: str) -> None:
        runner = runners.lookup(rt.db, token)
        mine = taken.setdefault(runner.id, [])
        try:
            start.wait()
            failures = 0
            while True:
                try:
                    build_id = claim(rt, runner)
                    if build_id is None:
                        return
                except OperationalError:
                    # A busy machine: a lock wait past the busy timeout, or a server out of
                    # connections. The transaction rolled back and claimed nothing; poll again, as
                    # a runner does after an error.
                    failures += 1
                    if failures > RETRIES:
                        raise
                    time.sleep(0.5)
                    continue
                mine.append(build_id)
        except BaseException as error:  # reported below, with the thread's failure
            errors.append(error)

    threads = [threading.Thread(target=poll, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    handed = Counter(build_id for ids in taken.values() for build_id in ids)
    assert len(handed) == PIPELINES * JOBS and set(handed.values()) == {1}
    assert sum(1 for ids in taken.values() if ids) > 1  # they really raced
    with rt.db.session() as session:
        rows = session.execute(select(Build.id, Build.status, Build.runner_id)).all()
    owner = {build_id: runner_id for runner_id, ids in taken.items() for build_id in ids}
    assert all(status == "running" and owner[build_id] == runner_id for build_id, status, runner_id in rows)
