"""Who sees which page: the role x visibility matrix, written from the reference (GitLab 8.6's
abilities), not from the policy code. Private projects are 404 to everyone who may not read them;
a readable project without the ability is 403."""

from __future__ import annotations

import re

import pytest

from codeyard.db.models import User
from codeyard.git.refs import ZERO_SHA as ZERO
from tests.support import ROLES, QueryCounter, WorkingCopy, make_team, record_push

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20

# Who may read the project at each visibility.
READERS = {
    PRIVATE: {"guest", "reporter", "developer", "master", "owner", "admin"},
    INTERNAL: {"outsider", "guest", "reporter", "developer", "master", "owner", "admin"},
    PUBLIC: set(ROLES),
}
# Who may see the code (download_code): reporters and up; anyone who may read a public or internal
# project (internal and public projects grant it to every reader, guests included).
CODE = {
    PRIVATE: {"reporter", "developer", "master", "owner", "admin"},
    INTERNAL: READERS[INTERNAL],
    PUBLIC: READERS[PUBLIC],
}
SETTINGS = {"master", "owner", "admin"}


def expected(role: str, visibility: int, allowed: set[str]) -> int:
    if role not in READERS[visibility]:
        return 404
    return 200 if role in allowed else 403


@pytest.fixture
def team_repo(users, projects, admin, rt, tmp_path):
    def make(visibility: int):
        team = make_team(users, projects, admin, visibility, prefix=f"v{visibility}")
        copy = WorkingCopy(rt, team.project, tmp_path / f"wc{visibility}")
        copy.commit("first", {"README.md": "# Title\n", "src/app.py": "print(1)\n"})
        copy.push()
        return team

    return make


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_role_by_visibility_matrix(team_repo, browser_for, visibility):
    team = team_repo(visibility)
    base = "/" + team.project.path_with_namespace
    pages = {
        base: READERS[visibility],
        base + "/tree/master/src": CODE[visibility],
        base + "/-/blob/master/src/app.py": CODE[visibility],
        base + "/raw/master/src/app.py": CODE[visibility],
        base + "/commits/master": CODE[visibility],
        base + "/branches": CODE[visibility],
        base + "/merge_requests": READERS[visibility],
        base + "/project_members": SETTINGS,
        base + "/hooks": SETTINGS,
        base + "/protected_branches": SETTINGS,
    }
    for role in ROLES:
        client = browser_for(team.user(role))
        for path, allowed in pages.items():
            status = client.get(path).status_code
            assert status == expected(role, visibility, allowed), (role, path, status)


def test_project_page_shows_no_code_to_a_guest(team_repo, browser_for):
    team = team_repo(PRIVATE)
    page = browser_for(team.user("guest")).get("/" + team.project.path_with_namespace)
    assert page.status_code == 200
    assert "README.md" not in page.text and ".git" not in page.text
    assert "/tree/" not in page.text


def test_settings_tabs_only_for_those_who_may_administer(team_repo, browser_for):
    team = team_repo(PUBLIC)
    base = "/" + team.project.path_with_namespace
    for role in ROLES:
        text = browser_for(team.user(role)).get(base).text
        assert (f'href="{base}/hooks"' in text) == (role in SETTINGS), role


def test_anonymous_sees_only_public_projects_on_the_start_page(browser_for, users, projects):
    alice = users.create("alice")
    projects.create(alice, name="open-one", visibility=PUBLIC)
    projects.create(alice, name="inside-one", visibility=INTERNAL)
    projects.create(alice, name="secret-one", visibility=PRIVATE)
    text = browser_for(None).get("/").text
    assert "open-one" in text and "inside-one" not in text and "secret-one" not in text
    profile = browser_for(None).get("/u/alice").text
    assert "open-one" in profile and "inside-one" not in profile and "secret-one" not in profile
    outsider = browser_for(users.create("bob")).get("/u/alice").text
    assert "open-one" in outsider and "inside-one" in outsider and "secret-one" not in outsider


def test_start_page_of_a_member_lists_their_projects_and_activity(browser_for, users, projects, api):
    alice = users.create("alice")
    mine = projects.create(alice, name="mine")
    projects.create(users.create("bob"), name="not-mine", visibility=PUBLIC)
    api.as_(alice).post(f"/projects/{mine.id}/hooks", json={"url": "https://hooks.example/x"})
    text = browser_for(alice).get("/").text
    assert "mine" in text and "not-mine" not in text
    assert "created" in text  # the project's creation event


def _events(page: str) -> list[str]:
    """The dashboard's activity lines, tags and times dropped, spaces folded."""
    items = re.findall(r'<li class="event">(.*?)</li>', page, re.S)
    lines = [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in items]
    return [re.sub(r" \d{4}-\d\d-\d\d \d\d:\d\d$", "", line) for line in lines]


