"""The segment-tree router."""

from __future__ import annotations

import pytest

from codeyard.http.routing import Router, Routes, mount


def handler(name):
    def h(ctx):
        return name

    h.__name__ = name
    return h


@pytest.fixture
def router():
    r = Routes()
    for method, template in [
        ("GET", "/projects"),
        ("POST", "/projects"),
        ("GET", "/projects/:id"),
        ("PUT", "/projects/:id"),
        ("GET", "/projects/search/:query"),
        ("GET", "/projects/:id/branches/*branch"),
        ("PUT", "/projects/:id/branches/*branch/protect"),
        ("DELETE", "/projects/:id/branches/*branch"),
    ]:
        r.add(method, template, handler(f"{method} {template}"))
    return Router(mount("/api", r))


def name_of(match):
    return match.route.handler.__name__ if match and match.route else None


def test_static_and_parameters(router):
    assert name_of(router.match("GET", "/api/projects")) == "GET /projects"
    match = router.match("GET", "/api/projects/42")
    assert name_of(match) == "GET /projects/:id" and match.params == {"id": "42"}
    assert name_of(router.match("GET", "/api/projects/search/foo")) == "GET /projects/search/:query"
    assert router.match("GET", "/api/projects/42/unknown") is None
    assert router.match("GET", "/elsewhere") is None


def test_static_segment_does_not_hide_parameter_for_other_verbs(router):
    match = router.match("PUT", "/api/projects/search")
    assert name_of(match) == "PUT /projects/:id" and match.params == {"id": "search"}


def test_percent_encoded_slash_stays_in_one_parameter(router):
    match = router.match("GET", "/api/projects/group%2Fproject")
    assert match.params == {"id": "group/project"}


def test_greedy_parameter_prefers_the_specific_suffix(router):
    match = router.match("PUT", "/api/projects/1/branches/feature/x/protect")
    assert name_of(match) == "PUT /projects/:id/branches/*branch/protect"
    assert match.params == {"id": "1", "branch": "feature/x"}
    match = router.match("GET", "/api/projects/1/branches/feature/x/protect")
    assert name_of(match) == "GET /projects/:id/branches/*branch"
    assert match.params["branch"] == "feature/x/protect"
    assert router.match("GET", "/api/projects/1/branches/feature%2Fy").params["branch"] == "feature/y"


def test_method_not_allowed_lists_allowed_methods(router):
    match = router.match("DELETE", "/api/projects")
    assert match.route is None and match.allowed == ("GET", "HEAD", "POST")
    match = router.match("POST", "/api/projects/1/branches/main")
    assert match.route is None and set(match.allowed) == {"GET", "HEAD", "DELETE"}


def test_head_uses_get_and_json_suffix(router):
    assert name_of(router.match("HEAD", "/api/projects/5")) == "GET /projects/:id"
    assert name_of(router.match("GET", "/api/projects.json")) == "GET /projects"
    # Only a fallback: a parameter that really ends in .json keeps it.
    assert router.match("GET", "/api/projects/7.json").params == {"id": "7.json"}
    assert name_of(router.match("GET", "/api/projects/search/x.json")) == "GET /projects/search/:query"
    assert name_of(router.match("GET", "/api/projects/")) == "GET /projects"


def test_json_suffix_beats_a_parameter_route_of_another_method():
    r = Routes()
    for method, template in [("POST", "/builds/register"), ("PUT", "/builds/:id")]:
        r.add(method, template, handler(f"{method} {template}"))
    router = Router(mount("/ci", r))
    assert name_of(router.match("POST", "/ci/builds/register.json")) == "POST /builds/register"
    assert router.match("PUT", "/ci/builds/register.json").params == {"id": "register.json"}
    assert router.match("GET", "/ci/builds/register.json").allowed == ("PUT",)


def test_declaring_a_route_twice_or_clashing_names_fails():
    r = Routes()
    r.add("GET", "/a/:id", handler("one"))
    r.add("GET", "/a/:id", handler("two"))
    with pytest.raises(ValueError, match="declared twice"):
        Router(r.routes)
    r = Routes()
    r.add("GET", "/a/:id", handler("one"))
    r.add("PUT", "/a/:other", handler("two"))
    with pytest.raises(ValueError, match="clashes"):
        Router(r.routes)


def test_at_most_one_greedy_parameter_per_template():
    r = Routes()
    r.add("GET", "/a/*one/b/*two", handler("one"))
    with pytest.raises(ValueError, match="at most one"):
        Router(r.routes)


def test_matching_a_long_path_walks_each_candidate_once(router, monkeypatch):
    walks = 0
    walk = Router._walk

    def counting(self, *args):
        nonlocal walks
        walks += 1
        yield from walk(self, *args)

    monkeypatch.setattr(Router, "_walk", counting)
    for segments in (10, 5000):
        walks = 0
        branch = "/".join(["b"] * segments)
        match = router.match("PUT", f"/api/projects/1/branches/{branch}/protect")
        assert match.params["branch"] == branch
        # A greedy capture tries only the lengths some route below it can use, not every split.
        assert walks < 20
    walks = 0
    assert router.match("GET", "/api/projects/1/branches/" + "/".join(["b"] * 5000) + "/x/y").route is not None
    assert walks < 20


def test_nul_byte_in_a_segment_names_nothing(router):
    assert router.match("GET", "/api/projects/1%00") is None
    assert router.match("GET", "/api/projects/1/branches/main%00x") is None
