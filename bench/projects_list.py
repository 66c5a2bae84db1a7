"""Project list benchmark: `GET /projects?per_page=100` as admin and `GET /projects/:id`, with 10,000
projects and 1,000 users, beside the bare ASGI floor of api_floor.py measured in the same run.

Seeding: 1,000 users (services), 10,000 projects inserted in bulk (the lists read no repository,
so none is created on disk), the admin a developer of 1,000 of them and a member of a group of
500 more, 3,000 stars and 300 fork links. Then wrk drives each endpoint (and the floor, once with a
small body and once with the list's body) in alternating rounds.

    .venv/bin/python bench/projects_list.py [--seconds 5] [--rounds 2] [--connections 16]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from common import (
    PYTHON,
    ROOT,
    codeyard_env,
    ensure_wrk,
    print_table,
    run_wrk,
    start_floor,
    stop,
    uvicorn_command,
    wait_until_up,
)

SEED = """
import random, secrets
from sqlalchemy import insert
from codeyard import config
from codeyard.db import migrate
from codeyard.db.models import ForkLink, GroupMember, Namespace, Project, ProjectMember, Star, User, utcnow
from codeyard.runtime import Runtime
from codeyard.services import credentials, groups, users
random.seed(7)
cfg = config.load()
migrate.upgrade(cfg.database_url)
rt = Runtime(cfg)
with rt.db.transaction() as session:
    admin = users.create(session, {"username": "boss", "email": "boss@example.com", "name": "Boss", "is_admin": True}, None)
    _, token = credentials.issue_token(session, admin.id, name="bench")
    people = [users.create(session, {"username": f"user{i}", "email": f"user{i}@example.com", "name": f"User {i}"}, None)
              for i in range(999)]
    group = groups.create(session, admin, {"name": "Big", "path": "big", "visibility_level": 0})
    namespaces = {u.id: users.personal_namespace(session, u).id for u in people}
    now = utcnow()
    rows = []
    for n in range(10_000):
        owner = people[n % len(people)]
        in_group = n < 500
        rows.append({
            "namespace_id": group.id if in_group else namespaces[owner.id], "name": f"Project {n}", "path": f"project-{n}",
            "description": f"benchmark project {n}", "visibility_level": random.choice((0, 10, 20)),
            "creator_id": owner.id, "runners_token_nonce": secrets.token_hex(16),
            "runners_token_digest": secrets.token_hex(32), "tag_list": [], "created_at": now, "updated_at": now,
            "last_activity_at": now, "issues_enabled": True, "merge_requests_enabled": True, "builds_enabled": True,
            "wiki_enabled": True, "snippets_enabled": False, "shared_runners_enabled": True, "public_builds": True,
            "archived": False,
        })
    session.execute(insert(Project), rows)
    ids = [p for (p,) in session.query(Project.id).order_by(Project.id)]
    session.execute(insert(ProjectMember), [
        {"project_id": p, "user_id": people[i % len(people)].id, "access_level": 40, "notification_level": 3,
         "created_at": now, "updated_at": now} for i, p in enumerate(ids[500:])])
    session.execute(insert(ProjectMember), [
        {"project_id": p, "user_id": admin.id, "access_level": 30, "notification_level": 3, "created_at": now,
         "updated_at": now} for p in ids[500:1500]])
    session.execute(insert(Star), [{"user_id": people[i % 999].id, "project_id": p, "created_at": now}
                                   for i, p in enumerate(random.sample(ids, 3000))])
    session.execute(insert(ForkLink), [{"forked_to_project_id": ids[-1 - i], "forked_from_project_id": ids[500 + i],
                                        "created_at": now, "updated_at": now} for i in range(300)])
print(token, ids[700])
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    wrk = ensure_wrk()

    with tempfile.TemporaryDirectory(prefix="codeyard-bench-") as tmp:
        env, port = codeyard_env(Path(tmp))
        print("seeding 1,000 users and 10,000 projects ...", flush=True)
        seeded = subprocess.run([PYTHON, "-c", SEED], env=env, check=True, capture_output=True, text=True).stdout.split()
        token, project_id = seeded[-2], seeded[-1]
        servers = [subprocess.Popen(uvicorn_command("codeyard.app:create_app", port, True), env=env, cwd=ROOT)]
        try:
            base = f"http://127.0.0.1:{port}/api/v3"
            auth = {"PRIVATE-TOKEN": token}
            urls = {
                "GET /projects?per_page=100": f"{base}/projects?per_page=100",
                "GET /projects/all?per_page=100": f"{base}/projects/all?per_page=100",
                "GET /projects/:id": f"{base}/projects/{project_id}",
            }
            list_body = wait_until_up(urls["GET /projects?per_page=100"], auth)
            assert len(json.loads(list_body)) == 100
            user_body = wait_until_up(f"{base}/user", auth)
            small_floor, small_base = start_floor(Path(tmp) / ".", user_body, env)
            servers.append(small_floor)
            (Path(tmp) / "big").mkdir()
            big_floor, big_base = start_floor(Path(tmp) / "big", list_body, env)
            servers.append(big_floor)
            targets = {
                "floor (small body, api_floor.py)": small_base + "/",
                f"floor ({len(list_body) // 1024} KiB list body)": big_base + "/",
                **urls,
            }
            results: dict[str, list] = {name: [] for name in targets}
            for _ in range(args.rounds):
                for name, url in targets.items():
                    results[name].append(run_wrk(wrk, url, token, args.seconds, args.connections))
        finally:
            stop(servers)

    best = {name: max(runs, key=lambda r: r["rps"]) for name, runs in results.items()}
    print_table(f"10,000 projects, 1,000 users; wrk -c{args.connections}, best of {args.rounds} x {args.seconds}s", best)
    floor = best["floor (small body, api_floor.py)"]["rps"]
    for name in urls:
        print(f"{name}: {best[name]['rps'] / floor:.3f} of the small-body floor")


if __name__ == "__main__":
    main()
