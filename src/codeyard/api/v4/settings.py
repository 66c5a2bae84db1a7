"""`/application/settings` in v4: the instance settings under GitLab v4's names, admin only. The
service and its rules are v3's (services/settings.py); only names and visibility words differ."""

from __future__ import annotations

from typing import Any

from ...db.hooks import on_commit
from ...entities.v4 import VISIBILITY_LEVELS
from ...entities.v4.settings import ApplicationSettingsV4, application_settings
from ...http.context import Ctx
from ...http.params import Bool, Choice, Int, Param, ParamError, Str, Url, as_list
from ...http.routing import Routes
from ...services import settings
from ..common.settings import domain_list

routes = Routes()

WORDS = tuple(VISIBILITY_LEVELS)


class VisibilityList(Param):
    """Visibility levels as words or numbers (a JSON array or comma separated), as levels."""

    json_type = "array"

    def convert(self, value: Any) -> list[int]:
        levels = []
        for item in as_list(value):
            text = str(item).strip() if isinstance(item, str | int) and not isinstance(item, bool) else ""
            level = VISIBILITY_LEVELS.get(text, int(text) if text in ("0", "10", "20") else None)
            if level is None:
                raise ParamError(f"'{item}' is not a valid visibility level")
            levels.append(level)
        return levels

    def schema(self) -> dict:
        return {"type": "array", "items": {"type": ["string", "integer"]}}


# Each v4 name (with the legacy ones GitLab v4 still takes) and the service's field it sets.
SETTINGS_PARAMS = (
    Int("default_projects_limit", minimum=0),
    Bool("signup_enabled"),
    Bool("password_authentication_enabled_for_web", aliases=("password_authentication_enabled", "signin_enabled")),
    Bool("gravatar_enabled", doc="Show avatars from the external avatar service"),
    Str("sign_in_text", max_length=10000, nullable=True, multiline=True),
    Url("home_page_url", nullable=True),
    Url("after_sign_out_path", nullable=True),
    Choice("default_branch_protection", settings.BRANCH_PROTECTION_LEVELS, doc="0 none, 1 developers may push, 2 maintainers only"),
    VisibilityList("restricted_visibility_levels"),
    Int("max_attachment_size", minimum=1, doc="Megabytes"),
    Int("session_expire_delay", minimum=0, doc="Minutes a sign-in token lives (0: until revoked)"),
    Choice("default_project_visibility", WORDS),
    Choice("default_snippet_visibility", WORDS),
    Choice("default_group_visibility", WORDS),
    domain_list("domain_allowlist", aliases=("domain_whitelist",)),
    Bool("user_oauth_applications"),
    Bool("allow_local_requests_from_web_hooks_and_services", aliases=("allow_local_requests_from_hooks_and_services",)),
)
FIELDS = {
    "password_authentication_enabled_for_web": "signin_enabled",
    "gravatar_enabled": "avatarservice_enabled",
    "domain_allowlist": "restricted_signup_domains",
    "allow_local_requests_from_web_hooks_and_services": "allow_local_requests_from_hooks",
}


def _changes(args: dict) -> dict:
    changes = {}
    for name, value in args.items():
        if name.startswith("default_") and name.endswith("_visibility"):
            value = VISIBILITY_LEVELS[value]
        changes[FIELDS.get(name, name)] = value
    return changes


@routes.get("/application/settings", admin=True, summary="The application settings (admin)")
def get_settings(ctx: Ctx) -> ApplicationSettingsV4:
    return application_settings(settings.load(ctx.session))


@routes.put("/application/settings", admin=True, params=SETTINGS_PARAMS, summary="Change application settings (admin)")
def update_settings(ctx: Ctx) -> ApplicationSettingsV4:
    row = settings.update(ctx.session, _changes(ctx.args))
    on_commit(ctx.session, ctx.rt.presentation.invalidate)
    return application_settings(row)
