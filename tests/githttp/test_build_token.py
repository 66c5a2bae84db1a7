"""`gitlab-ci-token:<build token>` over git HTTP: a runner clones the project of the build it runs,
read only, only while the build runs (the job's repo_url carries it)."""

from __future__ import annotations

import pytest

from codeyard.db.models import Project
from codeyard.services import projects as project_service
from codeyard.services.ci import runners

from ..builds.conftest import CiFactory, job
from .conftest import repo_url

pytestmark = pytest.mark.both_backends


def test_the_build_token_clones_its_project_while_the_build_runs(git, live, rt, alice, projects):
    project = projects.create(alice, name="built")
    other = projects.create(alice, name="secret")
    work = git.new_work("work")
    sha = git.commit(work, "README.md", "hello\n", "first")
    git.run("push", repo_url(live, project, alice), "master", cwd=work)
    git.run("push", repo_url(live, other, alice), "master", cwd=work)
    CiFactory(rt).pipeline(project, [job("clone")], sha=sha)
    with rt.db.transaction() as session:
        registration = runners.registration_token(session, rt)
    runner = live.http.post("/ci/api/v1/runners/register", json={"token": registration}).json()["token"]
    claimed = live.http.post("/ci/api/v1/builds/register", json={"token": runner})
    assert claimed.status_code == 201, claimed.text
    job_ = claimed.json()
    assert job_["repo_url"] == repo_url(live, project, "gitlab-ci-token", job_["token"])

    git.clone(job_["repo_url"], "checkout")
    assert git.run("rev-parse", "HEAD", cwd=git.root / "checkout").stdout.strip() == sha
    # read only: no push
    checkout = git.root / "checkout"
    git.commit(checkout, "x.txt", "x\n", "from the build")
    pushed = git.run("push", "origin", "master", cwd=checkout, check=False)
    assert pushed.returncode != 0 and "not allowed to push" in pushed.stderr
    # this project only
    elsewhere = git.clone(repo_url(live, other, "gitlab-ci-token", job_["token"]), "elsewhere", check=False)
    assert elsewhere.returncode != 0 and "not found" in elsewhere.stderr.lower()
    # a wrong token is wrong credentials
    wrong = git.clone(repo_url(live, project, "gitlab-ci-token", "x" * 20), "wrong", check=False)
    assert wrong.returncode != 0 and "Authentication failed" in wrong.stderr
    # GitLab 8.6 put the project's runners token in repo_url; here it clones nothing (DECISIONS CI14)
    with rt.db.session() as session:
        project_token = project_service.runners_token(rt.secret_key, session.get(Project, project.id))
    shared = git.clone(repo_url(live, project, "gitlab-ci-token", project_token), "shared", check=False)
    assert shared.returncode != 0 and "Authentication failed" in shared.stderr

    finished = live.http.put(f"/ci/api/v1/builds/{job_['id']}", json={"token": runner, "state": "success"})
    assert finished.status_code == 200 and finished.json() is True
    after = git.clone(job_["repo_url"], "after", check=False)
    assert after.returncode != 0 and "Authentication failed" in after.stderr
