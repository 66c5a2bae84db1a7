"""Notes: the merge request notes resource (the same rows as `.../comments`) and comments on commits
(reference 4.8 and 10.8; GitLab 8.6's notes and commits APIs), through raw requests and python-gitlab 1.4."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

import pytest

from codeyard.db.models import Event, Job, Note, ProjectHook

from ..support import QueryCounter, WorkingCopy, make_team

NOTE_FIELDS = {"id", "body", "attachment", "author", "created_at", "system", "noteable_id", "noteable_type", "upvote", "downvote"}
COMMIT_NOTE_FIELDS = {"note", "path", "line", "line_type", "author", "created_at"}
FORMS = ("merge_requests", "merge_request")


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    """A private project (master: 1 commit, feature: 1 more), one user per role, an open merge request,
    and a hook listening to notes."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"a.txt": "one\ntwo\nthree\n"})
    work.git("checkout", "-q", "-b", "feature")
    feature = work.commit("feature work", {"a.txt": "one\nTWO\nthree\nfour\n", "b.txt": "b\n"})
    work.push("master", "feature")
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=team.project.id, url="http://example.com/hook", push_events=False,
                                note_events=True))  # fmt: skip
    return SimpleNamespace(project=team.project, user=team.user, work=work, feature=feature)


def _open(api, team) -> dict:
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add b"}
    created = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 200, created.text
    return created.json()


def _notes(team, mr, form="merge_requests") -> str:
    return f"/projects/{team.project.id}/{form}/{mr['id']}/notes"


def _note_count(rt) -> int:
    with rt.db.session() as session:
        return session.query(Note).count()


def _hook_bodies(rt) -> list[dict]:
    with rt.db.session() as session:
        jobs = session.query(Job).order_by(Job.id).all()
        return [json.loads(job.payload["body"]) for job in jobs if job.payload.get("event") == "Note Hook"]


# --- merge request notes -------------------------------------------------------------------------


def test_notes_are_the_comments_of_a_merge_request(api, rt, team):
    mr = _open(api, team)
    guest, dev = team.user("guest"), team.user("developer")
    created = api.as_(guest).post(_notes(team, mr), json={"body": "Looks good"})
    assert created.status_code == 201, created.text
    note = created.json()
    assert set(note) == NOTE_FIELDS
    assert (note["body"], note["noteable_id"], note["noteable_type"]) == ("Looks good", mr["id"], "MergeRequest")
    assert (note["attachment"], note["system"], note["upvote"], note["downvote"]) == (None, False, False, False)
    assert note["author"]["username"] == guest.username and "email" not in note["author"]
    # The singular path form answers the same, and a comment posted the old way is a note too.
    voted = api.as_(dev).post(_notes(team, mr, "merge_request"), json={"body": ":+1:"}).json()
    assert (voted["upvote"], voted["downvote"]) == (True, False)
    api.as_(team.user("reporter")).post(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments", json={"note": ":-1:"})
    for form in FORMS:
        listed = api.as_(dev).get(_notes(team, mr, form))
        assert listed.status_code == 200
        assert [(n["body"], n["downvote"]) for n in listed.json()] == [("Looks good", False), (":+1:", False), (":-1:", True)]
        assert listed.json()[0] == note
    comments = api.as_(dev).get(f"/projects/{team.project.id}/merge_request/{mr['id']}/comments").json()
    assert [c["note"] for c in comments] == ["Looks good", ":+1:", ":-1:"]
    got = api.as_(dev).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}").json()
    assert (got["upvotes"], got["downvotes"]) == (1, 1)
    for form in FORMS:
        single = api.as_(guest).get(f"{_notes(team, mr, form)}/{note['id']}")
        assert single.status_code == 200 and single.json() == note
    # A "commented on" event and a Note Hook per note, as for comments.
    with rt.db.session() as session:
        commented = session.query(Event).filter_by(action=6, target_type="Note").order_by(Event.id).all()
        assert [(e.target_id, e.author_id, e.title) for e in commented][:2] == [(note["id"], guest.id, "Add b"), (voted["id"], dev.id, "Add b")]
    hooks = _hook_bodies(rt)
    assert len(hooks) == 3 and hooks[0]["object_kind"] == "note" and hooks[0]["merge_request"]["iid"] == 1
    attributes = hooks[0]["object_attributes"]
    assert (attributes["id"], attributes["note"], attributes["noteable_type"], attributes["noteable_id"]) == (
        note["id"], "Looks good", "MergeRequest", mr["id"])  # fmt: skip
    assert attributes["url"].endswith(f"/merge_requests/1#note_{note['id']}")


