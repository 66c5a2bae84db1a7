"""Repository reads (commits, tree, files, blobs) and what a push records (events, payloads)."""

from __future__ import annotations

import base64
import io
import tarfile
import zipfile

import orjson
import pytest
from sqlalchemy import select

from codeyard.db.models import Job, Project, ProjectHook, ProtectedBranch, User
from codeyard.services import pushes

from ..support import QueryCounter, WorkingCopy

ZERO = "0" * 40


@pytest.fixture
def setup(rt, projects, alice, tmp_path):
    project = projects.create(alice, name="demo")
    return project, WorkingCopy(rt, project, tmp_path / "work")


def post_push(rt, project, user, *updates):
    with rt.db.transaction() as session:
        return pushes.post_push(
            session, rt, session.get(Project, project.id), session.get(User, user.id),
            [pushes.RefUpdate(*update) for update in updates],
        )  # fmt: skip


# --- reads ----------------------------------------------------------------------------------------


def test_commit_diff(api, alice, setup, users):
    project, work = setup
    first = work.commit("first", {"a.txt": "one\ntwo\n", "old.txt": "gone soon\n"})
    second = work.commit("second", {"a.txt": "one\nTWO\n", "new.txt": "hi\n"}, remove=("old.txt",))
    work.push()
    body = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{second}/diff").json()
    by_path = {d["new_path"]: d for d in body}
    assert set(by_path) == {"a.txt", "new.txt", "old.txt"}
    assert by_path["a.txt"] == {
        "old_path": "a.txt", "new_path": "a.txt", "a_mode": "100644", "b_mode": "100644",
        "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n",
        "new_file": False, "renamed_file": False, "deleted_file": False, "too_large": False, "collapsed": False,
    }  # fmt: skip
    assert by_path["new.txt"]["new_file"] is True and by_path["new.txt"]["a_mode"] == "0"
    assert by_path["old.txt"]["deleted_file"] is True and by_path["old.txt"]["diff"].startswith("--- a/old.txt\n+++ /dev/null")
    root = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{first}/diff").json()
    assert sorted(d["new_path"] for d in root) == ["a.txt", "old.txt"] and all(d["new_file"] for d in root)
    missing = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{'f' * 40}/diff")
    assert missing.status_code == 404 and missing.json() == {"message": "404 Commit Not Found"}
    assert api.as_(users.create("out")).get(f"/projects/{project.id}/repository/commits/{second}/diff").status_code == 404


def test_compare(api, alice, setup):
    project, work = setup
    base = work.commit("base", {"a.txt": "one\n"})
    work.push()
    work.git("checkout", "-q", "-b", "feature")
    one = work.commit("feature one", {"b.txt": "b\n"})
    two = work.commit("feature two", {"a.txt": "one\nmore\n"})
    work.push("feature")
    work.git("checkout", "-q", "master")
    work.commit("master moves on", {"c.txt": "c\n"})
    work.push()
    url = f"/projects/{project.id}/repository/compare"
    body = api.as_(alice).get(url, params={"from": "master", "to": "feature"}).json()
    assert [c["id"] for c in body["commits"]] == [one, two]  # oldest first
    assert body["commit"]["id"] == two and body["compare_same_ref"] is False and body["compare_timeout"] is False
    # From the merge base: master's own later commit is not part of the diff.
    assert sorted(d["new_path"] for d in body["diffs"]) == ["a.txt", "b.txt"]
    same = api.as_(alice).get(url, params={"from": "master", "to": "master"}).json()
    assert same == {"commit": None, "commits": [], "diffs": [], "compare_timeout": False, "compare_same_ref": True}
    assert api.as_(alice).get(url, params={"from": base, "to": "nope"}).status_code == 404
    assert api.as_(alice).get(url, params={"from": "master"}).json() == {"message": '400 (Bad request) "to" not given'}


