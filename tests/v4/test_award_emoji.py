"""v4 award emoji (GitLab's Emoji reactions API) on merge requests and their notes, through
python-gitlab 8 and raw requests; `thumbsup` / `thumbsdown` count as the request's votes in v3 and v4."""

from __future__ import annotations

import pytest

from codeyard.db.models import AwardEmoji
from codeyard.services import award_emoji

from ..support import QueryCounter
from .merge_request_threads import open_request, open_team, second_request, statements_per_page, v4_path

AWARD_FIELDS = {"id", "name", "user", "created_at", "updated_at", "awardable_id", "awardable_type"}


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    return open_team(users, projects, admin, rt, tmp_path)


def _award_count(rt) -> int:
    with rt.db.session() as session:
        return session.query(AwardEmoji).count()


def test_awards_through_the_client(gl, api, rt, team):
    mr = open_request(api, team)
    guest = team.user("guest")
    request = gl(guest).projects.get(team.project.id, lazy=True).mergerequests.get(mr["iid"], lazy=True)
    award = request.awardemojis.create({"name": "thumbsup"})
    assert set(award.attributes) >= AWARD_FIELDS
    assert (award.name, award.awardable_id, award.awardable_type) == ("thumbsup", mr["id"], "MergeRequest")
    assert award.user["username"] == guest.username and award.created_at.endswith("Z")
    request.awardemojis.create({"name": "tada"})
    assert [a.name for a in request.awardemojis.list()] == ["thumbsup", "tada"]
    assert request.awardemojis.get(award.id).name == "thumbsup"
    note = request.notes.create({"body": "award me"})
    on_note = note.awardemojis.create({"name": "heart"})
    assert (on_note.awardable_id, on_note.awardable_type) == (note.id, "Note")
    assert [a.name for a in note.awardemojis.list()] == ["heart"]
    assert note.awardemojis.get(on_note.id).user["id"] == guest.id
    on_note.delete()
    assert note.awardemojis.list() == []
    request.awardemojis.get(award.id, lazy=True).delete()
    assert [a.name for a in request.awardemojis.list()] == ["tada"]


def test_thumbs_are_votes_beside_the_old_comments(api4, api, rt, team):
    mr = open_request(api, team)
    v3_path = f"/projects/{team.project.id}/merge_requests/{mr['id']}"
    for role in ("guest", "reporter", "master"):
        api4.as_(team.user(role)).post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsup"})
    api4.as_(team.user("owner")).post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsdown"})
    api4.as_(team.user("owner")).post(v4_path(team, mr, "/award_emoji"), json={"name": "smile"})
    api.as_(team.user("admin")).post(f"{v3_path}/comments", json={"note": ":+1:"})
    # A thumb on a note is no vote on the request.
    note = api4.as_(team.user("guest")).post(v4_path(team, mr, "/notes"), json={"body": "x"}).json()
    api4.as_(team.user("guest")).post(v4_path(team, mr, f"/notes/{note['id']}/award_emoji"), json={"name": "thumbsdown"})
    got = api.as_(team.user("guest")).get(v3_path).json()
    assert (got["upvotes"], got["downvotes"]) == (4, 1)
    listed = api.as_(team.user("guest")).get(f"/projects/{team.project.id}/merge_requests").json()
    assert (listed[0]["upvotes"], listed[0]["downvotes"]) == (4, 1)
    # The list's statements do not grow with the requests or their awards.
    with QueryCounter(rt) as counter:
        api.as_(team.user("guest")).get(f"/projects/{team.project.id}/merge_requests")
    before = counter.count
    other = second_request(api, team)
    api4.as_(team.user("guest")).post(v4_path(team, other, "/award_emoji"), json={"name": "thumbsup"})
    with QueryCounter(rt) as counter:
        listed = api.as_(team.user("guest")).get(f"/projects/{team.project.id}/merge_requests").json()
    assert counter.count == before
    assert sorted((m["upvotes"], m["downvotes"]) for m in listed) == [(1, 0), (4, 1)]


def test_each_name_once_per_user(api4, api, rt, team):
    mr = open_request(api, team)
    guest = api4.as_(team.user("guest"))
    assert guest.post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsup"}).status_code == 201
    again = guest.post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsup"})
    assert (again.status_code, again.json()) == (404, {"message": "404 Award Emoji Name has already been taken Not Found"})
    assert api4.as_(team.user("reporter")).post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsup"}).status_code == 201
    assert _award_count(rt) == 2


