"""v4 application settings: GitLab v4's names and visibility words on v3's settings; admins only."""

from __future__ import annotations


def test_read_and_change_through_the_client(gl, admin, api):
    client = gl(admin)
    current = client.settings.get()
    assert current.default_project_visibility == "private"
    assert current.signup_enabled is True and current.password_authentication_enabled_for_web is True
    current.default_project_visibility = "internal"
    current.signup_enabled = False
    current.restricted_visibility_levels = ["public"]
    current.domain_allowlist = ["example.com", "*.example.org"]
    current.save()
    again = client.settings.get()
    assert again.default_project_visibility == "internal" and again.signup_enabled is False
    assert again.restricted_visibility_levels == ["public"]
    assert again.domain_allowlist == again.domain_whitelist == ["example.com", "*.example.org"]
    v3 = api.as_(admin).get("/application/settings").json()
    assert v3["default_project_visibility"] == 10 and v3["restricted_visibility_levels"] == [20]
    assert v3["restricted_signup_domains"] == ["example.com", "*.example.org"]


def test_legacy_names_and_numbers(api4, admin, api):
    client = api4.as_(admin)
    body = client.put("/application/settings", json={"signin_enabled": False, "gravatar_enabled": False,
                                                      "restricted_visibility_levels": [0, "10"]}).json()  # fmt: skip
    assert body["password_authentication_enabled_for_web"] is False and body["signin_enabled"] is False
    assert body["gravatar_enabled"] is False
    assert body["restricted_visibility_levels"] == ["private", "internal"]
    assert api.as_(admin).get("/application/settings").json()["avatarservice_enabled"] is False
    cleared = client.put("/application/settings", json={"restricted_visibility_levels": [], "password_authentication_enabled": True})
    assert cleared.json()["restricted_visibility_levels"] == [] and cleared.json()["signin_enabled"] is True
    query = client.put("/application/settings?allow_local_requests_from_hooks_and_services=true&default_group_visibility=public")
    assert query.json()["allow_local_requests_from_web_hooks_and_services"] is True
    assert query.json()["default_group_visibility"] == "public"


def test_refusals(api4, admin, alice):
    assert api4.as_(alice).get("/application/settings").status_code == 403
    assert api4.as_(alice).put("/application/settings", json={"signup_enabled": False}).status_code == 403
    assert api4.anonymous.get("/application/settings").status_code == 401
    client = api4.as_(admin)
    for bad in ({"default_project_visibility": 10}, {"default_project_visibility": "secret"},
                {"restricted_visibility_levels": ["hidden"]}, {"restricted_visibility_levels": [5]},
                {"default_branch_protection": 4}, {"default_projects_limit": -1}, {"domain_allowlist": ["not a domain"]},
                {"max_attachment_size": 10**40}, {"home_page_url": "javascript:alert(1)"}):  # fmt: skip
        response = client.put("/application/settings", json=bad)
        assert response.status_code == 400, bad
    assert client.get("/application/settings").json()["default_project_visibility"] == "private"


def test_a_change_applies_to_v3_and_v4_alike(api4, admin, alice):
    api4.as_(admin).put("/application/settings", json={"restricted_visibility_levels": ["public"]})
    refused = api4.as_(alice).post("/groups", json={"name": "P", "path": "pub", "visibility": "public"})
    assert refused.status_code == 400
    assert api4.as_(alice).post("/groups", json={"name": "I", "path": "int", "visibility": "internal"}).status_code == 201
