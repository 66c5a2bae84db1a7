"""v4 tags: list (order_by, sort, search, pages), one (names with slashes), create (annotated with the
caller as tagger when a message is given; lightweight otherwise) and delete, each a push of the tag
(its rules and its events); hostile names and refs refused before git sees them."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from codeyard.db.models import Event, Project, User
from codeyard.git import storage

from ..support import WorkingCopy, make_team


@pytest.fixture
def repo(rt, users, projects, admin, tmp_path):
    """A private project with a team; master with three commits, lightweight tags v1.9.0 (first),
    v1.10.0 (second) and an annotated release/beta (third)."""
    team = make_team(users, projects, admin)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    shas = [work.commit(name) for name in ("first", "second", "third")]
    work.git("tag", "v1.9.0", shas[0])
    work.git("tag", "v1.10.0", shas[1])
    work.git("tag", "-a", "-m", "beta notes", "release/beta", shas[2])
    work.push("master", "--tags")
    with rt.db.transaction() as session:
        session.get(Project, team.project.id).default_branch = "master"
    bare = storage.repository_path(rt.config.repositories_dir, team.project.id)
    return SimpleNamespace(project=team.project, user=team.user, work=work, shas=shas, bare=bare,
                           base=f"/projects/{team.project.id}/repository/tags")  # fmt: skip


def names(api4, repo, who="developer", **params) -> list[str]:
    response = api4.as_(repo.user(who)).get(repo.base, params=params)
    assert response.status_code == 200, response.text
    return [tag["name"] for tag in response.json()]


def tag_events(rt, project_id) -> list[tuple[str, bool]]:
    """(ref, created) of the project's tag push events, oldest first."""
    with rt.db.session() as session:
        events = session.scalars(select(Event).where(Event.project_id == project_id, Event.action == 5).order_by(Event.id)).all()
        return [(event.data["ref"], event.data["before"] == "0" * 40) for event in events
                if event.data["ref"].startswith("refs/tags/")]  # fmt: skip


def test_list_through_the_client(gl, repo):
    project = gl(repo.user("reporter")).projects.get(repo.project.id, lazy=True)
    found = {tag.name: tag for tag in project.tags.list(get_all=True)}
    assert list(found) == ["release/beta", "v1.10.0", "v1.9.0"]  # newest commit first
    beta, light = found["release/beta"], found["v1.9.0"]
    assert beta.message == "beta notes\n" and beta.target != beta.commit["id"]
    assert beta.commit["id"] == repo.shas[2] and beta.created_at is not None
    assert (beta.release, beta.protected) == (None, False)
    assert light.message is None and light.target == repo.shas[0] and light.created_at is None
    assert light.commit["title"] == "first"


def test_orders_search_and_pages(api4, repo):
    assert names(api4, repo, order_by="name", sort="asc") == ["release/beta", "v1.10.0", "v1.9.0"]
    assert names(api4, repo, order_by="version", sort="asc") == ["release/beta", "v1.9.0", "v1.10.0"]
    assert names(api4, repo, order_by="version") == ["v1.10.0", "v1.9.0", "release/beta"]
    assert names(api4, repo, order_by="updated", sort="asc") == ["v1.9.0", "v1.10.0", "release/beta"]
    assert names(api4, repo, search="^v1") == ["v1.10.0", "v1.9.0"]
    assert names(api4, repo, search="BETA$") == ["release/beta"]
    page = api4.as_(repo.user("developer")).get(repo.base, params={"per_page": 1, "page": 2, "order_by": "name"})
    assert [t["name"] for t in page.json()] == ["v1.10.0"]
    assert (page.headers["x-total"], page.headers["x-next-page"]) == ("3", "3")
    assert "order_by=name" in page.headers["link"]
    for bad in ({"order_by": "size"}, {"sort": "up"}, {"search": "a\x00"}):
        assert api4.as_(repo.user("developer")).get(repo.base, params=bad).status_code == 400


def test_get_one(api4, repo):
    for name in ("release/beta", "release%2Fbeta"):
        body = api4.as_(repo.user("developer")).get(f"{repo.base}/{name}").json()
        assert body["name"] == "release/beta" and body["message"] == "beta notes\n"
    for missing in ("nope", "release", "-x", "%2E%2E", "a" * 300, "v1.9.0%01"):
        response = api4.as_(repo.user("developer")).get(f"{repo.base}/{missing}")
        assert (response.status_code, response.json()) == (404, {"message": "404 Tag Not Found"}), missing


@pytest.mark.parametrize("role, status", [("outsider", 404), ("guest", 403), ("reporter", 200), ("developer", 200),
                                          ("master", 200), ("owner", 200), ("admin", 200)])  # fmt: skip
