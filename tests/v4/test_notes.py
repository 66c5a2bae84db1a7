"""v4 notes on merge requests (GitLab's Notes API): `/projects/:id/merge_requests/:iid/notes`, through
python-gitlab 8 and raw requests; the same rows, events and Note Hooks as v3's comments."""

from __future__ import annotations

import pytest

from codeyard.db.models import AwardEmoji, Event, MergeRequest, Note
from codeyard.services.merge_requests import trail

from .merge_request_threads import (
    note_hooks,
    open_request,
    open_team,
    second_request,
    statements_per_page,
    v4_path,
)

NOTE_FIELDS = {
    "id", "type", "body", "attachment", "author", "created_at", "updated_at", "system", "noteable_id", "noteable_type",
    "project_id", "noteable_iid", "resolvable", "resolved", "resolved_by", "resolved_at", "confidential", "internal",
    "commands_changes",
}  # fmt: skip


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    return open_team(users, projects, admin, rt, tmp_path)


def _count(rt, model) -> int:
    with rt.db.session() as session:
        return session.query(model).count()


def test_notes_through_the_client(gl, api, rt, team):
    mr = open_request(api, team)
    guest = team.user("guest")
    project = gl(guest).projects.get(team.project.id, lazy=True)
    request = project.mergerequests.get(mr["iid"], lazy=True)
    created = request.notes.create({"body": "Looks good"})
    assert set(created.attributes) >= NOTE_FIELDS
    assert (created.body, created.noteable_id, created.noteable_iid, created.noteable_type) == ("Looks good", mr["id"], mr["iid"], "MergeRequest")
    assert (created.type, created.system, created.resolvable, created.resolved, created.project_id) == (None, False, False, False, team.project.id)
    assert (created.attachment, created.resolved_by, created.resolved_at, created.commands_changes) == (None, None, None, {})
    assert created.author["username"] == guest.username and created.author["locked"] is False and "email" not in created.author
    assert created.created_at.endswith("Z") and created.updated_at.endswith("Z")
    request.notes.create({"body": "second"})
    assert [note.body for note in request.notes.list()] == ["second", "Looks good"]  # newest first, as GitLab
    assert [note.body for note in request.notes.list(sort="asc")] == ["Looks good", "second"]
    got = request.notes.get(created.id)
    got.body = "Looks better"
    got.save()
    assert request.notes.get(created.id).body == "Looks better"
    got.delete()
    assert [note.body for note in request.notes.list()] == ["second"]
    # A comment the v3 way is a v4 note, and v4's notes are v3's comments.
    api.as_(guest).post(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments", json={"note": "by v3"})
    assert [note.body for note in request.notes.list(sort="asc")] == ["second", "by v3"]
    v3 = api.as_(guest).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}/notes").json()
    assert [note["body"] for note in v3] == ["second", "by v3"] and "type" not in v3[0]


def test_a_note_fires_the_comment_event_and_note_hook(api4, api, rt, team):
    mr = open_request(api, team)
    reporter = team.user("reporter")
    created = api4.as_(reporter).post(v4_path(team, mr, "/notes"), json={"body": "hooked"})
    assert created.status_code == 201, created.text
    note = created.json()
    with rt.db.session() as session:
        events = session.query(Event).filter_by(action=6, target_type="Note").all()
        assert [(e.target_id, e.author_id) for e in events] == [(note["id"], reporter.id)]
    hooks = note_hooks(rt)
    assert len(hooks) == 1 and hooks[0]["object_attributes"]["note"] == "hooked"
    assert hooks[0]["merge_request"]["iid"] == mr["iid"]
    # Edits and deletions send none (as v3's edits).
    api4.as_(reporter).put(v4_path(team, mr, f"/notes/{note['id']}"), json={"body": "edited"})
    assert api4.as_(reporter).delete(v4_path(team, mr, f"/notes/{note['id']}")).status_code == 204
    assert len(note_hooks(rt)) == 1


def test_order_and_pages_with_a_fixed_number_of_queries(api4, api, rt, team):
    mr = open_request(api, team)
    people = [team.user(role) for role in ("guest", "reporter", "developer", "master", "owner", "admin")]
    ids = [api4.as_(who).post(v4_path(team, mr, "/notes"), json={"body": f"note {at}"}).json()["id"] for at, who in enumerate(people)]
    dev = api4.as_(team.user("developer"))
    edited = api4.as_(people[0]).put(v4_path(team, mr, f"/notes/{ids[0]}"), json={"body": "note 0, edited last"})
    assert edited.status_code == 200 and edited.json()["updated_at"] > edited.json()["created_at"]
    listed = dev.get(v4_path(team, mr, "/notes"), params={"order_by": "updated_at", "sort": "desc", "per_page": 2})
    assert [n["id"] for n in listed.json()] == [ids[0], ids[5]]
    assert (listed.headers["x-total"], listed.headers["x-total-pages"], listed.headers["x-next-page"]) == ("6", "3", "2")
    assert "order_by=updated_at" in listed.headers["link"] and 'rel="next"' in listed.headers["link"]
    second = dev.get(v4_path(team, mr, "/notes"), params={"sort": "asc", "per_page": 4, "page": 2}).json()
    assert [n["id"] for n in second] == ids[4:]
    for bad in ({"sort": "sideways"}, {"order_by": "body"}):
        assert dev.get(v4_path(team, mr, "/notes"), params=bad).status_code == 400, bad
    counts = statements_per_page(rt, dev, v4_path(team, mr, "/notes"), (1, 6))
    assert counts[0] == counts[1] <= 8


