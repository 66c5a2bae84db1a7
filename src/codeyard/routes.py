"""Where every route is mounted: the one list of the modules that declare routes.

Each handler module declares its routes in a `Routes` of its own, with templates relative to where
they are mounted; nothing registers itself anywhere else. Here the API's routes are mounted under
its version's prefix with the OpenAPI document of what is served, the others at the root (the
runners' protocol, OAuth, git over HTTP, uploads, health and metrics), and the web pages beside
them. API v4 is a second edge of the same services: its modules (`api/v4`) are mounted under
`/api/v4`, with a document of their own.
"""

from __future__ import annotations

from .api import ci, oauth, openapi
from .api.v3 import (
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
from .api.v4 import award_emoji as v4_award_emoji
from .api.v4 import discussions as v4_discussions
from .api.v4 import meta as v4_meta
from .api.v4 import notes as v4_notes
from .api.v4 import users as v4_users
from .githttp import transport
from .http.routing import Route, mount
from .web import builds as build_pages
from .web import home as home_pages
from .web import merge_requests as merge_request_pages
from .web import pipelines as pipeline_pages
from .web import repository as repository_pages
from .web import settings as settings_pages

API_V3 = "/api/v3"
API = (
    ci.routes,
    branches.routes,
    build_artifacts.routes,
    builds.routes,
    commit_statuses.routes,
    projects.routes,
    groups.routes,
    hooks.routes,
    members.routes,
    merge_requests.routes,
    namespaces.routes,
    notes.routes,
    repository.routes,
    session.routes,
    settings.routes,
    uploads.routes,
    users.routes,
)
API_V4 = "/api/v4"
API4 = (v4_meta.routes, v4_users.routes, v4_notes.routes, v4_discussions.routes, v4_award_emoji.routes)
OUTSIDE_THE_API = (transport.routes, ci.root_routes, oauth.routes, meta.routes, uploads.root_routes)
PAGES = (
    repository_pages.pages,
    build_pages.pages,
    home_pages.pages,
    merge_request_pages.pages,
    pipeline_pages.pages,
    settings_pages.pages,
)


def documented_routes() -> list[Route]:
    """The routes the OpenAPI documents list: each version's (with its document), v3's with those
    outside the API."""
    return [
        *openapi.with_document(API_V3, [*mount(API_V3, *API), *mount("", *OUTSIDE_THE_API)]),
        *openapi.with_document(API_V4, mount(API_V4, *API4)),
    ]


def every_route() -> list[Route]:
    """The documented routes and the web pages (HTML, not part of the API document)."""
    return [*documented_routes(), *mount("", *PAGES)]
