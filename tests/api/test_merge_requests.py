"""Merge requests API: create, list, get, update, close and reopen (reference section 10)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.db.models import Event, MergeRequest, Note
from codeyard.db.models.merge_requests import is_work_in_progress
from codeyard.db.readers import SessionReader, now
from codeyard.entities.merge_requests import comment as comment_entity
from codeyard.entities.merge_requests import listed_merge_request
from codeyard.entities.notes import note as note_entity
from codeyard.git import diffs
from codeyard.services.merge_requests import reads as merge_request_reads

from ..support import QueryCounter, WorkingCopy, make_team

FIELDS = {
    "id", "iid", "project_id", "title", "description", "state", "created_at", "updated_at", "target_branch",
    "source_branch", "upvotes", "downvotes", "author", "assignee", "source_project_id", "target_project_id",
    "labels", "work_in_progress", "milestone", "merge_when_build_succeeds", "merge_status",
}  # fmt: skip


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    """A private project with master (1 commit) and feature (1 more), one user per role; other
    targets: `other` (master's commit) and `elsewhere` (a conflicting a.txt)."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first")
    work.git("checkout", "-q", "-b", "elsewhere")
    work.commit("elsewhere", {"a.txt": "elsewhere\n"})
    work.git("checkout", "-q", "-b", "feature", "master")
    work.commit("feature work", {"a.txt": "a\n"})
    work.push("master", "feature", "elsewhere", "master:other")
    return team


def _create(api, who, project, **fields):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a", **fields}
    return api.as_(who).post(f"/projects/{project.id}/merge_requests", json=body)


def test_create_get_list(api, rt, team):
    project, dev = team.project, team.user("developer")
    created = _create(
        api, dev, project, description="why", labels="b, a,b", assignee_id=team.user("master").id
    )
    assert created.status_code == 200, created.text
    body = created.json()
    assert set(body) == FIELDS - {"iid"}
    assert (body["state"], body["merge_status"], body["labels"]) == ("opened", "can_be_merged", ["a", "b"])
    assert body["project_id"] == body["target_project_id"] == body["source_project_id"] == project.id
    assert body["author"]["username"] == dev.username and set(body["author"]) >= {"id", "email", "created_at"}
    assert body["assignee"]["id"] == team.user("master").id and body["milestone"] is None
    assert (body["upvotes"], body["downvotes"], body["work_in_progress"]) == (0, 0, False)
    for form in ("merge_request", "merge_requests"):
        got = api.as_(team.user("guest")).get(f"/projects/{project.id}/{form}/{body['id']}").json()
        assert got["iid"] == 1 and got["title"] == "Add a"
    listed = api.as_(dev).get(f"/projects/{project.id}/merge_requests").json()
    assert [mr["id"] for mr in listed] == [body["id"]] and listed[0]["iid"] == 1
    with rt.db.transaction() as session:
        event = session.query(Event).filter_by(target_type="MergeRequest").one()
        assert (event.action, event.target_id, event.author_id) == (1, body["id"], dev.id)


def test_iids_count_per_target_and_list_filters(api, team, rt, tmp_path):
    project, dev = team.project, team.user("developer")
    first = _create(api, dev, project).json()
    api.as_(dev).put(f"/projects/{project.id}/merge_request/{first['id']}", json={"state_event": "close"})
    second = _create(api, dev, project, title="WIP: again").json()
    assert second["work_in_progress"] is True
    base = f"/projects/{project.id}/merge_requests"
    assert [mr["iid"] for mr in api.as_(dev).get(base).json()] == [2, 1]
    assert [mr["iid"] for mr in api.as_(dev).get(base, params={"sort": "asc"}).json()] == [1, 2]
    assert [mr["iid"] for mr in api.as_(dev).get(base, params={"state": "opened"}).json()] == [2]
    assert [mr["iid"] for mr in api.as_(dev).get(base, params={"state": "closed"}).json()] == [1]
    assert [mr["iid"] for mr in api.as_(dev).get(base, params={"iid": 1}).json()] == [1]
    assert api.as_(dev).get(base, params={"state": "bogus"}).status_code == 400
    paged = api.as_(dev).get(base, params={"per_page": 1, "page": 2})
    assert [mr["iid"] for mr in paged.json()] == [1] and paged.headers["x-total"] == "2"


def test_the_read_path_reads_each_request_as_its_model_renders(api, rt, team, projects):
    """The read path (one statement, no session) of the list and of GET of one request gives each
    request's entity as a write's response (the model) gives it: authors and assignees (or none),
    votes, work in progress, labels, states; a page costs the same statements whatever its size. The
    request's notes and comments (both path forms) likewise, with an author or none."""
    project, dev, master, guest = team.project, team.user("developer"), team.user("master"), team.user("guest")
    elsewhere = projects.create(dev, name="elsewhere")  # its request is never listed here
    base = f"/projects/{project.id}/merge_requests"
    cases = [  # title, state, author, assignee, labels
        ("WIP: one", "opened", dev.id, master.id, ["a", "b"]), ("[wip] two", "reopened", None, None, []),
        ("three", "closed", master.id, dev.id, []), ("four", "merged", dev.id, None, ["x"]),
        ("five", "locked", master.id, master.id, []),
    ]  # fmt: skip
    with rt.db.transaction() as session:
        for iid, (title, state, author, assignee, labels) in enumerate(cases, start=1):
            mr = MergeRequest(iid=iid, target_project_id=project.id, source_project_id=project.id, source_branch=f"b{iid}",
                              target_branch="master", title=title, description=None if iid % 2 else "why", state=state,
                              author_id=author, assignee_id=assignee, labels=labels, merge_status="can_be_merged")  # fmt: skip
            session.add(mr)
            session.flush()
            for text in (":+1:", " :+1: ", ":-1:", "+1", "fine")[: iid + 1]:  # "fine": its author deleted
                author_id = None if text == "fine" else dev.id
                session.add(Note(project_id=project.id, merge_request_id=mr.id, author_id=author_id, note=text))
        session.add(MergeRequest(iid=1, target_project_id=elsewhere.id, source_project_id=elsewhere.id, source_branch="o",
                                 target_branch="master", title="o", state="opened", author_id=dev.id))  # fmt: skip

    def from_model(mr_id: int) -> dict:  # the entity as a write's response renders it (in its transaction)
        with rt.db.session() as session:
            row, author, assignee = now(merge_request_reads.read_one(SessionReader(session), project.id, mr_id))
            return listed_merge_request(row, rt.view(), author, assignee, is_work_in_progress(row.title))

    for params, iids in (({}, [5, 4, 3, 2, 1]), ({"state": "opened"}, [2, 1]), ({"state": "closed"}, [3]),
                         ({"state": "merged"}, [4]), ({"order_by": "updated_at", "sort": "asc"}, [1, 2, 3, 4, 5])):  # fmt: skip
        listed = api.as_(team.user("guest")).get(base, params=params)
        assert [mr["iid"] for mr in listed.json()] == iids and listed.headers["x-total"] == str(len(iids)), params
        for entity in listed.json():
            assert entity == api.as_(dev).get(f"{base}/{entity['id']}").json() == from_model(entity["id"]), entity["title"]
    first = api.as_(dev).get(base, params={"sort": "asc", "per_page": 1}).json()[0]
    assert (first["upvotes"], first["downvotes"], first["work_in_progress"], first["author"]["id"]) == (2, 0, True, dev.id)
    reads = []
    for per_page in (1, 5):
        with QueryCounter(rt) as counter:
            assert len(api.as_(dev).get(base, params={"per_page": per_page}).json()) == per_page
        assert counter.count == 0, counter.statements
        reads.append(len(counter.fast_reads))
    assert reads[0] == reads[1] == 2  # the project (the guard) and the page
    with QueryCounter(rt) as counter:
        assert api.as_(dev).get(f"{base}/{first['id']}").json()["iid"] == 1
    assert counter.count == 0 and len(counter.fast_reads) == 2
    view = rt.view()
    for mr in api.as_(dev).get(base).json():  # its notes and comments, oldest first, as a write renders them
        with rt.db.session() as session:
            notes = session.query(Note).filter_by(merge_request_id=mr["id"]).order_by(Note.id).all()
            as_notes = [note_entity(note, view, note.author) for note in notes]
            as_comments = [comment_entity(note, view, note.author) for note in notes]
        assert api.as_(guest).get(f"{base}/{mr['id']}/notes").json() == as_notes
        assert api.as_(guest).get(f"{base}/{mr['id']}/comments").json() == as_comments
        paged = api.as_(guest).get(f"/projects/{project.id}/merge_request/{mr['id']}/notes", params={"per_page": 2, "page": 2})
        assert paged.json() == as_notes[2:4] and paged.headers["x-total"] == str(len(notes))
    with QueryCounter(rt) as counter:
        assert len(api.as_(guest).get(f"{base}/{first['id']}/notes").json()) == 2
    assert counter.count == 0 and len(counter.fast_reads) == 3  # the guard's project, the request, the page
    with rt.db.session() as session:
        foreign = session.query(MergeRequest).filter_by(target_project_id=elsewhere.id).one().id
    for suffix in ("", "/notes", "/comments"):
        assert api.as_(dev).get(f"{base}/{foreign}{suffix}").status_code == 404, suffix
    assert api.as_(dev).get(f"{base}/{2**40}").status_code == 404


def test_validation(api, team, rt):
    project, dev = team.project, team.user("developer")
    same = _create(api, dev, project, source_branch="master")
    assert same.status_code == 422 and same.json() == {
        "message": ["You can not use same project/branch for source and target"]
    }
    missing = _create(api, dev, project, source_branch="nope")
    assert missing.status_code == 422 and "does not exist" in missing.json()["message"][0]
    absent = api.as_(dev).post(f"/projects/{project.id}/merge_requests", json={"source_branch": "feature"})
    assert absent.status_code == 400 and "target_branch" in str(absent.json()["message"])
    assert _create(api, dev, project).status_code == 200
    again = _create(api, dev, project, title="Other")
    assert again.status_code == 409
    assert again.json() == {"message": ['Cannot Create: This merge request already exists: ["Add a"]']}
    assert _create(api, dev, project, target_project_id=999999).status_code == 404
    with rt.db.transaction() as session:
        assert session.query(MergeRequest).count() == 1


def test_a_target_the_caller_cannot_read_is_missing(api, team, users, projects):
    """The target project is loaded by the one loader: a private project of someone else is as
    missing as a number naming nothing, and so is a number no id can be."""
    project, dev = team.project, team.user("developer")
    hidden = projects.create(users.create("stranger"))
    for target in (hidden.id, 2**63, -1):
        refused = _create(api, dev, project, target_project_id=target)
        assert (refused.status_code, refused.json()) == (404, {"message": "404 Not Found"}), target


def test_update_close_reopen(api, team, rt):
    project, dev = team.project, team.user("developer")
    mr = _create(api, dev, project).json()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    changed = api.as_(dev).put(path, json={"title": "[WIP] New", "labels": "x", "description": "d"})
    assert changed.status_code == 200 and "iid" not in changed.json()
    assert (changed.json()["title"], changed.json()["labels"], changed.json()["work_in_progress"]) == (
        "[WIP] New",
        ["x"],
        True,
    )
    refused = api.as_(dev).put(path, json={"source_branch": "other"})
    assert refused.status_code == 400 and refused.json() == {"message": "Source branch cannot be changed"}
    assert api.as_(dev).put(path, json={"state_event": "close"}).json()["state"] == "closed"
    assert api.as_(dev).put(path, json={"state_event": "close"}).json()["state"] == "closed"
    assert api.as_(dev).put(path, json={"state_event": "reopen"}).json()["state"] == "reopened"
    assert (
        api.as_(dev).get(f"/projects/{project.id}/merge_requests", params={"state": "opened"}).json()[0]["id"]
        == mr["id"]
    )
    events = api.as_(dev).get(f"/projects/{project.id}/events").json()
    assert [e["action_name"] for e in events][:3] == ["opened", "closed", "opened"]
    assert api.as_(dev).get(f"/projects/{project.id}/merge_requests/999999").json() == {
        "message": "404 Not found"
    }


@pytest.mark.parametrize(
    "role, read, write",
    [
        ("outsider", 404, 404),
        ("guest", 200, 403),
        ("reporter", 200, 403),
        ("developer", 200, 200),
        ("master", 200, 200),
    ],
)
def test_permissions(api, team, role, read, write):
    project = team.project
    mr = _create(api, team.user("master"), project).json()
    who = team.user(role)
    assert api.as_(who).get(f"/projects/{project.id}/merge_requests").status_code == read
    assert api.as_(who).get(f"/projects/{project.id}/merge_request/{mr['id']}").status_code == read
    path = f"/projects/{project.id}/merge_request/{mr['id']}"
    assert api.as_(who).put(path, json={"title": "changed"}).status_code == write
    created = _create(api, who, project, target_branch="other")
    assert created.status_code == write


def test_fork_to_upstream(api, users, projects, rt, team, tmp_path):
    upstream, dev = team.project, team.user("developer")
    fork = api.as_(dev).post(f"/projects/fork/{upstream.id}").json()
    fork = SimpleNamespace(id=fork["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.commit("fork work")
    work.push("master:from-fork")
    created = _create(api, dev, fork, source_branch="from-fork", target_project_id=upstream.id)
    assert created.status_code == 200, created.text
    body = created.json()
    assert (body["project_id"], body["source_project_id"], body["target_project_id"]) == (
        upstream.id,
        fork.id,
        upstream.id,
    )
    assert api.as_(dev).get(f"/projects/{upstream.id}/merge_requests").json()[0]["id"] == body["id"]
    other = projects.create(dev, name="unrelated")
    refused = _create(api, dev, other, source_branch="from-fork", target_project_id=upstream.id)
    assert refused.status_code == 422 and refused.json() == {
        "message": ["Source project is not a fork of target project"]
    }


def test_head_ref_commits_changes(api, team, rt, tmp_path):
    project, dev = team.project, team.user("developer")
    work = WorkingCopy(rt, project, tmp_path / "more")
    work.git("fetch", "-q", "origin", "feature:feature")
    work.git("checkout", "-q", "feature")
    work.commit("second feature commit", {"b.txt": "b\n"})
    work.push("feature")
    mr = _create(api, dev, project).json()
    head = work.git("rev-parse", "HEAD")
    assert work.git("ls-remote", "origin", "refs/merge-requests/1/head").split()[0] == head
    with QueryCounter(rt) as counter:
        commits = api.as_(dev).get(f"/projects/{project.id}/merge_request/{mr['id']}/commits").json()
    assert [c["title"] for c in commits] == ["second feature commit", "feature work"] and commits[0][
        "id"
    ] == head
    assert counter.count == 0 and len(counter.fast_reads) == 2  # the project (the guard), the request
    missing = api.as_(dev).get(f"/projects/{project.id}/merge_requests/{2**40}/commits")
    assert missing.status_code == 404 and missing.json() == {"message": "404 Not found"}
    changes = api.as_(dev).get(f"/projects/{project.id}/merge_requests/{mr['id']}/changes").json()
    assert changes["iid"] == 1
    assert sorted((c["new_path"], c["new_file"]) for c in changes["changes"]) == [
        ("a.txt", True),
        ("b.txt", True),
    ]
    assert "+b" in next(c["diff"] for c in changes["changes"] if c["new_path"] == "b.txt")


def test_changes_start_git_only_for_a_reader_of_the_request_s_own_project(api, team, projects, monkeypatch):
    """The guard and the request's lookup come before any git: an outsider, an unknown request and a
    request named through another project are 404 with no git process started."""
    project, dev = team.project, team.user("developer")
    mr = _create(api, dev, project).json()
    other = projects.create(dev, name="elsewhere")
    started = []
    real = diffs._spawned
    monkeypatch.setattr(diffs, "_spawned", lambda command: started.append(command) or real(command))
    refused = {
        "outsider": api.as_(team.user("outsider")).get(f"/projects/{project.id}/merge_requests/{mr['id']}/changes"),
        "unknown": api.as_(dev).get(f"/projects/{project.id}/merge_requests/{mr['id'] + 1000}/changes"),
        "not a number": api.as_(dev).get(f"/projects/{project.id}/merge_requests/x{mr['id']}/changes"),
        "another project": api.as_(dev).get(f"/projects/{other.id}/merge_requests/{mr['id']}/changes"),
    }
    assert {name: answer.status_code for name, answer in refused.items()} == dict.fromkeys(refused, 404)
    assert refused["outsider"].json() == {"message": "404 Project Not Found"}
    assert refused["unknown"].json() == {"message": "404 Not found"}
    guest = api.as_(team.user("guest")).get(f"/projects/{project.id}/merge_request/{mr['id']}/changes")
    assert guest.status_code == 403  # a guest of a private project reads no code (download_code)
    assert started == []
    reporter = api.as_(team.user("reporter")).get(f"/projects/{project.id}/merge_request/{mr['id']}/changes")
    assert reporter.status_code == 200 and [c["new_path"] for c in reporter.json()["changes"]] == ["a.txt"]
    assert len(started) == 1


def test_fork_head_is_fetched_into_upstream(api, rt, team, tmp_path):
    upstream, dev = team.project, team.user("developer")
    fork = SimpleNamespace(id=api.as_(dev).post(f"/projects/fork/{upstream.id}").json()["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.git("fetch", "-q", "origin", "master:upstream-master")
    work.git("checkout", "-q", "upstream-master")
    sha = work.commit("fork change", {"f.txt": "f\n"})
    work.push("HEAD:from-fork")
    mr = _create(api, dev, fork, source_branch="from-fork", target_project_id=upstream.id).json()
    commits = api.as_(dev).get(f"/projects/{upstream.id}/merge_requests/{mr['id']}/commits").json()
    assert [c["id"] for c in commits] == [sha]


def test_deleting_projects(api, rt, team, tmp_path):
    upstream, dev = team.project, team.user("developer")
    fork = SimpleNamespace(id=api.as_(dev).post(f"/projects/fork/{upstream.id}").json()["id"])
    work = WorkingCopy(rt, fork, tmp_path / "fork")
    work.commit("fork work")
    work.push("master:from-fork")
    from_fork = _create(api, dev, fork, source_branch="from-fork", target_project_id=upstream.id).json()
    assert api.as_(dev).delete(f"/projects/{fork.id}").status_code == 200
    got = api.as_(dev).get(f"/projects/{upstream.id}/merge_requests/{from_fork['id']}").json()
    assert (got["state"], got["source_project_id"]) == ("closed", None)
    _create(api, dev, upstream)
    assert api.as_(team.user("owner")).delete(f"/projects/{upstream.id}").status_code == 200
    with rt.db.transaction() as session:
        assert session.query(MergeRequest).count() == 0


def test_comments_votes_events_and_hooks(api, rt, team):
    import json

    from codeyard.db.models import Job, ProjectHook

    project, dev, guest = team.project, team.user("developer"), team.user("guest")
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/hook", push_events=False,
                                merge_requests_events=True, note_events=True))  # fmt: skip
    mr = _create(api, dev, project).json()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    for who, text in ((guest, "Looks good"), (dev, ":+1:"), (guest, ":+1:"), (team.user("reporter"), ":-1:")):
        posted = api.as_(who).post(path + "/comments", json={"note": text})
        assert posted.status_code == 201 and posted.json()["note"] == text
        assert set(posted.json()) == {"note", "author"} and posted.json()["author"]["id"] == who.id
    assert api.as_(dev).post(path + "/comments", json={}).status_code == 400
    listed = api.as_(dev).get(path + "/comments", params={"per_page": 3}).json()
    assert [c["note"] for c in listed] == ["Looks good", ":+1:", ":+1:"]
    got = api.as_(dev).get(path).json()
    assert (got["upvotes"], got["downvotes"]) == (2, 1)
    assert api.as_(dev).get(f"/projects/{project.id}/merge_requests").json()[0]["upvotes"] == 2
    events = api.as_(dev).get(f"/projects/{project.id}/events").json()
    assert [e["action_name"] for e in events].count("commented on") == 4
    api.as_(dev).put(path, json={"state_event": "close"})
    with rt.db.transaction() as session:
        bodies = [(job.payload["event"], json.loads(job.payload["body"])) for job in session.query(Job).order_by(Job.id)]
    assert [event for event, _ in bodies] == ["Merge Request Hook"] + ["Note Hook"] * 4 + ["Merge Request Hook"]
    opened, note, closed = bodies[0][1], bodies[1][1], bodies[-1][1]
    assert opened["object_kind"] == "merge_request" and opened["object_attributes"]["action"] == "open"
    assert opened["object_attributes"]["iid"] == 1 and opened["object_attributes"]["last_commit"]["message"] == "feature work\n"
    assert opened["object_attributes"]["target"]["path_with_namespace"] == project.path_with_namespace
    assert closed["object_attributes"]["action"] == "close" and closed["object_attributes"]["state"] == "closed"
    assert note["object_kind"] == "note" and note["object_attributes"]["note"] == "Looks good"
    assert note["merge_request"]["id"] == mr["id"] and note["object_attributes"]["noteable_type"] == "MergeRequest"


def test_changing_the_target_branch(api, team, tmp_path, rt):
    project, dev = team.project, team.user("developer")
    mr = _create(api, dev, project).json()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    missing = api.as_(dev).put(path, json={"target_branch": "nowhere"})
    assert missing.status_code == 400 and missing.json() == {"message": {"target_branch": ["does not exist"]}}
    moved = api.as_(dev).put(path, json={"target_branch": "elsewhere"})
    assert moved.status_code == 200 and moved.json()["merge_status"] == "cannot_be_merged"
    same = api.as_(dev).put(path, json={"target_branch": "feature"})
    assert same.status_code == 422
    back = api.as_(dev).put(path, json={"target_branch": "master"})
    assert back.json()["merge_status"] == "can_be_merged" and back.json()["target_branch"] == "master"


# --- which hooks an update sends -------------------------------------------------------------------


@pytest.fixture
def delivered(api, rt, team):
    """A function running the job worker: the `action`s of the Merge Request Hook deliveries that
    arrived at a real receiver since its last call, in order."""
    from codeyard.jobs.worker import Worker
    from codeyard.services import settings as settings_service

    from ..receiver import Receiver

    with rt.db.transaction() as session:
        settings_service.update(session, {"allow_local_requests_from_hooks": True})
    with Receiver() as receiver:
        hook = {"url": receiver.url(), "push_events": False, "merge_requests_events": True}
        assert api.as_(team.user("master")).post(f"/projects/{team.project.id}/hooks", json=hook).status_code == 201
        seen = 0

        def arrived() -> list[tuple[str, dict]]:
            nonlocal seen
            Worker(rt, backoff=0).run_until_idle()
            new, seen = receiver.requests[seen:], len(receiver.requests)
            assert {got.headers["x-gitlab-event"] for got in new} <= {"Merge Request Hook"}
            return [(got.json["object_attributes"]["action"], got.json["object_attributes"]) for got in new]

        yield arrived


def test_an_edit_that_closes_or_reopens_sends_that_hook_then_update(api, team, delivered):
    project, dev = team.project, team.user("developer")
    mr = _create(api, dev, project).json()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    assert [action for action, _ in delivered()] == ["open"]

    def put(**body) -> list[tuple[str, dict]]:
        response = api.as_(dev).put(path, json=body)
        assert response.status_code == 200, response.text
        return delivered()

    assert [action for action, _ in put(state_event="close")] == ["close"]  # a pure close
    assert [action for action, _ in put(state_event="reopen")] == ["reopen"]  # a pure reopen
    closed_and_edited = put(state_event="close", title="Renamed")
    assert [action for action, _ in closed_and_edited] == ["close", "update"]
    assert [(a["state"], a["title"]) for _, a in closed_and_edited] == [("closed", "Renamed")] * 2
    reopened_and_edited = put(state_event="reopen", description="why", target_branch="other")
    assert [action for action, _ in reopened_and_edited] == ["reopen", "update"]
    assert [(a["state"], a["target_branch"]) for _, a in reopened_and_edited] == [("reopened", "other")] * 2
    for edit in ({"assignee_id": team.user("master").id}, {"labels": "bug"}):
        assert [action for action, _ in put(state_event="close", **edit)] == ["close", "update"], edit
        assert [action for action, _ in put(state_event="reopen", **edit)] == ["reopen", "update"], edit
    assert [action for action, _ in put(title="Edited")] == ["update"]  # an edit alone
    # Nothing to do sends nothing, as in GitLab 8.6 (no state change, no attribute given).
    assert put() == [] and put(state_event="reopen") == [] and put(state_event="merge") == []
    assert [action for action, _ in put(state_event="reopen", title="Edited")] == ["update"]


# --- labels ------------------------------------------------------------------------------------------


def test_labels_are_kept_sorted_and_returned_everywhere(api, team):
    project, dev = team.project, team.user("developer")
    created = _create(api, dev, project, labels="gamma, alpha,beta,alpha,")  # a trailing comma is nothing
    assert created.status_code == 200 and created.json()["labels"] == ["alpha", "beta", "gamma"]
    path = f"/projects/{project.id}/merge_requests/{created.json()['id']}"
    assert api.as_(dev).get(path).json()["labels"] == ["alpha", "beta", "gamma"]
    assert api.as_(dev).get(f"/projects/{project.id}/merge_requests").json()[0]["labels"] == ["alpha", "beta", "gamma"]
    assert api.as_(dev).put(path, json={"title": "Other"}).json()["labels"] == ["alpha", "beta", "gamma"]  # not given: kept
    assert api.as_(dev).put(path, json={"labels": "needs review, bug"}).json()["labels"] == ["bug", "needs review"]
    assert api.as_(dev).get(path).json()["labels"] == ["bug", "needs review"]
    assert api.as_(dev).put(path, json={"labels": ""}).json()["labels"] == []  # given empty: all removed


# GitLab 8.6's Label: `title` present and /\A[^&\?,]+\z/ (a comma cannot reach it: it separates).
BAD_LABELS = [
    ("a&b", {"a&b": {"title": ["is invalid"]}}),
    ("ok, what?", {"what?": {"title": ["is invalid"]}}),
    ("ok, ,fine", {"": {"title": ["can't be blank", "is invalid"]}}),
    (",lead", {"": {"title": ["can't be blank", "is invalid"]}}),
    ("x&y, ?", {"x&y": {"title": ["is invalid"]}, "?": {"title": ["is invalid"]}}),
]


@pytest.mark.parametrize("labels, refused", BAD_LABELS)
def test_a_label_gitlab_refuses_is_400_and_changes_nothing(api, rt, team, labels, refused):
    from codeyard.db.models import Job

    project, dev = team.project, team.user("developer")
    created = _create(api, dev, project, labels=labels)
    assert created.status_code == 400 and created.json() == {"message": {"labels": refused}}
    with rt.db.transaction() as session:
        assert session.query(MergeRequest).count() == 0
    mr = _create(api, dev, project, labels="kept").json()
    with rt.db.transaction() as session:
        jobs, events = session.query(Job).count(), session.query(Event).count()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    for body in ({"labels": labels}, {"labels": labels, "title": "New", "state_event": "close"}):
        changed = api.as_(dev).put(path, json=body)
        assert changed.status_code == 400 and changed.json() == {"message": {"labels": refused}}
    got = api.as_(dev).get(path).json()
    assert (got["labels"], got["title"], got["state"]) == (["kept"], "Add a", "opened")
    with rt.db.transaction() as session:
        assert (session.query(Job).count(), session.query(Event).count()) == (jobs, events)


@pytest.mark.parametrize("role", ["guest", "reporter", "outsider"])
def test_only_who_may_edit_a_request_sets_its_labels(api, team, role):
    project = team.project
    mr = _create(api, team.user("developer"), project, labels="kept").json()
    path = f"/projects/{project.id}/merge_requests/{mr['id']}"
    refused = api.as_(team.user(role)).put(path, json={"labels": "mine"})
    assert refused.status_code == (404 if role == "outsider" else 403)
    assert api.as_(team.user("master")).get(path).json()["labels"] == ["kept"]


def test_labels_from_a_fork_need_the_right_to_edit_upstream_requests(api, rt, team, tmp_path):
    """Like the assignee: kept only from who may administer the target's requests (GitLab 8.6's
    filter_params dropped `label_ids`, and its API added labels after the service regardless)."""
    upstream = team.project
    for role, kept in (("reporter", []), ("developer", ["from fork"])):
        who = team.user(role)
        fork = api.as_(who).post(f"/projects/fork/{upstream.id}").json()
        work = WorkingCopy(rt, SimpleNamespace(id=fork["id"]), tmp_path / role)
        work.commit(f"{role} work")
        work.push("master:from-fork")
        created = _create(api, who, SimpleNamespace(id=fork["id"]), source_branch="from-fork",
                          target_project_id=upstream.id, labels="from fork", assignee_id=team.user("master").id)  # fmt: skip
        assert created.status_code == 200, created.text
        assert (created.json()["labels"], bool(created.json()["assignee"])) == (kept, bool(kept)), role
        bad = _create(api, who, SimpleNamespace(id=fork["id"]), source_branch="from-fork",
                      target_project_id=upstream.id, labels="a&b")  # fmt: skip
        assert bad.status_code == 400, role  # refused input is refused for everyone


def test_iid_lists_of_any_length_make_few_statements(api, rt, team):
    """The iid filter binds no list: a statement per number of iids, rounded up to a power of two
    (the last iid repeated), so a client choosing every length from 1 to 40 makes seven shapes (1, 2, 4 ... 64), not
    forty, and each list still selects exactly its requests."""
    project, dev = team.project, team.user("developer")
    with rt.db.transaction() as session:
        for iid in (1, 2, 3):
            session.add(MergeRequest(iid=iid, target_project_id=project.id, source_project_id=project.id, source_branch=f"b{iid}",
                                     target_branch="master", title=f"t{iid}", state="opened", author_id=dev.id,
                                     labels=[], merge_status="can_be_merged"))  # fmt: skip
    base = f"/projects/{project.id}/merge_requests"
    before = merge_request_reads._page_statements.cache_info().currsize
    for length in range(1, 41):
        wanted = [3, 1, *range(100, 100 + length)][:length]
        got = api.as_(dev).get(base, params={"iid[]": wanted, "sort": "asc"})
        assert [mr["iid"] for mr in got.json()] == sorted(iid for iid in (1, 3) if iid in wanted)
    assert merge_request_reads._page_statements.cache_info().currsize - before <= 7