def test_edit_and_delete_author_or_maintainer(api4, api, rt, team):
    mr = open_request(api, team)
    guest = team.user("guest")
    note = api4.as_(guest).post(v4_path(team, mr, "/notes"), json={"body": "mine"}).json()
    path = v4_path(team, mr, f"/notes/{note['id']}")
    for role in ("reporter", "developer"):
        assert api4.as_(team.user(role)).put(path, json={"body": "theirs"}).status_code == 403
        assert api4.as_(team.user(role)).delete(path).status_code == 403
    hidden = api4.as_(team.user("outsider")).delete(path)
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Project Not Found"})
    assert api4.anonymous.delete(path).status_code == 401
    assert api4.as_(guest).get(path).json()["body"] == "mine"
    for role in ("guest", "master", "owner", "admin"):
        edited = api4.as_(team.user(role)).put(path, json={"body": f"by {role}"})
        assert edited.status_code == 200, (role, edited.text)
        assert edited.json()["author"]["id"] == guest.id and edited.json()["body"] == f"by {role}"
    for role in ("guest", "master"):
        mine = api4.as_(guest).post(v4_path(team, mr, "/notes"), json={"body": "to go"}).json()
        gone = api4.as_(team.user(role)).delete(v4_path(team, mr, f"/notes/{mine['id']}"))
        assert (gone.status_code, gone.content) == (204, b"")
        assert api4.as_(guest).get(v4_path(team, mr, f"/notes/{mine['id']}")).status_code == 404


def test_system_notes_are_listed_but_nobody_changes_them(api4, api, rt, team):
    mr = open_request(api, team)
    with rt.db.transaction() as session:
        system = trail.system_note(session, session.get(MergeRequest, mr["id"]), team.user("developer").id, "merged")
        session.flush()
        system_id = system.id
    path = v4_path(team, mr, f"/notes/{system_id}")
    shown = api4.as_(team.user("guest")).get(path).json()
    assert (shown["system"], shown["type"], shown["resolvable"]) == (True, None, False)
    for role in ("developer", "owner", "admin"):
        assert api4.as_(team.user(role)).put(path, json={"body": "rewritten"}).status_code == 403
        assert api4.as_(team.user(role)).delete(path).status_code == 403


def test_deleting_a_note_takes_its_award_emoji(api4, api, rt, team):
    mr = open_request(api, team)
    guest = api4.as_(team.user("guest"))
    note = guest.post(v4_path(team, mr, "/notes"), json={"body": "award me"}).json()
    assert guest.post(v4_path(team, mr, f"/notes/{note['id']}/award_emoji"), json={"name": "tada"}).status_code == 201
    assert guest.post(v4_path(team, mr, "/award_emoji"), json={"name": "tada"}).status_code == 201
    assert _count(rt, AwardEmoji) == 2
    assert guest.delete(v4_path(team, mr, f"/notes/{note['id']}")).status_code == 204
    with rt.db.session() as session:
        assert [a.awardable_type for a in session.query(AwardEmoji)] == ["MergeRequest"]


@pytest.mark.parametrize("visibility", [0, 20])
def test_who_reads_and_comments(api4, api, rt, users, projects, admin, tmp_path, visibility):
    team = open_team(users, projects, admin, rt, tmp_path, visibility=visibility, prefix=f"v{visibility}")
    mr = open_request(api, team)
    path = v4_path(team, mr, "/notes")
    for role in ("outsider", "guest", "reporter", "developer", "master", "owner", "admin"):
        listed, posted = api4.as_(team.user(role)).get(path), api4.as_(team.user(role)).post(path, json={"body": role})
        if role == "outsider" and visibility == 0:
            assert (listed.status_code, posted.status_code) == (404, 404)
            assert posted.json() == {"message": "404 Project Not Found"}
        else:  # whoever reads a request may comment on it (public projects: anyone signed in)
            assert (listed.status_code, posted.status_code) == (200, 201), role
    assert api4.anonymous.post(path, json={"body": "x"}).status_code == 401


def test_hostile_input(api4, api, rt, team):
    mr = open_request(api, team)
    other = second_request(api, team)
    dev = api4.as_(team.user("developer"))
    theirs = dev.post(v4_path(team, other, "/notes"), json={"body": "on the other one"}).json()
    for missing in (theirs["id"], 99999999, 99999999999, "abc", "-1", "1%2F..%2F2"):
        response = dev.get(v4_path(team, mr, f"/notes/{missing}"))
        assert (response.status_code, response.json()) == (404, {"message": "404 Not found"}), missing
        assert dev.put(v4_path(team, mr, f"/notes/{missing}"), json={"body": "x"}).status_code == 404
        assert dev.delete(v4_path(team, mr, f"/notes/{missing}")).status_code == 404
    # The request by global id is not a v4 iid (iid 2 is the other request; a global id far off is nothing).
    for unknown in (99999999, "abc", mr["id"] + 1000):
        assert dev.get(f"/projects/{team.project.id}/merge_requests/{unknown}/notes").status_code == 404
    before = _count(rt, Note)
    for bad in ({}, {"body": ""}, {"body": None}, {"body": ["x"]}, {"body": "\x00"}, {"note": "v3's name"}):
        assert dev.post(v4_path(team, mr, "/notes"), json=bad).status_code == 400, bad
    assert dev.post(v4_path(team, mr, "/notes"), json={"body": "x" * 1_000_001}).status_code in (400, 413)
    assert _count(rt, Note) == before
    missing = dev.post(v4_path(team, mr, "/notes"), json={})
    assert missing.json() == {"error": "body is missing"}
    # Parameters in the query string of a POST count (python-gitlab sends some so).
    assert dev.post(v4_path(team, mr, "/notes") + "?body=from%20the%20query").json()["body"] == "from the query"