def test_note_lookups_and_bad_input(api, rt, team):
    mr, other = _open(api, team), None
    dev = team.user("developer")
    team.work.git("checkout", "-q", "-b", "second", "master")
    team.work.commit("second work", {"c.txt": "c\n"})
    team.work.push("second")
    body = {"source_branch": "second", "target_branch": "master", "title": "Add c"}
    other = api.as_(dev).post(f"/projects/{team.project.id}/merge_requests", json=body).json()
    theirs = api.as_(dev).post(_notes(team, other), json={"body": "on the other one"}).json()
    for missing in (theirs["id"], 99999999, 99999999999, "abc", "-1"):
        response = api.as_(dev).get(f"{_notes(team, mr)}/{missing}")
        assert (response.status_code, response.json()) == (404, {"message": "404 Not found"}), missing
        assert api.as_(dev).put(f"{_notes(team, mr)}/{missing}", json={"body": "x"}).status_code == 404
    for unknown in (99999999, "abc"):
        assert api.as_(dev).get(f"/projects/{team.project.id}/merge_requests/{unknown}/notes").status_code == 404
        assert api.as_(dev).post(f"/projects/{team.project.id}/merge_requests/{unknown}/notes", json={"body": "x"}).status_code == 404
    before = _note_count(rt)
    for bad in ({}, {"body": ""}, {"body": None}, {"body": ["x"]}, {"note": "the comments' name"}):
        response = api.as_(dev).post(_notes(team, mr), json=bad)
        assert response.status_code == 400, bad
    assert api.as_(dev).post(_notes(team, mr), json={"body": "x" * 1_000_001}).status_code in (400, 413)
    assert _note_count(rt) == before
    # The body is checked first (GitLab's required_attributes! came before the lookup).
    assert api.as_(dev).put(f"{_notes(team, mr)}/{theirs['id']}", json={}).status_code == 400


def test_note_list_is_paginated_with_a_fixed_number_of_queries(api, rt, team):
    mr = _open(api, team)
    people = [team.user(role) for role in ("guest", "reporter", "developer", "master", "owner", "admin")]
    for index, who in enumerate(people):
        assert api.as_(who).post(_notes(team, mr), json={"body": f"note {index}"}).status_code == 201
    paged = api.as_(team.user("guest")).get(_notes(team, mr), params={"per_page": 4, "page": 2})
    assert [n["body"] for n in paged.json()] == ["note 4", "note 5"]
    assert (paged.headers["x-total"], paged.headers["x-total-pages"], paged.headers["x-prev-page"]) == ("6", "2", "1")
    assert 'rel="prev"' in paged.headers["link"]
    counts = []
    for per_page in (1, 6):
        with QueryCounter(rt) as counter:
            response = api.as_(team.user("guest")).get(_notes(team, mr), params={"per_page": per_page})
        assert len(response.json()) == per_page
        counts.append(counter.count)
    assert counts[0] == counts[1] <= 8


