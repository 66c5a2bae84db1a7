"""Merge request pages: the list by state, one request with its description, commits, diff and
comments, and the buttons: shown only to those allowed, doing what the API does."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from tests.support import ROLES, QueryCounter, WorkingCopy, make_team

PRIVATE = 0


@pytest.fixture
def team(users, projects, admin, rt, tmp_path):
    team = make_team(users, projects, admin, PRIVATE)
    work = WorkingCopy(rt, team.project, tmp_path / "work")
    work.commit("first", {"shared.txt": "one\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature work", {"a.txt": "a\n", "shared.txt": "one\ntwo\n"})
    work.push("master", "feature")
    return SimpleNamespace(project=team.project, user=team.user, work=work, url="/" + team.project.path_with_namespace)


def _open(api, team, who="developer", **fields):
    body = {"source_branch": "feature", "target_branch": "master", "title": "Add a", **fields}
    created = api.as_(team.user(who)).post(f"/projects/{team.project.id}/merge_requests", json=body)
    assert created.status_code == 200, created.text
    return _api_mr(api, team, created.json())  # the create response has no iid (reference DECISIONS row 9)


def _api_mr(api, team, mr):
    return api.as_(team.user("owner")).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}").json()


def test_request_page_shows_description_commits_diff_and_comments(api, team, browser_for):
    mr = _open(api, team, description="Please **review** <script>alert(1)</script>")
    api.as_(team.user("reporter")).post(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments",
                                        json={"note": "Looks *good*"})  # fmt: skip
    page = browser_for(team.user("reporter")).get(f"{team.url}/merge_requests/{mr['iid']}")
    assert page.status_code == 200
    assert "<strong>review</strong>" in page.text and "<script>alert(1)" not in page.text
    assert "feature work" in page.text and "a.txt" in page.text and '<span class="add">+two</span>' in page.text
    assert "<em>good</em>" in page.text
    assert "can be merged" in page.text


def test_comments_are_rendered_once_per_text(api, team, browser_for, monkeypatch):
    from codeyard.web import markup

    rendered = []
    real = markup.markdown
    monkeypatch.setattr(markup, "markdown", lambda text: rendered.append(text) or real(text))
    marker = uuid.uuid4().hex  # text no earlier test rendered
    mr = _open(api, team, description=f"About {marker}")
    api.as_(team.user("reporter")).post(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments",
                                        json={"note": f"Note *{marker}*"})  # fmt: skip
    client = browser_for(team.user("reporter"))
    for _ in range(3):
        assert f"<em>{marker}</em>" in client.get(f"{team.url}/merge_requests/{mr['iid']}").text
    assert sorted(rendered) == [f"About {marker}", f"Note *{marker}*"]


def test_buttons_follow_the_rules(api, team, browser_for):
    mr = _open(api, team)
    path = f"{team.url}/merge_requests/{mr['iid']}"
    for role in ROLES:
        response = browser_for(team.user(role)).get(path)
        if role in ("anonymous", "outsider"):
            assert response.status_code == 404, role
            continue
        text = response.text
        may_merge = role in ("developer", "master", "owner", "admin")
        assert ("Accept merge request" in text) == may_merge, role
        assert ("Merge when build succeeds" in text) == may_merge, role
        assert (f'action="{path}/close"' in text) == may_merge, role
        assert ('class="body actions"' in text) == may_merge, role  # no empty box under the status
        assert (f'action="{path}/notes"' in text) is True, role  # guests may comment


def test_comment_from_the_page(api, team, browser_for):
    mr = _open(api, team)
    client = browser_for(team.user("guest"))
    path = f"{team.url}/merge_requests/{mr['iid']}"
    response = client.post(path + "/notes", {"note": "First <b>comment</b>"}, token=client.form_token(path))
    assert response.status_code == 303 and response.headers["location"] == path
    notes = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments").json()
    assert [note["note"] for note in notes] == ["First <b>comment</b>"]
    assert notes[0]["author"]["username"] == team.user("guest").username
    assert "First <b>comment</b>" in client.get(path).text  # the allowlisted tag stays, as Markdown allows
    empty = client.post(path + "/notes", {"note": "   "}, token=client.form_token(path))
    assert empty.status_code == 400
    assert len(api.as_(team.user("owner")).get(f"/projects/{team.project.id}/merge_requests/{mr['id']}/comments").json()) == 1


def test_accept_from_the_page_merges(api, team, browser_for):
    mr = _open(api, team)
    client = browser_for(team.user("developer"))
    path = f"{team.url}/merge_requests/{mr['iid']}"
    response = client.post(path + "/accept", {"should_remove_source_branch": "1"}, token=client.form_token(path))
    assert response.status_code == 303, response.text
    merged = _api_mr(api, team, mr)
    assert merged["state"] == "merged"
    master = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/repository/commits?ref_name=master").json()
    assert master[0]["message"].startswith("Merge branch 'feature' into 'master'")
    assert master[0]["id"] == merged["merge_commit_sha"] if "merge_commit_sha" in merged else True
    assert team.work.git("ls-remote", "origin", "refs/heads/master").split()[0] == master[0]["id"]
    team.work.git("fetch", "-q", "origin", "master")
    assert len(team.work.git("rev-list", "--parents", "-n", "1", "FETCH_HEAD").split()) == 3  # two parents
    branches = api.as_(team.user("owner")).get(f"/projects/{team.project.id}/repository/branches").json()
    assert [branch["name"] for branch in branches] == ["master"]
    page = client.get(path).text
    assert "Merged" in page and "Accept merge request" not in page


def test_merged_and_closed_pages_keep_what_they_merged_or_showed(api, team, browser_for):
    """Removing the source branch on merge, or deleting it after a close, leaves the page's commits
    and changes as they were (issue 32); a guest of the private project still sees no code."""
    shown = ("Commits (1)", "feature work", "Changes (2 files)", '<span class="add">+two</span>')
    merged = _open(api, team)
    client = browser_for(team.user("developer"))
    path = f"{team.url}/merge_requests/{merged['iid']}"
    assert all(part in client.get(path).text for part in shown)
    response = client.post(path + "/accept", {"should_remove_source_branch": "1"}, token=client.form_token(path))
    assert response.status_code == 303 and _api_mr(api, team, merged)["state"] == "merged"
    page = client.get(path).text
    assert "Merged" in page and all(part in page for part in shown), page
    guest = browser_for(team.user("guest")).get(path)
    assert guest.status_code == 200 and "Commits (" not in guest.text and "feature work" not in guest.text

    team.work.git("fetch", "-q", "origin")
    team.work.git("checkout", "-q", "-b", "second", "origin/master")
    team.work.commit("second work", {"c.txt": "c\n"})
    team.work.push("second")
    closed = _open(api, team, source_branch="second", title="Second")
    path = f"{team.url}/merge_requests/{closed['iid']}"
    assert client.post(path + "/close", token=client.form_token(path)).status_code == 303
    removed = api.as_(team.user("master")).delete(f"/projects/{team.project.id}/repository/branches/second")
    assert removed.status_code == 200
    team.work.push("second:master")  # its commit reaches the target another way
    page = client.get(path).text
    assert "Closed." in page and "Commits (1)" in page and "second work" in page and "Changes (1 file)" in page


def test_accept_refused_to_a_reporter_changes_nothing(api, team, browser_for):
    mr = _open(api, team)
    client = browser_for(team.user("reporter"))
    path = f"{team.url}/merge_requests/{mr['iid']}"
    response = client.post(path + "/accept", {}, token=client.form_token(path))
    assert response.status_code == 401
    assert _api_mr(api, team, mr)["state"] == "opened"
    anonymous = browser_for(None)
    assert anonymous.post(path + "/accept", {}).status_code == 404  # anonymous: the private project is not there


def test_accept_with_a_stale_head_is_a_conflict(api, team, browser_for):
    mr = _open(api, team)
    client = browser_for(team.user("master"))
    path = f"{team.url}/merge_requests/{mr['iid']}"
    response = client.post(path + "/accept", {"sha": "0" * 40}, token=client.form_token(path))
    assert response.status_code == 409
    assert _api_mr(api, team, mr)["state"] == "opened"


def test_close_reopen_and_merge_when_build_succeeds(api, team, browser_for):
    mr = _open(api, team)
    client = browser_for(team.user("developer"))
    path = f"{team.url}/merge_requests/{mr['iid']}"
    assert client.post(path + "/close", token=client.form_token(path)).status_code == 303
    assert _api_mr(api, team, mr)["state"] == "closed"
    page = client.get(path).text
    assert "Accept merge request" not in page and f'action="{path}/reopen"' in page
    assert client.post(path + "/reopen", token=client.form_token(path)).status_code == 303
    assert _api_mr(api, team, mr)["state"] == "reopened"
    reporter = browser_for(team.user("reporter"))
    assert reporter.post(path + "/close", token=reporter.form_token(path)).status_code == 403
    assert _api_mr(api, team, mr)["state"] == "reopened"
    # Without CI there are no builds to wait for: it merges at once (MR5).
    response = client.post(path + "/accept", {"merge_when_build_succeeds": "1"}, token=client.form_token(path))
    assert response.status_code == 303
    assert _api_mr(api, team, mr)["state"] == "merged"


def test_list_by_state_with_fixed_queries(api, team, browser_for, rt):
    first = _open(api, team, title="First request")
    client = browser_for(team.user("developer"))
    path = f"{team.url}/merge_requests/{first['iid']}"
    client.post(path + "/close", token=client.form_token(path))
    team.work.git("checkout", "-q", "-b", "other", "master")
    team.work.commit("other work", {"b.txt": "b\n"})
    team.work.push("other")
    _open(api, team, title="Second request", source_branch="other")
    opened = client.get(f"{team.url}/merge_requests").text
    assert "Second request" in opened and "First request" not in opened
    closed = client.get(f"{team.url}/merge_requests?state=closed").text
    assert "First request" in closed and "Second request" not in closed
    everything = client.get(f"{team.url}/merge_requests?state=all").text
    assert "First request" in everything and "Second request" in everything

    def count() -> int:
        with QueryCounter(rt) as counter:
            assert client.get(f"{team.url}/merge_requests?state=all").status_code == 200
        return counter.count

    few = count()
    for number in range(3):
        team.work.git("checkout", "-q", "-b", f"more{number}", "master")
        team.work.commit(f"more {number}", {f"m{number}.txt": "m\n"})
        team.work.push(f"more{number}")
        _open(api, team, title=f"More {number}", source_branch=f"more{number}")
    assert count() == few


def test_unknown_request_is_404(team, browser_for):
    client = browser_for(team.user("owner"))
    assert client.get(f"{team.url}/merge_requests/99").status_code == 404
    assert client.get(f"{team.url}/merge_requests/abc").status_code == 404
