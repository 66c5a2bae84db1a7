"""Pipelines and builds made directly in the database, as a push would make them."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Pipeline
from codeyard.services.ci import pipelines

SHA = "a" * 40


def job(name: str, stage: str = "test", stage_idx: int = 0, *, when: str = "on_success", allow_failure: bool = False,
        tags: list[str] | None = None) -> dict:  # fmt: skip
    return {
        "name": name, "stage": stage, "stage_idx": stage_idx, "commands": f"echo {name}", "options": {},
        "variables": [], "tags": tags or [], "when": when, "allow_failure": allow_failure,
    }  # fmt: skip


class CiFactory:
    def __init__(self, rt):
        self.rt = rt

    def pipeline(self, project, jobs: list[dict], *, ref: str = "master", sha: str = SHA, user=None,
                 stages: list[str] | None = None) -> int:  # fmt: skip
        """A pipeline with JOBS as its config and the builds of its first stage; its id."""
        stages = stages or sorted({j["stage"] for j in jobs}, key=lambda s: min(j["stage_idx"] for j in jobs if j["stage"] == s))
        with self.rt.db.transaction() as session:
            pipeline = Pipeline(project_id=project.id, sha=sha, ref=ref, tag=False, user_id=user.id if user else None,
                                config={"stages": stages, "jobs": jobs})  # fmt: skip
            session.add(pipeline)
            session.flush()
            first = min(j["stage_idx"] for j in jobs)
            for spec in jobs:
                if spec["stage_idx"] == first:
                    pipelines.create_build(session, pipeline, spec, pipeline.user_id)
            pipelines.refresh_status(session, pipeline)
            return pipeline.id

    def builds(self, pipeline_id: int) -> dict[str, Build]:
        """The latest build of each name."""
        with self.rt.db.transaction(write=False) as session:
            found = pipelines.latest_builds(session, pipeline_id)
            session.expunge_all()
        return {b.name: b for b in found}

    def all_builds(self, pipeline_id: int) -> list[Build]:
        with self.rt.db.transaction(write=False) as session:
            from sqlalchemy import select

            found = list(session.scalars(select(Build).where(Build.pipeline_id == pipeline_id).order_by(Build.id)))
            session.expunge_all()
        return found

    def status(self, pipeline_id: int) -> str:
        with self.rt.db.transaction(write=False) as session:
            return session.get(Pipeline, pipeline_id).status

    def run(self, build_id: int, **values) -> None:
        """What the runners' claim does: the build is running (with a token digest)."""
        from codeyard.db.models import utcnow
        from codeyard.services.ci import builds

        with self.rt.db.transaction() as session:
            build = session.get(Build, build_id)
            build.status, build.started_at = "running", utcnow()
            for key, value in values.items():
                setattr(build, key, value)
            session.flush()
            builds.started(session, self.rt, build)

    def finish(self, build_id: int, state: str) -> bool:
        from codeyard.services.ci import builds

        with self.rt.db.transaction() as session:
            return builds.finish(session, self.rt, session.get(Build, build_id), state)


@pytest.fixture
def ci(rt) -> CiFactory:
    return CiFactory(rt)
