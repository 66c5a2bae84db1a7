"""History reads held equal to git itself.

`repo.last_commit_for` walks history in process as `git log -1 -- path` does: on a history with
merges from either side, a merge that changes a file itself, a merge of the same change made on
both sides, a mode change, a file deleted and added again, and directories; also when the walk
hands over to git. `repo.count_commits` counts as `git rev-list --count` and starts it once per
commit. `repo.log` pages through libgit2's order, walked once per start commit and kept."""

from __future__ import annotations

import os
import subprocess

import pygit2
import pytest

from codeyard.git import repo

from ..support import GIT_IDENTITY

PATHS = ("a.txt", "b.txt", "dir/c.txt", "dir", "d.txt", "e.txt", "f.txt", "gone.txt", "h.txt", "never.txt", "dir/nope")


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    work = tmp_path_factory.mktemp("history")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_IDENTITY,
           "HOME": str(work), "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True, text=True).stdout.strip()

    def write(name: str, text: str) -> None:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)

    def commit(message: str, **files: str) -> None:
        for name, text in files.items():
            write(name.replace("__", "/"), text)
        git("add", "-A")
        git("commit", "-q", "--allow-empty", "-m", message)

    git("init", "-q", "-b", "master")
    commit("root", **{"a.txt": "a1\n", "b.txt": "b1\n", "dir__c.txt": "c1\n", "gone.txt": "g1\n"})
    commit("a changes", **{"a.txt": "a2\n"})
    git("checkout", "-q", "-b", "side")
    commit("b on side", **{"b.txt": "b2\n"})
    commit("a on side", **{"a.txt": "a3\n"})
    git("checkout", "-q", "master")
    commit("c on master", **{"dir__c.txt": "c2\n"})
    commit("d on master", **{"d.txt": "d1\n"})
    git("merge", "-q", "--no-ff", "-m", "merge side", "side")  # a.txt and b.txt as on the second parent
    (work / "a.txt").chmod(0o755)
    commit("a executable")
    git("rm", "-q", "gone.txt")
    commit("gone deleted")
    git("checkout", "-q", "-b", "other")
    commit("e on other", **{"e.txt": "e1\n"})
    commit("gone back", **{"gone.txt": "g2\n"})
    git("checkout", "-q", "master")
    commit("a on master", **{"a.txt": "a4\n"})
    git("merge", "-q", "--no-ff", "--no-commit", "other")
    write("f.txt", "made by the merge\n")
    write("dir/c.txt", "c3 by the merge\n")
    git("add", "-A")
    git("commit", "-q", "-m", "merge other, changing files itself")
    git("checkout", "-q", "side")
    git("merge", "-q", "--no-ff", "-m", "master into side", "master")
    commit("b again on side", **{"b.txt": "b3\n"})
    git("checkout", "-q", "master")
    git("merge", "-q", "--no-ff", "-m", "criss-cross", "side")
    git("checkout", "-q", "-b", "twin")
    commit("h on twin", **{"h.txt": "the same\n"})
    git("checkout", "-q", "master")
    commit("h on master", **{"h.txt": "the same\n"})
    git("merge", "-q", "--no-ff", "-m", "twin: h.txt the same on both sides", "twin")  # git follows the first
    bare = work.parent / f"{work.name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], env=env, check=True)
    return bare, git("rev-list", "--all").split()


def git_log(bare, start: str, path: str) -> str | None:
    found = subprocess.run(["git", "--git-dir", str(bare), "--literal-pathspecs", "log", "-1", "--format=%H", start,
                            "--", path], capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    return found or None


@pytest.mark.parametrize("walk", [repo.LAST_COMMIT_WALK, 1, 2])
def test_the_walk_finds_what_git_log_finds(history, monkeypatch, walk):
    bare, commits = history
    monkeypatch.setattr(repo, "LAST_COMMIT_WALK", walk)  # 1 and 2: git log finishes the walk
    found = {(start, path): repo.last_commit_for(bare, start, path) for start in commits for path in PATHS}
    expected = {(start, path): git_log(bare, start, path) for start in commits for path in PATHS}
    assert found == expected
    assert len(commits) == 19 and len({value for value in expected.values() if value}) > 8  # a varied history


def test_the_walk_runs_no_git_for_a_recent_change(history, monkeypatch):
    bare, commits = history
    expected = git_log(bare, commits[0], "b.txt")
    monkeypatch.setattr(subprocess, "run", None)  # any call fails
    assert repo.last_commit_for(bare, commits[0], "b.txt") == expected != commits[0]  # through the merges


def test_commits_are_counted_once_per_start(history, monkeypatch):
    bare, commits = history
    expected = {
        start: int(subprocess.run(["git", "--git-dir", str(bare), "rev-list", "--count", start], capture_output=True,
                                  text=True, check=True).stdout)
        for start in commits
    }  # fmt: skip
    assert {start: repo.count_commits(bare, start) for start in commits} == expected
    assert repo.count_commits(bare, "master") == len(commits) and len(set(expected.values())) > 10
    monkeypatch.setattr(subprocess, "run", None)  # counted already: no git runs
    assert {start: repo.count_commits(bare, start) for start in commits} == expected


@pytest.mark.parametrize("step, kept", [(repo.ORDER_STEP, repo.ORDER_KEPT), (2, 5)])
def test_log_pages_follow_the_walk_and_walk_once_per_start(history, monkeypatch, step, kept):
    bare, commits = history
    monkeypatch.setattr(repo, "ORDER_STEP", step)
    monkeypatch.setattr(repo, "ORDER_KEPT", kept)
    monkeypatch.setattr(repo, "_orders", type(repo._orders)())
    walks = []
    walked = repo._walked
    monkeypatch.setattr(repo, "_walked", lambda *args: walks.append(args[2]) or walked(*args))
    repository = pygit2.Repository(str(bare))
    for start in ("master", "side", "other"):
        order = [str(c.id) for c in repository.walk(repository.revparse_single(start).id,
                                                    pygit2.enums.SortMode.TIME | pygit2.enums.SortMode.TOPOLOGICAL)]  # fmt: skip
        for limit in (1, 3, 20):
            pages = [[info.id for info in repo.log(bare, start, offset, limit)] for offset in range(0, len(order) + 2, limit)]
            assert [sha for page in pages for sha in page] == order, (start, limit)
    before = len(walks)
    first = [info.id for info in repo.log(bare, "master", 0, 3)]
    assert [info.id for info in repo.log(bare, "master", 1, 1)] == first[1:2]
    assert len(walks) == before  # kept: no walk for pages already walked
    if kept < len(commits):
        repo.log(bare, "master", kept, 3)  # past what is kept: walked each time
        repo.log(bare, "master", kept, 3)
        assert len(walks) == before + 2