def test_editing_a_note_author_or_master(api, rt, team):
    mr = _open(api, team)
    guest = team.user("guest")
    note = api.as_(guest).post(_notes(team, mr), json={"body": "first words"}).json()
    path = f"{_notes(team, mr)}/{note['id']}"
    # Members below master who did not write it may not; outsiders of the private project do not see it.
    for role in ("reporter", "developer"):
        refused = api.as_(team.user(role)).put(path, json={"body": "hijacked"})
        assert (refused.status_code, refused.json()) == (403, {"message": "403 Forbidden"})
    hidden = api.as_(team.user("outsider")).put(path, json={"body": "hijacked"})
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Project Not Found"})
    assert api.anonymous.put(path, json={"body": "hijacked"}).status_code == 401
    for bad in ({}, {"body": ""}, {"body": {"a": 1}}):
        assert api.as_(guest).put(path, json=bad).status_code == 400
    assert api.as_(guest).get(path).json()["body"] == "first words"
    for form in FORMS:
        for role, text in (("guest", f"{form}: edited by its author"), ("master", ":+1:"), ("owner", "owner's"), ("admin", ":-1:")):
            edited = api.as_(team.user(role)).put(f"{_notes(team, mr, form)}/{note['id']}", json={"body": text})
            assert edited.status_code == 200, (role, edited.text)
            assert edited.json()["body"] == text and edited.json()["author"]["id"] == guest.id
    assert api.as_(guest).get(path).json()["body"] == ":-1:"
    got = api.as_(guest).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}").json()
    assert (got["upvotes"], got["downvotes"]) == (0, 1)
    assert len(_hook_bodies(rt)) == 1  # GitLab 8.6 sent no hook for an edit


