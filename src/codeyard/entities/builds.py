"""Build shapes: the user API's Build (spec, reference 4.7) and the Build Hook payload (reference 7.3)."""

from __future__ import annotations

from typing import TypedDict

from .commits import RepoCommit
from .common import View, iso
from .users import User, UserBasic, user, user_basic


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


class CommitStatusFacts(TypedDict):
    """What every API version shows of a commit status."""

    id: int
    sha: str
    ref: str
    status: str
    name: str
    target_url: str | None
    description: str | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    allow_failure: bool


class CommitStatus(CommitStatusFacts):
    """A commit status (GitLab 8.6 Entities::CommitStatus): a build, or an external status (generic)."""

    author: UserBasic | None


def commit_status(found, view: View, author) -> CommitStatus:
    """FOUND a Build (model or read path row), AUTHOR None or its user."""
    return {
        "id": found.id, "sha": found.sha, "ref": found.ref, "status": found.status, "name": found.name,
        "target_url": found.target_url, "description": found.description, "created_at": iso(found.created_at),
        "started_at": iso(found.started_at), "finished_at": iso(found.finished_at),
        "allow_failure": found.allow_failure,
        "author": user_basic(author, view) if author is not None else None,
    }  # fmt: skip


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


def build(found, view: View, commit: RepoCommit | None, build_runner, who) -> Build:
    """FOUND is a Build (a model or a row of the list's read path), BUILD_RUNNER its runner and WHO
    its user (each None or with their attributes); COMMIT the RepoCommit of its sha, if readable."""
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
        "user": user(who, view) if who is not None else None,
        "commit": commit,
        "runner": runner(build_runner),
        "download_url": download_url(view, found),
    }
    if found.artifacts_file:
        data["artifacts_file"] = {"filename": found.artifacts_file, "size": found.artifacts_size}
    return data


# --- the Build Hook ---------------------------------------------------------------------------------


def _seconds(start, end) -> float | None:
    return (end - start).total_seconds() if start is not None and end is not None else None


def _time(value) -> str | None:
    return value.isoformat() if value is not None else None


def build_hook_payload(view: View, project, found, pipeline, pipeline_builds: list, info) -> dict:
    """The `build` hook body (reference 7.3): FOUND the build, PIPELINE its pipeline with its latest
    builds PIPELINE_BUILDS, INFO the git commit (None when unreadable)."""
    from .projects import human_namespace_name
    from .pushes import repository_hash

    who = found.user
    durations = [_seconds(b.started_at, b.finished_at) for b in pipeline_builds]
    starts = [b.started_at for b in pipeline_builds if b.started_at is not None]
    return {
        "object_kind": "build",
        "ref": found.ref,
        "tag": bool(found.tag),
        "before_sha": "0" * 40,
        "sha": found.sha,
        "build_id": found.id,
        "build_name": found.name,
        "build_stage": found.stage,
        "build_status": found.status,
        "build_started_at": _time(found.started_at),
        "build_finished_at": _time(found.finished_at),
        "build_duration": _seconds(found.started_at, found.finished_at),
        "build_allow_failure": bool(found.allow_failure),
        "project_id": project.id,
        "project_name": f"{human_namespace_name(project.namespace)} / {project.name}",
        "user": {"id": who.id if who else None, "name": who.name if who else None, "email": who.email if who else None},
        "commit": {
            "id": pipeline.id,
            "sha": pipeline.sha,
            "message": info.message if info is not None else None,
            "author_name": info.author.name if info is not None else None,
            "author_email": info.author.email if info is not None else None,
            "status": pipeline.status,
            "duration": int(sum(d for d in durations if d is not None)) if any(d is not None for d in durations) else None,
            "started_at": _time(min(starts)) if starts else None,
            "finished_at": _time(pipeline.finished_at),
        },
        "repository": repository_hash(view, project),
    }