def test_archive(api, alice, setup, users):
    project, work = setup
    url = f"/projects/{project.id}/repository/archive"
    assert api.as_(alice).get(url).json() == {"message": "404 Repository Not Found"}  # nothing pushed yet
    first = work.commit("first", {"README.md": "hello\n", "src/main.py": "print(1)\n"})
    second = work.commit("second", {"README.md": "hello again\n"})
    work.push()
    response = api.as_(alice).get(url)
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-gzip"
    assert response.headers["content-disposition"] == f'attachment; filename="demo-{second}.tar.gz"'
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
        assert sorted(archive.getnames()) == [f"demo-{second}", f"demo-{second}/README.md", f"demo-{second}/src",
                                              f"demo-{second}/src/main.py"]  # fmt: skip
        assert archive.extractfile(f"demo-{second}/README.md").read() == b"hello again\n"
    zipped = api.as_(alice).get(url, params={"sha": first[:8], "format": "zip"})
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        assert archive.read(f"demo-{first}/README.md") == b"hello\n"
    assert api.as_(alice).get(url, params={"sha": "nope"}).json() == {"message": "404 Commit Not Found"}
    assert api.as_(alice).get(url, params={"format": "rar"}).status_code == 400
    assert api.as_(users.create("out")).get(url).status_code == 404


def test_files_create_update_delete(api, alice, setup):
    project, _ = setup
    url = f"/projects/{project.id}/repository/files"
    change = {"file_path": "docs/readme.md", "branch_name": "master", "content": "hello\n", "commit_message": "add readme"}
    # An empty repository gets its first commit, and master becomes the default branch.
    created = api.as_(alice).post(url, json=change)
    assert created.status_code == 201 and created.json() == {"file_path": "docs/readme.md", "branch_name": "master"}
    read = api.as_(alice).get(url, params={"file_path": "docs/readme.md", "ref": "master"}).json()
    assert base64.b64decode(read["content"]) == b"hello\n"
    commits = api.as_(alice).get(f"/projects/{project.id}/repository/commits").json()
    assert [c["title"] for c in commits] == ["add readme"] and commits[0]["author_email"] == "alice@example.com"
    assert api.as_(alice).get(f"/projects/{project.id}").json()["default_branch"] == "master"
    events = api.as_(alice).get(f"/projects/{project.id}/events").json()
    assert events[0]["action_name"] == "pushed new" and events[0]["data"]["after"] == commits[0]["id"]
    again = api.as_(alice).post(url, json=change)
    assert again.status_code == 400 and "already exists" in again.json()["message"]

    encoded = {**change, "content": base64.b64encode(b"\x00binary").decode(), "encoding": "base64", "commit_message": "edit"}
    assert api.as_(alice).put(url, json=encoded).json() == {"file_path": "docs/readme.md", "branch_name": "master"}
    assert api.as_(alice).get(f"/projects/{project.id}/repository/blobs/master", params={"filepath": "docs/readme.md"}).content == b"\x00binary"
    assert api.as_(alice).put(url, json={**change, "file_path": "nope.txt"}).status_code == 400
    assert api.as_(alice).put(url, json={**change, "encoding": "base64", "content": "***"}).status_code == 400

    removal = {"file_path": "docs/readme.md", "branch_name": "master", "commit_message": "remove"}
    assert api.as_(alice).delete(url, json=removal).status_code == 200
    assert api.as_(alice).get(url, params={"file_path": "docs/readme.md", "ref": "master"}).status_code == 404
    assert api.as_(alice).delete(url, json=removal).status_code == 400
    history = [c["title"] for c in api.as_(alice).get(f"/projects/{project.id}/repository/commits").json()]
    assert history == ["remove", "edit", "add readme"]

    for bad in ("../x", "a/../../x", ".git/config", "/"):
        response = api.as_(alice).post(url, json={**change, "file_path": bad})
        assert response.status_code == 400, bad
    assert api.as_(alice).post(url, json={**change, "branch_name": "nope"}).json() == {"message": "404 Branch Not Found"}
    assert api.as_(alice).post(url, json={k: v for k, v in change.items() if k != "content"}).status_code == 400


