"""What runners are told (spec: Runner job; reference 12.1-12.4): their registration, and the job
they are handed with every field a runner reads."""

from __future__ import annotations

from typing import Any, TypedDict
from urllib.parse import urlsplit, urlunsplit

from .common import iso

ZERO_SHA = "0" * 40


class Registration(TypedDict):
    id: int
    token: str


class RunnerRecord(TypedDict):
    """A removed runner (GitLab answered with the destroyed row)."""

    id: int
    description: str | None
    active: bool
    is_shared: bool
    tag_list: list[str]
    name: str | None
    version: str | None
    revision: str | None
    platform: str | None
    architecture: str | None
    contacted_at: str | None
    created_at: str | None


class RunnerArtifactsFile(TypedDict):
    filename: str
    size: int


class Variable(TypedDict):
    key: str
    value: str
    public: bool


class _BuildSummaryFields(TypedDict):
    id: int
    ref: str
    tag: bool
    sha: str
    status: str
    name: str
    token: str
    stage: str
    project_id: int
    project_name: str


class DependencyBuild(_BuildSummaryFields, total=False):
    """A build of an earlier stage; `artifacts_file` only when it has artifacts."""

    artifacts_file: RunnerArtifactsFile


class _RunnerJobFields(_BuildSummaryFields):
    commands: str
    repo_url: str
    before_sha: str
    allow_git_fetch: bool
    options: dict[str, Any]
    timeout: int
    variables: list[Variable]
    depends_on_builds: list[DependencyBuild]


class RunnerJob(_RunnerJobFields, total=False):
    """The job handed to a runner; `artifacts_file` only when it has artifacts."""

    artifacts_file: RunnerArtifactsFile


class TempPath(TypedDict):
    TempPath: str


def registration(runner_id: int, token: str) -> Registration:
    return {"id": runner_id, "token": token}


def runner_record(runner) -> RunnerRecord:
    return {
        "id": runner.id,
        "description": runner.description,
        "active": runner.active,
        "is_shared": runner.is_shared,
        "tag_list": list(runner.tag_list or []),
        "name": runner.name,
        "version": runner.version,
        "revision": runner.revision,
        "platform": runner.platform,
        "architecture": runner.architecture,
        "contacted_at": iso(runner.contacted_at),
        "created_at": iso(runner.created_at),
    }


def repo_url(base_url: str, path_with_namespace: str, token: str) -> str:
    """The project's HTTP clone URL with `gitlab-ci-token:<token>@` after the scheme."""
    parts = urlsplit(f"{base_url}/{path_with_namespace}.git")
    return urlunsplit(parts._replace(netloc=f"gitlab-ci-token:{token}@{parts.netloc}"))


def variables(build, yaml_variables) -> list[Variable]:
    """GitLab 8's list: CI_BUILD_TAG (tag builds), CI_BUILD_NAME, CI_BUILD_STAGE, then the YAML
    variables; all public. The runner adds the other CI_* variables itself."""
    found: list[Variable] = []
    if build.tag:
        found.append({"key": "CI_BUILD_TAG", "value": build.ref, "public": True})
    found.append({"key": "CI_BUILD_NAME", "value": build.name, "public": True})
    found.append({"key": "CI_BUILD_STAGE", "value": build.stage, "public": True})
    found.extend({"key": key, "value": value, "public": True} for key, value in yaml_variables)
    return found


def _summary(build, project, token: str) -> dict:
    summary = {
        "id": build.id,
        "ref": build.ref,
        "tag": bool(build.tag),
        "sha": build.sha,
        "status": build.status,
        "name": build.name,
        "token": token,
        "stage": build.stage,
        "project_id": build.project_id,
        "project_name": project.name,
    }
    if build.artifacts_file:
        summary["artifacts_file"] = {"filename": build.artifacts_file, "size": build.artifacts_size or 0}
    return summary


def dependency(build, project, token: str) -> DependencyBuild:
    return _summary(build, project, token)  # type: ignore[return-value]


def runner_job(build, project, *, token: str, base_url: str, before_sha: str | None, yaml_variables,
               depends_on: list[DependencyBuild]) -> RunnerJob:  # fmt: skip
    """The job as handed to the runner. TOKEN is the build's token (valid while it runs): it is in
    `token`, in `repo_url` and in every dependency (it fetches their artifacts)."""
    return {
        **_summary(build, project, token),
        "commands": build.commands,
        "repo_url": repo_url(base_url, project.path_with_namespace, token),
        "before_sha": before_sha or ZERO_SHA,
        "allow_git_fetch": bool(project.build_allow_git_fetch),
        "options": dict(build.options or {}),
        "timeout": project.build_timeout,
        "variables": variables(build, yaml_variables),
        "depends_on_builds": depends_on,
    }  # type: ignore[typeddict-item]
