"""git/diffs: a diff rendered whole by one `git diff` says what libgit2 file by file says, within the
same limits, and falls back to libgit2 when git cannot be used."""

from __future__ import annotations

import os
import subprocess
import time

import pygit2
import pytest

from codeyard.git import diffs


def git(path, *args, config: dict | None = None) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(path), "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
           "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com", "PATH": os.environ["PATH"]}  # fmt: skip
    return subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, text=True, env=env).stdout.strip()


def commit(work, message: str, files: dict[str, str | bytes], remove=(), executable=()) -> str:
    for name, content in files.items():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    for name in remove:
        (work / name).unlink()
    for name in executable:
        (work / name).chmod(0o755)
    git(work, "add", "-A")
    git(work, "commit", "-q", "--allow-empty", "-m", message)
    return git(work, "rev-parse", "HEAD")


@pytest.fixture()
def work(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "master")
    return work


def rendered(work, old: str, new: str, limits: diffs.DiffLimits | None = None, by_git: bool = True):
    """The files from OLD to NEW, rendered by one `git diff` when it can (BY_GIT), else by libgit2."""
    repository = pygit2.Repository(str(work / ".git"))
    return diffs.file_diffs(repository, repository.diff(old, new), limits, (old, new) if by_git else None)


def both(work, old: str, new: str, limits: diffs.DiffLimits | None = None):
    """(what one `git diff` renders, what libgit2 renders file by file) from OLD to NEW."""
    return rendered(work, old, new, limits), rendered(work, old, new, limits, by_git=False)


LINES = "".join(f"line {i} of the moved file\n" for i in range(40))


def mixed_changes(work) -> tuple[str, str]:
    """Two commits with edits, a rename, a deletion, a mode change, binary, no-newline, empty and quoted files."""
    base = commit(work, "base", {
        "edit.txt": "one\ntwo\nthree\n" * 30, "gone.txt": "bye\n", "moved.txt": LINES, "mode.sh": "echo\n",
        "image.bin": b"\0\1\2" * 100, "tail.txt": "no newline", "empty.txt": "", "sp ace é.txt": "x\n",
    })  # fmt: skip
    head = commit(work, "head", {
        "edit.txt": "one\nTWO\nthree\n" * 30, "renamed.txt": LINES.replace("line 3 ", "line three "),
        "image.bin": b"\0\1\3" * 100, "tail.txt": "no newline still", "new/deep.txt": "+++ not a header\ndiff --git x\n",
        "sp ace é.txt": "y\n",
    }, remove=("gone.txt", "moved.txt", "empty.txt"), executable=("mode.sh",))  # fmt: skip
    return base, head


def test_git_renders_what_libgit2_renders(work, monkeypatch):
    base, head = mixed_changes(work)
    real = diffs._by_libgit2
    monkeypatch.setattr(diffs, "_by_libgit2", lambda *args: pytest.fail("libgit2 rendered a diff git could"))
    by_git = rendered(work, base, head)
    monkeypatch.setattr(diffs, "_by_libgit2", real)
    assert by_git == rendered(work, base, head, by_git=False)
    by_path = {change.new_path: change for change in by_git}
    assert by_path["renamed.txt"].renamed_file and by_path["renamed.txt"].old_path == "moved.txt"
    assert by_path["mode.sh"].a_mode == "100644" and by_path["mode.sh"].b_mode == "100755"
    assert by_path["mode.sh"].diff == ""
    assert by_path["image.bin"].diff.startswith("Binary files") and not by_path["image.bin"].too_large
    assert by_path["gone.txt"].deleted_file and by_path["gone.txt"].b_mode == "0"
    assert by_path["new/deep.txt"].new_file and by_path["new/deep.txt"].diff.endswith("+diff --git x\n")
    assert by_path["tail.txt"].diff.endswith("\\ No newline at end of file\n")


@pytest.mark.parametrize("chunk", [1, 5, 13])
def test_git_output_is_rendered_the_same_whatever_pieces_it_arrives_in(work, monkeypatch, chunk):
    """Patches are rendered while git writes: a header or a record cut between two reads changes nothing."""
    base, head = mixed_changes(work)
    monkeypatch.setattr(diffs, "_CHUNK", chunk)
    monkeypatch.setattr(diffs, "_by_libgit2", lambda *args: pytest.fail("libgit2 rendered a diff git could"))
    by_git = rendered(work, base, head)
    monkeypatch.undo()
    assert by_git == rendered(work, base, head, by_git=False)


