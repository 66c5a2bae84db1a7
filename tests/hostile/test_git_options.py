"""User text reaching git's command line as an option (`--output=<file>` creates or truncates any
file the server can write): through ref, sha and path parameters of the repository endpoints and
through a branch whose name is an option. Every such request is 404 and writes nothing."""

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
    work.commit("first", {"README.md": "hello\n"})
    work.push()
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious\n")
    hooks = rt.config.data_dir / "githooks" / "pre-receive"
    bare = storage.repository_path(rt.config.repositories_dir, project.id)
    return project, bare, victim, tmp_path / "created", hooks


def attacks(project, option: str) -> list[tuple[str, dict]]:
    base = f"/projects/{project.id}/repository"
    return [
        (f"{base}/commits", {"ref_name": option}),
        (f"{base}/commits/{option}", {}),
        (f"{base}/commits/{option}/diff", {}),
        (f"{base}/tree", {"ref_name": option}),
        (f"{base}/files", {"ref": option, "file_path": "README.md"}),
        (f"{base}/files", {"ref": "master", "file_path": option}),
        (f"{base}/blobs/{option}", {"filepath": "README.md"}),
        (f"{base}/raw_blobs/{option}", {}),
        (f"{base}/compare", {"from": option, "to": "master"}),
        (f"{base}/compare", {"from": "master", "to": option}),
        (f"{base}/archive", {"sha": option}),
    ]


def test_option_in_ref_sha_and_path_parameters(api, rt, alice, hosted):
    project, bare, victim, created, hooks = hosted
    state = Unchanged(rt, bare, (victim, created, hooks))
    for path in (victim, created):
        for url, params in attacks(project, f"--output={path}"):
            response = api.as_(alice).get(url, params=params)
            assert response.status_code == 404, (url, params, response.text)
    state.check()
    assert victim.read_bytes() == b"precious\n" and not created.exists()


def test_branch_named_like_an_option(api, rt, alice, hosted):
    """A branch named `--output=...` (pushed before names were checked) is listed, but naming it
    as a ref reaches no git command."""
    project, bare, victim, created, hooks = hosted
    name = f"--output={victim}"
    subprocess.run(["git", "--git-dir", str(bare), "update-ref", f"refs/heads/{name}", "master"], check=True)
    state = Unchanged(rt, bare, (victim, created, hooks))
    listed = api.as_(alice).get(f"/projects/{project.id}/repository/branches").json()
    assert name in [branch["name"] for branch in listed]
    for url, params in attacks(project, name):
        assert api.as_(alice).get(url, params=params).status_code == 404, (url, params)
    state.check()
    assert victim.read_bytes() == b"precious\n"


def test_revisions_beyond_names_are_not_found(api, alice, hosted):
    """`@{...}`, `:path` and ranges are git syntax the API does not offer."""
    project = hosted[0]
    url = f"/projects/{project.id}/repository/commits"
    assert api.as_(alice).get(url, params={"ref_name": "master~0"}).status_code == 200
    for ref in ("master@{0}", "master:README.md", "master..master", ":/first", "HEAD\x00"):
        assert api.as_(alice).get(url, params={"ref_name": ref}).status_code == 404, ref
    blob = f"/projects/{project.id}/repository/raw_blobs/master:README.md"
    assert api.as_(alice).get(blob).status_code == 404


def test_paths_with_nul_or_control_characters_are_not_found(api, alice, hosted):
    project = hosted[0]
    base = f"/projects/{project.id}/repository"
    for path in ("READ\x00ME.md", "README.md\x00", "\x00", "src/\x01"):
        assert api.as_(alice).get(f"{base}/tree", params={"path": path}).status_code == 404, path
        assert api.as_(alice).get(f"{base}/files", params={"file_path": path, "ref": "master"}).status_code == 404, path
        assert api.as_(alice).get(f"{base}/blobs/master", params={"filepath": path}).status_code == 404, path
