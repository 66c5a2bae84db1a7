"""`/application/settings`: the instance settings, admin only."""

from __future__ import annotations

from ...db.hooks import on_commit
from ...entities.settings import ApplicationSettings, application_settings
from ...http.context import Ctx
from ...http.params import Bool, Choice, Int, IntList, Str, Url
from ...http.routing import Routes
from ...services import settings
from ..common.settings import domain_list

routes = Routes()

LEVELS = settings.VISIBILITY_LEVELS




SETTINGS_PARAMS = (
    Int("default_projects_limit", minimum=0, doc="Projects a new user may create in their namespace"),
    Bool("signup_enabled"),
    Bool("signin_enabled", doc="Sign-in with a password (POST /session, POST /oauth/token)"),
    Bool("avatarservice_enabled", aliases=("gravatar_enabled",), doc="Show avatars from the external avatar service"),
    Str("sign_in_text", max_length=10000, nullable=True, multiline=True),
    Url("home_page_url", nullable=True),
    Choice("default_branch_protection", settings.BRANCH_PROTECTION_LEVELS, doc="0 none, 1 developers may push, 2 masters only"),
    Bool("socialnetwork_sharing_enabled", aliases=("twitter_sharing_enabled",)),
    IntList("restricted_visibility_levels", choices=LEVELS, item_message="'{value}' is not a valid visibility level"),
    Int("max_attachment_size", minimum=1, doc="Megabytes"),
    Int("session_expire_delay", minimum=0, doc="Minutes a sign-in token lives (0: until revoked)"),
    Choice("default_project_visibility", LEVELS),
    Choice("default_snippet_visibility", LEVELS),
    Choice("default_group_visibility", LEVELS),
    domain_list("restricted_signup_domains"),
    domain_list("domain_whitelist", doc="GitLab 8.10's name of restricted_signup_domains; wins when that one is absent or unchanged"),
    Bool("user_oauth_applications"),
    Url("after_sign_out_path", nullable=True),
    Bool("allow_local_requests_from_hooks", doc="Hooks may call loopback and private addresses (default false)"),
)


@routes.get("/application/settings", admin=True, summary="The application settings")
def get_settings(ctx: Ctx) -> ApplicationSettings:
    return application_settings(settings.load(ctx.session))


@routes.put("/application/settings", admin=True, summary="Change application settings", params=SETTINGS_PARAMS)
def update_settings(ctx: Ctx) -> ApplicationSettings:
    changes = dict(ctx.args)
    alias = changes.pop("domain_whitelist", None)
    if alias is not None:
        # python-gitlab 1.4 sends both names, the edited one and the other as it was read.
        current = list(settings.load(ctx.session).restricted_signup_domains or [])
        if changes.get("restricted_signup_domains", current) == current:
            changes["restricted_signup_domains"] = alias
    row = settings.update(ctx.session, changes)
    on_commit(ctx.session, ctx.rt.presentation.invalidate)
    return application_settings(row)