def test_the_limits_cut_the_same_files(work):
    base = commit(work, "base", {f"f{i:02d}.txt": "x\n" * 10 for i in range(12)} | {"big.bin": b"\0" * 10})
    head = commit(work, "head", {f"f{i:02d}.txt": "y\n" * (10 + i * 30) for i in range(12)} | {"big.bin": b"\0" * 5000})
    for limits in (diffs.DiffLimits(max_lines=100), diffs.DiffLimits(max_bytes=600), diffs.DiffLimits(max_files=3),
                   diffs.DiffLimits(max_patch_bytes=400), diffs.DiffLimits(max_blob_bytes=1000)):  # fmt: skip
        by_git, by_libgit2 = both(work, base, head, limits)
        assert by_git == by_libgit2
        assert any(change.collapsed or change.too_large for change in by_git)
    by_path = {change.new_path: change for change in both(work, base, head, diffs.DiffLimits(max_blob_bytes=1000))[0]}
    assert by_path["big.bin"].too_large and by_path["big.bin"].diff == ""


def test_renames_follow_the_size_limit_and_a_root_commit_diffs_against_nothing(work):
    root = commit(work, "root", {"old.txt": LINES, "keep.txt": "k\n"})
    git(work, "mv", "old.txt", "new.txt")
    moved = commit(work, "move", {})
    path = work / ".git"
    assert [(c.old_path, c.new_path, c.renamed_file) for c in diffs.commit_diff(path, moved)] == [
        ("old.txt", "new.txt", True)]  # fmt: skip
    unpaired = diffs.commit_diff(path, moved, diffs.DiffLimits(rename_max_bytes=100))
    assert sorted((c.new_path, c.new_file, c.deleted_file) for c in unpaired) == [
        ("new.txt", True, False), ("old.txt", False, True)]  # fmt: skip
    assert [(c.new_path, c.new_file, c.a_mode) for c in diffs.commit_diff(path, root)] == [
        ("keep.txt", True, "0"), ("old.txt", True, "0")]  # fmt: skip


def test_git_failing_or_too_long_falls_back_to_libgit2(work, monkeypatch):
    base = commit(work, "base", {"a.txt": "a\n" * 50})
    head = commit(work, "head", {"a.txt": "b\n" * 50})
    expected = both(work, base, head)[1]
    monkeypatch.setattr(diffs, "_GIT_DIFF", ("diff", "--no-such-option"))
    assert both(work, base, head)[0] == expected
    monkeypatch.undo()
    monkeypatch.setattr(diffs, "_raw_records", lambda out: ([], 0))  # git's output not understood
    assert both(work, base, head)[0] == expected
    monkeypatch.undo()
    read = []
    real_output = diffs._git_output

    def capped(process, cap, deadline, consume):
        read.append(real_output(process, 10, deadline, consume))
        return read[-1]

    monkeypatch.setattr(diffs, "_git_output", capped)
    assert both(work, base, head)[0] == expected and read == [False]


def test_a_type_change_is_two_patches_for_git_and_left_to_libgit2(work):
    base = commit(work, "base", {"link": "target\n"})
    (work / "link").unlink()
    (work / "link").symlink_to("target")
    head = commit(work, "symlink", {})
    by_git, by_libgit2 = both(work, base, head)
    assert by_git == by_libgit2 and len(by_git) == 2


def branched(work) -> tuple[str, str, str]:
    """master moved on after `feature` left it with mixed changes; (merge base, feature's head, master)."""
    base, head = mixed_changes(work)
    git(work, "branch", "feature", head)
    git(work, "reset", "-q", "--hard", base)
    return base, head, commit(work, "master moves on", {"master-only.txt": "m\n"})


def test_a_comparison_is_one_git_diff_from_the_merge_base(work, monkeypatch):
    """git finds the merge base itself (`base...head`); renames to detect mean a second run, with -M."""
    base, head, master = branched(work)
    runs = []
    real_spawned = diffs._spawned

    def counted(command):
        runs.append(command)
        return real_spawned(command)

    monkeypatch.setattr(diffs, "_spawned", counted)
    monkeypatch.setattr(diffs, "_git", lambda *args: pytest.fail("a merge-base process of its own"))
    monkeypatch.setattr(diffs, "_by_libgit2", lambda *args: pytest.fail("libgit2 rendered a diff git could"))
    found = diffs.compare(work / ".git", "master", "feature", commits=False)
    monkeypatch.undo()
    assert found.diffs == rendered(work, base, head, by_git=False)
    assert [command[-4:] for command in runs] == [["--no-renames", "--end-of-options", f"{master}...{head}", "--"],
                                                  ["-M", "--end-of-options", f"{master}...{head}", "--"]]  # fmt: skip
    assert "master-only.txt" not in {change.new_path for change in found.diffs}


def test_a_comparison_git_cannot_render_whole_is_left_to_the_merge_base_and_libgit2(work):
    base, head, _ = branched(work)
    limits = diffs.DiffLimits(max_files=3)
    found = diffs.compare(work / ".git", "master", "feature", commits=False, limits=limits)
    assert found.diffs == rendered(work, base, head, limits, by_git=False)
    assert sum(change.collapsed for change in found.diffs) == len(found.diffs) - 3
    git(work, "checkout", "-q", "--orphan", "unrelated")
    git(work, "rm", "-rqf", ".")
    alone = commit(work, "no common history", {"alone.txt": "a\n"})
    found = diffs.compare(work / ".git", "master", "unrelated", commits=False)
    assert [(change.new_path, change.new_file) for change in found.diffs] == [("alone.txt", True)]
    assert found.head.id == alone