def test_files_follow_push_rules(api, alice, setup, users, projects):
    project, work = setup
    work.commit("first", {"a.txt": "a\n"})
    work.push()
    url = f"/projects/{project.id}/repository/files"
    change = {"file_path": "b.txt", "branch_name": "master", "content": "b\n", "commit_message": "b"}
    dev, reporter = users.create("dev"), users.create("reporter")
    projects.add_member(project, dev, 30)
    projects.add_member(project, reporter, 20)
    assert api.as_(reporter).post(url, json=change).status_code == 403
    assert api.as_(users.create("out")).post(url, json=change).status_code == 404
    api.as_(alice).put(f"/projects/{project.id}/repository/branches/master/protect")
    refused = api.as_(dev).post(url, json=change)
    assert refused.status_code == 403 and "protected branches" in refused.json()["message"]
    assert api.as_(alice).post(url, json=change).status_code == 201  # the owner may push to it
    assert work.git("ls-remote", "origin", "master").split()[0] == api.as_(alice).get(
        f"/projects/{project.id}/repository/commits").json()[0]["id"]


def test_commits_list_and_single(api, alice, setup):
    project, work = setup
    first = work.commit("first line\n\nbody text")
    second = work.commit("x" * 120)
    work.push()
    response = api.as_(alice).get(f"/projects/{project.id}/repository/commits")
    assert response.status_code == 200
    body = response.json()
    assert [c["id"] for c in body] == [second, first]
    assert body[1]["title"] == "first line" and body[1]["short_id"] == first[:8]
    assert body[0]["title"] == "x" * 80 + "…"
    assert body[1]["author_name"] == "Ada Author" and body[1]["created_at"].endswith("+01:00")
    assert response.headers["x-total"] == "2"
    page = api.as_(alice).get(f"/projects/{project.id}/repository/commits", params={"per_page": 1, "page": 2})
    assert [c["id"] for c in page.json()] == [first] and page.headers["x-total-pages"] == "2"
    detail = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{second[:10]}").json()
    assert detail["id"] == second and detail["parent_ids"] == [first] and detail["status"] is None
    assert {"committed_date", "authored_date"} <= set(detail)
    assert api.as_(alice).get(f"/projects/{project.id}/repository/commits/deadbeef").json() == {"message": "404 Commit Not Found"}
    assert api.as_(alice).get(f"/projects/{project.id}/repository/commits", params={"ref_name": "nope"}).status_code == 404


def test_commits_of_an_empty_repository(api, alice, setup):
    project, _ = setup
    response = api.as_(alice).get(f"/projects/{project.id}/repository/commits")
    assert response.status_code == 200 and response.json() == [] and response.headers["x-total"] == "0"


def test_commits_of_another_branch(api, alice, setup):
    project, work = setup
    work.commit("on master")
    work.git("checkout", "-q", "-b", "topic")
    topic = work.commit("on topic")
    work.push("master", "topic")
    assert api.as_(alice).get(f"/projects/{project.id}/repository/commits", params={"ref_name": "topic"}).json()[0]["id"] == topic


