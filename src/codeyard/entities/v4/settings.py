"""The v4 application settings: what codeyard stores (`entities/settings.py`) under GitLab v4's names,
visibilities as words; the legacy names GitLab v4 still answers are kept beside the new ones."""

from __future__ import annotations

from typing import TypedDict

from ..settings import application_settings as settings_v3
from . import Visibility, visibility


class ApplicationSettingsV4(TypedDict):
    id: int
    default_projects_limit: int
    signup_enabled: bool
    password_authentication_enabled_for_web: bool
    password_authentication_enabled: bool
    signin_enabled: bool
    gravatar_enabled: bool
    sign_in_text: str
    created_at: str | None
    updated_at: str | None
    home_page_url: str
    default_branch_protection: int
    restricted_visibility_levels: list[Visibility]
    max_attachment_size: int
    session_expire_delay: int
    default_project_visibility: Visibility
    default_snippet_visibility: Visibility
    default_group_visibility: Visibility
    domain_allowlist: list[str]
    domain_whitelist: list[str]
    user_oauth_applications: bool
    after_sign_out_path: str
    allow_local_requests_from_web_hooks_and_services: bool
    allow_local_requests_from_hooks_and_services: bool


def application_settings(row) -> ApplicationSettingsV4:
    base = settings_v3(row)
    return {
        "id": base["id"],
        "default_projects_limit": base["default_projects_limit"],
        "signup_enabled": base["signup_enabled"],
        "password_authentication_enabled_for_web": base["signin_enabled"],
        "password_authentication_enabled": base["signin_enabled"],
        "signin_enabled": base["signin_enabled"],
        "gravatar_enabled": base["avatarservice_enabled"],
        "sign_in_text": base["sign_in_text"],
        "created_at": base["created_at"],
        "updated_at": base["updated_at"],
        "home_page_url": base["home_page_url"],
        "default_branch_protection": base["default_branch_protection"],
        "restricted_visibility_levels": [visibility(level) for level in base["restricted_visibility_levels"]],
        "max_attachment_size": base["max_attachment_size"],
        "session_expire_delay": base["session_expire_delay"],
        "default_project_visibility": visibility(base["default_project_visibility"]),
        "default_snippet_visibility": visibility(base["default_snippet_visibility"]),
        "default_group_visibility": visibility(base["default_group_visibility"]),
        "domain_allowlist": base["restricted_signup_domains"],
        "domain_whitelist": base["restricted_signup_domains"],
        "user_oauth_applications": base["user_oauth_applications"],
        "after_sign_out_path": base["after_sign_out_path"],
        "allow_local_requests_from_web_hooks_and_services": base["allow_local_requests_from_hooks"],
        "allow_local_requests_from_hooks_and_services": base["allow_local_requests_from_hooks"],
    }
