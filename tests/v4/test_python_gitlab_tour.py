"""A tour of the v4 surface through python-gitlab 8, replaying the calls of its own functional tests
(tests/functional/api/*.py) for what codeyard serves: each resource through its manager and objects
(`create`, `get`, `lazy=True`, `save()`, `delete()`, `list(get_all=True)`, `list(iterator=True)`)."""

from __future__ import annotations

import base64

import pytest


def _paged(manager, **filters) -> list:
    """Every page of MANAGER's list, walked two ways (get_all and iterator) which must agree."""
    everything = manager.list(get_all=True, per_page=2, **filters)
    assert [each.get_id() for each in manager.list(iterator=True, per_page=2, **filters)] == [
        each.get_id() for each in everything
    ]
    return everything


def test_instance_users_and_current_user(gl, gitlab, admin, alice):
    root = gl(admin)
    version, revision = root.version()
    assert version != "unknown" and revision != "unknown"
    settings = root.settings.get()
    settings.default_branch_protection = 1
    settings.save()
    assert root.settings.get().default_branch_protection == 1

    made = [root.users.create({"email": f"tour{n}@example.com", "username": f"tour{n}", "name": f"Tour {n}",
                               "password": "a-long-Passw0rd!"}) for n in range(3)]  # fmt: skip
    assert {user.id for user in made} <= {user.id for user in _paged(root.users)}
    assert root.users.list(username="tour1")[0].id == made[1].id
    user = root.users.get(made[0].id)
    user.bio = "touring"
    user.save()
    assert root.users.get(made[0].id).bio == "touring"
    user.block()
    assert root.users.get(made[0].id).state == "blocked"
    user.unblock()
    user.emails.create({"email": "other0@example.com"})
    assert "other0@example.com" in [each.email for each in user.emails.list()]
    root.users.get(made[2].id, lazy=True).delete()
    with pytest.raises(gitlab.GitlabGetError):
        root.users.get(made[2].id)

    me = gl(alice)
    me.auth()
    assert me.user.username == "alice"
    email = me.user.emails.create({"email": "alice2@example.com"})
    assert [each.email for each in me.user.emails.list()].count("alice2@example.com") == 1
    email.delete()
    token = root.users.get(alice.id).personal_access_tokens.create({"name": "tour", "scopes": ["api"]})
    assert token.token and gl(token.token).personal_access_tokens.get("self").name == "tour"
    assert token.id in [each.id for each in me.personal_access_tokens.list(get_all=True)]
    me.personal_access_tokens.get(token.id, lazy=True).delete()
    with pytest.raises(gitlab.GitlabAuthenticationError):
        gl(token.token).auth()
    assert [ns.path for ns in me.namespaces.list(search="alice")] == ["alice"]
    assert me.namespaces.get("alice").kind == "user"
    assert me.namespaces.exists("alice").exists is True and me.namespaces.exists("nobody-here").exists is False
    assert [each.username for each in me.users.list(search="tour")] == ["tour1", "tour0"]


def test_groups_members_and_projects(gl, gitlab, admin, alice, users):
    bob, carol = users.create("bob"), users.create("carol")
    me = gl(alice)
    group = me.groups.create({"name": "Tour Group", "path": "tour-group"})
    group.description = "a tour"
    group.save()
    assert me.groups.get("tour-group").description == "a tour"
    assert {each.path for each in _paged(me.groups)} == {"tour-group"}

    member = group.members.create({"user_id": bob.id, "access_level": gitlab.const.AccessLevel.DEVELOPER})
    member.access_level = gitlab.const.AccessLevel.MAINTAINER
    member.save()
    assert group.members.get(bob.id).access_level == 40
    assert {each.id for each in group.members_all.list(get_all=True)} >= {alice.id, bob.id}
    assert group.members_all.get(bob.id).access_level == 40
    group.members.get(bob.id, lazy=True).delete()
    assert bob.id not in [each.id for each in group.members.list(get_all=True)]

    project = me.projects.create({"name": "tour", "namespace_id": group.id, "initialize_with_readme": True})
    assert [each.id for each in group.projects.list()] == [project.id]
    assert [each.id for each in me.projects.list(owned=True, search="tou", iterator=True)] == [project.id]
    assert [each.id for each in me.users.get(alice.id).projects.list()] == []  # in the user's namespace only
    project.description = "touring"
    project.save()
    assert me.projects.get(project.path_with_namespace).description == "touring"
    project.members.create({"user_id": carol.id, "access_level": 30})
    assert {each.username for each in project.members.list()} == {"carol"}
    project_member = project.members.get(carol.id)
    project_member.access_level = 20
    project_member.save()
    assert {each.id for each in project.members_all.list(get_all=True)} >= {alice.id, carol.id}
    project_member.delete()

    other = gl(bob).groups.create({"name": "Bobs", "path": "bobs"})
    gl(bob).groups.get(other.id).members.create({"user_id": alice.id, "access_level": 50})
    project.share(other.id, gitlab.const.AccessLevel.DEVELOPER)
    assert [each["group_id"] for each in me.projects.get(project.id).shared_with_groups] == [other.id]
    project.unshare(other.id)
    project.transfer(other.id)
    assert me.projects.get(project.id).namespace["path"] == "bobs"

    project.star()
    assert me.projects.get(project.id).star_count == 1
    project.unstar()
    project.archive()
    assert me.projects.get(project.id).archived is True
    project.unarchive()
    assert isinstance(project.languages(), dict)
    fork = gl(bob).projects.get(project.id).forks.create({"namespace_path": "bob"})
    assert fork.forked_from_project["id"] == project.id
    assert [each.id for each in gl(bob).projects.get(project.id).forks.list()] == [fork.id]
    gl(bob).projects.get(fork.id, lazy=True).delete()

    group = me.groups.get(group.id)
    group.delete()


