"""Commits of one file change: objects checked before they enter the repository, the branch moved
by compare-and-swap, identities cleaned like git cleans them."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

from codeyard.git import file_commits

from ..hostile.state import objects, refs


@pytest.fixture
def bare(tmp_path):
    path = tmp_path / "repo.git"
    pygit2.init_repository(str(path), bare=True)
    file_commits.commit_file(path, "master", "a.txt", b"a\n", must_exist=False, message="first",
                             author_name="Ada", author_email="ada@example.com")  # fmt: skip
    return path


def commit(path, name="b.txt", **identity):
    identity = {"author_name": "Ada", "author_email": "ada@example.com", **identity}
    return file_commits.commit_file(path, "master", name, b"b\n", must_exist=False, message="second", **identity)


@pytest.mark.parametrize(
    "raw, clean",
    [("Ada Lovelace", "Ada Lovelace"), ("  <Ada>\n", "Ada"), ("a\nb<c>d", "abcd"), ('.,:;"\\\'x y.', "x y"),
     ("\x00x\x00", "x"), ("...", ""), ("é", "é")],
)  # fmt: skip
def test_clean_identity(raw, clean):
    assert file_commits.clean_identity(raw) == clean


def test_objects_are_checked_before_they_enter_the_repository(bare, monkeypatch):
    before = refs(bare), objects(bare)
    monkeypatch.setattr(file_commits, "clean_identity", lambda text: text)  # let a newline through
    with pytest.raises(file_commits.ObjectRefused, match="missingEmail"):
        commit(bare, author_name="Ada\nForged")
    assert (refs(bare), objects(bare)) == before
    assert not [p for p in (bare / "objects").iterdir() if p.name.startswith("tmp_")]


def test_the_branch_moves_only_if_it_did_not_meanwhile(bare, monkeypatch):
    """A push that lands while the commit is written wins; the API commit is refused."""
    check = file_commits._check_objects
    pushed = {}

    def push_meanwhile(directory):
        check(directory)
        tree = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", "master^{tree}"], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        sha = subprocess.run(["git", "--git-dir", str(bare), "commit-tree", "-p", "master", "-m", "pushed", tree],
                             capture_output=True, text=True, check=True,
                             env={"GIT_AUTHOR_NAME": "P", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "P",
                                  "GIT_COMMITTER_EMAIL": "p@x"}).stdout.strip()  # fmt: skip
        subprocess.run(["git", "--git-dir", str(bare), "update-ref", "refs/heads/master", sha], check=True)
        pushed["sha"] = sha

    monkeypatch.setattr(file_commits, "_check_objects", push_meanwhile)
    with pytest.raises(file_commits.RefMoved):
        commit(bare)
    assert pygit2.Repository(str(bare)).references["refs/heads/master"].target == pygit2.Oid(hex=pushed["sha"])


def test_update_keeps_the_executable_bit(bare):
    repository = pygit2.Repository(str(bare))
    head = repository.references["refs/heads/master"].peel(pygit2.Commit)
    builder = repository.TreeBuilder(head.tree)
    builder.insert("run.sh", repository.create_blob(b"#!/bin/sh\n"), pygit2.enums.FileMode.BLOB_EXECUTABLE)
    tip = repository.create_commit("refs/heads/master", head.author, head.committer, "x", builder.write(), [head.id])
    _, new = file_commits.commit_file(bare, "master", "run.sh", b"#!/bin/sh\necho\n", must_exist=True, message="edit",
                                      author_name="Ada", author_email="ada@example.com")  # fmt: skip
    assert str(tip) != new
    assert repository[new].tree["run.sh"].filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE
