"""Cheap requests that would cost the server seconds or gigabytes: huge diffs, big blobs, archives.

Each test asserts the answer and that the request changed nothing (refs, files in the repository)."""

from __future__ import annotations

import asyncio
import base64
import io
import os
import tarfile
import threading
import time
import tracemalloc

import pytest

from codeyard.app import CodeyardApp, build_router
from codeyard.git import archives as git_archives
from codeyard.git import diffs, repo, storage
from codeyard.services import repository as repository_service
from codeyard.services.archives import ArchiveBusy, ArchiveCache

from ..support import WorkingCopy


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
    tracemalloc.start()
    try:
        diffs.commit_diff(storage.repository_path(rt.config.repositories_dir, project.id), big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024  # the 3.5 MB patch of huge.txt was never rendered


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


async def asgi_call(app, path: str, token: str) -> tuple[int, int]:
    """GET PATH straight through the ASGI app, throwing the body away as it arrives: (status, body bytes)."""
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

    await app(scope, receive, send)
    return answer["status"], answer["length"]


def asgi_get(rt, path: str, token: str) -> tuple[int, int, int]:
    """(status, body bytes, peak bytes Python allocated while serving) of GET PATH."""
    app = CodeyardApp(rt, build_router(), owns_runtime=False)
    tracemalloc.start()
    try:
        status, length = asyncio.run(asgi_call(app, path, token))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return status, length, peak


def test_a_big_blob_is_streamed_with_bounded_memory(rt, alice, setup):
    project, work = setup
    size = 16 * 1024 * 1024
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
    for cut in ("small.txt\x00junk", "dir/big.bin\x00"):  # libgit2 alone would read "small.txt"
        refused = client.get(f"{base}/blobs/master", params={"filepath": cut})
        assert refused.status_code == 404 and refused.json() == {"message": "404 File Not Found"}
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


def test_a_slow_repository_read_does_not_hold_up_other_requests(rt, alice, setup, monkeypatch):
    project, work = setup
    work.commit("one", {"README.md": "hello\n"})
    work.push()
    real = repository_service.tree

    def slow_tree(*args):
        time.sleep(1)
        return real(*args)

    monkeypatch.setattr(repository_service, "tree", slow_tree)
    app = CodeyardApp(rt, build_router(), owns_runtime=False)
    base = f"/api/v3/projects/{project.id}/repository"

    async def both():
        slow = asyncio.ensure_future(asgi_call(app, f"{base}/tree", alice.token))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        fast = await asgi_call(app, f"{base}/commits/master", alice.token)
        took = time.monotonic() - started
        return fast, took, slow.done(), await slow

    fast, took, slow_done, slow = asyncio.run(both())
    assert fast[0] == 200 and slow[0] == 200
    assert took < 0.5 and not slow_done


# --- archives -------------------------------------------------------------------------------------


@pytest.fixture
def counted_builds(monkeypatch):
    """Every archive build, counted; each takes at least 50 ms so concurrent requests overlap."""
    real, built = git_archives.build, []

    def build(*args):
        built.append(args[-2].name)
        time.sleep(0.05)
        real(*args)

    monkeypatch.setattr(git_archives, "build", build)
    return built


def archive_files(rt, project) -> list[str]:
    folder = rt.config.archive_cache_dir / str(project.id)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_an_archive_is_built_once_then_served_from_the_cache(api, rt, alice, setup, counted_builds):
    project, work = setup
    sha = work.commit("one", {"README.md": "hello\n"})
    work.push()
    before = snapshot(rt, project)
    url = f"/projects/{project.id}/repository/archive"
    first = api.as_(alice).get(url)
    again = api.as_(alice).get(url, params={"sha": sha, "format": "tgz"})  # the same file as tar.gz
    assert first.status_code == again.status_code == 200 and first.content == again.content
    assert first.headers["content-length"] == str(len(first.content))
    with tarfile.open(fileobj=io.BytesIO(first.content), mode="r:gz") as archive:
        assert archive.extractfile(f"demo-{sha}/README.md").read() == b"hello\n"
    assert counted_builds == [f"demo-{sha}.tar.gz"]
    assert archive_files(rt, project) == [f"demo-{sha}.tar.gz"]
    assert snapshot(rt, project) == before


def test_concurrent_requests_for_one_archive_wait_on_one_build(rt, setup, counted_builds):
    project, work = setup
    sha = work.commit("one", {"README.md": "hello\n"})
    work.push()
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    cache = ArchiveCache(rt.config.archive_cache_dir, 1024 * 1024)

    async def twenty():
        opened = await asyncio.gather(*(cache.open(path, project.id, sha, "tar", "p", "p.tar") for _ in range(20)))
        contents = {handle.read() for handle in opened}
        for handle in opened:
            handle.close()
        return contents

    contents = asyncio.run(twenty())
    assert len(contents) == 1 and counted_builds == ["p.tar"]


def test_builds_beyond_the_queue_are_refused_with_503(api, rt, alice, setup, monkeypatch):
    project, work = setup
    sha = work.commit("one", {"README.md": "hello\n"})
    work.push()
    path = storage.repository_path(rt.config.repositories_dir, project.id)
    release = threading.Event()
    monkeypatch.setattr(git_archives, "build", lambda *args: release.wait(10))
    cache = ArchiveCache(rt.config.archive_cache_dir, 1024 * 1024, builds=2, queue=3)

    async def saturate():
        started = [asyncio.ensure_future(cache.open(path, project.id, sha, "tar", "p", f"{i}.tar")) for i in range(5)]
        await asyncio.sleep(0.1)
        with pytest.raises(ArchiveBusy) as refused:
            await cache.open(path, project.id, sha, "tar", "p", "one-more.tar")
        assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "10"}
        release.set()
        await asyncio.gather(*started, return_exceptions=True)  # the stub writes no file: they fail
        return cache._running, len(cache._waiting)

    assert asyncio.run(saturate()) == (0, 0)  # every slot handed back

    # Through the API: the same refusal, as JSON with Retry-After, and nothing built.
    monkeypatch.setattr(rt.archives, "queue", 0)
    monkeypatch.setattr(rt.archives, "_running", rt.archives.builds)
    before = snapshot(rt, project)
    response = api.as_(alice).get(f"/projects/{project.id}/repository/archive")
    assert response.status_code == 503 and response.headers["retry-after"] == "10"
    assert response.json()["message"].startswith("503")
    assert archive_files(rt, project) == [] and snapshot(rt, project) == before