def test_who_awards_and_takes_back(api4, api, rt, team):
    mr = open_request(api, team)
    award = api4.as_(team.user("guest")).post(v4_path(team, mr, "/award_emoji"), json={"name": "rocket"}).json()
    path = v4_path(team, mr, f"/award_emoji/{award['id']}")
    hidden = api4.as_(team.user("outsider")).post(v4_path(team, mr, "/award_emoji"), json={"name": "rocket"})
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Project Not Found"})
    assert api4.as_(team.user("outsider")).get(path).status_code == 404
    assert api4.anonymous.post(v4_path(team, mr, "/award_emoji"), json={"name": "rocket"}).status_code == 401
    # Only its user takes it back, or an administrator; not even the project's owner.
    for role in ("reporter", "developer", "master", "owner"):
        refused = api4.as_(team.user(role)).delete(path)
        assert (refused.status_code, refused.json()) == (403, {"message": "403 Forbidden"}), role
        assert api4.as_(team.user(role)).get(path).status_code == 200
    gone = api4.as_(team.user("guest")).delete(path)
    assert (gone.status_code, gone.content) == (204, b"")
    again = api4.as_(team.user("guest")).get(path)
    assert (again.status_code, again.json()) == (404, {"message": "404 Award Emoji Not Found"})
    theirs = api4.as_(team.user("reporter")).post(v4_path(team, mr, "/award_emoji"), json={"name": "eyes"}).json()
    assert api4.as_(team.user("admin")).delete(v4_path(team, mr, f"/award_emoji/{theirs['id']}")).status_code == 204
    assert _award_count(rt) == 0


def test_hostile_names_and_ids(api4, api, rt, team):
    mr = open_request(api, team)
    other = second_request(api, team)
    guest = api4.as_(team.user("guest"))
    for bad in ("", "x" * 65, "Thumbsup", ":thumbsup:", "a b", "../x", "<script>", "\x00", "é", ["thumbsup"], 7.5):
        response = guest.post(v4_path(team, mr, "/award_emoji"), json={"name": bad})
        assert response.status_code == 400, bad
    assert guest.post(v4_path(team, mr, "/award_emoji"), json={}).json() == {"error": "name is missing"}
    for good in ("+1", "-1", "100", "e-mail", "x" * 64):
        assert guest.post(v4_path(team, mr, "/award_emoji"), json={"name": good}).status_code == 201, good
    assert _award_count(rt) == 5
    # An award is found only on its own awardable; a note only on its own request.
    elsewhere = guest.post(v4_path(team, other, "/award_emoji"), json={"name": "tada"}).json()
    note = guest.post(v4_path(team, other, "/notes"), json={"body": "other"}).json()
    on_note = guest.post(v4_path(team, other, f"/notes/{note['id']}/award_emoji"), json={"name": "tada"}).json()
    for award_id in (elsewhere["id"], on_note["id"], 99999999, 99999999999, "abc", "-1"):
        got = guest.get(v4_path(team, mr, f"/award_emoji/{award_id}"))
        assert got.status_code == 404, award_id
        assert guest.delete(v4_path(team, mr, f"/award_emoji/{award_id}")).status_code == 404
    assert guest.get(v4_path(team, other, f"/notes/{note['id']}/award_emoji/{elsewhere['id']}")).status_code == 404
    for note_id in (note["id"], 99999999, "abc"):
        path = v4_path(team, mr, f"/notes/{note_id}/award_emoji")
        assert guest.get(path).status_code == 404 and guest.post(path, json={"name": "tada"}).status_code == 404
        assert guest.delete(f"{path}/{on_note['id']}").status_code == 404
    assert _award_count(rt) == 7


def test_award_list_pages_with_a_fixed_number_of_queries(api4, api, rt, team):
    mr = open_request(api, team)
    people = [team.user(role) for role in ("guest", "reporter", "developer", "master", "owner", "admin")]
    for who in people:
        api4.as_(who).post(v4_path(team, mr, "/award_emoji"), json={"name": "thumbsup"})
    guest = api4.as_(people[0])
    page = guest.get(v4_path(team, mr, "/award_emoji"), params={"per_page": 4, "page": 2})
    assert [a["user"]["username"] for a in page.json()] == [people[4].username, people[5].username]
    assert (page.headers["x-total"], page.headers["x-total-pages"]) == ("6", "2")
    counts = statements_per_page(rt, guest, v4_path(team, mr, "/award_emoji"), (1, 6))
    assert counts[0] == counts[1] <= 8


def test_forgetting_a_request_takes_its_awards_and_its_notes(api4, api, rt, team):
    """What deleting a request calls first (`award_emoji.forget_request`): its awards and its notes'
    go, another request's stay."""
    mr, other = open_request(api, team), second_request(api, team)
    guest = api4.as_(team.user("guest"))
    for request in (mr, other):
        note = guest.post(v4_path(team, request, "/notes"), json={"body": "x"}).json()
        guest.post(v4_path(team, request, f"/notes/{note['id']}/award_emoji"), json={"name": "tada"})
        guest.post(v4_path(team, request, "/award_emoji"), json={"name": "tada"})
    assert _award_count(rt) == 4
    with rt.db.transaction() as session:
        award_emoji.forget_request(session, mr["id"])
    assert [a["name"] for a in guest.get(v4_path(team, other, "/award_emoji")).json()] == ["tada"]
    with rt.db.session() as session:
        kept = {(a.awardable_type, a.awardable_id) for a in session.query(AwardEmoji)}
    assert len(kept) == 2 and ("MergeRequest", other["id"]) in kept
