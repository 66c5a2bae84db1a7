"""The application settings entity."""

from __future__ import annotations

from typing import TypedDict

from .common import iso


class ApplicationSettings(TypedDict):
    id: int
    default_projects_limit: int
    signup_enabled: bool
    signin_enabled: bool
    avatarservice_enabled: bool
    sign_in_text: str
    created_at: str | None
    updated_at: str | None
    home_page_url: str
    default_branch_protection: int
    socialnetwork_sharing_enabled: bool
    restricted_visibility_levels: list[int]
    max_attachment_size: int
    session_expire_delay: int
    default_project_visibility: int
    default_snippet_visibility: int
    default_group_visibility: int
    restricted_signup_domains: list[str]
    domain_whitelist: list[str]
    user_oauth_applications: bool
    after_sign_out_path: str
    allow_local_requests_from_hooks: bool


def application_settings(row) -> ApplicationSettings:
    return {
        "id": row.id,
        "default_projects_limit": row.default_projects_limit,
        "signup_enabled": row.signup_enabled,
        "signin_enabled": row.signin_enabled,
        "avatarservice_enabled": row.avatarservice_enabled,
        "sign_in_text": row.sign_in_text or "",  # spec: strings; unset is empty
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "home_page_url": row.home_page_url or "",
        "default_branch_protection": row.default_branch_protection,
        "socialnetwork_sharing_enabled": row.socialnetwork_sharing_enabled,
        "restricted_visibility_levels": list(row.restricted_visibility_levels or []),
        "max_attachment_size": row.max_attachment_size,
        "session_expire_delay": row.session_expire_delay,
        "default_project_visibility": row.default_project_visibility,
        "default_snippet_visibility": row.default_snippet_visibility,
        "default_group_visibility": row.default_group_visibility,
        "restricted_signup_domains": list(row.restricted_signup_domains or []),
        # GitLab 8.10's name of the same list, read by python-gitlab 1.4 when it saves settings.
        "domain_whitelist": list(row.restricted_signup_domains or []),
        "user_oauth_applications": row.user_oauth_applications,
        "after_sign_out_path": row.after_sign_out_path or "",
        "allow_local_requests_from_hooks": row.allow_local_requests_from_hooks,
    }