def test_tree_files_and_blobs(api, alice, setup):
    project, work = setup
    sha = work.commit("files", {"README.md": "hello\n", "src/app.py": "print(1)\n"})
    work.push()
    tree = api.as_(alice).get(f"/projects/{project.id}/repository/tree").json()
    assert [(e["name"], e["type"]) for e in tree] == [("src", "tree"), ("README.md", "blob")]
    assert tree[1]["mode"] == "100644" and tree[1]["path"] == "README.md"
    sub = api.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"path": "src", "ref_name": "master"}).json()
    assert [e["path"] for e in sub] == ["src/app.py"]
    assert api.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"path": "nope"}).status_code == 404
    file = api.as_(alice).get(f"/projects/{project.id}/repository/files", params={"file_path": "src/app.py", "ref": "master"}).json()
    assert base64.b64decode(file["content"]) == b"print(1)\n"
    assert file["file_name"] == "app.py" and file["commit_id"] == sha and file["last_commit_id"] == sha and file["size"] == 9
    missing = api.as_(alice).get(f"/projects/{project.id}/repository/files", params={"file_path": "nope", "ref": "master"})
    assert missing.status_code == 404
    assert api.as_(alice).get(f"/projects/{project.id}/repository/files", params={"ref": "master"}).status_code == 400
    raw = api.as_(alice).get(f"/projects/{project.id}/repository/blobs/master", params={"filepath": "README.md"})
    assert raw.status_code == 200 and raw.content == b"hello\n" and raw.headers["x-content-type-options"] == "nosniff"
    raw_blob = api.as_(alice).get(f"/projects/{project.id}/repository/raw_blobs/{file['blob_id']}")
    assert raw_blob.content == b"print(1)\n"
    assert api.as_(alice).get(f"/projects/{project.id}/repository/raw_blobs/{sha}").status_code == 404  # a commit, not a blob


def test_repository_reads_use_the_guards_row_and_no_session(api, alice, setup, rt):
    """git reads take the project's row the guard read: no session, one fast read (two for a
    commit, whose CI status is read too); the default branch comes from that row."""
    project, work = setup
    first = work.commit("first", {"README.md": "hello\n"})
    second = work.commit("second", {"README.md": "hello again\n", "src/app.py": "print(1)\n"})
    work.git("checkout", "-q", "-b", "topic")
    work.commit("on topic", {"topic.txt": "t\n"})
    work.push("master", "topic")
    blob = work.git("rev-parse", f"{second}:src/app.py")
    base = f"/projects/{project.id}/repository"
    reads = {
        "/commits": 1, f"/commits/{second}": 2, f"/commits/{second}/diff": 1, "/contributors": 1,
        f"/compare?from={first}&to={second}": 1, "/tree": 1, "/files?file_path=src/app.py&ref=master": 1,
        "/blobs/master?filepath=README.md": 1, f"/raw_blobs/{blob}": 1, "/archive?format=zip": 1,
    }  # fmt: skip
    for path, fast in reads.items():
        with QueryCounter(rt) as counter:
            response = api.as_(alice).get(base + path)
        assert response.status_code == 200, (path, response.text)
        assert counter.count == 0, (path, counter.statements)
        assert len(counter.fast_reads) == fast, (path, counter.fast_reads)
    assert [c["id"] for c in api.as_(alice).get(base + "/commits").json()] == [second, first]
    assert api.as_(alice).put(f"/projects/{project.id}", json={"default_branch": "topic"}).status_code == 200
    assert [e["name"] for e in api.as_(alice).get(base + "/tree").json()] == ["src", "README.md", "topic.txt"]


def test_commit_blob_is_the_older_path_of_blobs(api, alice, users, projects, setup):
    """GitLab 8.6 served `repository/commits/:sha/blob` beside `repository/blobs/:sha`: same answers."""
    project, work = setup
    sha = work.commit("files", {"README.md": "hello\n", "src/app.py": "print(1)\n"})
    work.git("checkout", "-q", "-b", "topic/x")
    work.commit("topic", {"README.md": "topic\n"})
    work.push("master", "topic/x")
    base = f"/projects/{project.id}/repository"
    for ref, path, want in ((sha, "src/app.py", b"print(1)\n"), ("master", "README.md", b"hello\n"),
                            ("topic/x", "README.md", b"topic\n"), (sha[:8], "README.md", b"hello\n")):  # fmt: skip
        old = api.as_(alice).get(f"{base}/commits/{ref}/blob", params={"filepath": path})
        new = api.as_(alice).get(f"{base}/blobs/{ref}", params={"filepath": path})
        assert (old.status_code, old.content, old.headers["content-type"]) == (200, want, new.headers["content-type"])
        assert old.headers["x-content-type-options"] == "nosniff"
    for ref, params in ((sha, {"filepath": "nope"}), ("f" * 40, {"filepath": "README.md"}),
                        ("--output=x", {"filepath": "README.md"}), (sha, {})):  # fmt: skip
        old = api.as_(alice).get(f"{base}/commits/{ref}/blob", params=params)
        new = api.as_(alice).get(f"{base}/blobs/{ref}", params=params)
        assert old.status_code == new.status_code and old.json() == new.json()
        assert old.status_code in (400, 404)
    guest, outsider = users.create("guest"), users.create("outsider")
    projects.add_member(project, guest, 10)
    assert api.as_(guest).get(f"{base}/commits/{sha}/blob", params={"filepath": "README.md"}).status_code == 403
    hidden = api.as_(outsider).get(f"{base}/commits/{sha}/blob", params={"filepath": "README.md"})
    assert hidden.status_code == 404 and hidden.json() == {"message": "404 Project Not Found"}


