"""What the v4 notes, discussions and award emoji tests share: a private project with one user per
role, a `feature` branch a merge request (opened through v3, named by iid on v4) compares with
master, and a hook listening to notes."""

from __future__ import annotations

import json
from types import SimpleNamespace

from codeyard.db.models import Job, ProjectHook

from ..support import QueryCounter, WorkingCopy, make_team

OLD_A = "one\ntwo\nthree\n"
NEW_A = "one\nTWO\nthree\nfour\n"


def open_team(users, projects, admin, rt, tmp_path, visibility: int = 0, prefix: str = "") -> SimpleNamespace:
    """A project (master: a.txt; feature: a.txt changed, b.txt added), its team, an open request
    `mr` (v3's answer: `id`, `iid`) by the developer, and `path`: the request's v4 path."""
    team = make_team(users, projects, admin, visibility=visibility, prefix=prefix)
    work = WorkingCopy(rt, team.project, tmp_path / f"work{prefix}")
    work.commit("first", {"a.txt": OLD_A})
    work.git("checkout", "-q", "-b", "feature")
    head = work.commit("feature work", {"a.txt": NEW_A, "b.txt": "b\n"})
    work.push("master", "feature")
    with rt.db.transaction() as session:
        session.add(ProjectHook(project_id=team.project.id, url="http://example.com/hook", push_events=False,
                                note_events=True))  # fmt: skip
    return SimpleNamespace(project=team.project, user=team.user, work=work, head=head)


def open_request(api, team, source: str = "feature", title: str = "Add b") -> dict:
    """A merge request opened through v3 by the developer: `id` and `iid`."""
    body = {"source_branch": source, "target_branch": "master", "title": title}
    created = api.as_(team.user("developer")).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 200, created.text
    got = api.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_requests/{created.json()['id']}")
    return {"id": got.json()["id"], "iid": got.json()["iid"]}


def second_request(api, team) -> dict:
    """Another request of the project (`second` adds c.txt): `id` and `iid`."""
    team.work.git("checkout", "-q", "-b", "second", "master")
    team.work.commit("second work", {"c.txt": "c\n"})
    team.work.push("second")
    return open_request(api, team, "second", "Add c")


def v4_path(team, mr: dict, tail: str = "") -> str:
    return f"/projects/{team.project.id}/merge_requests/{mr['iid']}{tail}"


def note_hooks(rt) -> list[dict]:
    """The bodies of the Note Hooks enqueued so far, oldest first."""
    with rt.db.session() as session:
        jobs = session.query(Job).order_by(Job.id).all()
        return [json.loads(job.payload["body"]) for job in jobs if job.payload.get("event") == "Note Hook"]


def statements_per_page(rt, client, path: str, sizes: tuple[int, int]) -> list[int]:
    """The statements a GET of PATH ran for a page of each of SIZES items (each page full)."""
    counts = []
    for per_page in sizes:
        with QueryCounter(rt) as counter:
            response = client.get(path, params={"per_page": per_page})
        assert len(response.json()) == per_page
        counts.append(counter.count)
    return counts
