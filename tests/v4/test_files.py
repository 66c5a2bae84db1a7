"""v4 repository files: read (GET, HEAD, raw, blame), create, update, delete; as pushes."""

from __future__ import annotations

import base64
import hashlib

import pytest
from sqlalchemy import func, select

from codeyard.db.models import Event, ProtectedBranch

from ..support import WorkingCopy, make_team

DEVELOPER, REPORTER, GUEST = 30, 20, 10


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    """alice's project: master with `a/b.txt` (two commits) and `run.sh` (executable)."""
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first", {"a/b.txt": "one\n", "README.md": "hi\n"})
    (work.path / "run.sh").write_text("#!/bin/sh\n")
    (work.path / "run.sh").chmod(0o755)
    work.git("add", "run.sh")
    work.commit("second", {"a/b.txt": "one\ntwo\n"})
    work.push()
    with rt.db.transaction() as session:
        from codeyard.db.models import Project

        session.get(Project, project.id).default_branch = "master"
    return project, work


def test_get_through_the_client(gl, alice, hosted):
    project, work = hosted
    found = gl(alice).projects.get(project.id, lazy=True).files.get(file_path="a/b.txt", ref="master")
    assert found.decode() == b"one\ntwo\n"
    assert found.file_name == "b.txt" and found.file_path == "a/b.txt" and found.size == 8
    assert found.encoding == "base64" and found.ref == "master"
    assert found.commit_id == work.git("rev-parse", "master")
    assert found.last_commit_id == work.git("rev-parse", "master")
    assert found.blob_id == work.git("rev-parse", "master:a/b.txt")
    assert found.content_sha256 == hashlib.sha256(b"one\ntwo\n").hexdigest()
    assert found.execute_filemode is False
    script = gl(alice).projects.get(project.id, lazy=True).files.get(file_path="run.sh", ref="master")
    assert script.execute_filemode is True


