"""A request left `locked` by an accept that never finished (the process died between begin_merge and
finish_merge) is settled by the job its lock enqueued: merged when the target already contains the
head, else open again as before."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from codeyard.db.models import Event, Job, MergeRequest, Project, User
from codeyard.jobs.worker import Worker
from codeyard.services import access, events
from codeyard.services.merge_requests import accept as service

from . import test_merge_request_accept as accepting
from .test_merge_request_accept import _accept, _open, _rev

team = accepting.team  # the same fixture


def _begin(rt, team, mr_id: int, who="developer"):
    """What an accept does before git works: the request locked, its settlement job written."""
    with rt.db.transaction() as session:
        project, actor = session.get(Project, team.project.id), session.get(User, team.user(who).id)
        mr = session.get(MergeRequest, mr_id)
        return service.begin_merge(session, rt, project, access.access(session, actor, project), actor, mr, {})


def _settle_now(rt) -> int:
    """The settlement jobs come due at once (as LOCK_SECONDS later) and a worker runs them."""
    with rt.db.transaction() as session:
        session.execute(update(Job).values(run_at=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)))
    return Worker(rt, backoff=0).run_until_idle()


def _row(rt, mr_id: int):
    with rt.db.transaction() as session:
        mr = session.get(MergeRequest, mr_id)
        accepted = session.query(Event).filter_by(target_id=mr_id, action=events.MERGED).count()
        return mr.state, mr.merge_commit_sha, mr.merge_params, accepted


def test_a_lock_whose_merge_was_never_written_is_undone(api, rt, team):
    mr = _open(api, team)
    path = f"/projects/{team.project.id}/merge_request/{mr['id']}"
    api.as_(team.user("developer")).put(path, json={"state_event": "close"})
    api.as_(team.user("developer")).put(path, json={"state_event": "reopen"})
    master = _rev(team.work, "master")
    _begin(rt, team, mr["id"])  # ... and the process dies here
    assert api.as_(team.user("developer")).get(path).json()["state"] == "locked"
    assert _accept(api, team, mr).status_code == 405
    with rt.db.transaction() as session:
        job = session.query(Job).filter_by(kind=service.SETTLE_KIND).one()
        assert job.run_at > dt.datetime.now(dt.UTC) + dt.timedelta(seconds=service.LOCK_SECONDS - 60)
    assert _settle_now(rt) == 1
    assert _row(rt, mr["id"]) == ("reopened", None, None, 0)
    assert _rev(team.work, "master") == master
    assert api.as_(team.user("developer")).get(path).json()["merge_status"] == "can_be_merged"
    assert _accept(api, team, mr).json()["state"] == "merged"


def test_a_lock_whose_merge_was_written_is_recorded_merged_once(api, rt, team):
    mr = _open(api, team)
    plan = _begin(rt, team, mr["id"])
    old, new = service.write_merge(plan)  # the target moved; the process dies before recording it
    assert _rev(team.work, "master") == new
    assert _settle_now(rt) == 1
    state, sha, params, accepted = _row(rt, mr["id"])
    assert (state, sha, params, accepted) == ("merged", new, None, 1)
    commits = api.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_request/{mr['id']}/commits")
    assert [commit["id"] for commit in commits.json()] == [plan.head]  # what it merged, kept (issue 32)
    with rt.db.transaction() as session:
        pushed = session.query(Event).filter_by(project_id=team.project.id, action=events.PUSHED).all()
        assert [(e.data["before"], e.data["after"]) for e in pushed] == [(old, new)]
        # The accept was only slow, not dead: its own finish records nothing twice.
        project, actor = session.get(Project, team.project.id), session.get(User, team.user("developer").id)
        service.finish_merge(session, rt, project, actor, plan, (old, new))
    assert _row(rt, mr["id"])[3] == 1


def test_the_lock_job_of_a_finished_accept_changes_nothing(api, rt, team):
    mr = _open(api, team)
    assert _accept(api, team, mr).status_code == 200
    before = _row(rt, mr["id"])
    assert _settle_now(rt) >= 1
    assert _row(rt, mr["id"]) == before and before[0] == "merged" and before[3] == 1
