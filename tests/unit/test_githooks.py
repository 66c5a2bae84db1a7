"""The pre-receive hook as git starts it: its script, its interpreter flags, what it imports."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from codeyard import githooks
from codeyard.policies.branches import NO_FORCE_PUSH

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
    protected = {"master": {"push_access_level": 40, "allow_force_push": False}, "dev": {"push_access_level": 30, "allow_force_push": False}}
    access, branches = githooks.parse_rules(githooks.push_rules({"push_code", "read_project"}, protected))
    assert access.abilities == {"push_code", "read_project"}
    assert {name: flags.push_access_level for name, flags in branches.items()} == {"master": 40, "dev": 30}
    assert not any(flags.allow_force_push for flags in branches.values())
    assert githooks.parse_rules("")[0].abilities == frozenset()  # no rules: no ability, every push refused


def test_a_protected_name_cannot_forge_a_rule():
    """A name no branch can have (a newline, a space) is left out: it could not protect a ref,
    and written as it is it would add a line of its own."""
    forged = {"x\nabilities admin_project push_code_to_protected_branches": {"push_access_level": 30, "allow_force_push": False},
              "y z": {"push_access_level": 30, "allow_force_push": False}, "master": {"push_access_level": 40, "allow_force_push": False}}  # fmt: skip
    access, branches = githooks.parse_rules(githooks.push_rules({"push_code"}, forged))
    assert access.abilities == {"push_code"} and list(branches) == ["master"]


def test_pushes_to_a_protected_branch_are_judged_by_the_rules():
    rules = githooks.push_rules({"push_code"}, {"master": {"push_access_level": 40, "allow_force_push": False}, "dev": {"push_access_level": 30, "allow_force_push": False}})
    assert githooks.check([f"{'0' * 40} {NEW} refs/heads/master"], rules) == [
        "You are not allowed to push code to protected branches on this project. (refs/heads/master)"
    ]
    # git merge-base finds no such commits: not a descendant, so a forced push.
    assert githooks.check([f"{OLD} {NEW} refs/heads/dev"], rules) == [
        "You are not allowed to force push code to a protected branch on this project. (refs/heads/dev)"
    ]
    assert githooks.check([f"{'0' * 40} {NEW} refs/heads/dev", f"{'0' * 40} {NEW} refs/heads/other"], rules) == []


# --- a push vetted by the server from its commands, and the shell hook that finishes the job -----

PROTECTED = {"master": {"push_access_level": 40, "allow_force_push": False}, "dev": {"push_access_level": 30, "allow_force_push": False}}
ZERO = "0" * 40


def test_vet_passes_what_needs_no_objects_and_lists_protected_updates():
    master = githooks.push_rules({"push_code", "push_code_to_protected_branches", "admin_project"}, PROTECTED)
    lines = [f"{OLD} {NEW} refs/heads/topic", f"{OLD} {NEW} refs/heads/master", f"{ZERO} {NEW} refs/heads/dev",
             f"{ZERO} {NEW} refs/tags/v1", f"{OLD} {ZERO} refs/heads/topic2"]  # fmt: skip
    assert githooks.vet(lines, master) == (lines, [f"{OLD} {NEW} refs/heads/master"])


@pytest.mark.parametrize(
    "line",
    [
        f"{OLD} {NEW} refs/heads/master",  # a developer on a protected branch
        f"{OLD} {ZERO} refs/heads/dev",  # deleting a protected branch
        f"{OLD} {NEW} refs/tags/v1",  # moving a tag
        f"{ZERO} {NEW} refs/merge-requests/1/head",
        f"{ZERO} {NEW} refs/heads/-x",
    ],
)
def test_vet_leaves_every_refusal_to_the_python_hook(line):
    developer = githooks.push_rules({"push_code"}, PROTECTED)
    assert githooks.vet([f"{ZERO} {NEW} refs/heads/fine", line], developer) is None
    assert githooks.check([line], developer)  # and that hook refuses it


def run_vetted_hook(repository, lines: str, vetted: list[str], fast_forward: list[str]):
    script = repository / "vetted-pre-receive"
    script.write_text(githooks.VETTED_SCRIPT)
    script.chmod(0o700)
    env = {"PATH": os.environ["PATH"], "CODEYARD_VETTED": "\n".join(vetted), "CODEYARD_FAST_FORWARD": "\n".join(fast_forward)}
    return subprocess.run([str(script)], input=lines, env=env, cwd=repository, capture_output=True, text=True)


@pytest.fixture
def history(tmp_path):
    """A repository with commits a <- b, and c beside them (not a descendant of b)."""
    git = lambda *args: subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()  # noqa: E731
    git("init", "-q")
    shas = {}
    for name, parent in (("a", None), ("b", "a"), ("c", "a")):
        git("checkout", "-q", "--detach", shas[parent]) if parent else None
        git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", name)
        shas[name] = git("rev-parse", "HEAD")
    return tmp_path, shas


def test_the_vetted_hook_refuses_a_force_push_of_a_listed_branch(history):
    repository, sha = history
    forward, rewrite = f"{sha['a']} {sha['b']} refs/heads/master", f"{sha['b']} {sha['c']} refs/heads/master"
    assert run_vetted_hook(repository, forward + "\n", [forward], [forward]).returncode == 0
    refused = run_vetted_hook(repository, rewrite + "\n", [rewrite], [rewrite])
    assert refused.returncode == 1
    assert refused.stderr == f"codeyard: {NO_FORCE_PUSH} (refs/heads/master)\n"
    assert run_vetted_hook(repository, rewrite + "\n", [rewrite], []).returncode == 0  # an unprotected branch


def test_the_vetted_hook_refuses_an_update_it_was_not_told_of(history):
    repository, sha = history
    vetted = f"{sha['a']} {sha['b']} refs/heads/topic"
    for other in (f"{sha['a']} {sha['b']} refs/heads/master", f"{sha['a']} {sha['b']} refs/heads/topi",
                  f"{sha['a']} {sha['c']} refs/heads/topic", f"{sha['a']} {sha['b']} refs/heads/*"):  # fmt: skip
        result = run_vetted_hook(repository, f"{vetted}\n{other}\n", [vetted], [])
        assert result.returncode == 1 and "was not among the push's commands" in result.stderr
    assert run_vetted_hook(repository, f"{vetted}\n", [], []).returncode == 1  # nothing vetted: nothing passes


# --- access levels: no one, developers, maintainers, admins; force pushes when allowed ------------

LEVELS = {"nobody": {"push_access_level": 0, "allow_force_push": False},
          "devs": {"push_access_level": 30, "allow_force_push": True},
          "admins": {"push_access_level": 60, "allow_force_push": False}}  # fmt: skip
OWNER = {"push_code", "push_code_to_protected_branches", "admin_project"}


def test_level_zero_refuses_everyone_and_level_sixty_admits_admins_only():
    line = f"{OLD} {NEW} refs/heads/nobody"
    for admin in (False, True):
        assert githooks.check([line], githooks.push_rules(OWNER, LEVELS, admin=admin), descends=lambda o, n: True) == [
            "You are not allowed to push code to protected branches on this project. (refs/heads/nobody)"
        ]
    admins = f"{OLD} {NEW} refs/heads/admins"
    assert githooks.check([admins], githooks.push_rules(OWNER, LEVELS), descends=lambda o, n: True)
    assert githooks.check([admins], githooks.push_rules(OWNER, LEVELS, admin=True), descends=lambda o, n: True) == []
    # The admin line is the server's: a rule text without it does not make the caller one.
    assert githooks.Rules(githooks.push_rules(OWNER, LEVELS)).admin is False


def test_allow_force_push_lets_those_who_push_rewrite_and_vet_asks_git_nothing():
    rewrite = f"{OLD} {NEW} refs/heads/devs"
    developer = githooks.push_rules({"push_code"}, LEVELS)
    assert githooks.check([rewrite], developer, descends=lambda o, n: False) == []
    assert githooks.vet([rewrite], developer) == ([rewrite], [])
    # Still no deletion by a push, and the push level still decides who pushes.
    assert githooks.check([f"{OLD} {ZERO} refs/heads/devs"], developer)
    assert githooks.check([rewrite], githooks.push_rules({"read_project"}, LEVELS), descends=lambda o, n: False)


def test_wildcards_cover_branches_and_the_most_permissive_row_decides():
    from codeyard.policies.branches import applicable, matches

    assert matches("*-stable", "1-stable") and matches("release/*", "release/a/b") and matches("*", "x")
    assert not matches("*-stable", "stable") and not matches("release/*", "releases") and not matches("a*a", "a")
    assert matches("a*b*c", "abc") and matches("a*b*c", "a-b-b-c") and not matches("a*b*c", "acb")
    rows = {"release/*": {"push_access_level": 40, "allow_force_push": True},
            "release/1": {"push_access_level": 0, "allow_force_push": False},
            "*": {"push_access_level": 60, "allow_force_push": True}}  # fmt: skip
    parsed = githooks.Rules(githooks.push_rules({"push_code"}, rows))
    combined = parsed.protection("refs/heads/release/1")
    assert (combined.push_access_level, combined.allow_force_push) == (40, False)
    assert applicable(parsed.protected, "other").push_access_level == 60
    developer = githooks.push_rules({"push_code"}, rows)
    assert githooks.check([f"{OLD} {NEW} refs/heads/release/2"], developer, descends=lambda o, n: True)
    assert githooks.check([f"{OLD} {NEW} refs/heads/release/2"],
                          githooks.push_rules(OWNER, rows), descends=lambda o, n: True) == []  # fmt: skip
