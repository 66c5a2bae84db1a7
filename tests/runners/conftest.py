"""Runners registered through the protocol, and pipelines made directly in the database."""

from __future__ import annotations

import pytest

from codeyard.db.models import Build, Project
from codeyard.services import projects as project_service
from codeyard.services.ci import runners

from ..builds.conftest import CiFactory, job

V1 = "http://testserver/ci/api/v1"
__all__ = ["V1", "CiFactory", "job"]


class Runners:
    """Registers runners as a runner program would, and speaks the protocol for the tests."""

    def __init__(self, rt, api):
        self.rt = rt
        self.api = api.anonymous

    def registration_token(self) -> str:
        with self.rt.db.transaction() as session:
            return runners.registration_token(session, self.rt)

    def runners_token(self, project) -> str:
        with self.rt.db.session() as session:
            return project_service.runners_token(self.rt.secret_key, session.get(Project, project.id))

    def shared(self, tags: str = "") -> str:
        return self._register(self.registration_token(), tags)

    def specific(self, project, tags: str = "") -> str:
        return self._register(self.runners_token(project), tags)

    def _register(self, token: str, tags: str) -> str:
        response = self.api.post(f"{V1}/runners/register", json={"token": token, "tag_list": tags})
        assert response.status_code == 201, response.text
        return response.json()["token"]

    def poll(self, token: str, **extra):
        return self.api.post(f"{V1}/builds/register", json={"token": token, **extra})


@pytest.fixture
def ci(rt) -> CiFactory:
    return CiFactory(rt)


@pytest.fixture
def runner_api(rt, api) -> Runners:
    return Runners(rt, api)


@pytest.fixture
def project(projects, alice):
    return projects.create(alice, name="Demo")


def build_row(rt, build_id: int) -> Build:
    with rt.db.session() as session:
        build = session.get(Build, build_id)
        session.expunge(build)
        return build
