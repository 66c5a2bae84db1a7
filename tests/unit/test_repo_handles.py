"""git/repo.open_repository keeps a handle per thread: it must read what other processes write
(new commits in new packs and loose objects, moved and deleted refs), never outlive a directory
that was removed or replaced, and never be shared between threads."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest

from codeyard.git import repo


def git(path, *args) -> str:
    return subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, text=True,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path), "GIT_AUTHOR_NAME": "A",
                               "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C",
                               "GIT_COMMITTER_EMAIL": "c@example.com", "PATH": os.environ["PATH"]}).stdout.strip()  # fmt: skip


@pytest.fixture
def work(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "master")
    return work


def commit(work, name: str) -> str:
    (work / f"{name}.txt").write_text(name + "\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", name)
    return git(work, "rev-parse", "HEAD")


def bare(tmp_path, work, name: str = "bare.git"):
    path = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", str(path))
    git(work, "push", "-q", str(path), "master")
    return path


def test_a_kept_handle_reads_pushes_and_ref_changes(tmp_path, work):
    first = commit(work, "first")
    path = bare(tmp_path, work)
    git(path, "config", "receive.unpackLimit", "1")  # pushes arrive as packs
    handle = repo.open_repository(path)
    assert repo.open_repository(path) is handle  # kept
    assert repo.branch_id(path, "master") == first
    second = commit(work, "second")
    git(work, "push", "-q", str(path), "master:feature")  # a pack the handle has not seen
    assert repo.open_repository(path) is handle
    assert repo.branch_id(path, "feature") == second and repo.commit(path, second).message == "second\n"
    assert [entry.name for entry in repo.tree(path, "feature")] == ["first.txt", "second.txt"]
    third = commit(work, "third")
    git(work, "push", "-q", str(path), "master:feature")  # a moved ref
    assert repo.open_repository(path) is handle and repo.branch_id(path, "feature") == third
    git(path, "branch", "-D", "feature")  # locks packed-refs: a new handle
    assert repo.branch(path, "feature") is None
    git(work, "push", "-q", str(path), "master")  # HEAD's branch: git locks HEAD, a new handle
    git(path, "gc", "-q", "--prune=now")  # packed refs, one new pack, the old packs gone
    assert repo.branch_id(path, "master") == third and repo.commit(path, first).message == "first\n"


def test_a_removed_or_replaced_repository_is_never_read_through_an_old_handle(tmp_path, work):
    commit(work, "first")
    path = bare(tmp_path, work)
    repo.open_repository(path)
    shutil.rmtree(path)
    with pytest.raises(repo.RepositoryUnavailable):
        repo.open_repository(path)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "master")
    replaced = commit(other, "replacement")
    bare(tmp_path, other)
    assert repo.branch_id(path, "master") == replaced
    assert [entry.name for entry in repo.tree(path, "master")] == ["replacement.txt"]


def test_handles_are_per_thread_and_bounded(tmp_path, work):
    commit(work, "first")
    path = bare(tmp_path, work)
    mine = repo.open_repository(path)
    theirs = []
    thread = threading.Thread(target=lambda: theirs.append(repo.open_repository(path)))
    thread.start()
    thread.join()
    assert theirs[0] is not mine
    others = [bare(tmp_path, work, f"other{n}.git") for n in range(repo.HANDLES_PER_THREAD)]
    for other in others:
        repo.open_repository(other)
    assert repo.open_repository(others[-1]) is repo.open_repository(others[-1])
    assert repo.open_repository(path) is not mine  # the oldest was let go
