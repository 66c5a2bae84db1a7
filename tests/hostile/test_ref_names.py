"""Ref names that git or libgit2 would read differently from the permission checks: names not in
canonical form are refused before any lookup (400 for changes), so a protected or default branch
cannot be reached under another spelling; pushes of such names are refused by the pre-receive hook."""

from __future__ import annotations

import subprocess

import pytest

from codeyard.db.models import Project
from codeyard.git import storage

from ..support import WorkingCopy
from .state import Unchanged

DEVELOPER = 30
# Spellings of `master` that reach the server as another name (percent-encoded: neither the client
# nor the router normalises them).
NON_CANONICAL = ["%2Fmaster", "master%2F", "%2F%2Fmaster", "master%2F.", "-master",
                 "master.lock", "master~0", "master%20", "ma%01ster", "master@%7B0%7D"]  # fmt: skip
# Spellings that the client or the router turns into `master` (or into no route at all).
# A NUL in a path segment: the router answers 404 before any route (nor any lookup) is reached.
NUL_SPELLINGS = ["ma%00ster", "master%00"]
NORMALISED = ["/master", "//master", "master/", "./master", "master/.", "refs/heads/master"]


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    """alice's project with master (protected, the default branch) and feature pushed."""
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("first")
    work.git("branch", "feature")
    work.push("master", "feature")
    with rt.db.transaction() as session:
        session.get(Project, project.id).default_branch = "master"
    return project, storage.repository_path(rt.config.repositories_dir, project.id)


@pytest.fixture
def guarded(api, users, projects, alice, hosted):
    """master protected; a developer who may not delete it."""
    project, bare = hosted
    api.as_(alice).put(f"/projects/{project.id}/repository/branches/master/protect")
    dev = users.create("dev")
    projects.add_member(project, dev, DEVELOPER)
    return project, bare, dev


def test_non_canonical_names_are_refused_before_any_lookup(api, rt, alice, guarded):
    project, bare, dev = guarded
    state = Unchanged(rt, bare)
    for spelling in NON_CANONICAL:
        url = f"/projects/{project.id}/repository/branches/{spelling}"
        deleted = api.as_(dev).delete(url)
        assert deleted.status_code == 400 and deleted.json() == {"message": "Branch name is invalid"}, spelling
        for action in ("protect", "unprotect"):
            response = api.as_(alice).put(f"{url}/{action}")
            assert response.status_code == 400 and response.json() == {"message": "Branch name is invalid"}, spelling
        assert api.as_(alice).get(url).status_code == 404, spelling
    for spelling in NUL_SPELLINGS:
        url = f"/projects/{project.id}/repository/branches/{spelling}"
        assert api.as_(dev).delete(url).status_code == 404, spelling
        assert api.as_(alice).put(f"{url}/protect").status_code == 404, spelling
    state.check()


def test_normalised_spellings_meet_the_same_checks(api, rt, guarded):
    project, bare, dev = guarded
    state = Unchanged(rt, bare)
    for spelling in NORMALISED:
        deleted = api.as_(dev).delete(f"/projects/{project.id}/repository/branches/{spelling}")
        assert deleted.status_code in (404, 405), (spelling, deleted.text)
    state.check()


def test_create_refuses_names_git_reads_otherwise(api, rt, alice, hosted):
    project, bare = hosted
    state = Unchanged(rt, bare)
    url = f"/projects/{project.id}/repository/branches"
    names = ["-x", "--output=x", "HEAD", "@", "a..b", "/x", "x/", "a//b", "x.lock", ".x", "a b", "a\x00b", "a~1",
             "a:b", "a@{1}", "é" * 600, "x" * 1200]  # fmt: skip
    for name in names:
        response = api.as_(alice).post(url, json={"branch_name": name, "ref": "master"})
        assert response.status_code == 400 and response.json() == {"message": "Branch name is invalid"}, name
    state.check()
    assert api.as_(alice).post(url, json={"branch_name": "ok/name", "ref": "master"}).status_code == 201


@pytest.fixture
def git(tmp_path):
    from ..githttp.conftest import Git

    return Git(tmp_path)


PUSHED_NAMES = ["refs/heads/--output=pwned", "refs/heads/HEAD", "refs/tags/-v1", "refs/heads/x/" + "a" * 251,
                "refs/heads/@"]  # fmt: skip


def test_push_of_invalid_ref_names_is_refused(git, live, rt, alice, projects, tmp_path):
    from ..githttp.conftest import repo_url

    project = projects.create(alice, name="pushed")
    bare = storage.repository_path(rt.config.repositories_dir, project.id)
    url = repo_url(live, project, alice)
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first")
    git.run("push", url, "master", cwd=work)
    for name in PUSHED_NAMES:
        state = Unchanged(rt, bare)
        # Together with a valid update: the whole push is refused.
        git.commit(work, "more.txt", name, "more")
        pushed = git.run("push", url, "master", f"master:{name}", cwd=work, check=False)
        assert pushed.returncode != 0 and f"codeyard: The ref name is invalid: {name}" in pushed.stderr, name
        state.check()
    assert not (work / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_deleting_a_ref_of_an_invalid_name_is_allowed(git, live, rt, alice, projects):
    from ..githttp.conftest import repo_url, server_ref

    project = projects.create(alice, name="cleanup")
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first")
    git.run("push", repo_url(live, project, alice), "master", cwd=work)
    bare = storage.repository_path(rt.config.repositories_dir, project.id)
    subprocess.run(["git", "--git-dir", str(bare), "update-ref", "refs/heads/-bad", "master"], check=True)
    git.run("push", repo_url(live, project, alice), ":refs/heads/-bad", cwd=work)
    assert server_ref(rt, project, "refs/heads/-bad") is None


def test_default_branch_must_be_a_canonical_existing_branch(api, rt, admin, alice, hosted):
    project, bare = hosted
    head = (bare / "HEAD").read_bytes()
    state = Unchanged(rt, bare, (bare / "HEAD",))
    url = f"/projects/{project.id}"
    for name in ("/feature", "feature/", "//feature", "-feature", "HEAD", "fea\x00ture", "feature~0", "x" * 300):
        response = api.as_(alice).put(url, json={"default_branch": name})
        assert response.status_code == 400 and response.json()["message"].keys() == {"default_branch"}, name
    assert api.as_(alice).put(url, json={"default_branch": "nope"}).status_code == 400
    state.check()
    assert api.as_(alice).get(url).json()["default_branch"] == "master" and (bare / "HEAD").read_bytes() == head
    created = api.as_(admin).post(f"/projects/user/{alice.id}", json={"name": "other", "default_branch": "-x"})
    assert created.status_code == 400 and created.json() == {"message": {"default_branch": ["is invalid"]}}
