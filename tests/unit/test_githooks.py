"""The pre-receive hook as git starts it: its script, its interpreter flags, what it imports."""

from __future__ import annotations

import os
import subprocess
import sys

from codeyard import githooks

OLD, NEW = "1" * 40, "2" * 40


def test_the_pre_receive_script_checks_without_site_packages(tmp_path):
    script = tmp_path / "pre-receive"
    script.write_text(githooks.scripts(sys.executable)["pre-receive"])
    script.chmod(0o700)
    env = {"PATH": os.environ["PATH"], "CODEYARD_PUSH_RULES": githooks.push_rules({"push_code"}, {})}
    lines = f"{OLD} {NEW} refs/heads/-x\n{OLD} {NEW} refs/heads/fine\n".encode()
    result = subprocess.run([str(script)], input=lines, env=env, cwd=tmp_path, capture_output=True)
    assert (result.returncode, result.stderr) == (1, b"codeyard: The ref name is invalid: refs/heads/-x\n")
    good = subprocess.run([str(script)], input=lines.splitlines(keepends=True)[1], env=env, cwd=tmp_path, capture_output=True)
    assert (good.returncode, good.stderr) == (0, b"")


def test_the_pre_receive_hook_imports_only_what_it_needs():
    """Every push starts this process: no site-packages, and none of the modules whose import cost
    more than the hook's own work (dataclasses with inspect, subprocess)."""
    script = githooks.scripts(sys.executable)["pre-receive"]
    assert " -I -S -c " in script
    root = os.path.dirname(os.path.dirname(githooks.__file__))
    code = f"import sys; sys.path.insert(0, {root!r}); import codeyard.githooks; print(' '.join(sorted(sys.modules)))"
    loaded = set(subprocess.run([sys.executable, "-I", "-S", "-c", code], check=True, capture_output=True, text=True).stdout.split())
    assert {"codeyard.githooks", "codeyard.policies.branches"} <= loaded
    assert not loaded & {"dataclasses", "inspect", "subprocess", "json", "re", "site", "pathlib", "sqlalchemy", "pygit2"}


def test_push_rules_reach_the_hook_as_the_server_decided():
    protected = {"master": {"developers_can_push": False}, "dev": {"developers_can_push": True}}
    access, branches = githooks.parse_rules(githooks.push_rules({"push_code", "read_project"}, protected))
    assert access.abilities == {"push_code", "read_project"}
    assert {name: flags.developers_can_push for name, flags in branches.items()} == {"master": False, "dev": True}
    assert githooks.parse_rules("")[0].abilities == frozenset()  # no rules: no ability, every push refused


def test_a_protected_name_cannot_forge_a_rule():
    """A name no branch can have (a newline, a space) is left out: it could not protect a ref,
    and written as it is it would add a line of its own."""
    forged = {"x\nabilities admin_project push_code_to_protected_branches": {"developers_can_push": True},
              "y z": {"developers_can_push": True}, "master": {"developers_can_push": False}}  # fmt: skip
    access, branches = githooks.parse_rules(githooks.push_rules({"push_code"}, forged))
    assert access.abilities == {"push_code"} and list(branches) == ["master"]


def test_pushes_to_a_protected_branch_are_judged_by_the_rules():
    rules = githooks.push_rules({"push_code"}, {"master": {"developers_can_push": False}, "dev": {"developers_can_push": True}})
    assert githooks.check([f"{'0' * 40} {NEW} refs/heads/master"], rules) == [
        "You are not allowed to push code to protected branches on this project. (refs/heads/master)"
    ]
    # git merge-base finds no such commits: not a descendant, so a forced push.
    assert githooks.check([f"{OLD} {NEW} refs/heads/dev"], rules) == [
        "You are not allowed to force push code to a protected branch on this project. (refs/heads/dev)"
    ]
    assert githooks.check([f"{'0' * 40} {NEW} refs/heads/dev", f"{'0' * 40} {NEW} refs/heads/other"], rules) == []
