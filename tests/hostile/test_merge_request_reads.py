"""A merge request's code (its commits and changes) is read under the rule that guards every other
repository read, `download_code`: a guest of a private project reads the request (title, comments)
but not its code, as blobs, trees, compare and the web page already refused. Both path forms."""

from __future__ import annotations

import pytest

from codeyard.git import storage
from codeyard.policies.projects import INTERNAL, PRIVATE, PUBLIC

from ..support import WorkingCopy, make_team
from .state import Unchanged

ROLES = ("anonymous", "outsider", "guest", "reporter", "developer")
# What each role gets from a repository read on a project of each visibility (the API needs a caller).
EXPECTED = {
    PRIVATE: {"anonymous": 401, "outsider": 404, "guest": 403, "reporter": 200, "developer": 200},
    INTERNAL: {"anonymous": 401, "outsider": 200, "guest": 200, "reporter": 200, "developer": 200},
    PUBLIC: {"anonymous": 401, "outsider": 200, "guest": 200, "reporter": 200, "developer": 200},
}
CODE_READS = ("commits", "changes")


@pytest.fixture(params=(PRIVATE, INTERNAL, PUBLIC), ids=("private", "internal", "public"))
def scene(request, users, projects, admin, rt, api, tmp_path):
    team = make_team(users, projects, admin, visibility=request.param)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first")
    work.git("checkout", "-q", "-b", "feature")
    work.commit("secret work", {"secret.txt": "the secret\n"})
    work.push("master", "feature")
    body = {"source_branch": "feature", "target_branch": "master", "title": "Feature"}
    mr = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body).json()
    return team, mr, request.param


def _client(api, team, role):
    return api.anonymous if role == "anonymous" else api.as_(team.user(role))


@pytest.mark.parametrize("role", ROLES)
def test_code_of_a_request_is_read_with_download_code(api, rt, scene, role):
    team, mr, visibility = scene
    project = team.project
    client = _client(api, team, role)
    bare = storage.repository_path(rt.config.repositories_dir, project.id)
    state = Unchanged(rt, bare)
    tree = client.get(f"/projects/{project.id}/repository/tree").status_code
    assert tree == EXPECTED[visibility][role]
    for form in ("merge_requests", "merge_request"):
        for suffix in CODE_READS:
            got = client.get(f"/projects/{project.id}/{form}/{mr['id']}/{suffix}")
            assert got.status_code == tree, (form, suffix, got.status_code, got.text[:200])
            if got.status_code != 200:
                assert "secret" not in got.text
    state.check()


def test_a_guest_of_a_private_project_still_reads_the_request(api, scene):
    team, mr, _visibility = scene
    guest = api.as_(team.user("guest"))
    for form in ("merge_requests", "merge_request"):
        assert guest.get(f"/projects/{team.project.id}/{form}/{mr['id']}").status_code == 200
        assert guest.get(f"/projects/{team.project.id}/{form}/{mr['id']}/notes").status_code == 200
