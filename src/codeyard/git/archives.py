"""Archive files: `git archive` of one commit written to a file, atomically.

Paths in, plain data out; no imports of the app.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

TEMP_SUFFIX = ".tmp"


class ArchiveFailed(Exception):
    """git archive failed or ran past its deadline."""


def build(repository: Path, sha: str, git_format: str, prefix: str, target: Path, timeout: float) -> None:
    """Write the archive of commit SHA (a full id) to TARGET: first to a temporary name in the same
    directory, renamed once complete, so a reader never sees half an archive. GIT_FORMAT is one git
    knows (tar, zip, tar.gz, tgz) or tar.bz2, configured here."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}{TEMP_SUFFIX}")
    try:
        with open(temporary, "wb") as out:
            subprocess.run(
                ["git", "-c", "tar.tar.bz2.command=bzip2 -c", "--git-dir", str(repository), "archive", f"--format={git_format}", f"--prefix={prefix}/",
                 "--end-of-options", sha],
                stdout=out, stderr=subprocess.PIPE, timeout=timeout, check=True,
            )  # fmt: skip
        os.replace(temporary, target)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as error:
        temporary.unlink(missing_ok=True)
        raise ArchiveFailed(f"git archive of {sha}: {error}") from error