def test_contributors_of_the_default_branch(api, alice, users, projects, setup, rt):
    """GitLab 8.6's shape (name, email, commits, additions, deletions), one entry per author e-mail of the
    default branch, the most recent first; merges and other branches do not count."""
    project, work = setup
    base = f"/projects/{project.id}/repository/contributors"
    assert api.as_(alice).get(base).json() == []  # an empty repository has none
    work.commit("ada 1", {"a.txt": "1\n2\n3\n"})
    work.env.update(GIT_AUTHOR_NAME="Bob", GIT_AUTHOR_EMAIL="bob@example.com")
    work.commit("bob 1", {"a.txt": "1\nTWO\n3\n", "bin.dat": "\x00binary"})
    work.git("checkout", "-q", "-b", "side", "master~1")
    work.commit("bob on a side branch", {"side.txt": "s\n"})
    work.git("checkout", "-q", "master")
    work.env.update(GIT_AUTHOR_NAME="Ada Lovelace", GIT_AUTHOR_EMAIL="ada@example.com")
    work.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    work.commit("ada 2", remove=("a.txt",))  # -3 lines, and the helper adds a one-line file
    work.env.update(GIT_AUTHOR_NAME="Carol", GIT_AUTHOR_EMAIL="carol@example.com")
    work.git("checkout", "-q", "-b", "elsewhere")
    work.commit("carol, not on the default branch", {"c.txt": "c\n"})
    work.push("master", "elsewhere")
    response = api.as_(alice).get(base)
    assert response.status_code == 200, response.text
    assert response.json() == [
        {"name": "Ada Lovelace", "email": "ada@example.com", "commits": 2, "additions": 4, "deletions": 3},
        {"name": "Bob", "email": "bob@example.com", "commits": 2, "additions": 2, "deletions": 1},
    ]
    paged = api.as_(alice).get(base, params={"per_page": 1, "page": 2})
    assert [c["email"] for c in paged.json()] == ["bob@example.com"] and paged.headers["x-total"] == "2"
    with rt.db.transaction() as session:
        session.get(Project, project.id).default_branch = "elsewhere"
    assert [c["commits"] for c in api.as_(alice).get(base).json()] == [1, 2, 2]
    guest, outsider = users.create("guest"), users.create("outsider")
    projects.add_member(project, guest, 10)
    assert api.as_(guest).get(base).status_code == 403
    hidden = api.as_(outsider).get(base)
    assert hidden.status_code == 404 and hidden.json() == {"message": "404 Project Not Found"}
    assert api.anonymous.get(base).status_code == 401


def test_python_gitlab_repository_calls(live, alice, setup):
    import gitlab

    project, work = setup
    sha = work.commit("files", {"README.md": "hello\n"})
    work.push()
    remote = gitlab.Gitlab(live.base_url, private_token=alice.token, api_version="3").projects.get(project.id)
    assert remote.repository_contributors() == [
        {"name": "Ada Author", "email": "ada@example.com", "commits": 1, "additions": 1, "deletions": 0}
    ]
    assert remote.repository_blob(sha, "README.md") == b"hello\n"
    [branch] = remote.branches.list()
    assert branch.commit["parent_ids"] == [] and branch.commit["author_name"] == "Ada Author"
    assert branch.commit["author"] == {"name": "Ada Author", "email": "ada@example.com"}


