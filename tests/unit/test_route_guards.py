"""Every route under a project or a group goes through the one loader (`services.loader`).

A route is under a project when its path names one (`/projects/:id/...`, `/projects/fork/:id`,
`/groups/:id/projects/:project_id`, `/:namespace/:project/...`) and under a group when it names
one (`/groups/:id`, `/groups/:group`). Such a route must have a guard that loads its subject
(`api.guards.project_guard` or `group_guard`), or a handler that reaches the loader itself (the
web pages' `web.projects.load`, git's `authorize`, `serve_upload`), or be on ALLOWED below with
the reason. A route added without either fails here.

"Reaches" is read from the code: the functions a handler names, and theirs in turn, within
codeyard, down to `loader.project` or `loader.group`.
"""

from __future__ import annotations

import inspect
import re
import types

from codeyard.routes import every_route
from codeyard.services import loader

SUBJECT = re.compile(r"/projects/:|/fork/:|/groups/:|^/:namespace/:project(/|$)")
ENTRY_POINTS = {loader.project.__code__, loader.group.__code__}

# Routes under a project or group that do not load it, each with the reason.
ALLOWED: dict[tuple[str, str], str] = {}


def _functions_named(code: types.CodeType, namespace: dict):
    """The codeyard functions CODE names: globals, attributes of codeyard modules it names, and
    the code of functions and lambdas defined inside it."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const, namespace
    for name in code.co_names:
        found = namespace.get(name)
        if isinstance(found, types.ModuleType) and found.__name__.startswith("codeyard"):
            for attribute in code.co_names:
                member = getattr(found, attribute, None)
                if inspect.isfunction(member):
                    yield member.__code__, member.__globals__
        elif inspect.isfunction(found) and found.__module__.startswith("codeyard"):
            yield found.__code__, found.__globals__


def reaches_loader(function) -> bool:
    function = inspect.unwrap(function)
    seen: set[types.CodeType] = set()
    stack = [(function.__code__, function.__globals__)]
    while stack:
        code, namespace = stack.pop()
        if code in ENTRY_POINTS:
            return True
        if code in seen:
            continue
        seen.add(code)
        stack.extend(_functions_named(code, namespace))
    return False


def loads_subject(route) -> bool:
    return any(getattr(guard, "loads", None) for guard in route.guards) or reaches_loader(route.handler)


def subject_routes():
    return [route for route in every_route() if SUBJECT.search(route.template)]


def test_every_route_under_a_project_or_group_loads_it():
    unguarded = [f"{route.method} {route.template}" for route in subject_routes()
                 if (route.method, route.template) not in ALLOWED and not loads_subject(route)]  # fmt: skip
    assert unguarded == []


def test_the_walk_finds_what_it_should():
    routes = subject_routes()
    assert len(routes) > 100  # API, pages, git and uploads
    kinds = {route.kind for route in routes}
    assert {"api", "page", "raw"} <= kinds
    # and it is not everything: a route that loads no project does not reach the loader
    others = {(route.method, route.template): route for route in every_route()}
    assert not loads_subject(others[("GET", "/api/v3/users/:id")])
    assert not loads_subject(others[("POST", "/api/v3/session")])
    assert not loads_subject(others[("GET", "/u/:username")])
