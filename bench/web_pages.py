"""Web pages against the JSON endpoints they show, in the same run: requests/second of each page
and its ratio to the JSON answer (issue 16: a page answers in a time of the order of its endpoint).

Seeding: user `alice` with 30 projects; `alice/demo` holds a repository (a README, a 300-line Python
file, 60 commits), an open merge request with 20 comments and a pipeline of 12 builds in 3 stages
on master's head. Pages are fetched with a signed-in
session cookie, JSON with a private token; wrk drives each in alternating rounds, on codeyard as
shipped (`codeyard serve`, one process per core) and with one process, side by side.

    .venv/bin/python bench/web_pages.py [--seconds 5] [--rounds 2] [--connections 16] [--servers both|shipped|one]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from common import (
    PYTHON,
    add_shape_option,
    chosen_shapes,
    codeyard_env,
    codeyard_servers,
    ensure_wrk,
    wait_until_up,
)

SEED = r"""
import os, subprocess, tempfile
from codeyard import config
from codeyard.db import migrate
from codeyard.git import storage
from codeyard.runtime import Runtime
from codeyard.services import credentials, notes, projects, signin, users, web_sessions
from codeyard.services.merge_requests import records, status
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    alice = users.create(session, {"username": "alice", "email": "alice@example.com", "name": "Alice", "projects_limit": 100}, None)
    _, token = credentials.issue_token(session, alice.id, name="bench")
    home = users.personal_namespace(session, alice)
    demo = projects.create(session, rt, alice, home, {"name": "demo", "visibility_level": 20,
                                                      "description": "The benchmark's project"})
    for n in range(29):
        projects.create(session, rt, alice, home, {"name": f"other-{n}", "visibility_level": 20})
    demo_id = demo.id
work = tempfile.mkdtemp()
env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "HOME": work,
       "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com",
       "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.com"}
def git(*args):
    subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
git("init", "-q", "-b", "master")
open(os.path.join(work, "README.md"), "w").write("# Demo\n\nA *benchmark* project.\n\n" + "- item\n" * 50)
code = "".join(f"def function_{n}(value):\n    return value * {n}  # line {n}\n\n" for n in range(100))
for n in range(60):
    open(os.path.join(work, "app.py"), "w").write(code + f"VERSION = {n}\n")
    git("add", "-A")
    git("commit", "-q", "-m", f"Change {n}")
git("checkout", "-q", "-b", "feature")
open(os.path.join(work, "app.py"), "w").write(code.replace("value *", "value +") + "VERSION = 'feature'\n")
git("commit", "-q", "-am", "Add instead of multiply")
git("push", "-q", str(storage.repository_path(cfg.repositories_dir, demo_id)), "master", "feature")
with rt.db.transaction() as session:
    from codeyard.db.models import Project, User
    demo = session.get(Project, demo_id)
    projects.set_default_branch(session, rt, demo, "master")
    actor = session.get(User, alice.id)
    mr, check = records.create(session, rt, actor, demo, {"source_branch": "feature", "target_branch": "master",
                                                          "title": "Add instead", "description": "Some **text**"})
    for n in range(20):
        notes.comment_on_merge_request(session, rt, demo, actor, mr, f"Comment {n} with *emphasis*")
    mr_id = mr.id
    from codeyard.db.models import Pipeline
    from codeyard.services.ci import pipelines
    head = subprocess.run(["git", "rev-parse", "master"], cwd=work, env=env, check=True, capture_output=True, text=True).stdout.strip()
    jobs = [{"name": f"job-{stage}-{n}", "stage": f"stage{stage}", "stage_idx": stage, "commands": "true", "options": {},
             "variables": [], "tags": [], "when": "on_success", "allow_failure": False} for stage in range(3) for n in range(4)]
    pipeline = Pipeline(project_id=demo_id, sha=head, ref="master", tag=False, user_id=alice.id,
                        config={"stages": [f"stage{n}" for n in range(3)], "jobs": jobs})
    session.add(pipeline)
    session.flush()
    for spec in jobs:
        pipelines.create_build(session, pipeline, spec, alice.id)
    pipelines.refresh_status(session, pipeline)
    pipeline_id = pipeline.id
