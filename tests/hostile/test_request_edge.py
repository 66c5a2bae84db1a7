"""Request targets: long paths are refused before routing and authentication, matching is linear."""

from __future__ import annotations

import time

from .state import snapshot


def test_target_over_8_kib_is_414_before_authentication(api, admin, rt):
    before = snapshot(rt)
    started = time.perf_counter()
    response = api.anonymous.get("/projects/1/repository/branches/" + "a/" * 30_000)  # httpx refuses URLs over 64 KiB
    assert time.perf_counter() - started < 1
    assert response.status_code == 414
    assert response.json() == {"message": "414 Request-URI Too Large"}
    response = api.as_(admin).post("/projects", params={"name": "x" * 9000})
    assert response.status_code == 414
    assert snapshot(rt) == before


def test_many_segments_under_the_limit_match_quickly(api, users, rt):
    alice = users.create("alice")
    before = snapshot(rt)
    branch = "/".join(["b"] * 4000)
    started = time.perf_counter()
    response = api.as_(alice).put(f"/projects/999/repository/branches/{branch}/protect")
    assert time.perf_counter() - started < 1
    assert response.status_code == 404
    assert snapshot(rt) == before


def test_nul_byte_in_the_path_is_404(api, users, projects, rt):
    alice = users.create("alice")
    project = projects.create(alice)
    before = snapshot(rt)
    assert api.as_(alice).get(f"/projects/{project.id}%00").status_code == 404
    response = api.as_(alice).delete(f"/projects/{project.id}%00")
    assert response.status_code == 404
    assert response.json() == {"message": "404 Not Found"}
    assert snapshot(rt) == before
