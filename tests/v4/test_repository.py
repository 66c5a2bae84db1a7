"""v4 repository reads: tree, blobs, archives, compare, contributors, merge base."""

from __future__ import annotations

import base64
import bz2
import io
import tarfile
import zipfile

import pytest

from ..support import WorkingCopy


@pytest.fixture
def hosted(rt, projects, alice, tmp_path):
    """alice's project: master (base, then `c.txt`) and feature (two commits from base)."""
    project = projects.create(alice, name="demo")
    work = WorkingCopy(rt, project, tmp_path / "work")
    work.commit("base", {"a.txt": "one\n", "dir/sub/deep.txt": "deep\n", "dir/top.txt": "top\n"})
    work.git("checkout", "-q", "-b", "feature")
    work.commit("feature one", {"b.txt": "b\n"})
    work.commit("feature two", {"a.txt": "one\nmore\n"})
    work.git("checkout", "-q", "master")
    work.commit("master moves on", {"c.txt": "c\n"})
    work.push("master", "feature")
    with rt.db.transaction() as session:
        from codeyard.db.models import Project

        session.get(Project, project.id).default_branch = "master"
    return project, work


def test_tree(gl, api4, alice, hosted):
    project, work = hosted
    client = gl(alice).projects.get(project.id, lazy=True)
    top = client.repository_tree(get_all=True)
    assert [(e["name"], e["type"]) for e in top] == [("dir", "tree"), ("a.txt", "blob"), ("c.txt", "blob")]
    assert top[1] == {"id": work.git("rev-parse", "master:a.txt"), "name": "a.txt", "type": "blob", "mode": "100644", "path": "a.txt"}
    assert [e["path"] for e in client.repository_tree(path="dir", ref="feature", get_all=True)] == ["dir/sub", "dir/top.txt"]
    every = [e["path"] for e in client.repository_tree(recursive=True, get_all=True)]
    assert every == ["dir", "dir/sub", "dir/sub/deep.txt", "dir/top.txt", "a.txt", "c.txt"]
    page = api4.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"recursive": True, "per_page": 2, "page": 2})
    assert [e["path"] for e in page.json()] == ["dir/sub/deep.txt", "dir/top.txt"] and page.headers["x-total"] == "6"
    assert "recursive=true" in page.headers["link"]
    keyset = client.repository_tree(recursive=True, pagination="keyset", per_page=4, iterator=True)
    assert [e["path"] for e in keyset] == every  # followed page by page through Link rel="next"
    first = api4.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"recursive": True, "pagination": "keyset", "per_page": 4})
    assert "page_token=dir%2Ftop.txt" in first.headers["link"] and "recursive=true" in first.headers["link"]
    last = api4.as_(alice).get(f"/projects/{project.id}/repository/tree",
                               params={"recursive": True, "pagination": "keyset", "per_page": 4, "page_token": "dir/top.txt"})  # fmt: skip
    assert [e["path"] for e in last.json()] == ["a.txt", "c.txt"] and "link" not in last.headers
    bad = api4.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"pagination": "keyset", "page_token": "zzz"})
    assert bad.status_code == 400
    missing = api4.as_(alice).get(f"/projects/{project.id}/repository/tree", params={"path": "nope"})
    assert missing.status_code == 404 and missing.json() == {"message": "404 Tree Not Found"}
    for hostile in ({"ref": "--output=x"}, {"path": "../.."}, {"path": "a\x00b"}):
        assert api4.as_(alice).get(f"/projects/{project.id}/repository/tree", params=hostile).status_code == 404


def test_blobs(gl, api4, alice, hosted):
    project, work = hosted
    blob_id = work.git("rev-parse", "master:a.txt")
    client = gl(alice).projects.get(project.id, lazy=True)
    blob = client.repository_blob(blob_id)
    assert blob == {"size": 4, "encoding": "base64", "content": base64.b64encode(b"one\n").decode(), "sha": blob_id}
    assert client.repository_raw_blob(blob_id) == b"one\n"
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/blobs/{'0' * 40}").status_code == 404
    tree_id = work.git("rev-parse", "master:dir")
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/blobs/{tree_id}").status_code == 404
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/blobs/--all/raw").status_code == 404


