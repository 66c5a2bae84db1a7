"""Cheap requests that would cost the server seconds or gigabytes: huge diffs, big blobs, archives.

Each test asserts the answer and that the request changed nothing (refs, files in the repository)."""

from __future__ import annotations

import asyncio
import base64
import tracemalloc

import pytest

from codeyard.app import CodeyardApp, build_router
from codeyard.git import diffs, repo, storage

from ..support import WorkingCopy


@pytest.fixture
def alice(users):
    return users.create("alice")


@pytest.fixture
def setup(rt, projects, alice, tmp_path):
    project = projects.create(alice, name="demo")
    return project, WorkingCopy(rt, project, tmp_path / "work")


def snapshot(rt, project) -> dict:
    """The repository's refs and the files in its directory: what a read must leave untouched."""
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    opened = repo.open_repository(path)
    refs = {name: str(opened.references[name].target) for name in opened.references}
    files = sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())
    return {"refs": refs, "files": files}


def commit_many(work: WorkingCopy, message: str, files: dict[str, str | bytes]) -> str:
    """Commit FILES in one `git add`: faster than a process per file for thousands of them."""
    for name, content in files.items():
        target = work.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    work.git("add", "-A")
    work.git("commit", "-q", "-m", message)
    return work.git("rev-parse", "HEAD")


# --- diffs ----------------------------------------------------------------------------------------


def test_a_huge_file_diff_is_too_large_and_not_rendered(api, rt, alice, setup):
    project, work = setup
    work.commit("base", {"small.txt": "one\n"})
    big = commit_many(work, "big", {
        "huge.txt": "".join(f"line {i}\n" for i in range(300_000)),  # blob > 1 MiB
        "wide.txt": "".join(f"row {i}\n" for i in range(20_000)),  # blob < 1 MiB, patch > 100 KB
        "small.txt": "two\n",
    })  # fmt: skip
    work.push()
    before = snapshot(rt, project)
    response = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{big}/diff")
    assert response.status_code == 200
    by_path = {d["new_path"]: d for d in response.json()}
    for name in ("huge.txt", "wide.txt"):
        assert by_path[name]["too_large"] is True and by_path[name]["diff"] == ""
        assert by_path[name]["collapsed"] is False and by_path[name]["new_file"] is True
    assert by_path["small.txt"]["too_large"] is False and "+two" in by_path["small.txt"]["diff"]
    compared = api.as_(alice).get(f"/projects/{project.id}/repository/compare", params={"from": f"{big}~1", "to": big})
    assert {d["new_path"]: d["too_large"] for d in compared.json()["diffs"]} == {
        "huge.txt": True, "wide.txt": True, "small.txt": False}  # fmt: skip
    assert snapshot(rt, project) == before


def test_files_past_the_response_budget_are_collapsed(api, rt, alice, setup):
    project, work = setup
    many = commit_many(work, "many", {f"dir/f{i:04d}.txt": f"content {i}\n" for i in range(1010)})
    work.push()
    before = snapshot(rt, project)
    body = api.as_(alice).get(f"/projects/{project.id}/repository/commits/{many}/diff").json()
    assert len(body) == 1010
    assert all(d["diff"] and not d["collapsed"] for d in body[:1000])
    assert all(d["diff"] == "" and d["collapsed"] and not d["too_large"] for d in body[1000:])
    assert snapshot(rt, project) == before


def test_limits_bound_lines_bytes_and_files_listed(rt, setup):
    project, work = setup
    many = commit_many(work, "many", {f"f{i:02d}.txt": "x\n" * 10 for i in range(30)})
    work.push()
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    by_lines = diffs.commit_diff(path, many, diffs.DiffLimits(max_lines=50))
    assert [d.collapsed for d in by_lines].count(False) == 4  # 13 lines each: the 4th crosses 50
    by_bytes = diffs.commit_diff(path, many, diffs.DiffLimits(max_bytes=100))
    assert [d.collapsed for d in by_bytes].count(False) == 2  # 76 bytes each: the 2nd crosses 100
    listed = diffs.commit_diff(path, many, diffs.DiffLimits(max_listed=7))
    assert len(listed) == 7


def test_renames_are_detected_only_in_small_diffs(rt, setup):
    project, work = setup
    work.commit("base", {"old.txt": "same content\n" * 20})
    work.git("mv", "old.txt", "new.txt")
    moved = commit_many(work, "move", {})
    work.push()
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    assert [(d.old_path, d.new_path, d.renamed_file) for d in diffs.commit_diff(path, moved)] == [
        ("old.txt", "new.txt", True)]  # fmt: skip
    unpaired = diffs.commit_diff(path, moved, diffs.DiffLimits(rename_max_bytes=100))
    assert sorted((d.new_path, d.new_file, d.deleted_file) for d in unpaired) == [
        ("new.txt", True, False), ("old.txt", False, True)]  # fmt: skip
    assert len(diffs.commit_diff(path, moved, diffs.DiffLimits(rename_max_files=1))) == 2


