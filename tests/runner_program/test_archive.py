"""Artifacts zipped from globs, and unzipped without escaping the project directory."""

from __future__ import annotations

import os
import zipfile

import pytest

from codeyard.runner import archive


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "out" / "deep").mkdir(parents=True)
    (root / "out" / "a.bin").write_bytes(b"A")
    (root / "out" / "deep" / "b.txt").write_text("B")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    (root / "tool.sh").chmod(0o755)
    (root / "readme.md").write_text("R")
    outside = tmp_path / "secret.txt"
    outside.write_text("S")
    os.symlink(outside, root / "link.txt")
    os.symlink(tmp_path, root / "linkdir")
    return root


def test_globs_directories_and_what_is_left_out(project):
    files, warnings = archive.collect(project, ["out", "*.sh", "link.txt", "linkdir/*", "../secret.txt", "/etc/passwd", "none/*"])
    assert files == ["out/a.bin", "out/deep/b.txt", "tool.sh"]
    assert warnings == ["../secret.txt: not a path inside the project directory",
                        "/etc/passwd: not a path inside the project directory", "none/*: no matching files"]  # fmt: skip
    assert archive.collect(project, ["**/*.txt"])[0] == ["out/deep/b.txt"]


def test_round_trip_keeps_contents_and_the_executable_bit(project, tmp_path):
    zipped = tmp_path / "a.zip"
    files, _ = archive.collect(project, ["out", "tool.sh"])
    assert archive.create(project, files, zipped) > 0
    target = tmp_path / "other"
    target.mkdir()
    assert archive.extract(zipped, target, 10_000) == 3
    assert (target / "out" / "deep" / "b.txt").read_text() == "B"
    assert os.access(target / "tool.sh", os.X_OK) and not os.access(target / "out" / "a.bin", os.X_OK)


def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as zipped:
        for name, data in entries:
            zipped.writestr(name, data)
    return path


@pytest.mark.parametrize("name", ["../escape.txt", "/abs.txt", "a/../../escape.txt", "linkdir/escape.txt", "link.txt"])
def test_entries_leading_outside_are_refused(project, tmp_path, name):
    zipped = _zip(tmp_path / "evil.zip", [(name, "x")])
    with pytest.raises(archive.ArchiveError):
        archive.extract(zipped, project, 10_000)
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path.parent / "escape.txt").exists()
    assert (tmp_path / "secret.txt").read_text() == "S"


def test_size_bound_and_bad_archives(project, tmp_path):
    zipped = _zip(tmp_path / "big.zip", [("big.bin", b"0" * 5000)])
    with pytest.raises(archive.ArchiveError, match="larger"):
        archive.extract(zipped, project, 4000)
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(archive.ArchiveError, match="not a zip"):
        archive.extract(tmp_path / "bad.zip", project, 4000)
    dirs = _zip(tmp_path / "dirs.zip", [("d/", ""), ("d/e/f.txt", "F")])
    assert archive.extract(dirs, project, 4000) == 1 and (project / "d" / "e" / "f.txt").read_text() == "F"