def test_who_reads(api4, repo, role, status):
    assert api4.as_(repo.user(role)).get(repo.base).status_code == status
    assert api4.as_(repo.user(role)).get(f"{repo.base}/v1.9.0").status_code == status


def test_create_annotated_with_the_caller_as_tagger(gl, rt, repo):
    developer = repo.user("developer")
    project = gl(developer).projects.get(repo.project.id, lazy=True)
    created = project.tags.create({"tag_name": "v2", "ref": "master", "message": "m"})
    assert created.name == "v2" and created.message == "m" and created.commit["id"] == repo.shas[2]
    assert created.target != repo.shas[2] and created.created_at is not None
    raw = subprocess.run(["git", "--git-dir", str(repo.bare), "cat-file", "tag", "v2"], capture_output=True, text=True, check=True).stdout
    with rt.db.session() as session:
        person = session.get(User, developer.id)
        assert f"\ntagger {person.name} <{person.email}> " in raw
    lightweight = project.tags.create({"tag_name": "v3", "ref": repo.shas[0]})
    assert lightweight.message is None and lightweight.target == repo.shas[0]
    # Like a push of each tag: a tag push event with the tag's own id.
    assert tag_events(rt, repo.project.id)[-2:] == [("refs/tags/v2", True), ("refs/tags/v3", True)]


def test_create_in_the_query_string_and_errors(api4, repo):
    developer = api4.as_(repo.user("developer"))
    # gitbeaker's Tags.create sends tag_name and ref in the query string.
    created = developer.post(f"{repo.base}?tag_name=v9&ref=v1.9.0")
    assert created.status_code == 201 and created.json()["commit"]["id"] == repo.shas[0]
    again = developer.post(repo.base, json={"tag_name": "v9", "ref": "master"})
    assert (again.status_code, again.json()) == (400, {"message": "Tag v9 already exists"})
    bad_ref = developer.post(repo.base, json={"tag_name": "v10", "ref": "nope"})
    assert (bad_ref.status_code, bad_ref.json()) == (400, {"message": "Target nope is invalid"})
    assert developer.post(repo.base, json={"ref": "master"}).json() == {"error": "tag_name is missing"}
    assert developer.post(repo.base, json={"tag_name": "v10"}).json() == {"error": "ref is missing"}


@pytest.mark.parametrize("fields", [
    {"tag_name": ".."}, {"tag_name": "-x"}, {"tag_name": "--upload-pack=evil"}, {"tag_name": "a\x01b"},
    {"tag_name": "a b"}, {"tag_name": "a" * 256}, {"tag_name": "x.lock"}, {"tag_name": "a..b"}, {"tag_name": "x@{1}"},
    {"tag_name": "ok", "ref": "--output=/tmp/evil"}, {"tag_name": "ok", "ref": "master..HEAD"},
    {"tag_name": "ok", "ref": "a" * 300}, {"tag_name": "ok", "message": "m\x00"},
    {"tag_name": "ok", "message": "m" * 70000},
])  # fmt: skip
def test_hostile_input_is_refused_and_nothing_is_tagged(api4, repo, fields):
    before = names(api4, repo)
    response = api4.as_(repo.user("master")).post(repo.base, json={"ref": "master", **fields})
    assert response.status_code == 400, (fields, response.text)
    assert names(api4, repo) == before


@pytest.mark.parametrize("role, create, delete", [("outsider", 404, 404), ("guest", 403, 403), ("reporter", 403, 403),
                                                  ("developer", 201, 403), ("master", 201, 204), ("owner", 201, 204),
                                                  ("admin", 201, 204)])  # fmt: skip
def test_who_creates_and_deletes(api4, repo, role, create, delete):
    who = api4.as_(repo.user(role))
    assert who.post(repo.base, json={"tag_name": f"by-{role}", "ref": "master"}).status_code == create
    assert who.delete(f"{repo.base}/v1.9.0").status_code == delete
    assert ("v1.9.0" in names(api4, repo)) is (delete != 204)


def test_delete_is_a_push_of_the_tag(gl, rt, repo):
    project = gl(repo.user("master")).projects.get(repo.project.id, lazy=True)
    project.tags.delete("release/beta")
    assert "release/beta" not in [tag.name for tag in project.tags.list(get_all=True)]
    assert tag_events(rt, repo.project.id)[-1] == ("refs/tags/release/beta", False)
    with pytest.raises(Exception) as missing:
        project.tags.delete("release/beta")
    assert missing.value.response_code == 404
