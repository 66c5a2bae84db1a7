"""The route registries: `API` for /api/v3, `WEB` for paths outside it (OAuth, git, uploads); the web
pages register in `web.core.PAGES`."""

from __future__ import annotations

from .routing import Registry, Route

API = Registry(prefix="/api/v3")
WEB = Registry(prefix="")


def all_routes() -> list[Route]:
    # Importing a module registers its routes.
    from ..githttp import transport  # noqa: F401
    from . import ci, oauth  # noqa: F401
    from .v3 import (  # noqa: F401
        branches,
        build_artifacts,
        builds,
        commit_statuses,
        groups,
        hooks,
        members,
        merge_requests,
        meta,
        namespaces,
        notes,
        projects,
        repository,
        session,
        settings,
        uploads,
        users,
    )

    return [*API.routes, *WEB.routes]


def every_route() -> list[Route]:
    """The documented routes and the web pages (HTML, not part of the API document)."""
    from ..web.routes import all_pages

    return [*all_routes(), *all_pages()]
