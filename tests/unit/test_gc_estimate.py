"""`storage.may_need_gc` agrees with `git gc --auto` on whether there is work, at git's limits."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from codeyard.git import storage


def write_loose_objects_in_17(repository: Path, count: int) -> None:
    """COUNT real blobs whose ids start with 17, written as loose objects."""
    written = 0
    for number in itertools.count():
        if written == count:
            return
        content = f"blob number {number}\n".encode()
        raw = b"blob %d\0" % len(content) + content
        sha = hashlib.sha1(raw).hexdigest()
        if sha.startswith("17"):
            directory = repository / "objects" / "17"
            directory.mkdir(exist_ok=True)
            (directory / sha[2:]).write_bytes(zlib.compress(raw))
            written += 1


def git_would_collect(repository: Path) -> bool:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    result = subprocess.run(["git", "--git-dir", str(repository), "-c", "gc.autoDetach=false", "gc", "--auto"],
                            capture_output=True, text=True, env=env, check=True)  # fmt: skip
    return "Auto packing the repository" in result.stderr


@pytest.mark.parametrize("loose", [0, 27, 28])
def test_loose_objects(tmp_path, loose):
    repository = tmp_path / "r.git"
    storage.create(repository, "master")
    write_loose_objects_in_17(repository, loose)
    estimate = storage.may_need_gc(repository)
    assert estimate == git_would_collect(repository) == (loose == 28)


@pytest.mark.parametrize(("packs", "kept"), [(49, 0), (50, 1), (50, 0)])
def test_packs(tmp_path, packs, kept):
    repository = tmp_path / "r.git"
    storage.create(repository, "master")
    pack_dir = repository / "objects" / "pack"
    for number in range(packs):
        blob = subprocess.run(["git", "--git-dir", str(repository), "hash-object", "-w", "--stdin"],
                              input=f"pack {number}\n", capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        subprocess.run(["git", "--git-dir", str(repository), "pack-objects", "-q", str(pack_dir / "pack")],
                       input=blob + "\n", capture_output=True, text=True, check=True)  # fmt: skip
    for pack in sorted(pack_dir.glob("*.pack"))[:kept]:
        pack.with_suffix(".keep").touch()
    assert storage.may_need_gc(repository) == (packs - kept >= 50)
