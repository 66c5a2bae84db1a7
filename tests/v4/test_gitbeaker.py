"""gitbeaker (43.8, Node.js), today's other common client, drives a real server through a team's
first hour: the calls where it differs from python-gitlab (parameters in a POST's query string, a
JSON body on DELETE, multipart on `PUT /users/:id`, keyset pages by default) are the point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ENTRY = HERE.parents[1] / ".venv" / "clients" / "gitbeaker" / "node_modules" / "@gitbeaker" / "rest" / "dist" / "index.mjs"


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if found is None or not ENTRY.is_file():
        pytest.skip("gitbeaker needs Node.js and npm (`make test` installs gitbeaker where npm is found)")
    return found


def test_a_team_s_first_hour_through_gitbeaker(node, live, users, admin):
    alice = users.create("alice")
    env = {**os.environ, "GITBEAKER_ENTRY": ENTRY.as_uri(), "CODEYARD_URL": live.base_url,
           "USER_TOKEN": alice.token, "ADMIN_TOKEN": admin.token}  # fmt: skip
    run = subprocess.run([node, str(HERE / "gitbeaker" / "flow.mjs")], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    failed = {name: result for name, result in results.items() if not result["ok"] and name != "not_found"}
    assert failed == {}
    value = {name: result.get("value") for name, result in results.items()}
    assert value["current_user"] == "alice"
    assert value["show_by_path"] == value["create_project"]["id"]
    assert value["protect"] == {"name": "release/*", "push": [0]}  # main is protected already, as GitLab does
    assert value["show_file"] == "hello\n"
    assert value["tag"] == "v1.0"
    assert value["merge_status"] == "mergeable"
    assert value["merge"]["state"] == "merged" and len(value["merge"]["merge_commit_sha"]) == 40
    assert value["branches_after"] == ["main"]  # the source branch went with the merge
    assert len(value["keyset_projects"]) == 1 and value["offset_users"] == 2
    assert value["edit_user_multipart"] == "edited through gitbeaker"
    assert results["not_found"]["ok"] is False and results["not_found"]["status"] == 404