def test_archives(gl, api4, alice, hosted):
    project, work = hosted
    client = gl(alice).projects.get(project.id, lazy=True)
    with tarfile.open(fileobj=io.BytesIO(client.repository_archive())) as archive:
        assert any(name.endswith("/a.txt") for name in archive.getnames())
    zipped = client.repository_archive(sha="feature", format="zip")
    assert any(name.endswith("/b.txt") for name in zipfile.ZipFile(io.BytesIO(zipped)).namelist())
    for extension in ("tar.bz2", "tbz2", "bz2"):
        answer = api4.as_(alice).get(f"/projects/{project.id}/repository/archive.{extension}")
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/x-bzip2"
        with tarfile.open(fileobj=io.BytesIO(bz2.decompress(answer.content))) as archive:
            assert any(name.endswith("/c.txt") for name in archive.getnames())
    plain = api4.as_(alice).get(f"/projects/{project.id}/repository/archive.tar", params={"sha": "feature"})
    assert plain.headers["content-type"] == "application/x-tar"
    assert f"demo-{work.git('rev-parse', 'feature')}.tar" in plain.headers["content-disposition"]
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/archive.rar").status_code == 404
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/archive", params={"sha": "-x"}).status_code == 404


def test_compare(gl, api4, alice, hosted):
    project, work = hosted
    found = gl(alice).projects.get(project.id, lazy=True).repository_compare("master", "feature")
    assert [c["title"] for c in found["commits"]] == ["feature one", "feature two"]
    assert found["commit"]["id"] == work.git("rev-parse", "feature")
    assert sorted(d["new_path"] for d in found["diffs"]) == ["a.txt", "b.txt"]
    assert found["compare_same_ref"] is False and found["compare_timeout"] is False
    assert found["web_url"].endswith("/alice/demo/compare/master...feature")
    straight = api4.as_(alice).get(f"/projects/{project.id}/repository/compare",
                                   params={"from": "master", "to": "feature", "straight": True}).json()  # fmt: skip
    # Straight from master's tip: its own c.txt is undone in the diff too.
    assert sorted(d["new_path"] for d in straight["diffs"]) == ["a.txt", "b.txt", "c.txt"]
    assert [c["title"] for c in straight["commits"]] == ["feature one", "feature two"]
    same = api4.as_(alice).get(f"/projects/{project.id}/repository/compare", params={"from": "master", "to": "master"}).json()
    assert same["commits"] == [] and same["compare_same_ref"] is True
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/compare", params={"from": "master", "to": "--x"}).status_code == 404
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/compare", params={"from": "master"}).json() == {"error": "to is missing"}


def test_contributors_and_merge_base(gl, api4, alice, users, projects, hosted):
    project, work = hosted
    client = gl(alice).projects.get(project.id, lazy=True)
    assert client.repository_contributors(get_all=True) == [
        {"name": "Ada Author", "email": "ada@example.com", "commits": 2, "additions": 4, "deletions": 0}
    ]
    made = api4.as_(alice).post(f"/projects/{project.id}/repository/commits", json={
        "branch": "master", "commit_message": "by bob", "author_name": "Bob", "author_email": "bob@example.com",
        "actions": [{"action": "create", "file_path": "bob.txt", "content": "b\n"}]})  # fmt: skip
    assert made.status_code == 201
    url = f"/projects/{project.id}/repository/contributors"
    assert [p["name"] for p in api4.as_(alice).get(url).json()] == ["Bob", "Ada Author"]  # by commits, fewest first
    assert [p["name"] for p in api4.as_(alice).get(url, params={"order_by": "name"}).json()] == ["Ada Author", "Bob"]
    by_email = api4.as_(alice).get(url, params={"order_by": "email", "sort": "desc", "per_page": 1})
    assert [p["email"] for p in by_email.json()] == ["bob@example.com"] and by_email.headers["x-total"] == "2"
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/contributors", params={"order_by": "x"}).status_code == 400
    base = client.repository_merge_base(["master", "feature"])
    assert base["id"] == work.git("merge-base", "master", "feature") and base["title"] == "base"
    one = api4.as_(alice).get(f"/projects/{project.id}/repository/merge_base", params={"refs[]": "master"})
    assert one.status_code == 400
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/merge_base",
                               params={"refs[]": ["master", "--all"]}).status_code == 404  # fmt: skip
    outsider = users.create("out")
    assert api4.as_(outsider).get(f"/projects/{project.id}/repository/tree").status_code == 404
    guest = users.create("guest")
    projects.add_member(project, guest, 10)
    assert api4.as_(guest).get(f"/projects/{project.id}/repository/tree").status_code == 403
    assert api4.as_(guest).get(f"/projects/{project.id}/repository/archive.zip").status_code == 403


def test_empty_repository(api4, projects, alice):
    project = projects.create(alice, name="empty")
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/commits").json() == []
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/contributors").json() == []
    assert api4.as_(alice).get(f"/projects/{project.id}/repository/tree").status_code == 404
