"""The pre-receive hook as git starts it: its script, its interpreter flags, what it imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from codeyard import githooks

OLD, NEW = "1" * 40, "2" * 40


def test_the_pre_receive_script_checks_without_site_packages(tmp_path):
    script = tmp_path / "pre-receive"
    script.write_text(githooks.scripts(sys.executable)["pre-receive"])
    script.chmod(0o700)
    rules = json.dumps({"abilities": ["push_code"], "protected": {}})
    env = {"PATH": os.environ["PATH"], "CODEYARD_PUSH_RULES": rules}
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
    assert {"codeyard.githooks", "codeyard.policies.branches", "json"} <= loaded
    assert not loaded & {"dataclasses", "inspect", "subprocess", "site", "shlex", "pathlib", "sqlalchemy", "pygit2"}
