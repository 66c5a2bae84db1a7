"""What an attack must leave as it was: a repository's refs and objects count, files on disk, and the
number of rows of every table."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from codeyard.db.models import Base


def refs(bare: Path) -> str:
    return subprocess.run(["git", "--git-dir", str(bare), "for-each-ref", "--format=%(objectname) %(refname)"],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip


def objects(bare: Path) -> str:
    """Every object the repository holds (loose and packed)."""
    listed = subprocess.run(["git", "--git-dir", str(bare), "cat-file", "--batch-all-objects", "--batch-check"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    return listed.stdout


def row_counts(rt) -> dict[str, int]:
    with rt.db.session(write=False) as session:
        return {table.name: session.scalar(select(func.count()).select_from(table)) for table in Base.metadata.sorted_tables}


def snapshot(rt) -> tuple[dict[str, int], list[tuple[str, int]]]:
    """What an edge attack must leave alone: every table's row count and every file (with its size)
    under the data directory, but the server's own figures (<data>/metrics, which count the attack)."""
    figures = rt.config.data_dir / "metrics"
    data_files = sorted((str(path.relative_to(rt.config.data_dir)), path.stat().st_size)
                        for path in rt.config.data_dir.rglob("*") if path.is_file() and figures not in path.parents)  # fmt: skip
    return row_counts(rt), data_files


def files(*paths: Path) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.is_file() else None for path in paths}


@dataclass
class Unchanged:
    """Take a snapshot; `check()` asserts that nothing in it changed."""

    rt: object
    bare: Path
    watched: tuple[Path, ...] = ()

    def __post_init__(self):
        self.before = self._take()

    def _take(self):
        return refs(self.bare), objects(self.bare), row_counts(self.rt), files(*self.watched)

    def check(self) -> None:
        after = self._take()
        assert after[0] == self.before[0], "refs changed"
        assert after[1] == self.before[1], "objects changed"
        assert after[2] == self.before[2], "database rows changed"
        assert after[3] == self.before[3], "watched files changed"
