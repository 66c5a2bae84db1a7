"""Authentication: private token (param and both header spellings), OAuth bearer, sudo."""

from __future__ import annotations

import datetime as dt

from codeyard.db.models import Token, User
from codeyard.services import credentials


def test_private_token_header(api, users):
    alice = users.create("alice")
    response = api.as_(alice).get("/user")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"


def test_private_token_query_parameter(api, users):
    alice = users.create("alice")
    response = api.anonymous.get("/user", params={"private_token": alice.token})
    assert response.status_code == 200
    assert response.json()["id"] == alice.id


def test_private_token_header_with_underscore(api, users):
    alice = users.create("alice")
    response = api.anonymous.get("/user", headers={"PRIVATE_TOKEN": alice.token})
    assert response.status_code == 200


def test_missing_and_unknown_tokens_are_401(api, users):
    users.create("alice")
    for response in (api.anonymous.get("/user"), api.as_("not-a-token").get("/user")):
        assert response.status_code == 401
        assert response.json() == {"message": "401 Unauthorized"}


def test_blocked_user_counts_as_unauthenticated(api, users):
    bob = users.create("bob", state="blocked")
    assert api.as_(bob).get("/user").status_code == 401


def test_expired_token_is_refused(api, users, rt):
    alice = users.create("alice")
    with rt.db.transaction() as session:
        session.query(Token).filter(Token.user_id == alice.id).update(
            {Token.expires_at: dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)}
        )
    assert api.as_(alice).get("/user").status_code == 401


def _oauth_token(rt, user_id: int) -> str:
    with rt.db.transaction() as session:
        _, secret = credentials.issue_token(session, user_id, credentials.OAUTH, "oauth", lifetime=dt.timedelta(hours=1))
    return secret


def test_oauth_access_token_parameter_and_bearer_header(api, users, rt):
    alice = users.create("alice")
    secret = _oauth_token(rt, alice.id)
    assert api.anonymous.get("/user", params={"access_token": secret}).json()["username"] == "alice"
    response = api.anonymous.get("/user", headers={"Authorization": f"Bearer {secret}"})
    assert response.status_code == 200
    assert "private_token" not in response.json()  # only a private token used for the request is echoed


def test_private_token_is_not_a_bearer_token_and_vice_versa(api, users, rt):
    alice = users.create("alice")
    secret = _oauth_token(rt, alice.id)
    assert api.anonymous.get("/user", headers={"Authorization": f"Bearer {alice.token}"}).status_code == 401
    assert api.anonymous.get("/user", headers={"PRIVATE-TOKEN": secret}).status_code == 401


def test_oauth_token_is_tried_when_the_private_token_names_nobody(api, users, rt):
    alice = users.create("alice")
    secret = _oauth_token(rt, alice.id)
    response = api.anonymous.get("/user", headers={"PRIVATE-TOKEN": "bogus", "Authorization": f"Bearer {secret}"})
    assert response.status_code == 200 and response.json()["username"] == "alice"
    assert "private_token" not in response.json()
    # A private token that names a user wins, even when a bearer token of someone else comes along.
    bob = users.create("bob")
    response = api.anonymous.get("/user", headers={"PRIVATE-TOKEN": bob.token, "Authorization": f"Bearer {secret}"})
    assert response.json()["username"] == "bob"


def test_user_echoes_the_private_token_used(api, users):
    alice = users.create("alice")
    assert api.as_(alice).get("/user").json()["private_token"] == alice.token


def test_tokens_are_stored_only_as_digests(users, rt):
    alice = users.create("alice")
    with rt.db.session() as session:
        stored = session.query(Token).filter(Token.user_id == alice.id).one()
        user = session.get(User, alice.id)
    assert stored.digest == credentials.digest(alice.token)
    assert alice.token not in (stored.digest, stored.name)
    assert user.password_digest.startswith("$argon2id$")


def test_sudo_by_username_and_id(api, users, admin):
    bob = users.create("bob")
    by_name = api.as_(admin).get("/user", params={"sudo": "bob"})
    assert by_name.status_code == 200 and by_name.json()["username"] == "bob"
    assert "private_token" not in by_name.json()
    by_id = api.as_(admin).get("/user", headers={"SUDO": str(bob.id)})
    assert by_id.json()["id"] == bob.id


def test_sudo_by_non_admin_is_403(api, users):
    alice, bob = users.create("alice"), users.create("bob")
    response = api.as_(alice).get("/user", params={"sudo": bob.username})
    assert response.status_code == 403
    assert response.json() == {"message": "403 Forbidden: Must be admin to use sudo"}


def test_sudo_to_oneself_needs_no_admin(api, users):
    alice = users.create("alice")
    assert api.as_(alice).get("/user", params={"sudo": "alice"}).status_code == 200
    assert api.as_(alice).get("/user", params={"sudo": str(alice.id)}).status_code == 200


def test_sudo_unknown_user_is_404(api, admin):
    response = api.as_(admin).get("/user", params={"sudo": "ghost"})
    assert response.status_code == 404
    assert response.json() == {"message": "404 Not Found: No user id or username for: ghost"}
    response = api.as_(admin).get("/user", headers={"SUDO": "999999"})
    assert response.json() == {"message": "404 Not Found: No user id or username for: 999999"}
    for beyond in ("3000000000", "99999999999999999999999"):  # no id is that large: not a database error
        response = api.as_(admin).get("/user", params={"sudo": beyond})
        assert response.status_code == 404
        assert response.json() == {"message": f"404 Not Found: No user id or username for: {beyond}"}


def test_sudo_to_blocked_user_is_refused(api, users, admin):
    users.create("bob", state="blocked")
    response = api.as_(admin).get("/user", params={"sudo": "bob"})
    assert response.status_code == 403


def test_sudo_acts_as_the_target(api, users, admin):
    users.create("bob")
    # Acting as a non-admin, admin-only endpoints are forbidden.
    assert api.as_(admin).get("/application/settings", params={"sudo": "bob"}).status_code == 403
    assert api.as_(admin).get("/application/settings").status_code == 200
