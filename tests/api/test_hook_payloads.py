"""The project hash of hook payloads (reference 7.3) names the namespace by its name, as GitLab 8.6's
`Project#hook_attrs` did (`namespace.name`): a personal namespace's name is its owner's username,
as `/namespaces` shows it, never the owner's display name."""

from __future__ import annotations

import json

import pytest

from codeyard.db.models import Job, Project, ProjectHook, User
from codeyard.services import pushes

from ..support import WorkingCopy

ZERO = "0" * 40


def _bodies(rt) -> dict[str, list[dict]]:
    """The hook bodies queued so far, by event name."""
    found: dict[str, list[dict]] = {}
    with rt.db.session() as session:
        for job in session.query(Job).order_by(Job.id):
            if "event" in job.payload:
                found.setdefault(job.payload["event"], []).append(json.loads(job.payload["body"]))
    return found


def _hook_everything(rt, project) -> None:
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=project.id, url="http://example.com/hook", push_events=True,
                                tag_push_events=True, merge_requests_events=True, note_events=True,
                                build_events=True))  # fmt: skip


def _post_push(rt, project, user, *updates) -> None:
    with rt.db.transaction() as session:
        pushes.post_push(session, rt, session.get(Project, project.id), session.get(User, user.id),
                         [pushes.RefUpdate(*update) for update in updates])  # fmt: skip


def _project_hashes(bodies: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Every project hash of every payload, by where it sits."""
    found: dict[str, list[dict]] = {}
    for push in bodies.get("Push Hook", []) + bodies.get("Tag Push Hook", []):
        found.setdefault(push["object_kind"], []).append(push["project"])
    for mr in bodies.get("Merge Request Hook", []):
        attributes = mr["object_attributes"]
        found.setdefault("merge_request", []).extend([mr["project"], attributes["source"], attributes["target"]])
    for note in bodies.get("Note Hook", []):
        kind = "merge_request_note" if "merge_request" in note else "commit_note"
        found.setdefault(kind, []).append(note["project"])
        if "merge_request" in note:
            found[kind].extend([note["merge_request"]["source"], note["merge_request"]["target"]])
    return found


@pytest.mark.parametrize("in_group", [False, True], ids=["personal", "group"])
def test_every_payload_names_the_namespace_as_namespaces_does(api, rt, users, projects, tmp_path, in_group):
    alice = users.create("alice")
    assert alice.name == "User alice"  # the display name, which the payloads must not carry
    group = projects.group(alice, "crew", name="The Crew") if in_group else None
    project = projects.create(alice, name="demo", group=group)
    _hook_everything(rt, project)
    work = WorkingCopy(rt, project, tmp_path / "work")
    sha = work.commit("first")
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature work")
    work.git("tag", "v1", sha)
    work.push("master", "feature", "v1")
    _post_push(rt, project, alice, ("refs/heads/master", ZERO, sha), ("refs/tags/v1", ZERO, sha))
    base = f"/projects/{project.id}"
    mr = api.as_(alice).post(f"{base}/merge_requests", json={"source_branch": "feature", "target_branch": "master", "title": "T"})
    assert mr.status_code == 200, mr.text
    assert api.as_(alice).post(f"{base}/merge_requests/{mr.json()['id']}/notes", json={"body": "hi"}).status_code == 201
    assert api.as_(alice).post(f"{base}/repository/commits/{sha}/comments", json={"note": "hi"}).status_code == 201

    listed = api.as_(alice).get("/namespaces").json()
    wanted = next(ns["name"] for ns in listed if ns["id"] == (group.id if group else project.namespace_id))
    assert wanted == ("The Crew" if in_group else "alice")
    found = _project_hashes(_bodies(rt))
    assert set(found) == {"push", "tag_push", "merge_request", "merge_request_note", "commit_note"}
    for kind, hashes in found.items():
        assert [h["namespace"] for h in hashes] == [wanted] * len(hashes), kind
        assert {h["path_with_namespace"] for h in hashes} == {project.path_with_namespace}, kind
