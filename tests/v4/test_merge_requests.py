"""Merge requests in v4: the entity, create, get, list with filters, update, close and reopen,
delete; through python-gitlab 8 and raw requests (merging, rebasing and the request's code:
test_merge_requests_merge.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.db.models import MergeRequest, Note

from ..support import QueryCounter, WorkingCopy, make_team

LIST_FIELDS = {
    "id", "iid", "project_id", "title", "description", "state", "created_at", "updated_at", "merged_by",
    "merge_user", "merged_at", "closed_by", "closed_at", "target_branch", "source_branch", "user_notes_count",
    "upvotes", "downvotes", "author", "assignee", "assignees", "reviewers", "source_project_id",
    "target_project_id", "labels", "draft", "work_in_progress", "milestone", "merge_when_pipeline_succeeds",
    "merge_status", "detailed_merge_status", "sha", "merge_commit_sha", "squash_commit_sha", "discussion_locked",
    "should_remove_source_branch", "force_remove_source_branch", "prepared_at", "reference", "references",
    "web_url", "time_stats", "squash", "squash_on_merge", "task_completion_status", "has_conflicts",
    "blocking_discussions_resolved",
}  # fmt: skip
SINGLE_FIELDS = LIST_FIELDS | {
    "subscribed", "changes_count", "latest_build_started_at", "latest_build_finished_at",
    "first_deployed_to_production_at", "pipeline", "head_pipeline", "diff_refs", "merge_error", "user",
    "first_contribution",
}  # fmt: skip


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    """A private project with master (1 commit), feature (1 more, a.txt), elsewhere (a conflicting
    a.txt) and other (master's commit); one user per role."""
    made = make_team(users, projects, admin)
    work = WorkingCopy(rt, made.project, tmp_path / "work")
    master_sha = work.commit("first")
    work.git("checkout", "-q", "-b", "elsewhere")
    work.commit("elsewhere", {"a.txt": "elsewhere\n"})
    work.git("checkout", "-q", "-b", "feature", "master")
    feature_sha = work.commit("feature work", {"a.txt": "a\n"})
    work.push("master", "feature", "elsewhere", "master:other")
    return SimpleNamespace(project=made.project, user=made.user, work=work, master_sha=master_sha, feature_sha=feature_sha)


def _create(api4, who, project, **fields):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a", **fields}
    return api4.as_(who).post(f"/projects/{project.id}/merge_requests", json=body)


def test_create_and_get_through_the_client(gl, team):
    project = gl(team.user("developer")).projects.get(team.project.id, lazy=True)
    mr = project.mergerequests.create(
        {"source_branch": "feature", "target_branch": "master", "title": "Add a", "description": "why",
         "labels": "b,a", "assignee_id": team.user("master").id}
    )  # fmt: skip
    assert (mr.iid, mr.state, mr.merge_status, mr.detailed_merge_status) == (1, "opened", "can_be_merged", "mergeable")
    assert mr.sha == team.feature_sha and mr.labels == ["a", "b"] and mr.draft is False
    assert mr.author["username"] == "developer" and set(mr.author) == {"id", "username", "name", "state", "locked",
                                                                     "avatar_url", "web_url"}  # fmt: skip
    assert mr.assignee["id"] == team.user("master").id and [each["id"] for each in mr.assignees] == [mr.assignee["id"]]
    assert mr.references == {"short": "!1", "relative": "!1", "full": f"{team.project.path_with_namespace}!1"}
    assert mr.web_url.endswith(f"/{team.project.path_with_namespace}/merge_requests/1")
    got = gl(team.user("guest")).projects.get(team.project.id, lazy=True).mergerequests.get(1)
    assert set(got.attributes) == SINGLE_FIELDS | {"project_id"}
    assert got.id == mr.id and got.user == {"can_merge": False}
    assert got.diff_refs == {"base_sha": team.master_sha, "head_sha": team.feature_sha, "start_sha": team.master_sha}
    assert gl(team.user("master")).projects.get(team.project.id, lazy=True).mergerequests.get(1).user == {"can_merge": True}


def test_shapes_and_types(api4, team):
    created = _create(api4, team.user("developer"), team.project)
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == SINGLE_FIELDS
    assert body["created_at"].endswith("Z") and isinstance(body["user_notes_count"], int)
    assert body["time_stats"]["total_time_spent"] == 0 and body["milestone"] is None and body["reviewers"] == []
    assert body["merged_at"] is None and body["closed_at"] is None and body["merge_commit_sha"] is None
    listed = api4.as_(team.user("reporter")).get(f"/projects/{team.project.id}/merge_requests")
    assert listed.status_code == 200 and set(listed.json()[0]) == LIST_FIELDS
    simple = api4.as_(team.user("reporter")).get(f"/projects/{team.project.id}/merge_requests", params={"view": "simple"})
    assert set(simple.json()[0]) == {"id", "iid", "project_id", "title", "description", "state", "created_at",
                                     "updated_at", "web_url"}  # fmt: skip


def test_v3_answers_are_unchanged(api, api4, team):
    v4 = _create(api4, team.user("developer"), team.project).json()
    v3 = api.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_requests/{v4['id']}").json()
    assert "detailed_merge_status" not in v3 and v3["merge_when_build_succeeds"] is False and v3["iid"] == 1


def test_close_reopen_and_states(gl, api4, api, team):
    project = gl(team.user("developer")).projects.get(team.project.id, lazy=True)
    mr = project.mergerequests.create({"source_branch": "feature", "target_branch": "master", "title": "Add a"})
    mr.state_event = "close"
    mr.save()
    assert mr.state == "closed" and mr.detailed_merge_status == "not_open" and mr.closed_at is not None
    mr.state_event = "reopen"
    mr.save()
    assert mr.state == "opened" and mr.closed_at is None  # v3 says "reopened"
    assert api.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_requests/{mr.id}").json()["state"] == "reopened"
    assert [each.iid for each in project.mergerequests.list(state="opened", iterator=True)] == [1]
    bad = api4.as_(team.user("developer")).put(f"/projects/{team.project.id}/merge_requests/1", json={"state_event": "merge"})
    assert bad.status_code == 400


def test_update_fields_labels_and_assignees(api4, team):
    dev, master = team.user("developer"), team.user("master")
    _create(api4, dev, team.project, labels="a,b")
    url = f"/projects/{team.project.id}/merge_requests/1"
    body = api4.as_(master).put(url, json={"title": "Draft: Add a", "add_labels": "c", "remove_labels": "a",
                                           "assignee_ids": [dev.id], "target_branch": "other"}).json()  # fmt: skip
    assert (body["title"], body["labels"], body["assignee"]["id"], body["target_branch"]) == ("Draft: Add a", ["b", "c"], dev.id, "other")
    assert body["draft"] is body["work_in_progress"] is True and body["detailed_merge_status"] == "draft_status"
    body = api4.as_(master).put(url, json={"assignee_ids": [], "remove_source_branch": True}).json()
    assert body["assignee"] is None and body["assignees"] == [] and body["force_remove_source_branch"] is True
    assert api4.as_(master).put(url, json={"source_branch": "x"}).status_code == 400
    assert api4.as_(master).put(url, json={"target_branch": "nope"}).status_code == 400


def test_create_refusals(api4, team):
    dev = team.user("developer")
    assert _create(api4, dev, team.project, target_branch="feature").status_code == 422
    assert _create(api4, dev, team.project, source_branch="gone").status_code == 422
    assert _create(api4, dev, team.project).status_code == 201
    assert _create(api4, dev, team.project).status_code == 409  # the same branches again
    missing = api4.as_(dev).post(f"/projects/{team.project.id}/merge_requests", json={"source_branch": "feature"})
    assert missing.status_code == 400 and "missing" in missing.json()["error"]


@pytest.mark.parametrize(
    ("role", "read", "create", "update", "delete"),
    [
        ("outsider", 404, 404, 404, 404), ("guest", 200, 403, 403, 403), ("reporter", 200, 403, 403, 403),
        ("developer", 200, 201, 200, 403), ("master", 200, 201, 200, 403), ("owner", 200, 201, 200, 204),
        ("admin", 200, 201, 200, 204),
    ],
)  # fmt: skip
def test_permissions_of_a_private_project(api4, team, role, read, create, update, delete):
    who, base = team.user(role), f"/projects/{team.project.id}/merge_requests"
    _create(api4, team.user("owner"), team.project, source_branch="elsewhere")
    assert api4.as_(who).get(base).status_code == read
    assert api4.as_(who).get(base + "/1").status_code == read
    assert _create(api4, who, team.project).status_code == create
    assert api4.as_(who).put(base + "/1", json={"title": "t"}).status_code == update
    assert api4.as_(who).delete(base + "/1").status_code == delete


def test_public_project_reads_and_anonymous(api4, users, projects, admin, rt, tmp_path):
    team = make_team(users, projects, admin, visibility=20, prefix="pub")
    work = WorkingCopy(rt, team.project, tmp_path / "w")
    work.commit("first")
    work.git("checkout", "-q", "-b", "feature")
    work.commit("f")
    work.push("master", "feature")
    base = f"/projects/{team.project.id}/merge_requests"
    assert _create(api4, team.user("developer"), team.project).status_code == 201
    assert api4.as_(team.user("outsider")).get(base + "/1").status_code == 200
    assert _create(api4, team.user("outsider"), team.project).status_code == 403
    assert api4.as_(team.user("outsider")).put(base + "/1", json={"title": "x"}).status_code == 403


def test_delete_removes_the_request_and_its_notes(api4, rt, team):
    _create(api4, team.user("developer"), team.project)
    url = f"/projects/{team.project.id}/merge_requests/1"
    with rt.db.transaction() as session:
        mr_id = session.query(MergeRequest).one().id
        session.add(Note(project_id=team.project.id, merge_request_id=mr_id, author_id=team.user("developer").id, note="hi"))
    assert api4.as_(team.user("owner")).delete(url).status_code == 204
    assert api4.as_(team.user("owner")).get(url).status_code == 404
    with rt.db.transaction() as session:
        assert session.query(Note).count() == 0


@pytest.mark.parametrize("iid", ["0", "-1", "abc", "99999999999999999999", "1.0", "%2e%2e", "2"])
def test_hostile_iids_are_404(api4, team, iid):
    _create(api4, team.user("developer"), team.project)
    base = f"/projects/{team.project.id}/merge_requests/{iid}"
    for method, suffix in (("get", ""), ("put", ""), ("delete", ""), ("put", "/merge"), ("get", "/changes"),
                           ("get", "/commits"), ("get", "/participants"), ("put", "/rebase")):  # fmt: skip
        response = getattr(api4.as_(team.user("owner")), method)(base + suffix)
        assert response.status_code == 404, (method, suffix, response.text)
        assert response.json() == {"message": "404 Not found"}


def test_an_iid_names_a_request_of_this_project_only(api4, team, projects):
    _create(api4, team.user("developer"), team.project)
    other = projects.create(team.user("owner"), name="other")
    assert api4.as_(team.user("owner")).get(f"/projects/{other.id}/merge_requests/1").status_code == 404


def _seed(rt, project, author, assignee, count: int = 0):
    """Requests straight into the database (no git): (title, state, author, assignee, labels, source)."""
    rows = [
        ("Draft: one", "opened", author, assignee, ["a", "b"], "s1"), ("two fix", "reopened", assignee, None, [], "s2"),
        ("three", "closed", author, author, ["b"], "s3"), ("four", "merged", author, None, ["x \"q\""], "s4"),
        ("five", "locked", assignee, assignee, [], "s5"),
    ][: count or None]  # fmt: skip
    with rt.db.transaction() as session:
        for iid, (title, state, who, assigned, labels, source) in enumerate(rows, start=1):
            session.add(MergeRequest(iid=iid, target_project_id=project.id, source_project_id=project.id,
                                     source_branch=source, target_branch="master", title=title,
                                     description="fixes the bug" if iid == 3 else None, state=state,
                                     author_id=who.id, assignee_id=assigned.id if assigned else None, labels=labels,
                                     merge_status="can_be_merged"))  # fmt: skip


@pytest.mark.parametrize(
    ("params", "iids"),
    [
        ({}, [5, 4, 3, 2, 1]), ({"state": "opened"}, [2, 1]), ({"state": "closed"}, [3]), ({"state": "merged"}, [4]),
        ({"state": "locked"}, [5]), ({"state": "all", "sort": "asc"}, [1, 2, 3, 4, 5]),
        ({"order_by": "title", "sort": "asc"}, [1, 5, 4, 3, 2]), ({"labels": "b"}, [3, 1]), ({"labels": "a,b"}, [1]),
        ({"labels": "None"}, [5, 2]), ({"labels": "Any"}, [4, 3, 1]), ({"labels": 'x "q"'}, [4]), ({"labels": "%"}, []),
        ({"search": "FIX"}, [3, 2]), ({"search": "%"}, []), ({"source_branch": "s3"}, [3]), ({"target_branch": "nope"}, []),
        ({"iids[]": [1, 3, 99]}, [3, 1]), ({"wip": "yes"}, [1]), ({"wip": "no"}, [5, 4, 3, 2]),
        ({"assignee_id": "None"}, [4, 2]), ({"assignee_id": "Any"}, [5, 3, 1]),
    ],
)  # fmt: skip
def test_list_filters(api4, rt, team, params, iids):
    _seed(rt, team.project, team.user("developer"), team.user("master"))
    listed = api4.as_(team.user("guest")).get(f"/projects/{team.project.id}/merge_requests", params=params)
    assert listed.status_code == 200, listed.text
    assert [mr["iid"] for mr in listed.json()] == iids


def test_list_filters_by_people_and_scope(api4, rt, team):
    dev, master = team.user("developer"), team.user("master")
    _seed(rt, team.project, dev, master)
    base = f"/projects/{team.project.id}/merge_requests"

    def iids(who, **params):
        return [mr["iid"] for mr in api4.as_(who).get(base, params=params).json()]

    assert iids(dev, author_id=dev.id) == [4, 3, 1]
    assert iids(dev, author_username="MASTER") == [5, 2]
    assert iids(dev, assignee_id=master.id) == [5, 1]
    assert iids(dev, scope="created_by_me") == [4, 3, 1] and iids(master, scope="assigned_to_me") == [5, 1]
    assert iids(dev, scope="all") == [5, 4, 3, 2, 1]
    assert api4.as_(dev).get(base, params={"assignee_id": "x"}).status_code == 400
    assert api4.as_(dev).get(base, params={"created_after": "yesterday"}).status_code == 400
    assert iids(dev, created_after="2000-01-01T00:00:00Z") == [5, 4, 3, 2, 1]
    assert iids(dev, created_before="2000-01-01") == [] and iids(dev, updated_after="2999-01-01T00:00:00+02:00") == []
    assert api4.as_(dev).get(base, params={"state": "reopened"}).status_code == 400


def test_list_pages_keep_filters_and_cost_fixed_queries(api4, rt, team):
    _seed(rt, team.project, team.user("developer"), team.user("master"))
    base = f"/projects/{team.project.id}/merge_requests"
    first = api4.as_(team.user("developer")).get(base, params={"per_page": 2, "state": "all", "search": "e"})
    assert [mr["iid"] for mr in first.json()] == [5, 3] and first.headers["x-total"] == "3"
    assert "search=e" in first.headers["link"] and "state=all" in first.headers["link"]
    counts = []
    for per_page in (1, 5):
        with QueryCounter(rt) as counter:
            assert api4.as_(team.user("developer")).get(base, params={"per_page": per_page}).status_code == 200
        counts.append(counter.count)
    assert counts[0] == counts[1]


def test_global_and_group_lists(api4, gl, rt, users, projects, team):
    dev, master = team.user("developer"), team.user("master")
    _seed(rt, team.project, dev, master)
    group = projects.group(master, "grp")
    in_group = projects.create(master, group=group, name="ingroup")
    _seed(rt, in_group, master, dev, count=1)
    stranger = users.create("stranger")
    assert [mr["iid"] for mr in api4.as_(dev).get("/merge_requests").json()] == [4, 3, 1]  # created by me
    everything = api4.as_(dev).get("/merge_requests", params={"scope": "all"}).json()
    assert {(mr["project_id"], mr["iid"]) for mr in everything} == {(team.project.id, iid) for iid in range(1, 6)}
    assert api4.as_(stranger).get("/merge_requests", params={"scope": "all"}).json() == []
    mine = gl(master).mergerequests.list(scope="all", state="opened", get_all=True)
    assert {(mr.project_id, mr.iid) for mr in mine} == {(team.project.id, 1), (team.project.id, 2), (in_group.id, 1)}
    grouped = api4.as_(master).get(f"/groups/{group.id}/merge_requests").json()
    assert [(mr["project_id"], mr["iid"]) for mr in grouped] == [(in_group.id, 1)]
    assert api4.as_(stranger).get(f"/groups/{group.id}/merge_requests").status_code == 404


@pytest.mark.parametrize(
    ("params", "status"),
    [({"iids[]": ["99999999999999999999"]}, 400), ({"iids[]": ["x"]}, 400), ({"labels": ",".join(map(str, range(65)))}, 400),
     ({"labels": ",".join(map(str, range(64)))}, 200), ({"search": "'; drop table merge_requests; --"}, 200),
     ({"order_by": "id; drop"}, 400), ({"author_id": "1e9"}, 400), ({"per_page": "100000", "page": "99999999999"}, 200),
     ({"source_branch": "--upload-pack=x"}, 200), ({"created_after": "2019-13-45"}, 400)],
)  # fmt: skip
def test_hostile_list_parameters(api4, rt, team, params, status):
    _seed(rt, team.project, team.user("developer"), team.user("master"), count=2)
    listed = api4.as_(team.user("developer")).get(f"/projects/{team.project.id}/merge_requests", params=params)
    assert listed.status_code == status, listed.text
    if status == 200:
        assert listed.json() == []


def test_the_global_list_needs_a_caller(api4, team):
    assert api4.anonymous.get("/merge_requests").status_code == 401
    # Anonymous callers read public projects' requests only (tests/v4/test_anonymous.py); this one is private.
    assert api4.anonymous.get(f"/projects/{team.project.id}/merge_requests").status_code == 404
