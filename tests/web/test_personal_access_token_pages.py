"""The personal access tokens page: a signed-in user creates a token (shown once), lists and
revokes their own; forms carry the form token; nobody reaches another user's tokens."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from codeyard.services import credentials

from ..support import ApiClient

PAGE = "/-/user_settings/personal_access_tokens"
SECRET = re.compile(r'id="new-token" value="(glpat-[A-Za-z0-9]{20})"')


@pytest.fixture
def api4(rt, _test_client) -> ApiClient:
    return ApiClient(_test_client, prefix="/api/v4")


def test_create_use_and_revoke_a_token(browser_for, api4, alice):
    client = browser_for(alice)
    page = client.get(PAGE)
    assert page.status_code == 200 and "No personal access tokens." in page.text
    assert 'name="scopes[]" value="read_repository"' in page.text
    expires = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=10)).isoformat()
    made = client.post(PAGE, {"name": "laptop", "scopes[]": ["read_api", "read_user"], "expires_at": expires},
                       token=client.form_token(PAGE))  # fmt: skip
    assert made.status_code == 200, made.text
    assert made.headers["cache-control"] == "no-store"
    secret = SECRET.search(made.text).group(1)
    listed = api4.as_(secret).get("/personal_access_tokens").json()
    assert [(t["name"], t["scopes"], t["expires_at"]) for t in listed] == [("laptop", ["read_api", "read_user"], expires)]
    again = client.get(PAGE)
    assert "laptop" in again.text and secret not in again.text  # shown once
    token_id = listed[0]["id"]
    revoked = client.post(f"{PAGE}/{token_id}/revoke", token=client.form_token(PAGE))
    assert revoked.status_code == 303 and revoked.headers["location"] == PAGE
    assert api4.as_(secret).get("/user").status_code == 401
    assert "revoked" in client.get(PAGE).text


def test_bad_forms_create_nothing(browser_for, api4, alice):
    client = browser_for(alice)
    yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    for fields in ({"name": "x"}, {"name": "x", "scopes[]": ["root"]}, {"name": "", "scopes[]": ["api"]},
                   {"name": "x", "scopes[]": ["api"], "expires_at": yesterday},
                   {"name": "x", "scopes[]": ["api"], "expires_at": "soon"}):  # fmt: skip
        response = client.post(PAGE, fields, token=client.form_token(PAGE))
        assert response.status_code == 400, fields
    assert api4.as_(alice).get("/personal_access_tokens").json() == []


def test_forms_need_the_form_token_and_a_signed_in_user(browser_for, web, api4, rt, alice):
    client = browser_for(alice)
    assert client.post(PAGE, {"name": "x", "scopes[]": ["api"]}, token="0" * 64).status_code == 403
    assert client.post(PAGE, {"name": "x", "scopes[]": ["api"]}, token=False).status_code == 403
    assert api4.as_(alice).get("/personal_access_tokens").json() == []
    anonymous = web.get(PAGE)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/users/sign_in")
    assert web.post(PAGE, {"name": "x", "scopes[]": ["api"]}).status_code == 401


def test_nobody_revokes_or_sees_anothers_token(browser_for, api4, rt, users, alice):
    bob = users.create("bob")
    with rt.db.transaction() as session:
        token, secret = credentials.issue_scoped(session, bob.id, credentials.PERSONAL, "bobs-token", ["api"], None)
        token_id = token.id
    client = browser_for(alice)
    assert "bobs-token" not in client.get(PAGE).text
    assert client.post(f"{PAGE}/{token_id}/revoke", token=client.form_token(PAGE)).status_code == 404
    assert client.post(f"{PAGE}/nonsense/revoke", token=client.form_token(PAGE)).status_code == 404
    assert api4.as_(secret).get("/user").status_code == 200
