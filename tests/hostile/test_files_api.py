"""The files API changes only what it says: paths git would not check out safely, a file over a
directory or under a file, identities and messages that would corrupt the commit are 400 and write
nothing (no object, no ref, no event)."""

from __future__ import annotations

import pytest

from codeyard.git import storage

from ..support import WorkingCopy
from .state import Unchanged


@pytest.fixture
def alice(users):
    return users.create("alice")


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


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_paths_git_would_not_check_out(api, rt, alice, hosted, method):
    project, bare = hosted
    state = Unchanged(rt, bare)
    url = f"/projects/{project.id}/repository/files"
    for path in BAD_PATHS:
        response = api.as_(alice).request(method.upper(), url, json=change(path))
        assert response.status_code == 400, (path, response.text)
        assert response.json() == {"message": {"file_path": ["is invalid"]}}, path
    state.check()
