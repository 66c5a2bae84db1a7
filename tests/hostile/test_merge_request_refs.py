"""Merge request heads (`refs/merge-requests/<iid>/head`) are written by the server only: a push
that creates, moves or deletes one is refused whole (it would change what an accept merges), and
clients can fetch them."""

from __future__ import annotations

import pytest

from codeyard.git import storage

from .state import Unchanged


@pytest.fixture
def git(tmp_path):
    from ..githttp.conftest import Git

    return Git(tmp_path)


def test_pushing_merge_request_refs_is_refused(git, live, rt, api, alice, projects):
    from ..githttp.conftest import repo_url

    project = projects.create(alice, name="guarded")
    bare = storage.repository_path(rt.config.repositories_dir, project.id)
    url = repo_url(live, project, alice)
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first")
    git.run("push", url, "master", cwd=work)
    git.run("push", url, "master:feature", cwd=work)
    git.commit(work, "feature.txt", "feature\n", "feature")
    git.run("push", url, "HEAD:feature", cwd=work)
    body = {"source_branch": "feature", "target_branch": "master", "title": "Guarded"}
    assert api.as_(alice).post(f"/projects/{project.id}/merge_requests", json=body).status_code == 200
    git.run("fetch", url, "refs/merge-requests/1/head", cwd=work)  # clients can fetch the head
    assert git.run("rev-parse", "FETCH_HEAD", cwd=work).stdout.strip() == git.run("rev-parse", "HEAD", cwd=work).stdout.strip()
    git.commit(work, "sneaky.txt", "unreviewed\n", "unreviewed")
    for refspec in ("HEAD:refs/merge-requests/1/head", "HEAD:refs/merge-requests/2/head", ":refs/merge-requests/1/head"):
        state = Unchanged(rt, bare)
        pushed = git.run("push", "--force", url, refspec, cwd=work, check=False)
        assert pushed.returncode != 0 and "You are not allowed to change merge request refs" in pushed.stderr, refspec
        state.check()
