"""/application/settings: admin only, defaults, validated changes that persist."""

from __future__ import annotations

import pytest

DEFAULTS = {
    "default_projects_limit": 10,
    "signup_enabled": True,
    "signin_enabled": True,
    "avatarservice_enabled": True,
    "sign_in_text": "",
    "home_page_url": "",
    "default_branch_protection": 2,
    "socialnetwork_sharing_enabled": True,
    "restricted_visibility_levels": [],
    "max_attachment_size": 10,
    "session_expire_delay": 10080,
    "default_project_visibility": 0,
    "default_snippet_visibility": 0,
    "restricted_signup_domains": [],
    "user_oauth_applications": True,
    "after_sign_out_path": "",
    "allow_local_requests_from_hooks": False,
}


def test_defaults(api, admin):
    response = api.as_(admin).get("/application/settings")
    assert response.status_code == 200
    body = response.json()
    assert {key: body[key] for key in DEFAULTS} == DEFAULTS
    assert {"id", "created_at", "updated_at"} <= set(body)


def test_admin_only(api, users):
    alice = users.create("alice")
    assert api.anonymous.get("/application/settings").status_code == 401
    assert api.anonymous.put("/application/settings", json={"signup_enabled": False}).status_code == 401
    response = api.as_(alice).get("/application/settings")
    assert response.status_code == 403 and response.json() == {"message": "403 Forbidden"}
    assert api.as_(alice).put("/application/settings", json={"signup_enabled": False}).status_code == 403


def test_change_a_subset(api, admin):
    change = {
        "default_projects_limit": 3,
        "signin_enabled": False,
        "sign_in_text": "Welcome",
        "home_page_url": "https://intranet.example/home",
        "default_branch_protection": 1,
        "restricted_visibility_levels": [20, 10],
        "max_attachment_size": 25,
        "session_expire_delay": 60,
        "default_project_visibility": 10,
        "restricted_signup_domains": ["example.com", "*.corp.example"],
        "allow_local_requests_from_hooks": True,
    }
    response = api.as_(admin).put("/application/settings", json=change)
    assert response.status_code == 200
    assert {key: response.json()[key] for key in change} == change
    stored = api.as_(admin).get("/application/settings").json()
    assert {key: stored[key] for key in change} == change
    assert stored["signup_enabled"] is True  # untouched


def test_form_encoding_and_aliases(api, admin):
    response = api.as_(admin).put(
        "/application/settings",
        data={"gravatar_enabled": "false", "twitter_sharing_enabled": "0", "restricted_visibility_levels[]": ["0", "20"]},
    )
    assert response.status_code == 200
    body = response.json()
    assert body["avatarservice_enabled"] is False and body["socialnetwork_sharing_enabled"] is False
    assert body["restricted_visibility_levels"] == [0, 20]


def test_avatars_follow_the_setting(api, admin, users):
    alice = users.create("alice")
    api.as_(admin).put("/application/settings", json={"avatarservice_enabled": False})
    assert api.as_(alice).get("/user").json()["avatar_url"] == ""


def test_clear_a_nullable_field(api, admin):
    api.as_(admin).put("/application/settings", json={"sign_in_text": "hello", "home_page_url": "http://x.example"})
    body = api.as_(admin).put("/application/settings", json={"sign_in_text": None, "home_page_url": ""}).json()
    assert body["sign_in_text"] == "" and body["home_page_url"] == ""  # cleared; the spec types them strings


@pytest.mark.parametrize(
    ("change", "errors"),
    [
        ({"restricted_visibility_levels": [5]}, {"restricted_visibility_levels": ["'5' is not a valid visibility level"]}),
        ({"default_branch_protection": 3}, {"default_branch_protection": ["is not included in the list"]}),
        ({"default_project_visibility": 15}, {"default_project_visibility": ["is not included in the list"]}),
        ({"home_page_url": "ftp://example.com"}, {"home_page_url": ["must be a valid URL"]}),
        ({"after_sign_out_path": "not a url"}, {"after_sign_out_path": ["must be a valid URL"]}),
        ({"max_attachment_size": 0}, {"max_attachment_size": ["must be greater than 0"]}),
        ({"session_expire_delay": -1}, {"session_expire_delay": ["must be greater than or equal to 0"]}),
        ({"default_projects_limit": "ten"}, {"default_projects_limit": ["is not a number"]}),
        ({"signup_enabled": "perhaps"}, {"signup_enabled": ["is not a boolean"]}),
        ({"restricted_signup_domains": ["not a domain"]}, {"restricted_signup_domains": ["'not a domain' is not a valid domain"]}),
        (
            {"max_attachment_size": -5, "default_branch_protection": 9},
            {"max_attachment_size": ["must be greater than 0"], "default_branch_protection": ["is not included in the list"]},
        ),
    ],
)
def test_invalid_changes_are_400_and_change_nothing(api, admin, change, errors):
    before = api.as_(admin).get("/application/settings").json()
    response = api.as_(admin).put("/application/settings", json={"signup_enabled": False, **change})
    assert response.status_code == 400
    assert response.json() == {"message": errors}
    assert api.as_(admin).get("/application/settings").json() == before


def test_domain_list_under_both_names(api, admin):
    put = api.as_(admin).put
    assert put("/application/settings", json={"domain_whitelist": ["a.example"]}).json()["restricted_signup_domains"] == ["a.example"]
    # Both sent: the one that changes the stored list wins; when both change it, the spec's name wins.
    both = {"restricted_signup_domains": ["a.example"], "domain_whitelist": ["b.example"]}
    assert put("/application/settings", json=both).json()["restricted_signup_domains"] == ["b.example"]
    both = {"restricted_signup_domains": ["c.example"], "domain_whitelist": ["b.example"]}
    assert put("/application/settings", json=both).json()["restricted_signup_domains"] == ["c.example"]
    both = {"restricted_signup_domains": ["d.example"], "domain_whitelist": ["e.example"]}
    assert put("/application/settings", json=both).json()["restricted_signup_domains"] == ["d.example"]
    response = put("/application/settings", json={"domain_whitelist": ["not a domain"]})
    assert response.status_code == 400 and response.json() == {"message": {"domain_whitelist": ["'not a domain' is not a valid domain"]}}