@pytest.mark.parametrize("visibility", [0, 20])
def test_who_may_read_and_write_notes(api, rt, users, projects, admin, tmp_path, visibility):
    team = make_team(users, projects, admin, visibility=visibility, prefix=f"v{visibility}")
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first")
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature")
    work.push("master", "feature")
    mr = _open(api, SimpleNamespace(project=team.project, user=team.user))
    path = f"/projects/{team.project.id}/merge_requests/{mr['id']}/notes"
    for role in ("outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        listed = api.as_(team.user(role)).get(path)
        posted = api.as_(team.user(role)).post(path, json={"body": f"by {role}"})
        if role == "outsider" and visibility == 0:
            assert (listed.status_code, posted.status_code) == (404, 404)
            assert posted.json() == {"message": "404 Project Not Found"}
        else:  # guest rules: read merge requests, create notes (public projects give them to anyone signed in)
            assert (listed.status_code, posted.status_code) == (200, 201), role
    assert api.anonymous.get(path).status_code == 401 and api.anonymous.post(path, json={"body": "x"}).status_code == 401
    # With merge requests disabled their notes go with them (reference 3.2: features take abilities away).
    api.as_(team.user("owner")).put(f"/projects/{team.project.id}", json={"merge_requests_enabled": False})
    for role in ("guest", "master"):
        assert api.as_(team.user(role)).get(path).status_code == 403
        assert api.as_(team.user(role)).post(path, json={"body": "x"}).status_code == 403


def test_comment_events_carry_their_note(api, rt, team):
    """Reference 15.13 / 4.9: a "commented on" event has the Note entity under `note`; others have no key."""
    mr = _open(api, team)
    reporter = team.user("reporter")
    api.as_(reporter).post(_notes(team, mr), json={"body": "on the request"})
    api.as_(reporter).post(_comments(team, team.feature), json={"note": "on the commit"})
    listed = api.as_(team.user("guest")).get(f"/projects/{team.project.id}/events").json()
    assert [e["action_name"] for e in listed] == ["commented on", "commented on", "opened", "created"]
    on_commit, on_request = listed[:2]
    assert all("note" not in e for e in listed[2:])
    assert set(on_request["note"]) == NOTE_FIELDS and on_request["note"]["body"] == "on the request"
    assert on_request["note"]["author"]["id"] == reporter.id and on_request["target_id"] == on_request["note"]["id"]
    assert (on_commit["note"]["body"], on_commit["note"]["noteable_type"], on_commit["note"]["noteable_id"]) == (
        "on the commit", "Commit", None)  # fmt: skip
    counts = []
    for per_page in (1, 4):
        with QueryCounter(rt) as counter:
            assert len(api.as_(reporter).get(f"/projects/{team.project.id}/events", params={"per_page": per_page}).json()) == per_page
        counts.append(counter.count)
    assert counts[0] == counts[1]


# --- comments on commits -------------------------------------------------------------------------


def _comments(team, sha) -> str:
    return f"/projects/{team.project.id}/repository/commits/{sha}/comments"


def test_commit_comments(api, rt, team):
    reporter, sha = team.user("reporter"), team.feature
    plain = api.as_(reporter).post(_comments(team, sha), json={"note": "Nice commit"})
    assert plain.status_code == 201, plain.text
    body = plain.json()
    assert set(body) == COMMIT_NOTE_FIELDS
    assert (body["note"], body["path"], body["line"], body["line_type"]) == ("Nice commit", None, None, None)
    assert body["author"]["username"] == reporter.username and body["created_at"]
    # a.txt: "two" became "TWO" (old line 2, new line 2) and "four" was added (new line 4).
    cases = [
        ({"path": "a.txt", "line": 2, "line_type": "new"}, ("a.txt", 2, "new")),
        ({"path": "a.txt", "line": 4, "line_type": "new"}, ("a.txt", 4, "new")),
        ({"path": "a.txt", "line": 2, "line_type": "old"}, ("a.txt", 2, "old")),
        ({"path": "b.txt", "line": 1, "line_type": "new"}, ("b.txt", 1, "new")),
        ({"path": "a.txt", "line": 1, "line_type": "new"}, (None, None, None)),  # a context line
        ({"path": "a.txt", "line": 3, "line_type": "old"}, (None, None, None)),
        ({"path": "nope.txt", "line": 1, "line_type": "new"}, (None, None, None)),
        ({"path": "a.txt", "line": 2}, (None, None, None)),  # all three or none
    ]
    for index, (where, want) in enumerate(cases):
        posted = api.as_(reporter).post(_comments(team, sha), json={"note": f"line {index}", **where})
        assert posted.status_code == 201, posted.text
        assert (posted.json()["path"], posted.json()["line"], posted.json()["line_type"]) == want, where
    # The commit can be named by a branch or a short SHA: the comments are the commit's.
    for name in (sha, "feature", sha[:10]):
        listed = api.as_(team.user("developer")).get(_comments(team, name))
        assert listed.status_code == 200
        assert [c["note"] for c in listed.json()] == ["Nice commit"] + [f"line {i}" for i in range(8)]
    assert api.as_(reporter).get(_comments(team, "master")).json() == []
    with rt.db.session() as session:
        commented = session.query(Event).filter_by(action=6, target_type="Note").order_by(Event.id).first()
        assert (commented.author_id, commented.title) == (reporter.id, "feature work")
    first = _hook_bodies(rt)[0]
    assert first["object_kind"] == "note" and first["commit"]["id"] == sha and "merge_request" not in first
    assert first["object_attributes"]["noteable_type"] == "Commit" and first["object_attributes"]["commit_id"] == sha
    assert first["object_attributes"]["url"].endswith(f"/commit/{sha}#note_{first['object_attributes']['id']}")
    positioned = _hook_bodies(rt)[1]["object_attributes"]
    # As GitLab 8 numbered it: the added "TWO" follows the removed "two", so its old-side number is 3.
    assert positioned["line_code"] == hashlib.sha1(b"a.txt").hexdigest() + "_3_2"
    # Commit notes are not a merge request's notes, and do not count as its votes.
    mr = _open(api, team)
    api.as_(reporter).post(_comments(team, sha), json={"note": ":+1:"})
    assert api.as_(reporter).get(_notes(team, mr)).json() == []
    assert api.as_(reporter).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}").json()["upvotes"] == 0


def test_commit_comment_errors_change_nothing(api, rt, team):
    reporter = team.user("reporter")
    before = _note_count(rt)
    for sha in ("f" * 40, "nope", "--output=x"):
        for response in (api.as_(reporter).get(_comments(team, sha)),
                         api.as_(reporter).post(_comments(team, sha), json={"note": "x"})):  # fmt: skip
            assert (response.status_code, response.json()) == (404, {"message": "404 Commit Not Found"})
    bad_inputs = ({}, {"note": ""}, {"note": "x", "line_type": "context", "path": "a.txt", "line": 1},
                  {"note": "x", "line": "two"}, {"note": "x", "line": 0}, {"note": "x", "path": ["a"]})  # fmt: skip
    for bad in bad_inputs:
        assert api.as_(reporter).post(_comments(team, team.feature), json=bad).status_code == 400, bad
    assert _note_count(rt) == before