def test_a_build_past_its_deadline_fails_and_leaves_nothing(api, rt, alice, setup, monkeypatch):
    project, work = setup
    work.commit("one", {"README.md": "hello\n"})
    work.push()
    monkeypatch.setattr(rt.archives, "build_seconds", 0)
    response = api.as_(alice).get(f"/projects/{project.id}/repository/archive")
    assert response.status_code == 500 and response.json() == {"message": "500 The archive could not be generated"}
    assert archive_files(rt, project) == []
    assert (rt.archives._running, rt.archives._pending) == (0, {})


def test_the_cache_is_pruned_by_age_then_by_size(tmp_path):
    cache = ArchiveCache(tmp_path, max_bytes=250, unused_seconds=3600, build_seconds=600)
    now = time.time()
    ages = {"1/old.tar": 7200, "1/a.tar": 300, "2/b.tar": 200, "2/c.tar": 100, "2/.d.tar.x.tmp": 1300,
            "2/.e.tar.y.tmp": 10, "3/new.tar": 1000}  # fmt: skip
    for name, age in ages.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"x" * 100)
        os.utime(tmp_path / name, (now - age, now - age))
    cache.prune(keep=tmp_path / "3/new.tar")
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob("*/*"))
    # old.tar unused too long, d's build long dead; then the least recently used until 250 bytes fit
    # (new.tar, just built, is never dropped; a build under way keeps its temporary file).
    assert left == ["2/.e.tar.y.tmp", "2/b.tar", "2/c.tar", "3/new.tar"]


def test_archives_go_with_their_project(api, rt, alice, setup):
    project, work = setup
    work.commit("one", {"README.md": "hello\n"})
    work.push()
    assert api.as_(alice).get(f"/projects/{project.id}/repository/archive").status_code == 200
    assert len(archive_files(rt, project)) == 1
    assert api.as_(alice).delete(f"/projects/{project.id}").status_code == 200
    assert not (rt.config.archive_cache_dir / str(project.id)).exists()
