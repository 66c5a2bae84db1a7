"""A project page's subject: the project the path names and what the caller may do there, decided
by the same policy as the API (a project the caller may not read is 404, never 403).

The project and the caller's memberships are one statement of `services.project_reads` (the API's
`GET /projects/:id`): on the fast path for GET pages, through the request's session for forms, so
a form's check runs in the transaction that makes its change. Pages show that row (`p.info`); the
ORM model (`p.project`) is loaded only by pages whose services take one.
"""

from __future__ import annotations

import functools
from urllib.parse import quote

from ..db.models import Project
from ..db.readers import now
from ..errors import Forbidden, NotFound
from ..http.context import Ctx
from ..http.refusals import load_error
from ..policies import projects as policy
from ..services import loader


class ProjectPage:
    """The project of one page (`info`: a `project_reads` row) and the caller's `access`."""

    def __init__(self, ctx: Ctx, info, access: policy.Access):
        self._ctx, self.info, self.access = ctx, info, access

    @functools.cached_property
    def project(self) -> Project:
        """The ORM model, for services that take one (one statement, in the request's session)."""
        found = self._ctx.session.get(Project, self.info.id)
        if found is None:  # deleted since the row was read
            raise NotFound()
        return found

    @property
    def path_with_namespace(self) -> str:
        return f"{self.info.ns_path}/{self.info.path}"

    @property
    def url(self) -> str:
        return "/" + quote(self.path_with_namespace)

    @property
    def namespace_url(self) -> str:
        return ("/u/" if self.info.ns_kind == "user" else "/groups/") + quote(self.info.ns_path)

    @property
    def clone_url(self) -> str:
        return f"{self._ctx.base_url}/{self.path_with_namespace}.git"

    @property
    def default_branch(self) -> str:
        return self.info.head_branch

    def can(self, ability: str) -> bool:
        return self.access.can(ability)

    @property
    def can_code(self) -> bool:
        return self.can(policy.DOWNLOAD_CODE)

    @property
    def can_read_mrs(self) -> bool:
        return self.can(policy.READ_MERGE_REQUEST)

    @property
    def can_read_builds(self) -> bool:
        return self.can(policy.READ_BUILD)

    @property
    def can_admin(self) -> bool:
        return self.can(policy.ADMIN_PROJECT)

    def need(self, *abilities: str) -> ProjectPage:
        """403 unless the caller has every one of ABILITIES (the project is readable: no secret kept)."""
        if not all(self.can(ability) for ability in abilities):
            raise Forbidden()
        return self


def load(ctx: Ctx, *abilities: str) -> ProjectPage:
    """The project of `/:namespace/:project/...` with the caller's access (`services.loader`); 404
    when unreadable, 403 when readable but one of ABILITIES is missing. GET pages read on the fast
    path, forms in the request's session (the check runs in the transaction that makes the change)."""
    reader = ctx.rt.db.fast if ctx.method in ("GET", "HEAD") else ctx.reader
    ident = loader.path_ident(ctx.path_params["namespace"], ctx.path_params["project"])
    found = now(loader.project(reader, ident, ctx.actor, abilities))
    if found.refusal is not None:
        raise load_error(found.refusal)
    return ProjectPage(ctx, found.row, found.access)