def test_file_names_that_look_like_patch_lines_are_split_where_git_splits(work, monkeypatch):
    """A patch is cut at `\\ndiff --git ` and its text starts at its `---` or `Binary files` line: names
    holding those words, ` b/`, a newline or a tab (git quotes those) change nothing."""
    names = ["diff --git", "x b/y.txt", "a b/c d.txt", "--- dashes.txt", "Binary files x", "new\nline.txt",
             "tab\there.txt", "diff --git a/z b/z"]  # fmt: skip
    base = commit(work, "base", {name.replace("/", "_") + ".old": "x\n" for name in names} | {"keep.txt": "k\n"})
    lines = "".join(f"line {i}\n" for i in range(12))
    head = commit(work, "head", {
        **{name: "diff --git a/x b/x\n--- a/x\n" + lines for name in names if "/" not in name},
        "sub dir/diff --git": lines, "x b/y.txt": lines + "-- two dashes\n", "a b/c d.txt": b"\0binary b/\n",
        "diff --git a/z b/z": "diff --git a/z b/z\n",
    }, remove=[name.replace("/", "_") + ".old" for name in names])  # fmt: skip
    monkeypatch.setattr(diffs, "_by_libgit2", lambda *args: pytest.fail("libgit2 rendered a diff git could"))
    by_git = rendered(work, base, head, diffs.DiffLimits(rename_max_files=0))
    monkeypatch.undo()
    assert by_git == rendered(work, base, head, diffs.DiffLimits(rename_max_files=0), by_git=False)
    by_path = {change.new_path: change for change in by_git}
    assert by_path["a b/c d.txt"].diff.startswith("Binary files")
    assert by_path["diff --git"].diff.startswith("--- /dev/null\n+++ b/diff --git\n@@ -0,0 +1,14 @@\n+diff --git a/x")
    assert by_path["new\nline.txt"].diff.startswith('--- /dev/null\n+++ "b/new\\nline.txt"\n')
    assert by_path["x b/y.txt"].diff.endswith("+-- two dashes\n")


@pytest.mark.skipif("LD_PRELOAD" not in diffs._GIT_OUTPUT_ENV, reason="coreutils' libstdbuf is not installed")
def test_git_writes_a_large_diff_in_large_pieces(work, monkeypatch):
    """With coreutils' libstdbuf preloaded, git's stdout has a 64 KiB buffer: a 1 MB diff comes in a
    few tens of reads, not the 250 writes of a page-sized buffer (and renders as without it)."""
    base = commit(work, "base", {f"f{i:03d}.txt": "old line\n" * 500 for i in range(200)})
    head = commit(work, "head", {f"f{i:03d}.txt": "new line\n" * 500 for i in range(200)})
    reads = []
    real_output = diffs._git_output

    def counted(process, cap, deadline, consume):
        return real_output(process, cap, deadline, lambda chunk: (reads.append(len(chunk)), consume(chunk)))

    monkeypatch.setattr(diffs, "_git_output", counted)
    buffered = rendered(work, base, head)
    assert sum(reads) > 1_000_000 and len(reads) < 60
    monkeypatch.setattr(diffs, "_GIT_OUTPUT_ENV", diffs._NO_USER_CONFIG)
    assert rendered(work, base, head) == buffered


def test_git_past_its_deadline_is_killed_and_its_output_refused():
    """A git that writes nothing, or keeps writing, is stopped at the deadline (no output is trusted)."""
    for command in (["sleep", "30"], ["sh", "-c", "while true; do echo diff; sleep 0.01; done"]):
        process, seen = diffs._spawned(command), []
        started = time.monotonic()
        assert diffs._git_output(process, 10**9, 0.3, seen.append) is False
        assert time.monotonic() - started < 5 and process.returncode is not None
    finished = diffs._spawned(["sh", "-c", "echo done"])
    assert diffs._git_output(finished, 100, 5, seen.append) is True and seen[-1] == b"done\n"


def test_a_comparison_s_shape_is_applied_to_every_file_whoever_renders_it(work):
    """SHAPE gives the same as shaping the plain comparison's files, by git and by libgit2 alike."""
    branched(work)

    def shape(change):
        return (change.new_path, change.new_file, len(change.diff))

    for limits in (diffs.LIMITS, diffs.DiffLimits(max_files=3)):  # git renders the first whole; libgit2 the second
        plain = diffs.compare(work / ".git", "master", "feature", commits=False, limits=limits)
        shaped = diffs.started_compare(work / ".git", "master", "feature", limits=limits, commits=False, shape=shape)()
        assert shaped.diffs == [shape(change) for change in plain.diffs] and len(shaped.diffs) > 3