def test_a_comparison_past_its_deadline_says_compare_timeout(api, rt, alice, setup, monkeypatch):
    project, work = setup
    base = work.commit("base", {"a.txt": "one\n"})
    head = work.commit("head", {"a.txt": "two\n"})
    work.push()
    monkeypatch.setattr(diffs, "LIMITS", diffs.DiffLimits(compare_seconds=0))
    before = snapshot(rt, project)
    response = api.as_(alice).get(f"/projects/{project.id}/repository/compare", params={"from": base, "to": head})
    assert response.status_code == 200
    body = response.json()
    assert body["compare_timeout"] is True and body["commits"] == [] and body["diffs"] == []
    assert snapshot(rt, project) == before


# --- blobs ----------------------------------------------------------------------------------------


def asgi_get(rt, path: str, token: str) -> tuple[int, int, int]:
    """GET PATH straight through the ASGI app, throwing the body away as it arrives:
    (status, body bytes, peak bytes Python allocated while serving)."""
    app = CodeyardApp(rt, build_router(), owns_runtime=False)
    scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.split("?")[0].encode(),
             "query_string": path.partition("?")[2].encode(), "headers": [(b"private-token", token.encode())],
             "scheme": "http", "server": ("testserver", 80), "client": ("127.0.0.1", 1), "root_path": "",
             "http_version": "1.1"}  # fmt: skip
    answer = {"status": 0, "length": 0}
    requested = []

    async def receive():
        if requested:  # the client stays connected until the response is sent
            await asyncio.Event().wait()
        requested.append(True)
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        else:
            answer["length"] += len(message.get("body", b""))

    tracemalloc.start()
    try:
        asyncio.run(app(scope, receive, send))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return answer["status"], answer["length"], peak


def test_a_big_blob_is_streamed_with_bounded_memory(rt, alice, setup):
    project, work = setup
    size = 32 * 1024 * 1024
    commit_many(work, "big", {"big.bin": b"0123456789abcdef" * (size // 16)})
    work.push()
    blob_id = work.git("rev-parse", "HEAD:big.bin")
    base = f"/api/v3/projects/{project.id}/repository"
    for path, length in ((f"{base}/raw_blobs/{blob_id}", size), (f"{base}/raw_blobs/{blob_id[:7]}", size),
                         (f"{base}/blobs/master?filepath=big.bin", size),
                         (f"{base}/files?file_path=big.bin&ref=master", None)):  # fmt: skip
        status, received, peak = asgi_get(rt, path, alice.token)
        assert status == 200
        assert received == length if length else received > size * 4 // 3
        assert peak < 4 * 1024 * 1024, f"{path}: {peak} bytes allocated for a {size}-byte blob"


def test_big_blobs_arrive_whole(api, rt, alice, setup):
    project, work = setup
    data = bytes(range(256)) * 8193  # just over 2 MiB, not a multiple of 3 or of the chunk size
    commit_many(work, "big", {"dir/big.bin": data, "small.txt": "small\n"})
    work.push()
    blob_id = work.git("rev-parse", "HEAD:dir/big.bin")
    client, base = api.as_(alice), f"/projects/{project.id}/repository"
    before = snapshot(rt, project)
    assert client.get(f"{base}/raw_blobs/{blob_id}").content == data
    raw = client.get(f"{base}/blobs/master", params={"filepath": "dir/big.bin"})
    assert raw.content == data and raw.headers["content-length"] == str(len(data))
    assert raw.headers["x-content-type-options"] == "nosniff"
    body = client.get(f"{base}/files", params={"file_path": "dir/big.bin", "ref": "master"}).json()
    assert base64.b64decode(body.pop("content")) == data
    assert body == {"file_name": "big.bin", "file_path": "dir/big.bin", "size": len(data), "encoding": "base64",
                    "ref": "master", "blob_id": blob_id, "commit_id": work.git("rev-parse", "HEAD"),
                    "last_commit_id": work.git("rev-parse", "HEAD")}  # fmt: skip
    small = client.get(f"{base}/files", params={"file_path": "small.txt", "ref": "master"}).json()
    assert base64.b64decode(small["content"]) == b"small\n"
    assert snapshot(rt, project) == before


@pytest.mark.parametrize("sha", ["abc", "g" * 40, "a" * 41, "master", "HEAD", "--output=x", "HEAD~1", "tree"])
def test_raw_blobs_take_hex_ids_only(api, rt, alice, setup, sha):
    project, work = setup
    work.commit("one", {"dir/a.txt": "a\n"})
    work.push()
    if sha == "tree":
        sha = work.git("rev-parse", "HEAD:dir")
    before = snapshot(rt, project)
    response = api.as_(alice).get(f"/projects/{project.id}/repository/raw_blobs/{sha}")
    assert response.status_code == 404 and response.json() == {"message": "404 Blob Not Found"}
    assert snapshot(rt, project) == before
    assert not (work.path / "x").exists() and not (rt.config.data_dir / "x").exists()
