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
from .api.v4 import branches as v4_branches
from .api.v4 import commits as v4_commits
from .api.v4 import discussions as v4_discussions
from .api.v4 import files as v4_files
from .api.v4 import groups as v4_groups
from .api.v4 import hooks as v4_hooks
from .api.v4 import members as v4_members
from .api.v4 import merge_requests as v4_merge_requests
from .api.v4 import meta as v4_meta
from .api.v4 import namespaces as v4_namespaces
from .api.v4 import notes as v4_notes
from .api.v4 import personal_access_tokens as v4_personal_access_tokens
from .api.v4 import projects as v4_projects
from .api.v4 import protected_branches as v4_protected_branches
from .api.v4 import repository as v4_repository
from .api.v4 import settings as v4_settings
from .api.v4 import tags as v4_tags
from .api.v4 import users as v4_users
from .githttp import transport
from .http.routing import Route, mount
from .web import builds as build_pages
from .web import home as home_pages
from .web import merge_requests as merge_request_pages
from .web import pipelines as pipeline_pages
from .web import repository as repository_pages
from .web import settings as settings_pages
from .web import tokens as token_pages

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
API4 = (
    v4_meta.routes,
    v4_users.routes,
    v4_groups.routes,
    v4_members.routes,
    v4_merge_requests.routes,
    v4_namespaces.routes,
    v4_settings.routes,
    v4_repository.routes,
    v4_files.routes,
    v4_commits.routes,
    v4_personal_access_tokens.routes,
    v4_projects.routes,
    v4_hooks.routes,
    v4_branches.routes,
    v4_protected_branches.routes,
    v4_tags.routes,
    v4_notes.routes,
    v4_discussions.routes,
    v4_award_emoji.routes,
)
OUTSIDE_THE_API = (transport.routes, ci.root_routes, oauth.routes, meta.routes, uploads.root_routes)
PAGES = (
    repository_pages.pages,
    build_pages.pages,
    home_pages.pages,
    merge_request_pages.pages,
    pipeline_pages.pages,
    settings_pages.pages,
    token_pages.pages,
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
