"""The route registries: `API` for /api/v3, `WEB` for paths outside it (OAuth, git, uploads)."""

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
        groups,
        hooks,
        members,
        merge_requests,
        meta,
        namespaces,
        projects,
        repository,
        session,
        settings,
        uploads,
        users,
    )

    return [*API.routes, *WEB.routes]
