"""The data directory is private: another local account reads no database, repository or upload.

A local attacker needs no HTTP request at all: if the data directory lets them in, they read
password and token digests and private code. Everything codeyard (and git and SQLite under it)
creates below the data directory is 0700/0600, whatever the umask of the shell that started it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.githttp.conftest import Git, repo_url

GROUP_OR_OTHER = 0o077


def _too_open(root: Path) -> list[tuple[str, str]]:
    found = []
    for directory, subdirectories, filenames in os.walk(root):
        for name in [".", *subdirectories, *filenames]:
            path = Path(directory) / name
            mode = stat.S_IMODE(path.lstat().st_mode)
            if not path.is_symlink() and mode & GROUP_OR_OTHER:
                found.append((str(path.relative_to(root)), oct(mode)))
    return found


def _umask_of(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return line.split()[1]
    raise AssertionError("no Umask line")


def test_server_process_runs_with_a_private_umask(live):
    assert _umask_of(live.process.pid) == "0077"


def test_everything_the_server_writes_is_private(live, rt, users, tmp_path):
    alice = users.create("alice")
    api = live.api.as_(alice)
    project = api.post("/projects", json={"name": "secret"}).json()
    fork = api.post(f"/projects/fork/{project['id']}", json={"namespace": "alice"})
    upload = api.post(f"/projects/{project['id']}/uploads", files={"file": ("notes.txt", b"private notes")})
    assert upload.status_code == 201
    git = Git(tmp_path)
    work = git.new_work("work")
    git.commit(work, "README.md", "hello\n", "first commit")
    git.run("push", repo_url(live, _Named(project), alice), "master", cwd=work)
    created = api.post(f"/projects/{project['id']}/repository/files",
                       json={"file_path": "doc/a.txt", "branch_name": "master", "content": "a", "commit_message": "add a"})  # fmt: skip
    assert created.status_code == 201
    assert fork.status_code in (201, 409)
    # master is protected since its first push: deleting it is refused, by the Python hook
    refused = git.run("push", repo_url(live, _Named(project), alice), ":master", cwd=work, check=False)
    assert "delete protected branches" in refused.stderr
    assert (rt.config.data_dir / "githooks" / "pre-receive").exists()
    assert (rt.config.data_dir / "githooks-vetted" / "pre-receive").exists()
    assert _too_open(rt.config.data_dir) == []


def test_migrate_narrows_an_existing_data_dir_and_makes_the_database_private(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    (data / "repositories").mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "repositories").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEYARD_")}
    result = subprocess.run(
        [sys.executable, "-m", "codeyard", "migrate", "--data-dir", str(data)],
        env=env, capture_output=True, text=True, timeout=120, preexec_fn=lambda: os.umask(0o022),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (data / "codeyard.db").exists()
    assert _too_open(data) == []


class _Named:
    """What repo_url needs of a project: its full path."""

    def __init__(self, entity: dict):
        self.path_with_namespace = entity["path_with_namespace"]
