"""Personal access tokens as git passwords over smart HTTP, with the real git CLI: their scopes
decide what git may do (GitLab's `abilities_for_scopes`): `read_repository`, `read_api` clone;
`write_repository` and `api` clone and push; other scopes neither."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import update

from codeyard.db.models import Token
from codeyard.services import credentials

from .conftest import repo_url, server_ref


def issue(rt, user, *scopes, kind=credentials.PERSONAL) -> tuple[int, str]:
    with rt.db.transaction() as session:
        token, secret = credentials.issue_scoped(session, user.id, kind, "git", list(scopes), None)
        return token.id, secret


def refs(live, project, username, secret, service="git-upload-pack") -> httpx.Response:
    return httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": service},
                     auth=(username, secret))  # fmt: skip


@pytest.mark.both_backends
def test_read_repository_clones_and_cannot_push_write_repository_pushes(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    _id, writer = issue(rt, alice, "write_repository")
    work = git.new_work("work")
    first = git.commit(work, "README.md", "hello\n", "first commit")
    git.run("push", repo_url(live, project, alice, secret=writer), "master", cwd=work)
    assert server_ref(rt, project, "refs/heads/master") == first
    _id, reader = issue(rt, alice, "read_repository")
    git.clone(repo_url(live, project, alice, secret=reader), "reader")
    assert (git.root / "reader" / "README.md").read_text() == "hello\n"
    clone = git.root / "reader"
    git.commit(clone, "more.txt", "more\n", "second commit")
    refused = git.run("push", "origin", "master", cwd=clone, check=False)
    assert refused.returncode != 0 and "403" in refused.stderr
    assert server_ref(rt, project, "refs/heads/master") == first


def test_api_scope_clones_and_pushes_read_api_clones_only(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    _id, full = issue(rt, alice, "api")
    work = git.new_work("work")
    sha = git.commit(work, "README.md", "hello\n", "first commit")
    git.run("push", repo_url(live, project, alice, secret=full), "master", cwd=work)
    assert server_ref(rt, project, "refs/heads/master") == sha
    _id, reading = issue(rt, alice, "read_api")
    assert refs(live, project, "alice", reading).status_code == 200
    assert refs(live, project, "alice", reading, "git-receive-pack").status_code == 403


@pytest.mark.parametrize("scope", ["read_user", "sudo"])
def test_scopes_without_git_are_refused(live, rt, alice, projects, scope):
    project = projects.create(alice, name="demo", visibility=20)
    _id, secret = issue(rt, alice, scope)
    response = refs(live, project, "alice", secret)
    assert response.status_code == 403 and "not allowed to download code" in response.text
    assert refs(live, project, "alice", secret, "git-receive-pack").status_code == 403


def test_any_user_name_goes_with_a_personal_access_token(live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    _id, secret = issue(rt, alice, "read_repository")
    for name in ("alice", "oauth2", "anything"):
        assert refs(live, project, name, secret).status_code == 200, name
    # The private token still needs its owner's name.
    assert refs(live, project, "anything", alice.token).status_code == 401


def test_revoked_expired_and_impersonation_tokens(live, rt, alice, users, projects):
    project = projects.create(alice, name="demo")
    token_id, secret = issue(rt, alice, "read_repository")
    assert refs(live, project, "alice", secret).status_code == 200
    with rt.db.transaction() as session:
        session.execute(update(Token).where(Token.id == token_id).values(revoked=True))
    assert refs(live, project, "alice", secret).status_code == 401
    token_id, secret = issue(rt, alice, "read_repository")
    with rt.db.transaction() as session:
        session.execute(update(Token).where(Token.id == token_id).values(expires_at=Token.created_at))
    assert refs(live, project, "alice", secret).status_code == 401
    _id, acting = issue(rt, alice, "write_repository", kind=credentials.IMPERSONATION)
    assert refs(live, project, "alice", acting, "git-receive-pack").status_code == 200
    # A token reaches no further than its user: bob's sees nothing of alice's private project.
    bob = users.create("bob")
    _id, bobs = issue(rt, bob, "api")
    assert refs(live, project, "bob", bobs).status_code == 404