def test_get_url_encoded_and_head(api4, alice, hosted):
    project, work = hosted
    url = f"/projects/{project.ref}/repository/files/a%2Fb.txt"
    body = api4.as_(alice).get(url, params={"ref": "master"})
    assert body.status_code == 200 and body.json()["file_path"] == "a/b.txt"
    assert body.headers["x-gitlab-file-path"] == "a/b.txt"
    head = api4.as_(alice).request("HEAD", url, params={"ref": "master"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["x-gitlab-file-name"] == "b.txt"
    assert head.headers["x-gitlab-size"] == "8"
    assert head.headers["x-gitlab-blob-id"] == work.git("rev-parse", "master:a/b.txt")
    assert head.headers["x-gitlab-content-sha256"] == hashlib.sha256(b"one\ntwo\n").hexdigest()
    assert head.headers["x-gitlab-execute-filemode"] == "false"
    assert api4.as_(alice).request("HEAD", url, params={"ref": "nope"}).status_code == 404
    missing = api4.as_(alice).get(url, params={})
    assert missing.status_code == 400 and missing.json() == {"error": "ref is missing"}


def test_head_through_the_client(gl, alice, hosted):
    project, _work = hosted
    headers = gl(alice).projects.get(project.id, lazy=True).files.head("a/b.txt", ref="master")
    assert headers["X-Gitlab-Size"] == "8"


def test_raw_and_blame(gl, api4, alice, hosted):
    project, work = hosted
    files = gl(alice).projects.get(project.id, lazy=True).files
    assert files.raw(file_path="a/b.txt", ref="master") == b"one\ntwo\n"
    assert files.raw(file_path="a/b.txt") == b"one\ntwo\n"  # the default branch
    blame = files.blame(file_path="a/b.txt", ref="master")
    first, second = work.git("rev-parse", "master^"), work.git("rev-parse", "master")
    assert [(part["commit"]["id"], part["lines"]) for part in blame] == [(first, ["one"]), (second, ["two"])]
    assert blame[0]["commit"]["author_name"] == "Ada Author"
    ranged = api4.as_(alice).get(f"/projects/{project.id}/repository/files/a%2Fb.txt/blame",
                                 params={"ref": "master", "range[start]": 2, "range[end]": 2})  # fmt: skip
    assert [part["lines"] for part in ranged.json()] == [["two"]]
    bad = api4.as_(alice).get(f"/projects/{project.id}/repository/files/a%2Fb.txt/blame",
                              params={"ref": "master", "range[start]": "x"})  # fmt: skip
    assert bad.status_code == 400
    raw = api4.as_(alice).get(f"/projects/{project.id}/repository/files/nope.txt/raw")
    assert raw.status_code == 404 and raw.json() == {"message": "404 File Not Found"}


def test_create_update_delete_through_the_client(gl, rt, alice, hosted):
    project, work = hosted
    files = gl(alice).projects.get(project.id, lazy=True).files
    made = files.create({"file_path": "new/c.txt", "branch": "master", "content": "made\n", "commit_message": "add c"})
    assert made.file_path == "new/c.txt"
    found = files.get(file_path="new/c.txt", ref="master")
    assert found.decode() == b"made\n"
    found.content = "changed\n"
    found.save(branch="master", commit_message="change c")
    assert files.raw(file_path="new/c.txt", ref="master") == b"changed\n"
    files.delete(file_path="new/c.txt", branch="master", commit_message="drop c")
    with pytest.raises(Exception) as error:
        files.get(file_path="new/c.txt", ref="master")
    assert error.value.response_code == 404
    work.git("fetch", "-q", "origin")
    log = work.git("log", "--format=%s|%an", "origin/master", "-3").splitlines()
    assert log == ["drop c|User alice", "change c|User alice", "add c|User alice"]
    with rt.db.transaction() as session:  # each commit recorded as a push: one event each
        pushed = session.scalar(select(func.count()).select_from(Event).where(Event.project_id == project.id))
    assert pushed >= 3


def test_write_statuses_and_bodies(api4, alice, hosted):
    project, _work = hosted
    url = f"/projects/{project.id}/repository/files/x%2Fy.bin"
    data = base64.b64encode(b"\x00\x01binary").decode()
    created = api4.as_(alice).post(url, json={"branch": "master", "content": data, "encoding": "base64",
                                              "commit_message": "bin", "execute_filemode": True})  # fmt: skip
    assert created.status_code == 201 and created.json() == {"file_path": "x/y.bin", "branch": "master"}
    got = api4.as_(alice).get(url, params={"ref": "master"}).json()
    assert base64.b64decode(got["content"]) == b"\x00\x01binary" and got["execute_filemode"] is True
    again = api4.as_(alice).post(url, json={"branch": "master", "content": "x", "commit_message": "again"})
    assert again.status_code == 400 and again.json() == {"message": "A file with this name already exists"}
    updated = api4.as_(alice).put(url, json={"branch": "master", "content": "", "commit_message": "empty"})
    assert updated.status_code == 200 and updated.json() == {"file_path": "x/y.bin", "branch": "master"}
    assert api4.as_(alice).get(url, params={"ref": "master"}).json()["size"] == 0
    # gitbeaker sends DELETE's parameters in a JSON body.
    deleted = api4.as_(alice).delete(url, json={"branch": "master", "commit_message": "gone"})
    assert deleted.status_code == 204 and deleted.content == b""
    gone = api4.as_(alice).delete(url, json={"branch": "master", "commit_message": "gone"})
    assert gone.status_code == 400 and gone.json() == {"message": "A file with this name doesn't exist"}
    missing = api4.as_(alice).put(url, json={"branch": "master", "content": "x", "commit_message": "m"})
    assert missing.status_code == 400


def test_new_branch_from_start_branch_and_last_commit_id(api4, alice, hosted):
    project, work = hosted
    url = f"/projects/{project.id}/repository/files/a%2Fb.txt"
    nowhere = api4.as_(alice).put(url, json={"branch": "topic", "content": "x", "commit_message": "m"})
    assert nowhere.status_code == 400 and nowhere.json() == {"message": "You can only create or edit files when you are on a branch"}
    stale = api4.as_(alice).put(url, json={"branch": "master", "content": "x", "commit_message": "m",
                                           "last_commit_id": work.git("rev-parse", "master^")})  # fmt: skip
    assert stale.status_code == 400 and "changed since you started editing" in stale.json()["message"]
    fresh = api4.as_(alice).put(url, json={"branch": "topic", "start_branch": "master", "content": "x\n",
                                           "commit_message": "m", "last_commit_id": work.git("rev-parse", "master")})  # fmt: skip
    assert fresh.status_code == 200
    assert api4.as_(alice).get(f"{url}/raw", params={"ref": "topic"}).content == b"x\n"
    assert api4.as_(alice).get(f"{url}/raw", params={"ref": "master"}).content == b"one\ntwo\n"


def test_first_commit_of_an_empty_repository(api4, projects, alice):
    project = projects.create(alice, name="empty")
    made = api4.as_(alice).post(f"/projects/{project.id}/repository/files/README.md",
                                json={"branch": "main", "content": "# hi\n", "commit_message": "init"})  # fmt: skip
    assert made.status_code == 201
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/files/README.md/raw", params={"ref": "main"}).content == b"# hi\n"


@pytest.mark.parametrize(
    "file_path",
    ["..%2Fescape", "a%2F..%2Fb", ".git%2Fconfig", "%2Fabs", "a%2F%2Fb", "dir%2F", "x%0Ay"],
)
def test_hostile_paths_are_refused(api4, alice, hosted, file_path):
    project, work = hosted
    before = work.git("ls-remote", "origin", "master")
    answer = api4.as_(alice).post(f"/projects/{project.id}/repository/files/{file_path}",
                                  json={"branch": "master", "content": "x", "commit_message": "m"})  # fmt: skip
    assert answer.status_code in (400, 404), answer.text
    assert work.git("ls-remote", "origin", "master") == before


def test_hostile_values(api4, alice, hosted):
    project, work = hosted
    url = f"/projects/{project.id}/repository/files/z.txt"
    before = work.git("ls-remote", "origin")
    bad64 = api4.as_(alice).post(url, json={"branch": "master", "content": "@@not base64", "encoding": "base64", "commit_message": "m"})
    assert bad64.status_code == 400 and "content" in bad64.json()["message"]
    option = api4.as_(alice).post(url, json={"branch": "--upload-pack=x", "content": "x", "commit_message": "m"})
    assert option.status_code == 400
    start = api4.as_(alice).post(url, json={"branch": "b", "start_branch": "--all", "content": "x", "commit_message": "m"})
    assert start.status_code in (400, 404)
    nul = api4.as_(alice).get(f"/projects/{project.id}/repository/files/a%00b", params={"ref": "master"})
    assert nul.status_code in (400, 404)
    ref = api4.as_(alice).get(f"/projects/{project.id}/repository/files/README.md", params={"ref": "--output=/tmp/x"})
    assert ref.status_code == 404
    huge = api4.as_(alice).post(url, json={"branch": "master", "content": "x" * (11 * 1024 * 1024), "commit_message": "m"})
    assert huge.status_code == 413
    assert work.git("ls-remote", "origin") == before


def test_permissions(api4, users, projects, admin, rt, tmp_path):
    for visibility in (0, 10, 20):
        team = make_team(users, projects, admin, visibility=visibility, prefix=f"v{visibility}")
        project = team.project
        made = api4.as_(team.user("owner")).post(f"/projects/{project.id}/repository/files/f.txt",
                                                 json={"branch": "master", "content": "x", "commit_message": "m"})  # fmt: skip
        assert made.status_code == 201
        url = f"/projects/{project.id}/repository/files/f.txt"
        # A guest of a private project sees it but not its code (403); an outsider does not see it (404).
        readable = {"outsider": 200 if visibility else 404, "guest": 200 if visibility else 403, "reporter": 200}
        for role, expected in readable.items():
            status = api4.as_(team.user(role)).get(url, params={"ref": "master"}).status_code
            assert status == expected, (visibility, role, status)
        anonymous = api4.anonymous.get(url, params={"ref": "master"}).status_code
        assert anonymous == (200 if visibility == 20 else 404)  # as GitLab: public code is open to all
        # The first push protected master: a developer writes to a branch of their own.
        for role, branch, expected in (("reporter", "r", 403), ("guest", "g", 403), ("outsider", "o", 403 if visibility else 404),
                                       ("developer", "master", 403), ("developer", "d", 200), ("master", "master", 200)):
            answer = api4.as_(team.user(role)).put(url, json={"branch": branch, "start_branch": "master", "content": role,
                                                              "commit_message": "m"})  # fmt: skip
            assert answer.status_code == expected, (visibility, role, answer.text)


def test_protected_branch_refuses_developers(api4, rt, users, projects, alice, hosted):
    project, _work = hosted
    developer = users.create("dev")
    projects.add_member(project, developer, DEVELOPER)
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=project.id, name="master"))
    answer = api4.as_(developer).put(f"/projects/{project.id}/repository/files/README.md",
                                     json={"branch": "master", "content": "x", "commit_message": "m"})  # fmt: skip
    assert answer.status_code == 403
    assert api4.as_(alice).put(f"/projects/{project.id}/repository/files/README.md",
                               json={"branch": "master", "content": "x", "commit_message": "m"}).status_code == 200  # fmt: skip