@pytest.fixture
def tour_project(gl, alice):
    return gl(alice).projects.create({"name": "repo", "initialize_with_readme": True})


def test_repository(gl, gitlab, alice, users, tour_project):
    project = tour_project
    hook = project.hooks.create({"url": "http://hooks.example.com/x", "push_events": True})
    hook.merge_requests_events = True
    hook.save()
    assert project.hooks.get(hook.id).merge_requests_events is True
    hook.delete()
    assert project.hooks.list() == []

    for n in range(3):
        project.branches.create({"branch": f"b{n}", "ref": "main"})
    assert {"main", "b0", "b1", "b2"} <= {each.name for each in _paged(project.branches)}
    project.branches.get("b2", lazy=True).delete()
    project.protectedbranches.create({"name": "b*", "push_access_level": 40, "merge_access_level": 30})
    protected = project.protectedbranches.get("b*")
    assert protected.push_access_levels[0]["access_level"] == 40
    protected.allow_force_push = True
    protected.save()
    assert project.protectedbranches.get("b*").allow_force_push is True
    protected.delete()
    assert [each.name for each in project.protectedbranches.list()] == ["main"]

    project.files.create({"file_path": "dir/a.txt", "branch": "main", "content": "a\n", "commit_message": "add a"})
    assert project.files.head("dir/a.txt", ref="main")["X-Gitlab-File-Path"] == "dir/a.txt"
    readme = project.files.get(file_path="dir/a.txt", ref="main")
    assert readme.decode() == b"a\n"
    readme.content = "b\n"
    readme.save(branch="main", commit_message="b")
    assert project.files.raw(file_path="dir/a.txt", ref="main") == b"b\n"
    assert project.files.blame(file_path="dir/a.txt", ref="main")[0]["lines"] == ["b"]
    readme.delete(commit_message="drop", branch="main")
    project.files.create({"file_path": "dir/c.txt", "branch": "main", "content": base64.b64encode(b"c").decode(),
                          "encoding": "base64", "commit_message": "add c"})  # fmt: skip

    tree = project.repository_tree(path="dir", ref="main")
    assert [each["name"] for each in tree] == ["c.txt"]
    blob = project.repository_blob(tree[0]["id"])
    assert base64.b64decode(blob["content"]) == b"c"
    assert project.repository_raw_blob(tree[0]["id"]) == b"c"
    assert project.repository_archive(sha="main")[:2] == b"\x1f\x8b"
    assert project.repository_archive(sha="main", format="zip")[:2] == b"PK"
    compared = project.repository_compare("b0", "main")
    assert [each["title"] for each in compared["commits"]] == ["add a", "b", "drop", "add c"]
    assert [each["name"] for each in project.repository_contributors()] == [project.commits.list()[0].author_name]
    assert project.repository_merge_base(["b0", "main"])["id"] == project.branches.get("b0").commit["id"]

    commit = project.commits.create({"branch": "main", "commit_message": "actions", "actions": [
        {"action": "create", "file_path": "x.txt", "content": "x\n"},
        {"action": "update", "file_path": "dir/c.txt", "content": "d\n"},
    ]})  # fmt: skip
    assert commit.title == "actions"
    assert {each["new_path"] for each in commit.diff()} == {"x.txt", "dir/c.txt"}
    assert {"type": "branch", "name": "main"} in commit.refs()
    assert project.commits.get(commit.id).stats["additions"] == 2
    assert len(_paged(project.commits, ref_name="main")) == 6
    single = project.commits.create({"branch": "main", "commit_message": "only y", "actions": [
        {"action": "create", "file_path": "y.txt", "content": "y\n"}]})  # fmt: skip
    single.cherry_pick(branch="b0")
    assert project.branches.get("b0").commit["title"] == "only y"
    commit.revert(branch="main")
    comment = commit.comments.create({"note": "nice"})
    assert comment.note == "nice"
    assert [each.note for each in commit.comments.list()] == ["nice"]
    commit.statuses.create({"state": "success", "name": "ci"})
    assert [each.status for each in commit.statuses.list()] == ["success"]

    tag = project.tags.create({"tag_name": "v1", "ref": "main", "message": "one"})
    assert tag.name == "v1" and project.tags.get("v1").message == "one"
    assert [each.name for each in project.tags.list()] == ["v1"]
    tag.delete()


