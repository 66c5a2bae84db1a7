"""Ref names and revisions from users: git's rules (checked against `git check-ref-format --branch`)
plus codeyard's own (no leading dash, not HEAD or @, bounded length, UTF-8)."""

from __future__ import annotations

import subprocess
import tempfile

import pytest

from codeyard.git.refs import is_branch_name, is_ref_name, is_revision, is_sha_prefix, is_tag_name

# Names both git and codeyard accept or refuse alike.
AS_GIT = [
    "master", "feature/x/y", "v1.0", "a@b", "a/@", "é", "日本語", "x-y_z", "refs/heads/x", "a.b/c.d", "a-",
    "a..b", "x.lock", "a/x.lock/b", ".x", "a/.b", "a.", "/a", "a/", "a//b", "a b", "a\tb", "a~1", "a^", "a:b",
    "a?", "a*", "a[b", "a\\b", "a@{1}", "@{-1}", "a\x7fb", "a\x01b", "", ".", "/", "x.lock/y", "-",
]  # fmt: skip
# Names git's --branch accepts that codeyard refuses.
STRICTER = ["@", "a" * 256, "a/" + "b" * 251, "é" * 128]
# Names git itself refuses too, by any version: codeyard refuses them.
ALWAYS_REFUSED = ["-x", "--output=/tmp/x", "a\x00b", "\udcff"]


_OUTSIDE = tempfile.gettempdir()


def git_accepts(name: str) -> bool:
    # Outside any repository: inside one, `--branch` expands `@{-1}` from the checkout's reflog.
    result = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True, cwd=_OUTSIDE)
    return result.returncode == 0


@pytest.mark.parametrize("name", AS_GIT)
def test_same_verdict_as_git(name):
    assert is_branch_name(name) == git_accepts(name)
    assert is_tag_name(name) == is_branch_name(name) == is_ref_name(name)


@pytest.mark.parametrize("name", STRICTER)
def test_stricter_than_git(name):
    assert git_accepts(name) and not is_branch_name(name)


@pytest.mark.parametrize("name", ALWAYS_REFUSED)
def test_options_nul_and_bad_utf8_are_refused(name):
    assert not is_branch_name(name) and not is_revision(name)


def test_head_is_a_revision_not_a_branch_name():
    assert not is_branch_name("HEAD") and not git_accepts("HEAD") and is_revision("HEAD")


def test_length_limits_in_bytes():
    assert is_branch_name("a" * 200 + "/" + "b" * 54) and not is_branch_name("a" * 200 + "/" + "b" * 55)
    assert is_branch_name("b/" + "a" * 250) and not is_branch_name("b/" + "a" * 251)


@pytest.mark.parametrize(
    "text, ok",
    [
        ("master", True), ("feature/x", True), ("HEAD", True), ("HEAD~2", True), ("master^", True),
        ("master~3^2~1", True), ("abcd", True), ("a" * 40, True), ("0123456789ABCDEF", True), ("v1.0~1", True),
        ("refs/tags/v1", True), ("abc", True),
        ("--output=/tmp/x", False), ("-n", False), ("master@{1}", False), ("master:README", False),
        ("a..b", False), ("a...b", False), ("master~x", False), ("HEAD:", False), (":/fix", False), ("", False),
        ("~1", False), ("master\x00", False), ("@{-1}", False), ("a b", False),
    ],
)  # fmt: skip
def test_revisions(text, ok):
    assert is_revision(text) is ok


def test_sha_prefix():
    assert is_sha_prefix("abcd") and is_sha_prefix("f" * 40)
    assert not is_sha_prefix("abc") and not is_sha_prefix("f" * 41) and not is_sha_prefix("abcg")
