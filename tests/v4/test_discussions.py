"""v4 discussions on merge requests (GitLab's Discussions API): threads started, replied to and
resolved, a thread on a line of the request's diff; through python-gitlab 8 and raw requests."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from codeyard.db.models import MergeRequest, Note
from codeyard.db.models.merge_requests import unresolved_notes
from codeyard.db.readers import SessionReader, now
from codeyard.services import discussions
from codeyard.services.merge_requests import trail

from .merge_request_threads import (
    note_hooks,
    open_request,
    open_team,
    second_request,
    statements_per_page,
    v4_path,
)


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    return open_team(users, projects, admin, rt, tmp_path)


def _position(team, **changed) -> dict:
    master = team.work.git("rev-parse", "master")
    return {"base_sha": master, "start_sha": master, "head_sha": team.head, "position_type": "text",
            "old_path": "a.txt", "new_path": "a.txt", "new_line": 2, **changed}  # fmt: skip


def _unresolved(rt, mr) -> int:
    with rt.db.session() as session:
        return now(discussions.unresolved_count(SessionReader(session), mr["id"]))


def _note_count(rt) -> int:
    with rt.db.session() as session:
        return session.query(Note).count()


def test_threads_through_the_client(gl, api, rt, team):
    mr = open_request(api, team)
    guest, dev = team.user("guest"), team.user("developer")
    request = gl(guest).projects.get(team.project.id, lazy=True).mergerequests.get(mr["iid"], lazy=True)
    request.notes.create({"body": "a plain comment"})
    thread = request.discussions.create({"body": "Why this?"})
    assert len(thread.id) == 40 and thread.individual_note is False
    first = thread.attributes["notes"][0]
    assert (first["type"], first["resolvable"], first["resolved"], first["body"]) == ("DiscussionNote", True, False, "Why this?")
    reply = thread.notes.create({"body": "Because."})
    assert (reply.type, reply.resolvable, reply.noteable_iid) == ("DiscussionNote", True, mr["iid"])
    listed = request.discussions.list()
    assert [(d.individual_note, [n["body"] for n in d.attributes["notes"]]) for d in listed] == [
        (True, ["a plain comment"]), (False, ["Why this?", "Because."]),
    ]  # fmt: skip
    assert listed[0].attributes["notes"][0]["resolvable"] is False  # a comment alone is not resolvable
    assert _unresolved(rt, mr) == 2
    # The request's author (the developer) resolves the whole thread.
    as_dev = gl(dev).projects.get(team.project.id, lazy=True).mergerequests.get(mr["iid"], lazy=True)
    mine = as_dev.discussions.get(thread.id)
    mine.resolved = True
    mine.save()
    notes = as_dev.discussions.get(thread.id).attributes["notes"]
    assert [(n["resolved"], n["resolved_by"]["username"]) for n in notes] == [(True, dev.username)] * 2
    assert all(n["resolved_at"].endswith("Z") for n in notes)
    assert _unresolved(rt, mr) == 0
    # One note reopened, edited through its thread, then deleted.
    note = mine.notes.get(reply.id)
    note.resolved = False
    note.save()
    assert as_dev.discussions.get(thread.id).attributes["notes"][1]["resolved"] is False and _unresolved(rt, mr) == 1
    theirs = request.discussions.get(thread.id).notes.get(reply.id)
    theirs.body = "Because, edited."
    theirs.save()
    assert request.notes.get(reply.id).body == "Because, edited."
    theirs.delete()
    assert [n["body"] for n in request.discussions.get(thread.id).attributes["notes"]] == ["Why this?"]
    # Every note of a thread is a comment: its event and Note Hook.
    assert len(note_hooks(rt)) == 3


def test_a_reply_to_a_comment_makes_a_thread_of_it(api4, api, rt, team):
    mr = open_request(api, team)
    guest = api4.as_(team.user("guest"))
    comment = guest.post(v4_path(team, mr, "/notes"), json={"body": "lonely"}).json()
    discussion_id = guest.get(v4_path(team, mr, "/discussions")).json()[0]["id"]
    replied = guest.post(v4_path(team, mr, f"/discussions/{discussion_id}/notes"), json={"body": "not any more"})
    assert replied.status_code == 201, replied.text
    thread = guest.get(v4_path(team, mr, f"/discussions/{discussion_id}")).json()
    assert thread["individual_note"] is False
    assert [(n["id"], n["type"], n["resolvable"]) for n in thread["notes"]] == [
        (comment["id"], "DiscussionNote", True), (replied.json()["id"], "DiscussionNote", True),
    ]  # fmt: skip
    # A system note takes no reply, and is no thread to resolve.
    with rt.db.transaction() as session:
        system = trail.system_note(session, session.get(MergeRequest, mr["id"]), None, "merged")
        session.flush()
        system_discussion = system.discussion_id
    owner = api4.as_(team.user("owner"))
    assert owner.post(v4_path(team, mr, f"/discussions/{system_discussion}/notes"), json={"body": "x"}).status_code == 400
    assert owner.put(v4_path(team, mr, f"/discussions/{system_discussion}"), json={"resolved": True}).status_code == 400


def test_who_resolves(api4, api, rt, team):
    mr = open_request(api, team)  # by the developer
    guest = api4.as_(team.user("guest"))
    thread = guest.post(v4_path(team, mr, "/discussions"), json={"body": "resolve me"}).json()
    path = v4_path(team, mr, f"/discussions/{thread['id']}")
    note_path = f"{path}/notes/{thread['notes'][0]['id']}"
    # Guests and reporters (the thread's own author among them) may not; developers and up may.
    for role in ("guest", "reporter"):
        assert api4.as_(team.user(role)).put(path, json={"resolved": True}).status_code == 403
        assert api4.as_(team.user(role)).put(note_path, json={"resolved": True}).status_code == 403
    assert api4.as_(team.user("outsider")).put(path, json={"resolved": True}).status_code == 404
    for role in ("developer", "master", "owner", "admin"):
        resolved = api4.as_(team.user(role)).put(path, params={"resolved": "true"})
        assert resolved.status_code == 200, (role, resolved.text)
        assert resolved.json()["notes"][0]["resolved_by"]["username"] == team.user(role).username
        again = api4.as_(team.user("owner")).put(path, json={"resolved": True})  # resolved already: who did stays
        assert again.json()["notes"][0]["resolved_by"]["username"] == team.user(role).username
        assert api4.as_(team.user(role)).put(path, json={"resolved": False}).json()["notes"][0]["resolved"] is False
    # A reporter who opened the request resolves its threads (GitLab: the request's author).
    reporter = team.user("reporter")
    with rt.db.transaction() as session:
        session.get(MergeRequest, mr["id"]).author_id = reporter.id
    assert api4.as_(reporter).put(path, json={"resolved": True}).status_code == 200
    assert api4.as_(reporter).put(path, json={}).json() == {"error": "resolved is missing"}
    assert api4.as_(reporter).put(note_path, json={}).status_code == 400


def test_a_thread_on_a_line_of_the_diff(gl, api4, api, rt, team):
    mr = open_request(api, team)
    request = gl(team.user("reporter")).projects.get(team.project.id, lazy=True).mergerequests.get(mr["iid"], lazy=True)
    # An added line (new side only), a removed one (old side only), a context line (both), a new file.
    for changed in ({"new_line": 2}, {"old_line": 2, "new_line": None}, {"old_line": 3, "new_line": 3},
                    {"old_path": "b.txt", "new_path": "b.txt", "new_line": 1}):  # fmt: skip
        position = _position(team, **changed)
        thread = request.discussions.create({"body": "on a line", "position": position})
        note = thread.attributes["notes"][0]
        assert (note["type"], note["resolvable"]) == ("DiffNote", True)
        expected = {**position, "old_line": position.get("old_line"), "new_line": position.get("new_line")}
        assert note["position"] == expected
        reply = thread.notes.create({"body": "replied"})
        assert (reply.type, reply.position) == ("DiffNote", expected)
    # A form's `position[...]` fields say the same.
    form = {f"position[{key}]": str(value) for key, value in _position(team).items()}
    created = api4.as_(team.user("reporter")).post(v4_path(team, mr, "/discussions"), data={"body": "form", **form})
    assert created.status_code == 201, created.text
    assert created.json()["notes"][0]["position"]["new_line"] == 2
    with rt.db.session() as session:
        kept = session.query(Note).filter(Note.type == "DiffNote").first()
        assert json.loads(kept.position)["head_sha"] == team.head


@pytest.mark.parametrize(
    "changed",
    [
        {"new_line": 9},  # no such line
        {"new_line": 1},  # a context line, but given as added (the old side says it is line 1 too)
        {"old_line": 2, "new_line": 2},  # removed and added are two lines
        {"new_path": "c.txt", "old_path": "c.txt"},  # not changed
        {"new_path": "../a.txt", "old_path": "../a.txt"},
        {"new_path": "/etc/passwd", "old_path": None},
        {"new_path": "a/./b", "old_path": None},
        {"new_path": "x" * 5000, "old_path": None},
        {"new_path": "a\x00.txt", "old_path": None},
        {"head_sha": "0" * 40},  # not the request's head
        {"head_sha": "abc"},
        {"base_sha": None},
        {"base_sha": "--output=/tmp/x" + "0" * 25},
        {"position_type": "image"},
        {"new_line": "two"},
        {"new_line": -1},
        {"new_line": 2**40},
        {"new_line": True},
        {"new_line": None, "old_line": None},
        {"new_path": None, "old_path": None},
    ],
)
def test_bad_positions_are_400_and_change_nothing(api4, api, rt, team, changed):
    mr = open_request(api, team)
    before = _note_count(rt)
    position = _position(team, **changed)
    if changed == {"new_line": 1}:
        position["old_line"] = 2
    response = api4.as_(team.user("reporter")).post(v4_path(team, mr, "/discussions"), json={"body": "x", "position": position})
    assert response.status_code == 400, response.text
    assert "position" in response.json()["message"]
    assert _note_count(rt) == before


def test_a_position_that_is_no_map_is_400(api4, api, rt, team):
    mr = open_request(api, team)
    for position in ("a.txt:2", ["a.txt", 2], 7):
        response = api4.as_(team.user("reporter")).post(v4_path(team, mr, "/discussions"), json={"body": "x", "position": position})
        assert (response.status_code, response.json()) == (400, {"message": {"position": ["is invalid"]}}), position


def test_discussion_lookups_and_hostile_ids(api4, api, rt, team):
    mr = open_request(api, team)
    other = second_request(api, team)
    dev = api4.as_(team.user("developer"))
    theirs = dev.post(v4_path(team, other, "/discussions"), json={"body": "elsewhere"}).json()
    mine = dev.post(v4_path(team, mr, "/discussions"), json={"body": "here"}).json()
    for bad in (theirs["id"], "0" * 40, "abc", "A" * 40, "1" * 41, "..%2F..", "x" * 2000):
        got = dev.get(v4_path(team, mr, f"/discussions/{bad}"))
        assert (got.status_code, got.json()) == (404, {"message": "404 Discussion Not Found"}), bad
        assert dev.put(v4_path(team, mr, f"/discussions/{bad}"), json={"resolved": True}).status_code == 404
        assert dev.post(v4_path(team, mr, f"/discussions/{bad}/notes"), json={"body": "x"}).status_code == 404
    assert dev.get(v4_path(team, mr, "/discussions/%00")).status_code == 404
    # A note of another discussion is not this one's.
    other_note = dev.post(v4_path(team, mr, "/notes"), json={"body": "alone"}).json()
    wrong = v4_path(team, mr, f"/discussions/{mine['id']}/notes/{other_note['id']}")
    assert dev.put(wrong, json={"body": "x"}).status_code == 404 and dev.delete(wrong).status_code == 404
    assert dev.put(v4_path(team, mr, f"/discussions/{mine['id']}/notes/{theirs['notes'][0]['id']}"), json={"body": "x"}).status_code == 404
    assert dev.post(v4_path(team, mr, "/discussions"), json={"body": "x" * 1_000_001}).status_code in (400, 413)
    assert dev.post(v4_path(team, mr, "/discussions"), json={}).json() == {"error": "body is missing"}
    hidden = api4.as_(team.user("outsider")).get(v4_path(team, mr, "/discussions"))
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Project Not Found"})
    assert api4.as_(team.user("outsider")).post(v4_path(team, mr, "/discussions"), json={"body": "x"}).status_code == 404


def test_discussion_pages_with_a_fixed_number_of_queries(api4, api, rt, team):
    mr = open_request(api, team)
    dev = api4.as_(team.user("developer"))
    ids = []
    for at in range(5):
        thread = dev.post(v4_path(team, mr, "/discussions"), json={"body": f"thread {at}"}).json()
        ids.append(thread["id"])
        for reply in range(at):
            dev.post(v4_path(team, mr, f"/discussions/{thread['id']}/notes"), json={"body": f"reply {reply}"})
    page = dev.get(v4_path(team, mr, "/discussions"), params={"per_page": 2, "page": 2})
    assert [d["id"] for d in page.json()] == ids[2:4]
    assert [len(d["notes"]) for d in page.json()] == [3, 4]
    assert (page.headers["x-total"], page.headers["x-total-pages"], page.headers["x-next-page"]) == ("5", "3", "3")
    assert dev.get(v4_path(team, mr, "/discussions"), params={"page": 9}).json() == []
    counts = statements_per_page(rt, dev, v4_path(team, mr, "/discussions"), (1, 5))
    assert counts[0] == counts[1] <= 8


def test_unresolved_notes_per_request_in_one_statement(api4, api, rt, team):
    """What the request's `blocking_discussions_resolved` reads: its resolvable notes nobody resolved,
    a column of a statement of requests (no query per request)."""
    mr, other = open_request(api, team), second_request(api, team)
    dev = api4.as_(team.user("developer"))
    for _ in range(2):
        dev.post(v4_path(team, mr, "/discussions"), json={"body": "open"})
    done = dev.post(v4_path(team, other, "/discussions"), json={"body": "done"}).json()
    dev.put(v4_path(team, other, f"/discussions/{done['id']}"), json={"resolved": True})
    dev.post(v4_path(team, other, "/notes"), json={"body": "a comment blocks nothing"})
    statement = select(MergeRequest.id, unresolved_notes(MergeRequest.id)).order_by(MergeRequest.id)
    with rt.db.session() as session:
        assert [tuple(row) for row in session.execute(statement)] == [(mr["id"], 2), (other["id"], 0)]
    assert (_unresolved(rt, mr), _unresolved(rt, other)) == (2, 0)


def test_the_request_shows_whether_its_threads_block(api4, api, rt, team):
    mr = open_request(api, team)
    owner = api4.as_(team.user("owner"))
    request_path = v4_path(team, mr)
    assert owner.get(request_path).json()["blocking_discussions_resolved"] is True
    thread = owner.post(v4_path(team, mr, "/discussions"), json={"body": "needs an answer"}).json()
    reply = owner.post(v4_path(team, mr, f"/discussions/{thread['id']}/notes"), json={"body": "still open"})
    assert reply.status_code == 201
    assert owner.get(request_path).json()["blocking_discussions_resolved"] is False
    listed = owner.get(f"/projects/{team.project.id}/merge_requests").json()
    assert [found["blocking_discussions_resolved"] for found in listed] == [False]
    assert owner.put(v4_path(team, mr, f"/discussions/{thread['id']}"), json={"resolved": True}).status_code == 200
    assert owner.get(request_path).json()["blocking_discussions_resolved"] is True


def test_deleting_a_request_drops_its_awards(api4, api, rt, team):
    from codeyard.db.models import AwardEmoji

    mr = open_request(api, team)
    owner = api4.as_(team.user("owner"))
    assert owner.post(v4_path(team, mr, "/award_emoji"), json={"name": "tada"}).status_code == 201
    note = owner.post(v4_path(team, mr, "/notes"), json={"body": "hi"}).json()
    assert owner.post(v4_path(team, mr, f"/notes/{note['id']}/award_emoji"), json={"name": "eyes"}).status_code == 201
    assert owner.delete(v4_path(team, mr)).status_code == 204
    with rt.db.transaction() as session:
        assert session.query(AwardEmoji).count() == 0
