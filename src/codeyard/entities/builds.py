"""Build shapes: the user API's Build (spec, reference 4.7) and the Build Hook payload (reference 7.3)."""

from __future__ import annotations

from typing import TypedDict

from .commits import RepoCommit
from .common import View, iso
from .users import User, user


class BuildRunner(TypedDict):
    id: int
    description: str | None
    active: bool
    is_shared: bool
    name: str | None


class ArtifactsFile(TypedDict):
    filename: str
    size: int | None


class BuildBase(TypedDict):
    id: int
    status: str
    stage: str
    name: str
    ref: str
    tag: bool
    coverage: float | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    user: User | None
    commit: RepoCommit | None
    runner: BuildRunner | None
    download_url: str | None


class Build(BuildBase, total=False):
    artifacts_file: ArtifactsFile  # only when the build has an artifacts file


def runner(found) -> BuildRunner | None:
    if found is None:
        return None
    return {
        "id": found.id, "description": found.description, "active": found.active,
        "is_shared": found.is_shared, "name": found.name,
    }  # fmt: skip


def download_url(view: View, build) -> str | None:
    if not build.artifacts_file:
        return None
    return f"{view.base_url}/api/v3/projects/{build.project_id}/builds/{build.id}/artifacts"


def build(found, view: View, commit: RepoCommit | None, build_runner=None) -> Build:
    """FOUND is a Build row (its user loaded); COMMIT the RepoCommit of its sha, if readable."""
    data: Build = {
        "id": found.id,
        "status": found.status,
        "stage": found.stage,
        "name": found.name,
        "ref": found.ref,
        "tag": bool(found.tag),
        "coverage": found.coverage,
        "created_at": iso(found.created_at),
        "started_at": iso(found.started_at),
        "finished_at": iso(found.finished_at),
        "user": user(found.user, view) if found.user is not None else None,
        "commit": commit,
        "runner": runner(build_runner),
        "download_url": download_url(view, found),
    }
    if found.artifacts_file:
        data["artifacts_file"] = {"filename": found.artifacts_file, "size": found.artifacts_size}
    return data
