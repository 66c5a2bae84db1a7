"""Branches API: list, get, protect, unprotect, create, delete (reference section 8)."""

from __future__ import annotations

import pytest

from codeyard.db.models import Event, ProtectedBranch

from ..support import QueryCounter, WorkingCopy

GUEST, REPORTER, DEVELOPER, MASTER = 10, 20, 30, 40


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    """alice's project with master (2 commits) and feature/x/y (1 more) pushed; its default branch set."""
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first")
    work.commit("second")
    work.git("checkout", "-q", "-b", "feature/x/y")
    work.commit("feature work")
    work.push("master", "feature/x/y")
    with rt.db.transaction() as session:
        from codeyard.db.models import Project

        session.get(Project, project.id).default_branch = "master"
    return project, work


def test_list_sorted_and_entity(api, alice, hosted):
    project, work = hosted
    body = api.as_(alice).get(f"/projects/{project.id}/repository/branches").json()
    assert [b["name"] for b in body] == ["feature/x/y", "master"]
    master = body[1]
    assert master["protected"] is False
    commit = master["commit"]
    assert commit["id"] == work.git("rev-parse", "master")
    # The spec's shape (reference DECISIONS row 10) and the flat fields GitLab 8.6 sent (reference 4.5).
    assert set(commit) == {"id", "parents", "tree", "message", "author", "committer", "authored_date", "committed_date",
                           "parent_ids", "author_name", "author_email", "committer_name", "committer_email"}  # fmt: skip
    assert commit["parents"] == [{"id": work.git("rev-parse", "master^")}]
    assert commit["parent_ids"] == [work.git("rev-parse", "master^")]
    assert commit["author"] == {"name": "Ada Author", "email": "ada@example.com"}
    assert commit["committer"] == {"name": "Cy Committer", "email": "cy@example.com"}
    assert (commit["author_name"], commit["author_email"]) == ("Ada Author", "ada@example.com")
    assert (commit["committer_name"], commit["committer_email"]) == ("Cy Committer", "cy@example.com")
    assert commit["tree"] == work.git("rev-parse", "master^{tree}")
    assert commit["authored_date"].endswith("+01:00") and commit["message"] == "second\n"
    # Paginated like every list (spec: page and per_page apply to all list endpoints).
    second = api.as_(alice).get(f"/projects/{project.id}/repository/branches", params={"per_page": 1, "page": 2})
    assert [b["name"] for b in second.json()] == ["master"] and second.json()[0] == master
    assert (second.headers["x-total"], second.headers["x-total-pages"], second.headers["x-prev-page"]) == ("2", "2", "1")
    assert 'rel="first"' in second.headers["link"]


def test_get_with_slashes_encoded_or_not(api, alice, hosted):
    project, work = hosted
    for name in ("feature/x/y", "feature%2Fx%2Fy"):
        body = api.as_(alice).get(f"/projects/{project.ref}/repository/branches/{name}").json()
        assert body["name"] == "feature/x/y" and body["commit"]["id"] == work.git("rev-parse", "feature/x/y")
    missing = api.as_(alice).get(f"/projects/{project.id}/repository/branches/nope")
    assert missing.status_code == 404 and missing.json() == {"message": "404 Branch Not Found"}


def test_empty_repository(api, alice, projects):
    project = projects.create(alice, name="empty")
    assert api.as_(alice).get(f"/projects/{project.id}/repository/branches").json() == []


def test_protect_and_unprotect(api, alice, hosted, rt):
    project, _ = hosted
    base = f"/projects/{project.id}/repository/branches"
    for _ in range(2):  # idempotent
        response = api.as_(alice).put(f"{base}/feature/x/y/protect")
        assert response.status_code == 200 and response.json()["protected"] is True
    assert api.as_(alice).get(f"{base}/feature/x/y").json()["protected"] is True
    allowed = api.as_(alice).put(f"{base}/master/protect", json={"developers_can_push": True}).json()
    assert allowed["developers_can_push"] is True
    for _ in range(2):
        response = api.as_(alice).put(f"{base}/feature%2Fx%2Fy/unprotect")
        assert response.status_code == 200 and response.json()["protected"] is False
    with rt.db.session() as session:
        assert [row.name for row in session.query(ProtectedBranch)] == ["master"]
    assert api.as_(alice).put(f"{base}/nope/protect").json() == {"message": "404 Branch Not Found"}
    assert api.as_(alice).put(f"{base}/nope/unprotect").json() == {"message": "404 Branch does not exist Not Found"}


def test_branch_reads_need_no_session_and_show_what_writes_show(api, alice, hosted, rt):
    """GET reads protections on the read path; its entity is the one protect answers from the model."""
    project, _ = hosted
    base = f"/projects/{project.id}/repository/branches"
    written = api.as_(alice).put(f"{base}/master/protect", json={"developers_can_push": True}).json()
    plain = api.as_(alice).put(f"{base}/feature/x/y/protect").json()
    for path, expected in ((base, [plain, written]), (f"{base}/master", written), (f"{base}/feature/x/y", plain)):
        with QueryCounter(rt) as counter:
            assert api.as_(alice).get(path).json() == expected
        assert counter.count == 0, counter.statements
        assert len(counter.fast_reads) == 2, counter.fast_reads  # the project, its protections
    assert written["protected"] is True and written["developers_can_push"] is True
    assert plain["protected"] is True and plain["developers_can_push"] is False
    api.as_(alice).put(f"{base}/master/unprotect")
    assert api.as_(alice).get(f"{base}/master").json()["protected"] is False
    assert api.as_(alice).get(f"{base}/nope").json() == {"message": "404 Branch Not Found"}