def test_reads_need_download_rights(api, alice, users, projects, setup):
    project, work = setup
    work.commit("c")
    work.push()
    guest = users.create("guest")
    projects.add_member(project, guest, 10)
    for path in ("commits", "tree", "files?file_path=x&ref=master"):
        assert api.as_(guest).get(f"/projects/{project.id}/repository/{path}").status_code == 403
        assert api.as_(users.create(f"out{len(path)}")).get(f"/projects/{project.id}/repository/{path}").status_code == 404


def test_missing_repository_is_a_clear_error(api, alice, setup, rt):
    project, _ = setup
    from codeyard.git import storage

    storage.remove(storage.repository_path(rt.config.repositories_dir, project.id))
    response = api.as_(alice).get(f"/projects/{project.id}/repository/branches")
    assert response.status_code == 500
    assert response.json() == {"message": "500 The repository of this project is missing or damaged"}


# --- pushes ---------------------------------------------------------------------------------------


def test_first_push_sets_default_branch_and_protection(api, rt, alice, setup):
    project, work = setup
    sha = work.commit("first")
    work.git("branch", "aaa")
    work.push("master", "aaa")
    post_push(rt, project, alice, ("refs/heads/aaa", ZERO, sha), ("refs/heads/master", ZERO, sha))
    body = api.as_(alice).get(f"/projects/{project.id}").json()
    assert body["default_branch"] == "master"
    with rt.db.session() as session:
        protection = session.query(ProtectedBranch).filter_by(project_id=project.id).one()
    assert protection.name == "master" and protection.developers_can_push is False
    assert (work.bare / "HEAD").read_text().strip() == "ref: refs/heads/master"


@pytest.mark.parametrize(("level", "protected", "developers"), [(0, False, None), (1, True, True), (2, True, False)])
def test_default_branch_protection_levels(api, rt, admin, alice, setup, level, protected, developers):
    project, work = setup
    api.as_(admin).put("/application/settings", json={"default_branch_protection": level})
    work.git("checkout", "-q", "-b", "develop")
    sha = work.commit("first")
    work.push("develop")
    post_push(rt, project, alice, ("refs/heads/develop", ZERO, sha))
    assert api.as_(alice).get(f"/projects/{project.id}").json()["default_branch"] == "develop"
    branch = api.as_(alice).get(f"/projects/{project.id}/repository/branches/develop").json()
    assert branch["protected"] is protected
    if protected:
        assert branch["developers_can_push"] is developers


def test_push_payload(rt, alice, setup, api):
    project, work = setup
    first = work.commit("first", {"a.txt": "a"})
    second = work.commit("second", {"a.txt": "changed", "b.txt": "b"})
    third = work.commit("third", remove=("b.txt",))
    work.push()
    payload = post_push(rt, project, alice, ("refs/heads/master", ZERO, third))[0]
    assert payload["object_kind"] == "push" and payload["before"] == ZERO and payload["after"] == third
    assert payload["checkout_sha"] == third and payload["message"] is None
    assert payload["user_id"] == alice.id and payload["user_name"] == alice.name and payload["user_email"] == alice.email
    assert payload["total_commits_count"] == 3
    assert [c["id"] for c in payload["commits"]] == [first, second, third]
    commits = {c["id"]: c for c in payload["commits"]}
    assert (commits[first]["added"], commits[second]["modified"], commits[second]["added"], commits[third]["removed"]) == (
        ["a.txt"], ["a.txt"], ["b.txt"], ["b.txt"]
    )
    assert commits[first]["url"] == f"http://testserver/alice/demo/commit/{first}"
    assert commits[first]["author"] == {"name": "Ada Author", "email": "ada@example.com"}
    assert commits[first]["timestamp"].endswith("+01:00")
    assert payload["project"]["path_with_namespace"] == "alice/demo" and payload["project"]["default_branch"] == "master"
    assert set(payload["repository"]) == {"name", "url", "description", "homepage", "git_http_url", "git_ssh_url", "visibility_level"}
    event = api.as_(alice).get(f"/projects/{project.id}/events").json()[0]
    assert event["action_name"] == "pushed new" and event["data"]["total_commits_count"] == 3


