"""A deeply nested .gitlab-ci.yml is refused, not fatal: libyaml composes nodes recursively in C
and overflowed the stack (a segmentation fault) at some 30,000 levels, well under the size bound,
killing whichever process parsed the file (a server process on a push or a files API commit, the
job worker on an automatic merge). The parse in the unit tests runs in a child process, so that a
crash shows as a failure instead of ending pytest."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sqlalchemy import select

from codeyard.db.models import Event, Pipeline
from codeyard.services import events
from codeyard.services.ci import config

from ..githttp.conftest import Git, repo_url

NESTED = f"The file is nested deeper than {config.MAX_DEPTH} levels"
DEEP = 40_000
FLOW_SEQUENCES = "[" * DEEP + "]" * DEEP  # 80 KB, well under MAX_BYTES

HOSTILE = {
    "flow sequences": FLOW_SEQUENCES,
    "flow mappings": "{" * DEEP + "}" * DEEP,
    "block sequences": "- " * DEEP + "x\n",
    "indented mappings": "".join(" " * level + "a:\n" for level in range(400)) + " " * 400 + "b\n",
    "mixed": "job:\n  script:\n    - " + "- " * (DEEP // 2) + "[{a: " * (DEEP // 6) + "x" + "}]" * (DEEP // 6) + "\n",
}

PARSE_IN_CHILD = """
import sys
from codeyard.services.ci import config
try:
    config.parse(sys.stdin.buffer.read())
except config.ConfigError as error:
    print(error)
"""


def parse_in_child(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PARSE_IN_CHILD], input=text.encode(), capture_output=True, timeout=120)


@pytest.mark.parametrize("name", HOSTILE)
def test_deep_nesting_is_refused_without_crashing(name):
    text = HOSTILE[name]
    assert len(text.encode()) <= config.MAX_BYTES
    result = parse_in_child(text)
    assert result.returncode == 0, f"the parse died ({result.returncode}): {result.stderr.decode()[-2000:]}"
    assert result.stdout.decode().strip() == NESTED


def nested_template(levels: int) -> str:
    """A valid file whose hidden job nests LEVELS sequences (the document's mapping is one more)."""
    return "job:\n  script: [x]\n.template: " + "[" * levels + "]" * levels + "\n"


def test_nesting_up_to_the_bound_is_still_accepted():
    parsed = config.parse(nested_template(config.MAX_DEPTH))
    assert [job["name"] for job in parsed.jobs] == ["job"]
    with pytest.raises(config.ConfigError, match=NESTED):
        config.parse(nested_template(config.MAX_DEPTH + 1))


# --- through a live server ----------------------------------------------------------------------


def pipelines_of(rt, project) -> list[Pipeline]:
    with rt.db.transaction(write=False) as session:
        found = list(session.scalars(select(Pipeline).where(Pipeline.project_id == project.id).order_by(Pipeline.id)))
        session.expunge_all()
    return found


def push_events(rt, project) -> list[Event]:
    with rt.db.transaction(write=False) as session:
        query = select(Event).where(Event.project_id == project.id, Event.action == events.PUSHED)
        found = list(session.scalars(query))
        session.expunge_all()
    return found


def test_a_push_of_a_deeply_nested_file_is_recorded_with_its_error(tmp_path, live, rt, users, projects):
    alice = users.create("alice")
    project = projects.create(alice, name="demo")
    git = Git(tmp_path)
    work = git.new_work("work")
    sha = git.commit(work, ".gitlab-ci.yml", FLOW_SEQUENCES, "nested")
    pushed = git.run("push", repo_url(live, project, alice), "master", cwd=work, check=False)
    assert pushed.returncode == 0, pushed.stderr
    assert live.http.get("/-/health").status_code == 200
    assert [event.data["after"] for event in push_events(rt, project)] == [sha]
    (pipeline,) = pipelines_of(rt, project)
    assert (pipeline.sha, pipeline.yaml_errors) == (sha, NESTED)


def test_a_files_api_commit_of_a_deeply_nested_file_is_recorded_with_its_error(live, rt, users, projects):
    alice = users.create("alice")
    project = projects.create(alice, name="demo")
    url = f"/projects/{project.id}/repository/files"
    readme = {"file_path": "README", "branch_name": "master", "content": "hi\n", "commit_message": "first"}
    assert live.api.as_(alice).post(url, json=readme).status_code == 201
    nested = {**readme, "file_path": ".gitlab-ci.yml", "content": FLOW_SEQUENCES, "commit_message": "nested"}
    response = live.api.as_(alice).post(url, json=nested)
    assert response.status_code == 201, response.text
    assert live.http.get("/-/health").status_code == 200
    (pipeline,) = pipelines_of(rt, project)
    assert pipeline.yaml_errors == NESTED
