"""Clone, fetch and push over the server's smart HTTP with the real git CLI."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import subprocess
import threading
import time

import httpx
import pytest

from codeyard.db.models import ProtectedBranch, Token
from codeyard.git import storage
from codeyard.services import credentials

from .conftest import repo_url, server_ref

GUEST, REPORTER, DEVELOPER, MASTER = 10, 20, 30, 40


def push_master(git, live, project, user, name="work"):
    work = git.new_work(name)
    sha = git.commit(work, "README.md", "hello\n", "first commit")
    git.run("push", repo_url(live, project, user), "master", cwd=work)
    return work, sha


@pytest.mark.both_backends
def test_clone_empty_push_and_clone_again(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    empty = git.clone(repo_url(live, project, alice), "empty")
    assert "empty repository" in empty.stderr
    work = git.root / "empty"
    sha = git.commit(work, "README.md", "hello\n", "first commit")
    git.run("push", "origin", "master", cwd=work)
    assert server_ref(rt, project, "refs/heads/master") == sha
    git.clone(repo_url(live, project, alice), "again")
    assert (git.root / "again" / "README.md").read_text() == "hello\n"
    assert git.run("rev-parse", "HEAD", cwd=git.root / "again").stdout.strip() == sha
    # Without the .git suffix too.
    git.clone(repo_url(live, project, alice, suffix=""), "plain")
    assert (git.root / "plain" / "README.md").exists()


def test_fetch_new_commits(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    work, _ = push_master(git, live, project, alice)
    git.clone(repo_url(live, project, alice), "reader")
    newer = git.commit(work, "more.txt", "more\n", "second commit")
    git.run("push", repo_url(live, project, alice), "master", cwd=work)
    git.run("fetch", "origin", cwd=git.root / "reader")
    assert git.run("rev-parse", "origin/master", cwd=git.root / "reader").stdout.strip() == newer


def test_branches_with_slashes_and_tags(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    work, sha = push_master(git, live, project, alice)
    git.run("checkout", "-q", "-b", "feature/x/y", cwd=work)
    feature = git.commit(work, "f.txt", "f\n", "feature")
    git.run("tag", "v1.0", sha, cwd=work)
    git.run("tag", "-a", "-m", "release two", "v2.0", cwd=work)
    git.run("push", repo_url(live, project, alice), "feature/x/y", "v1.0", "v2.0", cwd=work)
    assert server_ref(rt, project, "refs/heads/feature/x/y") == feature
    assert server_ref(rt, project, "refs/tags/v1.0") == sha
    assert server_ref(rt, project, "refs/tags/v2.0^{commit}") == feature
    listing = git.run("ls-remote", repo_url(live, project, alice)).stdout
    assert "refs/heads/feature/x/y" in listing and "refs/tags/v2.0^{}" in listing


@pytest.mark.parametrize("visibility", [0, 10, 20])
def test_anonymous_clone_only_of_public_projects(git, live, alice, projects, visibility):
    project = projects.create(alice, name="demo", visibility=visibility)
    push_master(git, live, project, alice)
    result = git.clone(repo_url(live, project), "anon", check=False)
    if visibility == 20:
        assert result.returncode == 0
    else:
        assert result.returncode != 0
        response = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": "git-upload-pack"})
        assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Basic")


def test_unknown_project_looks_like_a_private_one_to_anonymous_callers(live, alice, projects):
    private = projects.create(alice, name="demo")
    for path in (private.path_with_namespace, "nobody/nothing"):
        response = httpx.get(f"{live.base_url}/{path}.git/info/refs", params={"service": "git-upload-pack"})
        assert response.status_code == 401
    signed_in = httpx.get(f"{live.base_url}/nobody/nothing.git/info/refs", params={"service": "git-upload-pack"},
                          auth=(alice.username, alice.token))  # fmt: skip
    assert signed_in.status_code == 404


@pytest.mark.both_backends
def test_roles_on_a_private_project(git, live, alice, users, projects):
    project = projects.create(alice, name="demo")
    push_master(git, live, project, alice)
    roles = {name: users.create(name) for name in ("guest", "reporter", "developer")}
    for name, level in (("guest", GUEST), ("reporter", REPORTER), ("developer", DEVELOPER)):
        projects.add_member(project, roles[name], level)
    outsider = users.create("outsider")
    assert git.clone(repo_url(live, project, roles["guest"]), "g", check=False).returncode != 0
    guest_refs = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": "git-upload-pack"},
                           auth=("guest", roles["guest"].token))  # fmt: skip
    assert guest_refs.status_code == 403
    outsider_refs = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": "git-upload-pack"},
                              auth=("outsider", outsider.token))  # fmt: skip
    assert outsider_refs.status_code == 404
    git.clone(repo_url(live, project, roles["reporter"]), "r")
    work = git.root / "r"
    git.commit(work, "x.txt", "x\n", "reporter change")
    refused = git.run("push", "origin", "HEAD:refs/heads/topic", cwd=work, check=False)
    assert refused.returncode != 0 and "403" in refused.stderr
    git.run("push", repo_url(live, project, roles["developer"]), "HEAD:refs/heads/topic", cwd=work)


@pytest.mark.both_backends
def test_password_token_and_oauth_credentials(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    push_master(git, live, project, alice)
    assert git.clone(repo_url(live, project, alice, secret=alice.password), "pw").returncode == 0
    with rt.db.transaction() as session:
        _, oauth = credentials.issue_token(session, alice.id, credentials.OAUTH, "oauth", lifetime=dt.timedelta(hours=1))
    assert git.clone(repo_url(live, project, "oauth2", secret=oauth), "oauth").returncode == 0
    for user, secret in (("alice", "wrong-password"), ("bob", alice.token), ("oauth2", alice.token)):
        assert git.clone(repo_url(live, project, user, secret=secret), f"bad-{user}", check=False).returncode != 0
    response = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": "git-upload-pack"},
                         auth=("alice", "wrong-password"))  # fmt: skip
    assert response.status_code == 401


def test_expired_token_and_blocked_user_are_refused(git, live, rt, alice, users, projects):
    project = projects.create(alice, name="demo")
    with rt.db.transaction() as session:
        session.query(Token).filter(Token.user_id == alice.id).update({Token.expires_at: dt.datetime.now(dt.UTC)})
    assert git.clone(repo_url(live, project, alice), "expired", check=False).returncode != 0
    blocked = users.create("blocked", state="blocked")
    assert git.clone(repo_url(live, project, blocked, secret=blocked.password), "blocked", check=False).returncode != 0


def protect(rt, project, branch="master", developers_can_push=False):
    with rt.db.transaction() as session:
        row = session.query(ProtectedBranch).filter_by(project_id=project.id, name=branch).one_or_none()
        if row is None:
            session.add(ProtectedBranch(project_id=project.id, name=branch, developers_can_push=developers_can_push))
        else:
            row.developers_can_push = developers_can_push


@pytest.mark.both_backends
def test_protected_branch_rules(git, live, rt, alice, users, projects):
    project = projects.create(alice, name="demo")
    work, first = push_master(git, live, project, alice)
    developer, master = users.create("dev"), users.create("mas")
    projects.add_member(project, developer, DEVELOPER)
    projects.add_member(project, master, MASTER)
    protect(rt, project)
    second = git.commit(work, "two.txt", "2\n", "second")
    refused = git.run("push", repo_url(live, project, developer), "master", cwd=work, check=False)
    assert refused.returncode != 0
    assert "remote: codeyard: You are not allowed to push code to protected branches on this project." in refused.stderr
    assert server_ref(rt, project, "refs/heads/master") == first
    git.run("push", repo_url(live, project, master), "master", cwd=work)
    assert server_ref(rt, project, "refs/heads/master") == second
    # Nobody force-pushes a protected branch, not even its owner.
    git.run("reset", "-q", "--hard", first, cwd=work)
    git.commit(work, "other.txt", "o\n", "rewritten history")
    forced = git.run("push", "--force", repo_url(live, project, alice), "master", cwd=work, check=False)
    assert forced.returncode != 0 and "force push" in forced.stderr
    assert server_ref(rt, project, "refs/heads/master") == second
    deleted = git.run("push", repo_url(live, project, alice), ":master", cwd=work, check=False)
    assert deleted.returncode != 0 and "delete protected branches" in deleted.stderr
    assert server_ref(rt, project, "refs/heads/master") == second
    # Unprotected branches may be force-pushed and deleted by developers.
    git.run("push", repo_url(live, project, developer), "HEAD:refs/heads/topic", cwd=work)
    git.run("reset", "-q", "--hard", first, cwd=work)
    git.run("push", "--force", repo_url(live, project, developer), "HEAD:refs/heads/topic", cwd=work)
    git.run("push", repo_url(live, project, developer), ":topic", cwd=work)
    assert server_ref(rt, project, "refs/heads/topic") is None


def test_a_push_judged_from_its_commands_and_by_the_hook_alike(git, live, rt, alice, users, projects):
    """Pushes vetted by the server from their commands (githooks.vet) and pushes left to the Python
    hook (a refusal, a command list over the limit) follow the same rules, and a refused update
    refuses the whole push."""
    project = projects.create(alice, name="demo")
    work, first = push_master(git, live, project, alice)
    developer = users.create("dev")
    projects.add_member(project, developer, DEVELOPER)
    protect(rt, project)
    second = git.commit(work, "two.txt", "2\n", "second")
    git.run("push", repo_url(live, project, alice), "master", "HEAD:refs/heads/topic", cwd=work)  # vetted, master moves forward
    assert server_ref(rt, project, "refs/heads/master") == second
    git.run("reset", "-q", "--hard", first, cwd=work)
    git.commit(work, "other.txt", "o\n", "rewritten history")
    both = git.run("push", "--force", repo_url(live, project, alice), "HEAD:refs/heads/feature", "HEAD:master", cwd=work, check=False)
    assert both.returncode != 0 and "force push code to a protected branch" in both.stderr
    assert server_ref(rt, project, "refs/heads/master") == second and server_ref(rt, project, "refs/heads/feature") is None
    git.run("reset", "-q", "--hard", second, cwd=work)
    git.commit(work, "three.txt", "3\n", "third")
    developer_push = git.run("push", repo_url(live, project, developer), "HEAD:refs/heads/ok", "HEAD:master", cwd=work, check=False)
    assert "You are not allowed to push code to protected branches" in developer_push.stderr
    assert server_ref(rt, project, "refs/heads/ok") is None
    atomic = git.run("push", "--atomic", "--force", repo_url(live, project, alice), "HEAD:refs/heads/feature", f"{first}:master",
                     cwd=work, check=False)  # fmt: skip
    assert atomic.returncode != 0 and server_ref(rt, project, "refs/heads/feature") is None
    for number in range(250):  # about 25 KB of commands: judged by the Python hook
        git.run("tag", f"release-{number:04d}", cwd=work)
    git.run("push", "-q", repo_url(live, project, developer), "--tags", cwd=work)
    assert server_ref(rt, project, "refs/tags/release-0249") is not None


def test_developers_can_push_flag(git, live, rt, alice, users, projects):
    project = projects.create(alice, name="demo")
    work, _ = push_master(git, live, project, alice)
    developer = users.create("dev")
    projects.add_member(project, developer, DEVELOPER)
    protect(rt, project, developers_can_push=True)
    newer = git.commit(work, "n.txt", "n\n", "next")
    git.run("push", repo_url(live, project, developer), "master", cwd=work)
    assert server_ref(rt, project, "refs/heads/master") == newer


def test_existing_tags_need_a_master(git, live, rt, alice, users, projects):
    project = projects.create(alice, name="demo")
    work, _ = push_master(git, live, project, alice)
    developer = users.create("dev")
    projects.add_member(project, developer, DEVELOPER)
    git.run("tag", "v1", cwd=work)
    git.run("push", repo_url(live, project, developer), "v1", cwd=work)
    refused = git.run("push", repo_url(live, project, developer), ":refs/tags/v1", cwd=work, check=False)
    assert refused.returncode != 0 and "existing tags" in refused.stderr
    git.run("push", repo_url(live, project, alice), ":refs/tags/v1", cwd=work)
    assert server_ref(rt, project, "refs/tags/v1") is None


@pytest.mark.both_backends
def test_push_events_are_recorded(git, live, api, alice, projects):
    project = projects.create(alice, name="demo")
    push_master(git, live, project, alice)
    events = api.as_(alice).get(f"/projects/{project.id}/events").json()
    assert events[0]["action_name"] == "pushed new"
    assert events[0]["data"]["ref"] == "refs/heads/master" and events[0]["author_username"] == "alice"


@pytest.mark.both_backends
def test_concurrent_pushes_one_wins(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    push_master(git, live, project, alice)
    clones = []
    for name in ("one", "two"):
        git.clone(repo_url(live, project, alice), name)
        clones.append((git.root / name, git.commit(git.root / name, f"{name}.txt", name, f"commit {name}")))
    results = {}

    def push(path):
        results[path.name] = git.run("push", "origin", "master", cwd=path, check=False)

    threads = [threading.Thread(target=push, args=(path,)) for path, _ in clones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = sorted(result.returncode for result in results.values())
    assert codes[0] == 0 and codes[1] != 0
    loser = next(result for result in results.values() if result.returncode != 0)
    assert "rejected" in loser.stderr or "failed to lock" in loser.stderr or "fetch first" in loser.stderr
    assert server_ref(rt, project, "refs/heads/master") in {sha for _, sha in clones}
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    fsck = subprocess.run(["git", "--git-dir", str(path), "fsck", "--strict"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_protocol_v2(git, live, alice, projects):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    git.run("-c", "protocol.version=2", "clone", repo_url(live, project, alice), str(git.root / "v2"))
    assert git.run("rev-parse", "HEAD", cwd=git.root / "v2").stdout.strip() == sha
    advertisement = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs",
                              params={"service": "git-upload-pack"}, headers={"Git-Protocol": "version=2"},
                              auth=(alice.username, alice.token))  # fmt: skip
    assert b"version 2" in advertisement.content


def test_gzip_request_body(git, live, alice, projects):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    request = f"0032want {sha}\n00000009done\n".encode()
    response = httpx.post(
        f"{live.base_url}/{project.path_with_namespace}.git/git-upload-pack",
        content=gzip.compress(request),
        headers={"Content-Type": "application/x-git-upload-pack-request", "Content-Encoding": "gzip"},
        auth=(alice.username, alice.token),
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-git-upload-pack-result"
    assert b"PACK" in response.content


def test_advertisement_framing_by_protocol_version(git, live, alice, projects):
    """Protocol v0 and v1 advertisements start with the service line and a flush, v2 without;
    every git answer says it must not be cached."""
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    url = f"{live.base_url}/{project.path_with_namespace}.git/info/refs"
    for service in ("git-upload-pack", "git-receive-pack"):
        response = httpx.get(url, params={"service": service}, auth=(alice.username, alice.token))
        assert response.status_code == 200
        assert response.headers["content-type"] == f"application/x-{service}-advertisement"
        assert response.headers["cache-control"] == "no-cache, max-age=0, must-revalidate"
        line = f"# service={service}\n"
        assert response.content.startswith(f"{len(line) + 4:04x}{line}0000".encode())
        assert sha.encode() in response.content
    v2 = httpx.get(url, params={"service": "git-upload-pack"}, headers={"Git-Protocol": "version=2"},
                   auth=(alice.username, alice.token))  # fmt: skip
    assert v2.content.startswith(b"000eversion 2\n")


def test_the_kept_v2_capabilities_are_gits_and_follow_the_repository_config(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    push_master(git, live, project, alice)
    repository = storage.repository_path(rt.config.repositories_dir, project.id)

    def advertised() -> bytes:
        response = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs", params={"service": "git-upload-pack"},
                             headers={"Git-Protocol": "version=2"}, auth=(alice.username, alice.token))  # fmt: skip
        assert response.headers["content-type"] == "application/x-git-upload-pack-advertisement"
        return response.content

    def gits_own() -> bytes:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_PROTOCOL": "version=2"}
        return subprocess.run(["git", "upload-pack", "--stateless-rpc", "--advertise-refs", str(repository)],
                              env=env, capture_output=True, check=True).stdout  # fmt: skip

    assert advertised() == advertised() == gits_own()
    assert b"filter" not in gits_own()
    subprocess.run(["git", "--git-dir", str(repository), "config", "uploadpack.allowFilter", "true"], check=True)
    assert advertised() == gits_own() and b"filter" in advertised()
    git.run("-c", "protocol.version=2", "clone", "-q", "--filter=blob:none", repo_url(live, project, alice), str(git.root / "partial"))
    assert (git.root / "partial" / "README.md").read_text() == "hello\n"


@pytest.mark.parametrize("version", ["0", "1"])
def test_clone_and_push_under_older_protocols(git, live, alice, projects, version):
    project = projects.create(alice, name="demo")
    work, _ = push_master(git, live, project, alice)
    clone = git.root / f"v{version}"
    git.run("-c", f"protocol.version={version}", "clone", repo_url(live, project, alice), str(clone))
    sha = git.commit(clone, "NEXT.md", "next\n", "second commit")
    git.run("-c", f"protocol.version={version}", "push", "origin", "master", cwd=clone)
    git.run("-c", f"protocol.version={version}", "pull", "-q", repo_url(live, project, alice), "master", cwd=work)
    assert git.run("rev-parse", "HEAD", cwd=work).stdout.strip() == sha


@pytest.mark.parametrize("service", ["git-upload-pack", "git-receive-pack"])
def test_a_request_of_another_content_type_is_refused(git, live, rt, alice, projects, service):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    response = httpx.post(f"{live.base_url}/{project.path_with_namespace}.git/{service}",
                          content=f"0032want {sha}\n00000009done\n".encode(), headers={"Content-Type": "text/plain"},
                          auth=(alice.username, alice.token))  # fmt: skip
    assert response.status_code == 415
    assert f"Expected POST with Content-Type 'application/x-{service}-request'" in response.text
    assert git.run("ls-remote", repo_url(live, project, alice)).stdout.split()[0] == sha


def test_a_body_that_does_not_inflate_stops_only_its_request(git, live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    url = f"{live.base_url}/{project.path_with_namespace}.git/git-upload-pack"
    headers = {"Content-Type": "application/x-git-upload-pack-request", "Content-Encoding": "gzip"}
    broken = gzip.compress(f"0032want {sha}\n00000009done\n".encode())[:12] + b"not deflate data" * 64
    response = httpx.post(url, content=broken, headers=headers, auth=(alice.username, alice.token))
    assert b"PACK" not in response.content
    valid = httpx.post(url, content=gzip.compress(f"0032want {sha}\n00000009done\n".encode()), headers=headers,
                       auth=(alice.username, alice.token))  # fmt: skip
    assert b"PACK" in valid.content
    repository = storage.repository_path(rt.config.repositories_dir, project.id)
    deadline = time.monotonic() + 5
    while _git_processes(repository) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _git_processes(repository) == 0


def test_dumb_protocol_is_refused(live, alice, projects):
    project = projects.create(alice, name="demo", visibility=20)
    response = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs")
    assert response.status_code == 400


def test_missing_repository_is_reported(live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    storage.remove(storage.repository_path(rt.config.repositories_dir, project.id))
    response = httpx.get(f"{live.base_url}/{project.path_with_namespace}.git/info/refs",
                         params={"service": "git-upload-pack"}, auth=(alice.username, alice.token))  # fmt: skip
    assert response.status_code == 500
    assert "repository" in response.text


def _git_processes(repository) -> int:
    """Processes working in REPOSITORY (their working directory is inside it)."""
    import os
    from pathlib import Path

    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")).is_relative_to(repository):
                    count += 1
            except OSError:
                continue
    return count


def test_client_disconnect_leaves_no_git_process(live, rt, alice, projects):
    project = projects.create(alice, name="demo")
    repository = storage.repository_path(rt.config.repositories_dir, project.id)
    before = _git_processes(repository)
    seen_running = []

    def half_a_push():
        command = f"{'0' * 40} {'1' * 40} refs/heads/x\0 report-status\n".encode()
        yield f"{len(command) + 4:04x}".encode() + command + b"0000"
        yield b"PACK\x00\x00\x00\x02\x00\x00\x00\x05"
        for _ in range(20):
            time.sleep(0.05)
            yield b"\x95" * 1024
        seen_running.append(_git_processes(repository))
        raise RuntimeError("the client goes away")

    with pytest.raises(RuntimeError):
        httpx.post(f"{live.base_url}/{project.path_with_namespace}.git/git-receive-pack", content=half_a_push(),
                   headers={"Content-Type": "application/x-git-receive-pack-request"},
                   auth=(alice.username, alice.token), timeout=30)  # fmt: skip
    assert seen_running and seen_running[0] > before  # git was working on the push
    deadline = time.monotonic() + 10
    while _git_processes(repository) > before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _git_processes(repository) <= before


@pytest.mark.parametrize(("level", "developer_may_push"), [(2, False), (0, True)])
def test_default_branch_protection_applies_on_first_push(git, live, api, rt, admin, alice, users, projects, level, developer_may_push):
    api.as_(admin).put("/application/settings", json={"default_branch_protection": level})
    project = projects.create(alice, name="demo")
    work, first = push_master(git, live, project, alice)
    assert api.as_(alice).get(f"/projects/{project.id}").json()["default_branch"] == "master"
    developer = users.create("dev")
    projects.add_member(project, developer, DEVELOPER)
    second = git.commit(work, "next.txt", "n\n", "next")
    result = git.run("push", repo_url(live, project, developer), "master", cwd=work, check=False)
    assert (result.returncode == 0) is developer_may_push
    assert server_ref(rt, project, "refs/heads/master") == (second if developer_may_push else first)


def test_first_pushed_branch_becomes_default(git, live, api, alice, projects):
    project = projects.create(alice, name="demo")
    work = git.new_work("w")
    git.commit(work, "a.txt", "a\n", "a")
    git.run("checkout", "-q", "-b", "develop", cwd=work)
    git.run("push", repo_url(live, project, alice), "develop", cwd=work)
    assert api.as_(alice).get(f"/projects/{project.id}").json()["default_branch"] == "develop"
    clone = git.clone(repo_url(live, project, alice), "c")
    assert clone.returncode == 0
    assert git.run("rev-parse", "--abbrev-ref", "HEAD", cwd=git.root / "c").stdout.strip() == "develop"


def test_http_url_to_repo_is_the_url_that_works(git, live, api, alice, projects):
    project = projects.create(alice, name="demo")
    url = api.as_(alice).get(f"/projects/{project.id}").json()["http_url_to_repo"]
    assert url.startswith("http://testserver/")  # the in-process client's base URL
    live_url = live.api.as_(alice).get(f"/projects/{project.id}").json()["http_url_to_repo"]
    assert live_url == f"{live.base_url}/alice/demo.git"
    authed = live_url.replace("http://", f"http://alice:{alice.token}@")
    assert git.clone(authed, "via-entity").returncode == 0


def test_renamed_project_clones_at_its_new_path(git, live, api, alice, projects):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    assert api.as_(alice).put(f"/projects/{project.id}", json={"path": "renamed"}).status_code == 200
    git.clone(f"http://alice:{alice.token}@{live.base_url[7:]}/alice/renamed.git", "new")
    assert git.run("rev-parse", "HEAD", cwd=git.root / "new").stdout.strip() == sha
    old = git.clone(f"http://alice:{alice.token}@{live.base_url[7:]}/alice/demo.git", "old", check=False)
    assert old.returncode != 0


def test_transferred_project_clones_in_its_group(git, live, api, alice, users, projects, admin):
    project = projects.create(alice, name="demo")
    _, sha = push_master(git, live, project, alice)
    team = projects.group(alice, "team")
    assert api.as_(alice).post(f"/groups/{team.id}/projects/{project.id}").status_code == 403  # admins only
    response = api.as_(admin).post(f"/groups/{team.id}/projects/{project.id}")
    assert response.status_code == 201 and response.json()["path"] == "team"
    body = api.as_(alice).get(f"/projects/{project.id}").json()
    assert body["path_with_namespace"] == "team/demo" and body["http_url_to_repo"].endswith("/team/demo.git")
    git.clone(f"http://alice:{alice.token}@{live.base_url[7:]}/team/demo.git", "moved")
    assert git.run("rev-parse", "HEAD", cwd=git.root / "moved").stdout.strip() == sha
    assert git.clone(f"http://alice:{alice.token}@{live.base_url[7:]}/alice/demo.git", "old", check=False).returncode != 0
    # Refusals: a taken path in the group, a project more visible than the group, unknown ids.
    projects.create(alice, name="other")
    projects.create(alice, group=team, name="other")
    other = api.as_(alice).get("/projects/alice%2Fother").json()
    taken = api.as_(admin).post(f"/groups/{team.id}/projects/{other['id']}")
    assert taken.status_code == 400 and "name" in taken.json()["message"]
    public = projects.create(alice, name="public", visibility=20)
    assert api.as_(admin).post(f"/groups/{team.id}/projects/{public.id}").status_code == 400
    assert api.as_(admin).post(f"/groups/{team.id}/projects/999999").json() == {"message": "404 Project Not Found"}
    assert api.as_(admin).post(f"/groups/999999/projects/{public.id}").status_code == 404


def test_fork_is_independent_of_its_source(git, live, api, alice, users, projects):
    bob = users.create("bob")
    source = projects.create(alice, name="demo", visibility=20)
    work, first = push_master(git, live, source, alice)
    fork = api.as_(bob).post(f"/projects/fork/{source.id}").json()
    fork_url = f"http://bob:{bob.token}@{live.base_url[7:]}/bob/demo.git"
    git.clone(fork_url, "fork")
    assert git.run("rev-parse", "HEAD", cwd=git.root / "fork").stdout.strip() == first
    # A push to the source does not show in the fork, and one to the fork not in the source.
    newer = git.commit(work, "source.txt", "s\n", "source only")
    git.run("push", repo_url(live, source, alice), "master", cwd=work)
    fork_work = git.root / "fork"
    git.commit(fork_work, "fork.txt", "f\n", "fork only")
    git.run("push", "origin", "HEAD:refs/heads/fork-branch", cwd=fork_work)
    listing = git.run("ls-remote", fork_url).stdout
    assert first in listing and newer not in listing
    assert "fork-branch" not in git.run("ls-remote", repo_url(live, source, alice)).stdout
    assert fork["default_branch"] == "master"


def test_blocked_user_counts_as_anonymous(git, live, alice, users, projects):
    public = projects.create(alice, name="open", visibility=20)
    work, _ = push_master(git, live, public, alice)
    blocked = users.create("blocked", state="blocked")
    projects.add_member(public, blocked, DEVELOPER)
    assert git.clone(repo_url(live, public, blocked), "anon-like").returncode == 0
    git.commit(work, "b.txt", "b\n", "by a blocked user")
    refused = git.run("push", repo_url(live, public, blocked), "HEAD:refs/heads/b", cwd=work, check=False)
    assert refused.returncode != 0


@pytest.mark.both_backends
def test_group_memberships_and_visibility_decide_git_access(git, live, alice, users, projects):
    """Rights through a group (the read path's group level) and an internal project's signed-in
    readers; the project is named in another case than it was created with."""
    team = projects.group(alice, "team", visibility=10)
    project = projects.create(alice, group=team, name="demo")
    push_master(git, live, project, alice)
    reporter, guest, outsider = users.create("reporter"), users.create("guest"), users.create("outsider")
    projects.add_group_member(team, reporter, REPORTER)
    projects.add_group_member(team, guest, GUEST)

    def refs_status(user, path="TEAM/Demo"):
        auth = (user.username, user.token) if user is not None else None
        return httpx.get(f"{live.base_url}/{path}.git/info/refs", params={"service": "git-upload-pack"}, auth=auth).status_code

    assert (refs_status(reporter), refs_status(guest), refs_status(outsider), refs_status(None)) == (200, 403, 404, 401)
    git.clone(repo_url(live, project, reporter), "via-group")
    internal = projects.create(alice, group=team, name="shared", visibility=10)
    push_master(git, live, internal, alice, name="shared-work")
    assert (refs_status(outsider, "team/shared"), refs_status(None, "team/shared")) == (200, 401)