def test_push_payload_keeps_the_newest_twenty(rt, alice, setup):
    project, work = setup
    shas = [work.commit(f"commit {i}") for i in range(25)]
    work.push()
    payload = post_push(rt, project, alice, ("refs/heads/master", ZERO, shas[-1]))[0]
    assert payload["total_commits_count"] == 25
    assert [c["id"] for c in payload["commits"]] == shas[5:]
    more = [work.commit(f"more {i}") for i in range(3)]
    work.push()
    update = post_push(rt, project, alice, ("refs/heads/master", shas[-1], more[-1]))[0]
    assert update["total_commits_count"] == 3 and [c["id"] for c in update["commits"]] == more


def test_new_branch_counts_from_the_default_branch_and_deletion(rt, alice, setup, api):
    project, work = setup
    base = work.commit("base")
    work.push()
    post_push(rt, project, alice, ("refs/heads/master", ZERO, base))
    work.git("checkout", "-q", "-b", "topic")
    topic = [work.commit("t1"), work.commit("t2")]
    work.push("topic")
    created = post_push(rt, project, alice, ("refs/heads/topic", ZERO, topic[-1]))[0]
    assert created["total_commits_count"] == 2 and [c["id"] for c in created["commits"]] == topic
    deleted = post_push(rt, project, alice, ("refs/heads/topic", topic[-1], ZERO))[0]
    assert deleted["commits"] == [] and deleted["total_commits_count"] == 0 and deleted["checkout_sha"] is None
    names = [e["action_name"] for e in api.as_(alice).get(f"/projects/{project.id}/events").json()]
    assert names[:3] == ["deleted", "pushed new", "pushed new"]


def test_tag_push_payloads(rt, alice, setup):
    project, work = setup
    sha = work.commit("tagged")
    work.git("tag", "light")
    work.git("tag", "-a", "-m", "Release notes", "annotated")
    work.push("master", "light", "annotated")
    light, annotated = post_push(
        rt, project, alice, ("refs/tags/light", ZERO, sha), ("refs/tags/annotated", ZERO, work.git("rev-parse", "annotated"))
    )
    assert light["object_kind"] == "tag_push" and light["checkout_sha"] == sha and light["message"] is None
    assert [c["id"] for c in light["commits"]] == [sha] and light["total_commits_count"] == 1
    assert annotated["checkout_sha"] == sha and annotated["message"] == "Release notes\n"
    gone = post_push(rt, project, alice, ("refs/tags/light", sha, ZERO))[0]
    assert gone["commits"] == [] and gone["total_commits_count"] == 0


def test_push_enqueues_a_delivery_per_hook_in_its_transaction(rt, alice, setup):
    project, work = setup
    sha = work.commit("c")
    work.push()
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/a", failure_count=0))
        session.add(ProjectHook(project_id=project.id, url="http://example.com/b", push_events=False, failure_count=0))
    with pytest.raises(RuntimeError), rt.db.transaction() as session:
        pushes.post_push(session, rt, session.get(Project, project.id), session.get(User, alice.id),
                         [pushes.RefUpdate("refs/heads/master", ZERO, sha)])  # fmt: skip
        raise RuntimeError("the push transaction fails")
    with rt.db.session() as session:
        assert session.scalars(select(Job)).all() == []
    payload = post_push(rt, project, alice, ("refs/heads/master", ZERO, sha))[0]
    with rt.db.session() as session:
        [job] = session.scalars(select(Job)).all()
    assert job.kind == "webhook.deliver" and job.payload["event"] == "Push Hook"
    assert orjson.loads(job.payload["body"]) == payload
