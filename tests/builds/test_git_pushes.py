"""`git push` over smart HTTP creates pipelines: branches and tags, not deletions."""

from __future__ import annotations

import pytest

from ..githttp.conftest import Git, repo_url
from .test_pipeline_creation import builds_of, pipelines_of

pytestmark = pytest.mark.both_backends

CI = "stages: [build, test]\ncompile:\n  stage: build\n  script: make\nrelease:\n  stage: test\n  script: x\n  only: [tags]\n"


@pytest.fixture
def git(tmp_path) -> Git:
    return Git(tmp_path)


def test_branch_and_tag_pushes_create_pipelines_and_deletions_do_not(git, live, rt, users, projects):
    alice = users.create("alice")
    project = projects.create(alice, name="demo")
    work = git.new_work("work")
    sha = git.commit(work, ".gitlab-ci.yml", CI, "add ci")
    git.run("tag", "-a", "v1.0", "-m", "release", cwd=work)
    url = repo_url(live, project, alice)
    git.run("push", url, "master", "v1.0", cwd=work)
    found = {(p.ref, p.tag): p for p in pipelines_of(rt, project)}
    assert set(found) == {("master", False), ("v1.0", True)}
    assert found["master", False].sha == sha and found["v1.0", True].sha == sha
    assert [j["name"] for j in found["master", False].config["jobs"]] == ["compile"]
    assert [j["name"] for j in found["v1.0", True].config["jobs"]] == ["compile", "release"]
    (build,) = builds_of(rt, found["v1.0", True].id)
    assert build.tag is True and build.ref == "v1.0" and build.status == "pending"
    git.run("push", url, "--delete", "v1.0", cwd=work)
    git.run("push", url, "master:gone", cwd=work)
    git.run("push", url, "--delete", "gone", cwd=work)
    assert sorted((p.ref, p.tag) for p in pipelines_of(rt, project)) == [("gone", False), ("master", False), ("v1.0", True)]
