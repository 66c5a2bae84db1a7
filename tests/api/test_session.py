"""Signing in: POST /api/v3/session and the OAuth password grant."""

from __future__ import annotations

import datetime as dt

from codeyard.db.models import Token, User


def test_session_with_login_or_email(api, users):
    alice = users.create("alice")
    for credentials in ({"login": "alice"}, {"login": "ALICE"}, {"email": "alice@example.com"}, {"login": "alice@example.com"}):
        response = api.anonymous.post("/session", json={**credentials, "password": alice.password})
        assert response.status_code == 201, credentials
        body = response.json()
        assert body["username"] == "alice"
        assert api.as_(body["private_token"]).get("/user").json()["id"] == alice.id


def test_session_records_the_sign_in(api, users, rt):
    alice = users.create("alice")
    api.anonymous.post("/session", data={"login": "alice", "password": alice.password})
    body = api.anonymous.post("/session", data={"login": "alice", "password": alice.password}).json()
    assert body["current_sign_in_at"] is not None and body["last_sign_in_at"] is not None
    with rt.db.session() as session:
        assert session.get(User, alice.id).sign_in_count == 2


def test_session_refusals(api, users):
    alice = users.create("alice")
    users.create("blocked", state="blocked")
    for body in (
        {"login": "alice", "password": "wrong-password"},
        {"login": "nobody", "password": "whatever-pw"},
        {"login": "blocked", "password": alice.password},
    ):
        response = api.anonymous.post("/session", json=body)
        assert response.status_code == 401
        assert response.json() == {"message": "401 Unauthorized"}



def test_session_without_login_or_password_is_401_like_gitlab(api, users, rt):
    """GitLab 8.6 looked the user up with whatever it was given, so a missing or empty login or password
    was bad credentials (401), not a missing parameter. Nothing is checked, so nothing is throttled."""
    from codeyard.db.models import PasswordFailure

    alice = users.create("alice")
    for body in ({"login": "alice"}, {"email": "alice@example.com"}, {"password": alice.password}, {},
                 {"login": "", "password": alice.password}, {"login": "alice", "password": ""},
                 {"login": "alice", "password": None}):  # fmt: skip
        response = api.anonymous.post("/session", json=body)
        assert (response.status_code, response.json()) == (401, {"message": "401 Unauthorized"}), body
    assert api.anonymous.post("/session", data={"login": "alice"}).status_code == 401
    with rt.db.session() as session:
        assert session.query(PasswordFailure).count() == 0
    # A password of the wrong type is still bad input.
    assert api.anonymous.post("/session", json={"login": "alice", "password": ["x"]}).status_code == 400
    assert api.anonymous.post("/session", json={"login": "alice", "password": alice.password}).status_code == 201


def test_session_tokens_expire_after_the_session_delay(api, users, admin, rt):
    alice = users.create("alice")
    api.as_(admin).put("/application/settings", json={"session_expire_delay": 30})
    token = api.anonymous.post("/session", json={"login": "alice", "password": alice.password}).json()["private_token"]
    with rt.db.session() as session:
        issued = session.query(Token).filter_by(user_id=alice.id, name="session").one()
    assert dt.timedelta(minutes=29) < issued.expires_at - issued.created_at <= dt.timedelta(minutes=30)
    assert api.as_(token).get("/user").status_code == 200


def test_sign_in_disabled(api, users, admin):
    alice = users.create("alice")
    api.as_(admin).put("/application/settings", json={"signin_enabled": False})
    assert api.anonymous.post("/session", json={"login": "alice", "password": alice.password}).status_code == 401
    assert api.as_(alice).get("/user").status_code == 200  # existing tokens keep working


def test_oauth_password_grant(api, users):
    alice = users.create("alice")
    response = api.client.post("/oauth/token", data={"grant_type": "password", "username": "alice", "password": alice.password})
    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "bearer" and body["expires_in"] == 10080 * 60
    assert response.headers["cache-control"] == "no-store"
    user = api.anonymous.get("/user", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert user.status_code == 200 and user.json()["username"] == "alice"


def test_oauth_errors(api, users):
    alice = users.create("alice")
    cases = [
        ({"grant_type": "password", "username": "alice", "password": "nope-nope"}, 401, "invalid_grant"),
        ({"grant_type": "client_credentials"}, 400, "unsupported_grant_type"),
        ({"username": "alice", "password": alice.password}, 400, "invalid_request"),
        ({"grant_type": "password", "username": "alice"}, 400, "invalid_request"),
    ]
    for data, status, error in cases:
        response = api.client.post("/oauth/token", json=data)
        assert response.status_code == status, data
        assert response.json()["error"] == error and "message" in response.json()
