"""Artifacts: the files named by `artifacts: paths` globs zipped after a build, and a dependency's
zip unpacked before one, never outside the project directory."""

from __future__ import annotations

import glob
import os
import stat
import zipfile
from pathlib import Path, PurePosixPath


class ArchiveError(Exception):
    pass


def collect(root: Path, patterns: list[str]) -> tuple[list[str], list[str]]:
    """Regular files under ROOT matched by PATTERNS (a directory brings its files), as sorted
    relative paths; and the warnings for patterns that match nothing or point outside ROOT."""
    base = root.resolve()
    found: set[str] = set()
    warnings: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern or os.path.isabs(pattern) or ".." in PurePosixPath(pattern).parts:
            warnings.append(f"{pattern}: not a path inside the project directory")
            continue
        matches = sorted(glob.glob(pattern, root_dir=base, recursive=True))
        if not matches:
            warnings.append(f"{pattern}: no matching files")
        for match in matches:
            found.update(_files(base, base / match))
    return sorted(found), warnings


def _files(base: Path, path: Path):
    if _through_link(base, path):
        return  # links are not followed: they may point anywhere
    if path.is_file():
        yield path.relative_to(base).as_posix()
    elif path.is_dir():
        for directory, subdirectories, names in os.walk(path):
            subdirectories[:] = [name for name in subdirectories if not (Path(directory) / name).is_symlink()]
            for name in names:
                candidate = Path(directory) / name
                if not candidate.is_symlink() and candidate.is_file():
                    yield candidate.relative_to(base).as_posix()


def create(root: Path, files: list[str], destination: Path) -> int:
    """Zip FILES (relative to ROOT) into DESTINATION; its size."""
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in files:
            archive.write(root / name, name)
    return destination.stat().st_size


def extract(source: Path, root: Path, max_bytes: int) -> int:
    """Unpack the zip SOURCE into ROOT: entries with absolute or `..` paths, or that would write
    through a symbolic link, are refused (ArchiveError); at most MAX_BYTES unpacked. The number
    of files written."""
    base = root.resolve()
    written = total = 0
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile as error:
        raise ArchiveError(f"not a zip archive: {error}") from None
    with archive:
        for entry in archive.infolist():
            name = PurePosixPath(entry.filename.replace("\\", "/"))
            if name.is_absolute() or ".." in name.parts or not name.parts:
                raise ArchiveError(f"refused entry {entry.filename!r}: outside the project directory")
            if entry.is_dir():
                _directory(base, name.parts)
                continue
            target = _directory(base, name.parts[:-1]) / name.parts[-1]
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise ArchiveError(f"refused entry {entry.filename!r}: would replace a link or directory")
            total += _copy(archive, entry, target, max_bytes - total)
            mode = (entry.external_attr >> 16) & 0o777
            target.chmod(0o755 if mode & 0o111 else 0o644)
            written += 1
    return written


def _directory(base: Path, parts: tuple[str, ...]) -> Path:
    """The directory BASE/PARTS, made one level at a time; a level that exists as anything but a
    directory (a link, say, that could lead out of BASE) is refused."""
    current = base
    for part in parts:
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            current.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            raise ArchiveError(f"refused path {current.relative_to(base)}: not a directory")
    return current


def _copy(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, target: Path, room: int) -> int:
    copied = 0
    with archive.open(entry) as source, target.open("wb") as sink:
        while chunk := source.read(1024 * 1024):
            copied += len(chunk)
            if copied > room:
                raise ArchiveError("artifacts are larger than the runner accepts")
            sink.write(chunk)
    return copied


def _through_link(base: Path, path: Path) -> bool:
    """Whether PATH (below BASE) is, or lies below, a symbolic link."""
    current = base
    for part in path.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            return True
    return False
