"""Helpers for driving the real `git` CLI against the live server."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Author",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Cy Committer",
    "GIT_COMMITTER_EMAIL": "cy@example.com",
    "GIT_AUTHOR_DATE": "2016-01-04T15:31:46+01:00",
    "GIT_COMMITTER_DATE": "2016-01-04T15:31:46+01:00",
}


class Git:
    """Runs git with an isolated HOME, no prompts and a fixed identity."""

    def __init__(self, root: Path):
        self.root = root
        home = root / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
            **GIT_IDENTITY,
            "HOME": str(home),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        self.run("config", "--global", "init.defaultBranch", "master", cwd=root)

    def run(self, *args, cwd: Path | None = None, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        result = subprocess.run(["git", *args], cwd=cwd or self.root, env=self.env, capture_output=True, text=True, timeout=120, **kwargs)
        if check and result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def clone(self, url: str, name: str, *options, check: bool = True) -> subprocess.CompletedProcess:
        return self.run("clone", *options, url, str(self.root / name), check=check)

    def commit(self, work: Path, filename: str, content: str, message: str) -> str:
        (work / filename).parent.mkdir(parents=True, exist_ok=True)
        (work / filename).write_text(content)
        self.run("add", filename, cwd=work)
        self.run("commit", "-q", "-m", message, cwd=work)
        return self.run("rev-parse", "HEAD", cwd=work).stdout.strip()

    def new_work(self, name: str) -> Path:
        work = self.root / name
        self.run("init", "-q", str(work))
        return work


@pytest.fixture
def git(tmp_path) -> Git:
    return Git(tmp_path)


def repo_url(live, project, user=None, secret: str | None = None, suffix: str = ".git") -> str:
    """The project's clone URL with credentials (user's token by default) in it."""
    base = live.base_url.replace("http://", "")
    if user is None:
        return f"http://{base}/{project.path_with_namespace}{suffix}"
    username = user if isinstance(user, str) else user.username
    secret = secret if secret is not None else user.token
    return f"http://{quote(username, safe='')}:{quote(secret, safe='')}@{base}/{project.path_with_namespace}{suffix}"


def server_ref(rt, project, ref: str) -> str | None:
    """What the server's repository says REF is (None when missing)."""
    from codeyard.git import storage

    path = storage.repository_path(rt.config.repositories_dir, project.id)
    result = subprocess.run(["git", "--git-dir", str(path), "rev-parse", "--verify", "--quiet", ref], capture_output=True, text=True)
    return result.stdout.strip() or None
