"""What a build runs: a bash script from the job's `commands`, and its environment.

Like gitlab-runner's shell executor, the script stops at the first failing command (`set -eo
pipefail`) and echoes each command line before running it. The job's variables come after the
predefined CI_* ones, so a job may override them (as in gitlab-runner).
"""

from __future__ import annotations

import re
import shlex

from . import VERSION

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def command_lines(commands: str) -> list[str]:
    """The commands as lines, a line ending in a backslash joined with the next one."""
    lines: list[str] = []
    pending = ""
    for line in commands.replace("\r\n", "\n").split("\n"):
        pending = f"{pending}\n{line}" if pending else line
        if pending.endswith("\\"):
            continue
        if pending.strip():
            lines.append(pending)
        pending = ""
    if pending.strip():
        lines.append(pending)
    return lines


def script(commands: str) -> str:
    """The bash script of a build, run from the project directory."""
    parts = ["set -eo pipefail", 'cd -- "$CI_PROJECT_DIR"']
    for line in command_lines(commands):
        parts.append(f"printf '%s\\n' {shlex.quote('$ ' + line.strip())}")
        parts.append(line)
    return "\n".join(parts) + "\n"


def predefined(job: dict, project_dir: str, runner_id: int | None = None) -> dict[str, str]:
    """The CI_* variables the runner sets (the server sends only the job's own)."""
    variables = {
        "CI": "true",
        "CI_SERVER": "yes",
        "CI_SERVER_NAME": "codeyard",
        "CI_SERVER_VERSION": VERSION,
        "CI_SERVER_REVISION": "",
        "GITLAB_CI": "true",
        "CI_BUILD_ID": str(job["id"]),
        "CI_BUILD_REF": job["sha"],
        "CI_BUILD_BEFORE_SHA": str(job.get("before_sha") or ""),
        "CI_BUILD_REF_NAME": str(job.get("ref") or ""),
        "CI_BUILD_NAME": str(job.get("name") or ""),
        "CI_BUILD_STAGE": str(job.get("stage") or ""),
        "CI_PROJECT_ID": str(job.get("project_id") or ""),
        "CI_PROJECT_DIR": project_dir,
    }
    if job.get("tag"):
        variables["CI_BUILD_TAG"] = str(job.get("ref") or "")
    if runner_id is not None:
        variables["CI_RUNNER_ID"] = str(runner_id)
    return variables


def environment(base: dict[str, str], job: dict, project_dir: str, runner_id: int | None = None) -> tuple[dict[str, str], list[str]]:
    """BASE (the runner's environment), the predefined variables, then the job's; also the keys
    of job variables that cannot be environment variables (skipped)."""
    env = {**base, **predefined(job, project_dir, runner_id)}
    skipped = []
    for variable in job.get("variables") or ():
        key = variable.get("key") if isinstance(variable, dict) else None
        value = variable.get("value") if isinstance(variable, dict) else None
        if not isinstance(key, str) or not NAME.match(key) or not isinstance(value, str) or "\0" in value:
            skipped.append(str(key))
            continue
        env[key] = value
    return env, skipped