def test_roles(api, alice, users, projects, hosted):
    project, _ = hosted
    base = f"/projects/{project.id}/repository/branches"
    people = {}
    for name, level in (("guest", GUEST), ("reporter", REPORTER), ("developer", DEVELOPER), ("master", MASTER)):
        people[name] = users.create(name)
        projects.add_member(project, people[name], level)
    outsider = users.create("outsider")
    assert api.as_(people["guest"]).get(base).status_code == 403
    assert api.as_(outsider).get(base).json() == {"message": "404 Project Not Found"}
    assert api.anonymous.get(base).status_code == 401
    assert api.as_(people["reporter"]).get(base).status_code == 200
    assert api.as_(people["developer"]).put(f"{base}/master/protect").status_code == 403
    assert api.as_(people["master"]).put(f"{base}/master/protect").status_code == 200
    assert api.as_(people["reporter"]).post(base, json={"branch_name": "r", "ref": "master"}).status_code == 403
    assert api.as_(people["developer"]).post(base, json={"branch_name": "d", "ref": "master"}).status_code == 201


def test_public_project_branches_for_any_signed_in_user(api, users, projects, rt, tmp_path):
    owner = users.create("owner")
    project = projects.create(owner, name="open", visibility=20)
    work = WorkingCopy(rt, project, tmp_path / "w")
    work.commit("only")
    work.push()
    assert [b["name"] for b in api.as_(users.create("visitor")).get(f"/projects/{project.id}/repository/branches").json()] == ["master"]


def test_create_branch(api, alice, hosted, rt):
    project, work = hosted
    base = f"/projects/{project.id}/repository/branches"
    response = api.as_(alice).post(base, json={"branch_name": "release/1.0", "ref": "master"})
    assert response.status_code == 201
    assert response.json()["name"] == "release/1.0" and response.json()["commit"]["id"] == work.git("rev-parse", "master")
    from_sha = api.as_(alice).post(base, json={"branch_name": "old", "ref": work.git("rev-parse", "master^")})
    assert from_sha.status_code == 201
    cases = [
        ({"branch_name": "has space", "ref": "master"}, "Branch name is invalid"),
        ({"branch_name": "a..b", "ref": "master"}, "Branch name is invalid"),
        ({"branch_name": "master", "ref": "master"}, "Branch already exists"),
        ({"branch_name": "new", "ref": "no-such-ref"}, "Invalid reference name"),
    ]
    for body, message in cases:
        refused = api.as_(alice).post(base, json=body)
        assert refused.status_code == 400 and refused.json() == {"message": message}, body
    assert api.as_(alice).post(base, json={"branch_name": "x"}).json() == {"message": '400 (Bad request) "ref" not given'}
    names = [b["name"] for b in api.as_(alice).get(base).json()]
    assert names == ["feature/x/y", "master", "old", "release/1.0"]
    with rt.db.session() as session:
        pushed = session.query(Event).filter_by(project_id=project.id, action=5).all()
    assert {event.data["ref"] for event in pushed} == {"refs/heads/release/1.0", "refs/heads/old"}


def test_delete_branch(api, alice, hosted, rt):
    project, _ = hosted
    base = f"/projects/{project.id}/repository/branches"
    response = api.as_(alice).delete(f"{base}/feature/x/y")
    assert response.status_code == 200 and response.json() == {"branch_name": "feature/x/y"}
    assert api.as_(alice).delete(f"{base}/feature/x/y").json() == {"message": "No such branch"}
    head = api.as_(alice).delete(f"{base}/master")
    assert head.status_code == 405 and head.json() == {"message": "Cannot remove HEAD branch"}
    api.as_(alice).post(base, json={"branch_name": "keep", "ref": "master"})
    api.as_(alice).put(f"{base}/keep/protect")
    protected = api.as_(alice).delete(f"{base}/keep")
    assert protected.status_code == 405 and protected.json() == {"message": "Protected branch cant be removed"}
    events = api.as_(alice).get(f"/projects/{project.id}/events").json()
    assert events[-1]["action_name"] == "created"
    assert "deleted" in [e["action_name"] for e in events]


def test_python_gitlab_branches(live, alice, hosted):
    import gitlab

    project, _ = hosted
    client = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3")
    remote = client.projects.get(project.id)
    assert [b.name for b in remote.branches.list()] == ["feature/x/y", "master"]
    master = remote.branches.get("master")
    master.protect()
    assert remote.branches.get("master").protected is True
    master.unprotect()
    assert remote.branches.get("master").protected is False
    created = remote.branches.create({"branch_name": "from-client", "ref": "master"})
    assert created.name == "from-client"
    remote.branches.delete("from-client")
    assert [b.name for b in remote.branches.list()] == ["feature/x/y", "master"]
    # Commit diffs and comparisons as the client reads them.
    commit = remote.commits.get("feature/x/y")
    assert all({"diff", "new_path", "old_path"} <= set(d) for d in commit.diff())
    compared = remote.repository_compare("master", "feature/x/y")
    assert compared["compare_same_ref"] is False and isinstance(compared["diffs"], list)
    assert remote.repository_archive(sha="master")[:2] == b"\x1f\x8b"  # a gzip stream
    created = remote.files.create({"file_path": "client.txt", "branch_name": "master", "content": "from the client",
                                   "commit_message": "client commit"})  # fmt: skip
    assert created.file_path == "client.txt"
    assert remote.files.get(file_path="client.txt", ref="master").decode() == b"from the client"
    assert remote.commits.list()[0].title == "client commit"  # (1.4's v3 files.delete cannot build its URL)
