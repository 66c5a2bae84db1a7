"""File paths the files API may write: git's verify_path with HFS and NTFS protection."""

from __future__ import annotations

import subprocess

import pytest

from codeyard.git.paths import is_file_path, is_hfs_dotgit, is_ntfs_dotgit

ACCEPTED = ["a.txt", "docs/readme.md", "a/b/c/d", ".gitignore", ".gitattributes", "x/.github/ci.yml", ".gitx",
            "git", "git~2", "a.git", "..a", "a..", "...", "é/日本語.txt", "a b", ".g", "gi~1", "a\\b"]  # fmt: skip
REFUSED = ["", ".", "..", "a/./b", "a/../b", "../x", "a//b", ".git", ".git/config", "a/.git/hooks/pre-receive",
           ".GIT", ".Git/x", ".git.", ".git. . ", ".git ", "git~1", "GIT~1/config", ".git::$INDEX_ALLOCATION",
           ".git:x", "a\\.git", ".git\\x", "a/.g\u200cit", "\ufeff.git", ".\u200dGIT/x", "a\x00b", "a\nb",
           "a\x7f", "\x01", "\udcff"]  # fmt: skip


@pytest.mark.parametrize("path", ACCEPTED)
def test_accepted(path):
    assert is_file_path(path)


@pytest.mark.parametrize("path", REFUSED)
def test_refused(path):
    assert not is_file_path(path)


def test_dotgit_aliases():
    assert is_hfs_dotgit(".gi\u200et") and not is_hfs_dotgit(".gitx") and not is_hfs_dotgit(".g\u0131t")
    assert is_ntfs_dotgit("GiT~1.") and not is_ntfs_dotgit("git~10") and not is_ntfs_dotgit(".gitx")


def git_accepts(repository, path: str) -> bool:
    """Does `git update-index` (verify_path, with HFS and NTFS protection on) take PATH?"""
    blob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # the empty blob
    result = subprocess.run(
        ["git", "-c", "core.protectHFS=true", "-c", "core.protectNTFS=true", "update-index", "--add", "--cacheinfo",
         f"100644,{blob},{path}"],
        cwd=repository, capture_output=True,
    )  # fmt: skip
    return result.returncode == 0


def test_same_verdict_as_git(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for path in [*ACCEPTED, *REFUSED]:
        if "\x00" in path or "\udcff" in path or not path:
            continue
        # Control characters are codeyard's own refusal (git takes them in paths).
        if any(char < " " or char == "\x7f" for char in path):
            continue
        assert git_accepts(tmp_path, path) == is_file_path(path), path
