"""A project page's subject: the project the path names and what the caller may do there, decided
by the same policy as the API (a project the caller may not read is 404, never 403)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from ..api.context import Ctx
from ..db.models import Project
from ..errors import Forbidden, NotFound
from ..policies import projects as policy
from ..services import access as access_service
from ..services import projects as project_service


@dataclass(frozen=True)
class ProjectPage:
    project: Project
    access: policy.Access
    base_url: str

    @property
    def url(self) -> str:
        return "/" + quote(self.project.path_with_namespace)

    @property
    def namespace_url(self) -> str:
        namespace = self.project.namespace
        return ("/u/" if namespace.kind == "user" else "/groups/") + quote(namespace.path)

    @property
    def clone_url(self) -> str:
        return f"{self.base_url}/{self.project.path_with_namespace}.git"

    @property
    def default_branch(self) -> str:
        return self.project.head_branch

    def can(self, ability: str) -> bool:
        return self.access.can(ability)

    @property
    def can_code(self) -> bool:
        return self.can(policy.DOWNLOAD_CODE)

    @property
    def can_read_mrs(self) -> bool:
        return self.can(policy.READ_MERGE_REQUEST)

    @property
    def can_admin(self) -> bool:
        return self.can(policy.ADMIN_PROJECT)

    def need(self, *abilities: str) -> ProjectPage:
        """403 unless the caller has every one of ABILITIES (the project is readable: no secret kept)."""
        if not all(self.can(ability) for ability in abilities):
            raise Forbidden()
        return self


def load(ctx: Ctx, *abilities: str) -> ProjectPage:
    """The project of `/:namespace/:project/...` with the caller's access; 404 when unreadable,
    403 when readable but one of ABILITIES is missing."""
    namespace, path = ctx.path_params["namespace"], ctx.path_params["project"]
    if "/" in namespace or "/" in path:
        raise NotFound()
    project = project_service.find(ctx.session, f"{namespace}/{path}")
    if project is None:
        raise NotFound()
    access = access_service.access(ctx.session, ctx.actor, project)
    if not access.can(policy.READ_PROJECT):
        raise NotFound()
    return ProjectPage(project, access, ctx.base_url).need(*abilities)