def test_merge_requests(gl, gitlab, api4, alice, users, tour_project):
    bob = users.create("bob")
    project = tour_project
    project.members.create({"user_id": bob.id, "access_level": 40})
    for n in range(3):
        project.branches.create({"branch": f"f{n}", "ref": "main"})
        project.files.create({"file_path": f"f{n}.txt", "branch": f"f{n}", "content": "f\n", "commit_message": f"f{n}"})
        project.mergerequests.create({"source_branch": f"f{n}", "target_branch": "main", "title": f"MR {n}",
                                      "assignee_id": bob.id, "labels": ["tour"]})  # fmt: skip
    assert [each.iid for each in _paged(project.mergerequests, state="opened")] == [3, 2, 1]
    assert len(project.mergerequests.list(labels=["tour"], assignee_id=bob.id, get_all=True)) == 3
    assert len(gl(alice).mergerequests.list(scope="created_by_me", get_all=True)) == 3
    mr = project.mergerequests.get(1)
    assert project.mergerequests.get("1").iid == 1 and project.mergerequests.get(1, lazy=True).iid == 1
    mr.description = "first"
    mr.labels = ["tour", "more"]
    mr.save()
    assert project.mergerequests.get(1).labels == ["more", "tour"]

    assert [each.title for each in mr.commits()] == ["f0"]
    assert [each["new_path"] for each in mr.changes()["changes"]] == ["f0.txt"]
    assert list(mr.pipelines.list()) == []
    assert {each["username"] for each in mr.participants()} >= {"alice"}
    note = mr.notes.create({"body": "a note"})
    note.body = "edited"
    note.save()
    assert [each.body for each in mr.notes.list(get_all=True) if not each.system] == ["edited"]
    discussion = mr.discussions.create({"body": "Discussion body"})
    reply = discussion.notes.create({"body": "first note"})
    again = discussion.notes.get(reply.id)
    again.body = "updated body"
    again.save()
    assert mr.discussions.get(discussion.id).attributes["notes"][-1]["body"] == "updated body"
    again.delete()
    emoji = mr.awardemojis.create({"name": "thumbsup"})
    assert [each.name for each in mr.awardemojis.list()] == ["thumbsup"]
    assert project.mergerequests.get(1).upvotes == 1
    emoji.delete()

    versions = mr.diffs.list()
    assert len(versions) == 1 and versions[0].head_commit_sha == mr.sha
    version = mr.diffs.get(versions[0].id)
    assert [each["new_path"] for each in version.diffs] == ["f0.txt"] and len(version.commits) == 1
    assert (version.base_commit_sha, version.real_size, version.merge_request_id) == (mr.diff_refs["base_sha"], "1", mr.id)
    for wrong in (mr.id + 1, "x", 0):
        assert api4.as_(alice).get(f"/projects/{project.id}/merge_requests/1/versions/{wrong}").status_code == 404
    assert project.mergerequests.get(1).merged_by is None

    assert mr.rebase()["rebase_in_progress"] is True
    mr = gl(bob).projects.get(project.id).mergerequests.get(1)
    mr.merge(should_remove_source_branch=True, merge_commit_message="merge f0")
    assert "f0" not in [each.name for each in project.branches.list(get_all=True)]
    merged = project.mergerequests.get(1)
    assert merged.state == "merged" and merged.merged_by["username"] == "bob"
    closing = project.mergerequests.get(2)
    closing.assignee_ids = []
    closing.add_labels = ["z"]
    closing.save()
    assert (closing.labels, closing.assignees) == (["tour", "z"], [])
    closing.state_event = "close"
    closing.save()
    closed = project.mergerequests.list(state="closed")[0]
    assert closed.closed_by["username"] == "alice"
    project.mergerequests.get(3, lazy=True).delete()
