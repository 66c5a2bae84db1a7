"""git/merge_refs: the merge commit, and a target that moves while it is written."""

from __future__ import annotations

import os
import subprocess

from codeyard.git import merge_refs
from codeyard.services.merge_requests import accept as merge_accept


def git(path, *args) -> str:
    return subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, text=True,
                          env={"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path), "GIT_AUTHOR_NAME": "A",
                               "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C",
                               "GIT_COMMITTER_EMAIL": "c@example.com", "PATH": os.environ["PATH"]}).stdout.strip()  # fmt: skip


def repository(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "master")
    (work / "base.txt").write_text("base\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "base")
    git(work, "checkout", "-q", "-b", "feature")
    (work / "feature.txt").write_text("feature\n")
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "feature")
    git(work, "checkout", "-q", "master")
    return work, work / ".git"


def test_a_push_to_the_target_during_the_merge_is_kept(tmp_path, monkeypatch):
    work, path = repository(tmp_path)
    head = git(work, "rev-parse", "feature")
    real_sides = merge_refs._sides
    pushed = []

    def sides_then_a_push(*args):
        found = real_sides(*args)
        if not pushed:  # someone pushes to master after the merge read it
            (work / "pushed.txt").write_text("pushed\n")
            git(work, "add", ".")
            git(work, "commit", "-q", "-m", "pushed meanwhile")
            pushed.append(git(work, "rev-parse", "master"))
        return found

    monkeypatch.setattr(merge_refs, "_sides", sides_then_a_push)
    plan = merge_accept.MergePlan(1, "opened", path, "master", head, "Merge", "Ada", "ada@example.com", False)
    old, new = merge_accept.write_merge(plan)
    assert old == pushed[0]
    assert git(work, "log", "-1", "--format=%P", "master").split() == [pushed[0], head]
    assert git(work, "rev-parse", "master") == new


def test_trial_merge_and_missing_sides(tmp_path):
    work, path = repository(tmp_path)
    head = git(work, "rev-parse", "feature")
    assert merge_refs.can_merge(path, "master", head) is True
    assert merge_refs.can_merge(path, "nope", head) is False
    assert merge_refs.can_merge(path, "master", "0" * 40) is False
    assert merge_refs.can_merge(path, "master", None) is False
    assert merge_refs.keep_head(path, path, "bad..name", 1) is None
    assert merge_refs.keep_head(path, path, "missing", 1) is None
    assert merge_refs.keep_head(path, path, "feature", 1) == head == merge_refs.head_sha(path, 1)


def test_kept_comparison_and_missing_sides(tmp_path):
    work, path = repository(tmp_path)
    base, head = git(work, "rev-parse", "master"), git(work, "rev-parse", "feature")
    git(work, "merge", "-q", "--no-ff", "-m", "merged", "feature")
    assert merge_refs.kept(path, git(work, "rev-parse", "master^1"), head) == (base, head)
    assert merge_refs.kept(path, None, head) is None and merge_refs.kept(path, base, None) is None
    assert merge_refs.kept(path, "f" * 40, head) is None and merge_refs.kept(path, "0" * 40, head) is None
    git(work, "checkout", "-q", "--orphan", "unrelated")
    git(work, "commit", "-q", "--allow-empty", "-m", "no history in common")
    assert merge_refs.kept(path, git(work, "rev-parse", "unrelated"), head) is None

    def shown(kept):
        found = merge_refs.started_comparison(path, 1, "master", kept, commits=True, files=True)()
        return [info.message.strip() for info in found.commits], [change.new_path for change in found.diffs]

    assert shown(None) == ([], [])  # no head ref: nothing, as before
    assert shown((base, head)) == (["feature"], ["feature.txt"])  # the live branches no longer matter
    assert shown(("f" * 40, head)) == ([], [])  # a kept commit the repository lost
