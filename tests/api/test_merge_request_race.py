"""Several requests created at once on one target project get distinct iids 1..N, none fails
(PostgreSQL runs the creations truly in parallel; SQLite queues its writers)."""

from __future__ import annotations

import threading

from codeyard.db.models import MergeRequest, Project, User
from codeyard.services.merge_requests import records, status

from . import test_merge_request_accept as accepting

team = accepting.team  # the same fixture
RACERS = 6


def test_concurrent_creates_get_distinct_iids(rt, team):
    work = team.work
    for n in range(RACERS):
        work.git("checkout", "-q", "-b", f"race-{n}", "master")
        work.commit(f"race {n}", {f"race-{n}.txt": f"{n}\n"})
    work.push(*(f"race-{n}" for n in range(RACERS)))
    start, errors, created = threading.Barrier(RACERS), [], []

    def create(n: int) -> None:
        try:
            start.wait(timeout=30)
            with rt.db.transaction() as session:  # as the API: record, git with no transaction, record the status
                project, actor = session.get(Project, team.project.id), session.get(User, team.user("developer").id)
                fields = {"source_branch": f"race-{n}", "target_branch": "master", "title": f"Race {n}"}
                _, check = records.create(session, rt, actor, project, fields)
            mergeable = status.run_check(check)
            with rt.db.transaction() as session:
                created.append(status.finish_check(session, rt, session.get(User, actor.id), check, mergeable).id)
        except Exception as error:  # reported below, with the others
            errors.append(repr(error))

    threads = [threading.Thread(target=create, args=(n,)) for n in range(RACERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and len(created) == RACERS
    with rt.db.transaction() as session:
        rows = session.query(MergeRequest).filter_by(target_project_id=team.project.id).all()
        assert sorted(mr.iid for mr in rows) == list(range(1, RACERS + 1))
        assert sorted(mr.source_branch for mr in rows) == [f"race-{n}" for n in range(RACERS)]
        assert {mr.merge_status for mr in rows} == {"can_be_merged"}
