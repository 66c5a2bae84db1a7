"""Every route a module declares is mounted by `codeyard.routes`, once; the API's routes can be
mounted under a second prefix beside the first, as v4's are."""

from __future__ import annotations

import importlib
import pkgutil

import codeyard
from codeyard import routes
from codeyard.http.routing import Router, Routes, mount


def declared_collections() -> dict[str, Routes]:
    """Every `Routes` a codeyard module holds at its top level, by `module.name`."""
    found = {}
    for info in pkgutil.walk_packages(codeyard.__path__, "codeyard."):
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, Routes):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_declared_route_collection_is_mounted_once():
    mounted = [*routes.API, *routes.API4, *routes.OUTSIDE_THE_API, *routes.PAGES]
    assert len({id(collection) for collection in mounted}) == len(mounted)
    declared = declared_collections()
    assert len(declared) >= len(mounted)  # the walk found them
    unmounted = [name for name, collection in declared.items() if all(collection is not other for other in mounted)]
    assert unmounted == []


def test_the_api_mounts_under_a_second_prefix_beside_the_first():
    both = [*routes.every_route(), *mount("/api/v5", *routes.API)]
    router = Router(both)
    assert router.match("GET", "/api/v5/projects").route.handler is router.match("GET", "/api/v3/projects").route.handler


def test_v4_is_served_beside_v3():
    router = Router(routes.every_route())
    assert router.match("GET", "/api/v4/user").route.template == "/api/v4/user"
    assert router.match("GET", "/api/v3/user").route.handler is not router.match("GET", "/api/v4/user").route.handler
