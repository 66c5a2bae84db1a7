"""The build script and environment, run by real bash."""

from __future__ import annotations

import subprocess

from codeyard.runner import shell

JOB = {"id": 42, "sha": "a" * 40, "before_sha": "0" * 40, "ref": "master", "name": "rspec", "stage": "test",
       "project_id": 7, "tag": False, "variables": []}  # fmt: skip


def _run(tmp_path, commands, variables=()):
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env, skipped = shell.environment({"PATH": "/usr/bin:/bin"}, {**JOB, "variables": list(variables)}, str(project))
    script = tmp_path / "script.sh"
    script.write_text(shell.script(commands))
    result = subprocess.run(["bash", "--noprofile", "--norc", str(script)], cwd=tmp_path, env=env,
                            capture_output=True, text=True)  # fmt: skip
    return result, skipped


def test_commands_are_echoed_and_run_in_the_project_directory(tmp_path):
    result, _ = _run(tmp_path, "echo one\npwd\n\necho 'it''s' \"$CI_BUILD_NAME\"")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "$ echo one", "one", "$ pwd", str(tmp_path / "project"), "$ echo 'it''s' \"$CI_BUILD_NAME\"", "its rspec",
    ]  # fmt: skip


def test_the_first_failing_command_ends_the_script(tmp_path):
    result, _ = _run(tmp_path, "echo before\nfalse\necho after")
    assert result.returncode == 1
    assert "after" not in result.stdout.replace("$ echo after", "")
    assert "before" in result.stdout


def test_a_failing_pipeline_fails_and_exit_codes_pass_through(tmp_path):
    result, _ = _run(tmp_path, "false | cat\necho after")
    assert result.returncode == 1 and "\nafter" not in result.stdout
    assert _run(tmp_path, "exit 7")[0].returncode == 7


def test_multi_line_constructs_and_continuations(tmp_path):
    commands = "if true; then\n  echo inside\nfi\necho a \\\n  b\nfor i in 1 2; do echo n$i; done"
    result, _ = _run(tmp_path, commands)
    assert result.returncode == 0, result.stderr
    assert "inside" in result.stdout.splitlines()
    assert "a b" in result.stdout.splitlines()
    assert [line for line in result.stdout.splitlines() if line.startswith("n")] == ["n1", "n2"]
    assert shell.command_lines("a \\\nb\nc\\") == ["a \\\nb", "c\\"]


def test_predefined_variables_then_the_jobs(tmp_path):
    variables = [{"key": "CI_BUILD_NAME", "value": "overridden", "public": True},
                 {"key": "SECRET", "value": "s3 cr$t", "public": False},
                 {"key": "BAD-NAME", "value": "x", "public": True},
                 {"key": "NUL", "value": "a\0b", "public": True}]  # fmt: skip
    result, skipped = _run(tmp_path, 'echo "$CI $GITLAB_CI $CI_BUILD_ID $CI_BUILD_REF_NAME $CI_PROJECT_ID $CI_BUILD_STAGE"\n'
                                     'echo "$CI_BUILD_NAME|$SECRET|$CI_BUILD_BEFORE_SHA|${CI_BUILD_TAG-unset}"', variables)
    lines = [line for line in result.stdout.splitlines() if not line.startswith("$ ")]
    assert lines == ["true true 42 master 7 test", f"overridden|s3 cr$t|{'0' * 40}|unset"]
    assert skipped == ["BAD-NAME", "NUL"]


def test_tag_builds_and_runner_id():
    variables = shell.predefined({**JOB, "tag": True, "ref": "v1.0"}, "/p", runner_id=3)
    assert variables["CI_BUILD_TAG"] == "v1.0" and variables["CI_RUNNER_ID"] == "3"
    assert variables["CI_BUILD_REF"] == "a" * 40 and variables["CI_PROJECT_DIR"] == "/p"
    assert variables["CI_SERVER"] == "yes" and variables["CI_SERVER_NAME"] == "codeyard"


def test_builds_do_not_inherit_codeyard_settings():
    from codeyard.runner.build import inherited_environment, without_credentials

    inherited = inherited_environment({"PATH": "/bin", "CODEYARD_SECRET_KEY": "k", "CODEYARD_DATABASE_URL": "u", "HOME": "/h"})
    assert inherited == {"PATH": "/bin", "HOME": "/h"}
    assert without_credentials("http://gitlab-ci-token:abc@host:8080/g/p.git") == "http://host:8080/g/p.git"
