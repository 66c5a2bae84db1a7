"""The files API changes only what it says: paths git would not check out safely, a file over a
directory or under a file, identities and messages that would corrupt the commit are 400 and write
nothing (no object, no ref, no event)."""

from __future__ import annotations

import subprocess

import pytest

from codeyard.git import storage

from ..support import WorkingCopy
from .state import Unchanged


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first", {"a.txt": "a\n", "docs/readme.md": "read me\n"})
    work.push()
    return project, storage.repository_path(rt.config.repositories_dir, project.id)


def change(path: str, **fields) -> dict:
    return {"file_path": path, "branch_name": "master", "content": "x\n", "commit_message": "change", **fields}


BAD_PATHS = [".git/config", ".GIT/hooks/pre-receive", ".git./config", ".git /x", "git~1/config", "a/.Git",
             ".g\u200cit/config", "\ufeff.git/x", ".git::$INDEX_ALLOCATION/x", "a\\.git\\config", "a/../x", "./a",
             "a//b", "a\x00b", "a\nb", "a\x7f", "..", "/"]  # fmt: skip


def test_paths_git_would_not_check_out(api, rt, alice, hosted):
    project, bare = hosted
    state = Unchanged(rt, bare)
    url = f"/projects/{project.id}/repository/files"
    for method in ("POST", "PUT", "DELETE"):
        for path in BAD_PATHS:
            response = api.as_(alice).request(method, url, json=change(path))
            assert response.status_code == 400, (method, path, response.text)
            assert response.json() == {"message": {"file_path": ["is invalid"]}}, (method, path)
    state.check()


def test_a_file_under_a_file_or_over_a_directory(api, rt, alice, hosted):
    project, bare = hosted
    state = Unchanged(rt, bare)
    url = f"/projects/{project.id}/repository/files"
    under = api.as_(alice).post(url, json=change("a.txt/sub"))
    assert under.status_code == 400
    assert under.json() == {"message": "Your changes could not be committed, because a.txt is a file, not a directory"}
    deeper = api.as_(alice).post(url, json=change("docs/readme.md/x/y"))
    assert deeper.json()["message"].endswith("docs/readme.md is a file, not a directory")
    over = api.as_(alice).post(url, json=change("docs"))
    assert over.status_code == 400
    assert over.json() == {"message": "Your changes could not be committed, because docs is a directory, not a file"}
    assert api.as_(alice).put(url, json=change("docs")).json() == {"message": "You can only edit a file that exists"}
    assert api.as_(alice).delete(url, json=change("docs")).json() == {"message": "You can only delete a file that exists"}
    state.check()
    assert api.as_(alice).post(url, json=change("docs/new.md")).status_code == 201


def test_identity_that_would_corrupt_the_commit(api, rt, alice, users, hosted):
    """A newline or angle brackets in a user's name or email cannot reach the author line."""
    project, bare = hosted
    mallory = users.create("mallory", name="Mal\nlory <evil@x>\ncommitter Forged <f@x> 0 +0000", email="mal@example.com")
    from codeyard.db.models import User

    with rt.db.transaction() as session:
        session.get(User, mallory.id).email = "mal>\n<lory@example.com"
    api.as_(alice).post(f"/projects/{project.id}/members", json={"user_id": mallory.id, "access_level": 30})
    url = f"/projects/{project.id}/repository/files"
    assert api.as_(mallory).post(url, json=change("m.txt")).status_code == 201
    commit = api.as_(alice).get(f"/projects/{project.id}/repository/commits/master").json()
    assert commit["author_name"] == "Mallory evil@xcommitter Forged f@x 0 +0000"
    assert commit["author_email"] == "mallory@example.com"
    fsck = subprocess.run(["git", "--git-dir", str(bare), "fsck", "--strict"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    listed = api.as_(alice).get(f"/projects/{project.id}/repository/branches")
    assert listed.status_code == 200 and [b["name"] for b in listed.json()] == ["master"]


def test_nul_in_commit_message_and_invalid_branch(api, rt, alice, hosted):
    project, bare = hosted
    state = Unchanged(rt, bare)
    url = f"/projects/{project.id}/repository/files"
    nul = api.as_(alice).post(url, json=change("n.txt", commit_message="a\x00b"))
    assert nul.status_code == 400 and nul.json() == {"message": {"commit_message": ["must not contain control characters"]}}
    for branch in ("-x", "/master", "master/", "ma\x00ster", "HEAD"):
        response = api.as_(alice).post(url, json=change("n.txt", branch_name=branch))
        assert response.status_code == 400 and response.json() == {"message": "Branch name is invalid"}, branch
    state.check()


def test_objects_failing_git_checks_are_not_written(api, rt, alice, users, hosted, monkeypatch):
    """Should a bad object be built anyway (here: the identity cleaning switched off), git's checks
    refuse it before it enters the repository."""
    from codeyard.git import file_commits

    project, bare = hosted
    monkeypatch.setattr(file_commits, "clean_identity", lambda text: text)
    mallory = users.create("mallory", name="Mal\nlory")
    api.as_(alice).post(f"/projects/{project.id}/members", json={"user_id": mallory.id, "access_level": 30})
    state = Unchanged(rt, bare)
    refused = api.as_(mallory).post(f"/projects/{project.id}/repository/files", json=change("m.txt"))
    assert refused.status_code == 400 and "failed git's object checks" in refused.json()["message"]
    state.check()