def test_admins_only_branch_admits_instance_admins(api4, rt, users, admin, alice, hosted):
    project, _work = hosted
    with rt.db.transaction() as session:
        session.add(ProtectedBranch(project_id=project.id, name="master", push_access_level=60, merge_access_level=60))
    change = {"branch": "master", "content": "y", "commit_message": "m"}
    assert api4.as_(alice).put(f"/projects/{project.id}/repository/files/README.md", json=change).status_code == 403
    assert api4.as_(admin).put(f"/projects/{project.id}/repository/files/README.md", json=change).status_code == 200
    commit = {"branch": "master", "commit_message": "m", "actions": [{"action": "create", "file_path": "n.txt", "content": "n"}]}
    assert api4.as_(alice).post(f"/projects/{project.id}/repository/commits", json=commit).status_code == 403
    assert api4.as_(admin).post(f"/projects/{project.id}/repository/commits", json=commit).status_code == 201


def test_big_file_is_streamed_with_its_digest(gl, api4, alice, hosted):
    project, _work = hosted
    data = bytes(range(256)) * (6 * 1024 + 7)  # over 1 MiB: streamed from git, not held whole
    files = gl(alice).projects.get(project.id, lazy=True).files
    files.create({"file_path": "big.bin", "branch": "master", "content": base64.b64encode(data).decode(),
                  "encoding": "base64", "commit_message": "big"})  # fmt: skip
    found = files.get(file_path="big.bin", ref="master")
    assert found.decode() == data and found.size == len(data)
    assert found.content_sha256 == hashlib.sha256(data).hexdigest()
    head = api4.as_(alice).request("HEAD", f"/projects/{project.id}/repository/files/big.bin", params={"ref": "master"})
    assert head.headers["x-gitlab-content-sha256"] == hashlib.sha256(data).hexdigest() and head.content == b""
    assert files.raw(file_path="big.bin", ref="master") == data
    blob = api4.as_(alice).get(f"/projects/{project.id}/repository/blobs/{found.blob_id}").json()
    assert base64.b64decode(blob["content"]) == data