mergeable = status.run_check(check)  # git's part of the create, with no transaction open
with rt.db.transaction() as session:
    status.finish_check(session, rt, session.get(User, alice.id), check, mergeable)
    _, cookie = web_sessions.start(session, signin.login_candidate(rt.db, alice.username))
print(token, cookie, demo_id, mr_id, pipeline_id, head)
"""


def run_wrk(wrk: str, url: str, header: str, seconds: int, connections: int) -> float:
    output = subprocess.run([wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "-H", header, url],
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        raise SystemExit(f"wrk saw {errors.group(1)} error responses from {url}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    add_shape_option(parser)
    args = parser.parse_args()
    wrk = ensure_wrk()
    shapes = chosen_shapes(args)
    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        env, _port = codeyard_env(Path(tmp))
        print("seeding 30 projects, a repository and a merge request ...", flush=True)
        seeded = subprocess.run([PYTHON, "-c", SEED], env=env, check=True, capture_output=True, text=True).stdout.split()
        token, cookie, demo, mr, pipeline, head = seeded[-6:]
        pairs = {
            "start page / GET /projects": ("/", "/api/v3/projects"),
            "project / GET /projects/:id": ("/alice/demo", f"/api/v3/projects/{demo}"),
            "file / GET .../repository/files": ("/alice/demo/blob/master/app.py",
                                                f"/api/v3/projects/{demo}/repository/files?file_path=app.py&ref=master"),
            "commits / GET .../repository/commits": ("/alice/demo/commits/master", f"/api/v3/projects/{demo}/repository/commits"),
            "merge requests / GET .../merge_requests": ("/alice/demo/merge_requests", f"/api/v3/projects/{demo}/merge_requests"),
            "merge request / GET .../changes": ("/alice/demo/merge_requests/1", f"/api/v3/projects/{demo}/merge_requests/{mr}/changes"),
            "pipeline / GET .../commits/:sha/builds": (f"/alice/demo/pipelines/{pipeline}",
                                                       f"/api/v3/projects/{demo}/repository/commits/{head}/builds"),
        }  # fmt: skip
        page_header, json_header = f"Cookie: codeyard_session={cookie}", f"PRIVATE-TOKEN: {token}"
        with codeyard_servers(env, shapes) as servers:
            for server in servers.values():
                wait_until_up(f"{server.base}/api/v3/projects/{demo}", {"PRIVATE-TOKEN": token})
                for page, endpoint in pairs.values():
                    assert b"Sign out" in wait_until_up(server.base + page, {"Cookie": f"codeyard_session={cookie}"}), page
                    wait_until_up(server.base + endpoint, {"PRIVATE-TOKEN": token})
            results = {(name, shape): ([], []) for name in pairs for shape in shapes}
            for _ in range(args.rounds):
                for name, (page, endpoint) in pairs.items():
                    for shape, server in servers.items():
                        pages, answers = results[name, shape]
                        pages.append(run_wrk(wrk, server.base + page, page_header, args.seconds, args.connections))
                        answers.append(run_wrk(wrk, server.base + endpoint, json_header, args.seconds, args.connections))
    print(f"\nwrk -c{args.connections}, best of {args.rounds} x {args.seconds}s; ratio: page / JSON on the same server")
    print(f"{'page / endpoint':44s}" + "".join(f" {shape + ': page':>22s} {'JSON':>7s} {'ratio':>6s}" for shape in shapes))
    for name in pairs:
        cells = ""
        for shape in shapes:
            page_rps, json_rps = (max(runs) for runs in results[name, shape])
            cells += f" {page_rps:22.0f} {json_rps:7.0f} {page_rps / json_rps:6.2f}"
        print(f"{name:44s}{cells}")


if __name__ == "__main__":
    main()