def test_push_events_on_the_start_page_name_their_branch_or_tag(browser_for, rt, users, projects, tmp_path):
    """As GitLab 8.6's events/_push: `pushed to branch master at …`, the ref linked to its commits
    (not once it is deleted)."""
    alice = users.create("alice", name="Alice")
    project = projects.create(alice, name="hello")
    work = WorkingCopy(rt, project, tmp_path / "work")
    first = work.commit("one", {"a.txt": "1\n"})
    second = work.commit("two", {"a.txt": "2\n"})
    work.push("master")
    work.git("tag", "v1.0", second)
    work.push("master:feature/x", "v1.0")
    record_push(rt, project, alice, ("refs/heads/master", ZERO, first), ("refs/heads/master", first, second),
              ("refs/heads/feature/x", ZERO, second), ("refs/tags/v1.0", ZERO, second),
              ("refs/heads/feature/x", second, ZERO))  # fmt: skip
    page = browser_for(alice).get("/").text
    at = f"at {alice.username} / hello"
    assert _events(page)[:5] == [
        f"Alice deleted branch feature/x {at}",
        f"Alice pushed new tag v1.0 {at}",
        f"Alice pushed new branch feature/x {at}",
        f"Alice pushed to branch master {at}",
        f"Alice pushed new branch master {at}",
    ], page
    base = f"/{project.path_with_namespace}/commits"
    assert page.count(f'href="{base}/master"') == 2 and page.count(f'href="{base}/v1.0"') == 1
    assert page.count(f'href="{base}/feature/x"') == 1  # the new branch's line; its deletion is not a link


def test_groups_and_users_pages(browser_for, users, projects, rt):
    alice = users.create("alice")
    open_group = projects.group(alice, "opengroup", visibility=PUBLIC)
    closed = projects.group(alice, "closedgroup", visibility=PRIVATE)
    projects.create(alice, group=open_group, name="shown", visibility=PUBLIC)
    projects.create(alice, group=open_group, name="hidden", visibility=PRIVATE)
    anonymous = browser_for(None)
    page = anonymous.get("/groups/opengroup")
    assert page.status_code == 200 and "shown" in page.text and "hidden" not in page.text
    assert anonymous.get("/groups/closedgroup").status_code == 404
    assert browser_for(alice).get("/groups/closedgroup").status_code == 200
    assert anonymous.get("/u/nobody").status_code == 404
    assert closed.path == "closedgroup"
    with rt.db.session() as session:  # the page's row has the API's text, the model a datetime
        joined = session.get(User, alice.id).created_at.strftime("%Y-%m-%d %H:%M")
    assert f"Member since {joined}" in anonymous.get("/u/alice").text


def test_user_and_group_pages_list_what_the_viewer_may_read(browser_for, users, projects, admin):
    alice = users.create("alice")
    member, stranger, external = users.create("member"), users.create("stranger"), users.create("ext", external=True)
    group = projects.group(alice, "team", visibility=PUBLIC)
    for owner in ({}, {"group": group}):
        for level, label in ((PRIVATE, "private"), (INTERNAL, "internal"), (PUBLIC, "public")):
            projects.create(alice, name=f"{label}-{'g' if owner else 'u'}", visibility=level, **owner)
    secret = projects.create(alice, name="shared-u", visibility=PRIVATE)
    projects.add_member(secret, member, 30)  # developer

    def shown(viewer, path: str) -> set[str]:
        text = browser_for(viewer).get(path).text
        return {name for name in ("private", "internal", "public", "shared") if f"{name}-{path[1]}" in text}

    assert shown(None, "/u/alice") == shown(None, "/groups/team") == {"public"}
    assert shown(stranger, "/u/alice") == {"internal", "public"}
    assert shown(external, "/u/alice") == shown(external, "/groups/team") == {"public"}
    assert shown(member, "/u/alice") == {"internal", "public", "shared"}
    assert shown(admin, "/u/alice") == shown(alice, "/u/alice") == {"private", "internal", "public", "shared"}
    assert shown(admin, "/groups/team") == {"private", "internal", "public"}


def test_list_pages_use_a_fixed_number_of_queries(browser_for, users, projects, rt, api):
    alice = users.create("alice")
    group = projects.group(alice, "team", visibility=PUBLIC)
    client, anonymous = browser_for(alice), browser_for(None)

    def count(client, path: str) -> tuple[int, int]:
        """(statements through a session, fast-path reads) of one GET."""
        with QueryCounter(rt) as counter:
            assert client.get(path).status_code == 200
        return counter.count, len(counter.fast_reads)

    def counts():
        return (count(client, "/"), count(anonymous, "/"), count(client, "/u/alice"), count(client, "/groups/team"))

    first = projects.create(alice, name="p0", visibility=PUBLIC)
    api.as_(alice).post(f"/projects/{first.id}/hooks", json={"url": "https://hooks.example/x"})
    few = counts()
    # Signed in: the session, the projects, the events; anonymous: the projects; no session opened.
    assert few[:2] == ((0, 3), (0, 1))
    for index in range(1, 8):
        projects.create(alice, name=f"p{index}", visibility=PUBLIC)
        projects.create(alice, group=group, name=f"g{index}", visibility=PUBLIC)
    assert counts() == few


def test_a_project_page_is_two_statements_whatever_the_caller(browser_for, users, projects, rt):
    alice, bob = users.create("alice"), users.create("bob")
    group = projects.group(alice, "team", visibility=PUBLIC)
    projects.create(alice, group=group, name="shown", visibility=PUBLIC)
    for client, expected in ((browser_for(alice), 2), (browser_for(bob), 2), (browser_for(None), 1)):
        with QueryCounter(rt) as counter:
            assert client.get("/team/shown").status_code == 200
        # The caller's session, then the project with its namespace and the caller's memberships.
        assert (counter.count, len(counter.fast_reads)) == (0, expected)


def test_unknown_pages_and_api_paths(web):
    assert web.get("/no/such").status_code == 404
    assert web.get("/no/such/tree/master").status_code == 404
    api_miss = web.get("/api/v3/no/such")
    assert api_miss.status_code == 404 and api_miss.headers["content-type"].startswith("application/json")
    # A path the API or git answers stays theirs, whatever the verb.
    assert web.get("/oauth/token").status_code == 405
    assert web.get("/-/health").json() == {"status": "ok"}