def test_commit_comments_paginated_with_a_fixed_number_of_queries(api, rt, team):
    written = [
        api.as_(team.user("developer" if index % 2 else "master")).post(_comments(team, team.feature), json=where).json()
        for index, where in enumerate([{"note": f"c{index}"} for index in range(4)]
                                      + [{"note": "c4", "path": "a.txt", "line": 2, "line_type": "new"}])
    ]  # fmt: skip
    paged = api.as_(team.user("reporter")).get(_comments(team, team.feature), params={"per_page": 2, "page": 3})
    assert [c["note"] for c in paged.json()] == ["c4"] and paged.headers["x-total"] == "5"
    counts = []
    for per_page in (1, 5):
        with QueryCounter(rt) as counter:
            response = api.as_(team.user("reporter")).get(_comments(team, team.feature), params={"per_page": per_page})
        assert response.json() == written[:per_page]  # the read path shows what the write showed from the model
        assert counter.count == 0, counter.statements
        counts.append(len(counter.fast_reads))
    assert counts[0] == counts[1] == 2  # the project (the guard) and the page
    past = api.as_(team.user("reporter")).get(_comments(team, team.feature), params={"page": 9})
    assert past.json() == [] and past.headers["x-total"] == "5"


@pytest.mark.parametrize("visibility", [0, 20])
def test_who_may_comment_on_commits(api, rt, users, projects, admin, tmp_path, visibility):
    team = make_team(users, projects, admin, visibility=visibility, prefix=f"c{visibility}")
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    sha = work.commit("first")
    work.push("master")
    path = f"/projects/{team.project.id}/repository/commits/{sha}/comments"
    expected = {"guest": 403, "reporter": 201, "developer": 201, "master": 201, "owner": 201, "admin": 201,
                "outsider": 404 if visibility == 0 else 201}  # fmt: skip
    if visibility == 20:
        expected["guest"] = 201  # a public project lets anyone signed in read its code
    for role, want in expected.items():
        posted = api.as_(team.user(role)).post(path, json={"note": f"by {role}"})
        listed = api.as_(team.user(role)).get(path)
        assert (posted.status_code, listed.status_code) == (want, 200 if want == 201 else want), role
        if want == 404:
            assert posted.json() == {"message": "404 Project Not Found"}
    assert api.anonymous.get(path).status_code == 401


# --- python-gitlab 1.4 ---------------------------------------------------------------------------


def test_python_gitlab_notes_and_commit_comments(live, api, rt, team):
    import gitlab

    mr = _open(api, team)
    client = gitlab.Gitlab(live.base_url, private_token=team.user("guest").token, api_version="3")
    remote = client.projects.get(team.project.id)
    request = remote.mergerequests.get(mr["id"])
    created = request.notes.create({"body": "From the client"})
    assert (created.body, created.author.username, created.noteable_type) == ("From the client", team.user("guest").username, "MergeRequest")
    assert [n.body for n in request.notes.list()] == ["From the client"]
    fetched = request.notes.get(created.id)
    fetched.body = "Edited by the client"
    fetched.save()
    assert request.notes.get(created.id).body == "Edited by the client"
    as_developer = gitlab.Gitlab(live.base_url, private_token=team.user("developer").token, api_version="3")
    theirs = as_developer.projects.get(team.project.id).mergerequests.get(mr["id"]).notes.get(created.id)
    theirs.body = "not mine"
    with pytest.raises(gitlab.GitlabUpdateError) as refused:
        theirs.save()
    assert refused.value.response_code == 403
    commit = as_developer.projects.get(team.project.id).commits.get(team.feature)
    commit.comments.create({"note": "On the line", "path": "a.txt", "line": 4, "line_type": "new"})
    commit.comments.create({"note": "On the commit"})
    assert [(c.note, c.line) for c in commit.comments.list()] == [("On the line", 4), ("On the commit", None)]
    assert commit.blob("b.txt") == b"b\n"
