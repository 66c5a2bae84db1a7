"""v4 users: the directory, admin management (create, edit, states, delete) and secondary e-mails."""

from __future__ import annotations

from ..support import DEFAULT_PASSWORD, QueryCounter
from ..web.conftest import WebClient

# --- the directory -------------------------------------------------------------------------------


def test_list_is_newest_first_with_paging_headers(api4, users, alice):
    for n in range(3):
        users.create(f"dir{n}")
    response = api4.as_(alice).get("/users", params={"per_page": 2})
    assert response.status_code == 200
    assert [u["username"] for u in response.json()] == ["dir2", "dir1"]
    assert response.headers["x-total"] == "4"
    assert response.headers["x-next-page"] == "2"
    assert 'rel="next"' in response.headers["link"]
    assert set(response.json()[0]) == {"id", "username", "name", "state", "locked", "avatar_url", "web_url"}


def test_admins_see_full_records_and_may_order(gl, admin, users):
    users.create("zed", name="Aaron Zed")
    users.create("amy", name="Zoe Amy")
    listed = gl(admin).users.list(order_by="username", sort="asc", get_all=True)
    assert [u.username for u in listed] == sorted(u.username for u in listed)
    assert all(hasattr(u, "email") and isinstance(u.is_admin, bool) for u in listed)
    by_name = gl(admin).users.list(order_by="name", sort="desc", get_all=True)
    assert by_name[0].username == "amy"


def test_non_admins_cannot_reorder(api4, users, alice):
    users.create("aaa")
    body = api4.as_(alice).get("/users", params={"order_by": "username", "sort": "asc"}).json()
    assert body[0]["username"] == "aaa"  # newest first, whatever was asked


def test_filters(gl, api4, admin, users, alice):
    blocked = users.create("blockee", state="blocked")
    external = users.create("outsider", external=True)
    client = gl(admin)
    assert [u.id for u in client.users.list(blocked=True)] == [blocked.id]
    assert [u.id for u in client.users.list(external=True)] == [external.id]
    assert blocked.id not in [u.id for u in client.users.list(active=True, get_all=True)]
    assert [u.username for u in client.users.list(username="ALICE")] == ["alice"]
    assert [u.username for u in client.users.list(search="blocke")] == ["blockee"]
    assert api4.as_(alice).get("/users", params={"order_by": "password"}).status_code == 400


def test_get_user(gl, api4, admin, alice, users):
    bob = users.create("bob", bio="hello", profnet="bob-in")
    seen = gl(alice).users.get(bob.id)
    assert seen.username == "bob" and seen.bio == "hello" and seen.linkedin == "bob-in"
    assert not hasattr(seen, "email")
    assert gl(admin).users.get(bob.id).email == bob.email
    for bad in ("0", "999999999", "99999999999999999999", "bob", "-1"):
        response = api4.as_(alice).get(f"/users/{bad}")
        assert response.status_code == 404, bad
        assert response.json() == {"message": "404 User Not Found"}


def test_anonymous_reads_the_directory_not_a_self(api4, alice):
    assert api4.anonymous.get("/user").status_code == 401
    listed = api4.anonymous.get("/users")
    assert listed.status_code == 200
    assert [(row["username"], "email" in row) for row in listed.json()] == [("alice", False)]


# --- create, edit, delete ------------------------------------------------------------------------


def test_admin_creates_a_user_who_can_sign_in(gl, api, admin):
    made = gl(admin).users.create(
        {"email": "new@example.com", "password": "secret-pass-1", "username": "newbie", "name": "New Bie",
         "skype": "sk", "linkedin": "li", "twitter": "tw", "website_url": "https://example.com", "bio": "b",
         "projects_limit": 7, "can_create_group": False, "external": True, "skip_confirmation": True}
    )  # fmt: skip
    assert (made.username, made.email, made.skype, made.linkedin, made.twitter) == ("newbie", "new@example.com", "sk", "li", "tw")
    assert made.projects_limit == 7 and made.can_create_group is False and made.external is True
    assert made.state == "active" and made.is_admin is False
    signed = api.anonymous.post("/session", json={"login": "newbie", "password": "secret-pass-1"})
    assert signed.status_code == 201


def test_create_needs_a_password_choice_and_unique_names(api4, admin, alice):
    client = api4.as_(admin)
    base = {"email": "x@example.com", "username": "xuser", "name": "X"}
    response = client.post("/users", json=base)
    assert response.status_code == 400 and response.json() == {"error": "password is missing"}
    assert client.post("/users", json={**base, "reset_password": True}).status_code == 201
    taken = client.post("/users", json={**base, "email": alice.email, "username": "other", "password": "long-enough"})
    assert (taken.status_code, taken.json()) == (409, {"message": "Email has already been taken"})
    taken = client.post("/users", json={**base, "email": "y@example.com", "username": "ALICE", "password": "long-enough"})
    assert (taken.status_code, taken.json()) == (409, {"message": "Username has already been taken"})
    assert client.post("/users", json={**base, "email": "nope", "username": "z", "password": "long-enough"}).status_code == 400
    assert client.post("/users", json={**base, "username": "admin", "email": "q@example.com", "password": "long-enough"}).status_code == 400


def test_create_query_string_parameters(api4, admin):
    response = api4.as_(admin).post("/users?email=q@example.com&username=quser&name=Q&password=long-enough-1")
    assert response.status_code == 201 and response.json()["username"] == "quser"


def test_only_admins_manage_users(api4, alice, users):
    bob = users.create("bob")
    client = api4.as_(alice)
    assert client.post("/users", json={"email": "a@b.example", "username": "ab", "name": "AB", "password": "long-enough"}).status_code == 403
    assert client.put(f"/users/{bob.id}", json={"name": "Hacked"}).status_code == 403
    assert client.delete(f"/users/{bob.id}").status_code == 403
    for action in ("block", "unblock", "deactivate", "activate"):
        assert client.post(f"/users/{bob.id}/{action}").status_code == 403, action
    assert client.get(f"/users/{bob.id}/emails").status_code == 403


def test_edit_through_the_client_and_as_multipart(gl, api4, admin, users):
    bob = users.create("bob")
    user = gl(admin).users.get(bob.id)
    user.name = "Robert"
    user.twitter = "rob"
    user.save()
    again = gl(admin).users.get(bob.id)
    assert (again.name, again.twitter) == ("Robert", "rob")
    # gitbeaker sends multipart form data on PUT /users/:id
    response = api4.as_(admin).put(f"/users/{bob.id}", files={"bio": (None, "multi"), "admin": (None, "true")})
    assert response.status_code == 200
    assert response.json()["bio"] == "multi" and response.json()["is_admin"] is True
    assert api4.as_(admin).put("/users/999999", json={"name": "x"}).json() == {"message": "404 User Not Found"}
    assert api4.as_(admin).put(f"/users/{bob.id}", json={"projects_limit": -1}).status_code == 400


def test_delete_is_204_then_404(gl, api4, admin, users, projects):
    bob = users.create("bob")
    projects.create(bob)
    response = api4.as_(admin).delete(f"/users/{bob.id}")
    assert response.status_code == 204 and response.content == b""
    assert api4.as_(admin).get(f"/users/{bob.id}").status_code == 404
    assert api4.as_(admin).delete(f"/users/{bob.id}").status_code == 404
    assert api4.as_(bob).get("/user").status_code == 401


def test_delete_sole_owner_needs_hard_delete(api4, api, admin, users, projects):
    bob = users.create("bob")
    group = projects.group(bob, "bobs")
    projects.create(bob, group=group)
    refused = api4.as_(admin).delete(f"/users/{bob.id}")
    assert refused.status_code == 409
    assert api4.as_(admin).get(f"/users/{bob.id}").status_code == 200
    assert api.as_(admin).get(f"/groups/{group.id}").status_code == 200
    assert api4.as_(admin).delete(f"/users/{bob.id}", params={"hard_delete": True}).status_code == 204
    assert api4.as_(admin).get(f"/users/{bob.id}").status_code == 404
    assert api.as_(admin).get(f"/groups/{group.id}").status_code == 404


def test_hard_delete_keeps_groups_with_other_owners(api4, api, admin, users, projects):
    bob, carol = users.create("bob"), users.create("carol")
    group = projects.group(bob, "shared")
    projects.add_group_member(group, carol, 50)
    assert api4.as_(admin).delete(f"/users/{bob.id}", params={"hard_delete": True}).status_code == 204
    assert api.as_(admin).get(f"/groups/{group.id}").status_code == 200


# --- states ----------------------------------------------------------------------------------------


def test_block_and_unblock_through_the_client(gl, api4, admin, users):
    bob = users.create("bob")
    user = gl(admin).users.get(bob.id)
    assert user.block() is True and user.state == "blocked"
    assert api4.as_(bob).get("/user").status_code == 401
    again = api4.as_(admin).post(f"/users/{bob.id}/block")
    assert (again.status_code, again.json()) == (201, None)
    assert user.unblock() is True and user.state == "active"
    assert api4.as_(bob).get("/user").status_code == 200
    assert api4.as_(admin).post(f"/users/{bob.id}/unblock").json() is False


def test_deactivated_users_are_shut_out(gl, api4, admin, users):
    bob = users.create("bob")
    user = gl(admin).users.get(bob.id)
    assert user.deactivate() is True and user.state == "deactivated"
    assert gl(admin).users.get(bob.id).state == "deactivated"
    assert api4.as_(bob).get("/user").status_code == 401
    assert api4.as_(admin).get("/user", params={"sudo": bob.username}).status_code == 403
    again = api4.as_(admin).post(f"/users/{bob.id}/deactivate")
    assert (again.status_code, again.json()) == (201, None)
    refused = api4.as_(admin).post(f"/users/{bob.id}/unblock")
    assert (refused.status_code, refused.json()) == (403, {"message": "403 Forbidden - Deactivated users cannot be unblocked by the API"})
    assert user.activate() is True and user.state == "active"
    assert api4.as_(bob).get("/user").status_code == 200
    assert api4.as_(admin).post(f"/users/{bob.id}/activate").json() is False


def test_deactivated_user_cannot_sign_in_with_a_password(api, admin, users, gl):
    bob = users.create("bob")
    gl(admin).users.get(bob.id).deactivate()
    response = api.anonymous.post("/session", json={"login": "bob", "password": DEFAULT_PASSWORD})
    assert response.status_code == 401


def test_blocked_users_are_neither_deactivated_nor_activated(api4, admin, users):
    bob = users.create("bob", state="blocked")
    client = api4.as_(admin)
    refused = client.post(f"/users/{bob.id}/deactivate")
    assert (refused.status_code, refused.json()) == (403, {"message": "403 Forbidden - A blocked user cannot be deactivated by the API"})
    refused = client.post(f"/users/{bob.id}/activate")
    assert (refused.status_code, refused.json()) == (403, {"message": "403 Forbidden - A blocked user must be unblocked to be activated"})
    assert client.get(f"/users/{bob.id}").json()["state"] == "blocked"


def test_admin_cannot_block_or_deactivate_themselves(api4, admin):
    assert api4.as_(admin).post(f"/users/{admin.id}/block").status_code == 403
    assert api4.as_(admin).post(f"/users/{admin.id}/deactivate").status_code == 403
    assert api4.as_(admin).get("/user").status_code == 200


def test_state_changes_on_missing_users(api4, admin):
    for action in ("block", "unblock", "deactivate", "activate"):
        for bad in ("0", "99999999", "99999999999999999999", "x"):
            response = api4.as_(admin).post(f"/users/{bad}/{action}")
            assert response.status_code == 404, (action, bad)


# --- secondary e-mails ---------------------------------------------------------------------------


def test_own_emails_through_the_client(gl, api4, alice, users):
    client = gl(alice)
    client.auth()
    email = client.user.emails.create({"email": "alice.two@example.com"})
    assert email.email == "alice.two@example.com" and email.confirmed_at
    assert [e.email for e in client.user.emails.list()] == ["alice.two@example.com"]
    assert client.user.emails.get(email.id).email == "alice.two@example.com"
    email.delete()
    assert client.user.emails.list() == []


def test_emails_are_unique_across_users_and_primary_addresses(api4, alice, users, admin):
    bob = users.create("bob")
    mine = api4.as_(alice).post("/user/emails", json={"email": "shared@example.com"})
    assert mine.status_code == 201
    for who, address in ((bob, "SHARED@example.com"), (bob, alice.email), (alice, alice.email)):
        response = api4.as_(who).post("/user/emails", json={"email": address})
        assert (response.status_code, response.json()) == (400, {"message": {"email": ["has already been taken"]}})
    # a secondary address is taken for primary ones too
    taken = api4.as_(admin).put(f"/users/{bob.id}", json={"email": "shared@example.com"})
    assert taken.status_code == 409
    assert api4.as_(alice).post("/user/emails", json={"email": "not an email"}).status_code == 400
    assert api4.as_(alice).post("/user/emails", json={}).json() == {"error": "email is missing"}


def test_emails_of_others_are_not_reachable(api4, alice, users):
    bob = users.create("bob")
    made = api4.as_(alice).post("/user/emails", json={"email": "a2@example.com"}).json()
    assert api4.as_(bob).get(f"/user/emails/{made['id']}").json() == {"message": "404 Email Not Found"}
    assert api4.as_(bob).delete(f"/user/emails/{made['id']}").status_code == 404
    assert api4.as_(alice).get("/user/emails/99999999999999999999").status_code == 404
    assert api4.as_(alice).delete(f"/user/emails/{made['id']}").status_code == 204


def test_admin_manages_a_users_emails(gl, api4, admin, users):
    bob = users.create("bob")
    user = gl(admin).users.get(bob.id)
    email = user.emails.create({"email": "bob2@example.com", "skip_confirmation": True})
    assert [e.email for e in user.emails.list()] == ["bob2@example.com"]
    response = api4.as_(admin).get(f"/users/{bob.id}/emails")
    assert response.headers["x-total"] == "1"
    email.delete()
    assert user.emails.list() == []
    assert api4.as_(admin).get("/users/99999999/emails").json() == {"message": "404 User Not Found"}
    assert api4.as_(admin).delete(f"/users/{bob.id}/emails/12345").json() == {"message": "404 Email Not Found"}


def test_deleting_a_user_frees_their_emails(api4, admin, users):
    bob = users.create("bob")
    api4.as_(bob).post("/user/emails", json={"email": "keep@example.com"})
    assert api4.as_(admin).delete(f"/users/{bob.id}").status_code == 204
    assert api4.as_(admin).post("/user/emails", json={"email": "keep@example.com"}).status_code == 201


def test_lists_are_one_statement_whatever_their_length(api4, rt, admin, users):
    for n in range(5):
        users.create(f"many{n}")
    for who, params in ((admin, {"per_page": 2}), (admin, {"per_page": 50, "order_by": "name"}), (admin, {"search": "many"})):
        with QueryCounter(rt) as counter:  # the read path: the page's statement carries the total
            response = api4.as_(who).get("/users", params=params)
        assert response.status_code == 200
        assert counter.count == 0 and len(counter.fast_reads) == 1, (counter.statements, counter.fast_reads)
    for n in range(3):
        api4.as_(admin).post("/user/emails", json={"email": f"extra{n}@example.com"})
    with QueryCounter(rt) as counter:
        assert len(api4.as_(admin).get("/user/emails").json()) == 3
    assert counter.count == 0 and len(counter.fast_reads) == 1


def test_deactivated_user_cannot_use_git(api4, admin, users, projects):
    bob = users.create("bob")
    project = projects.create(bob)
    url = f"/{project.path_with_namespace}.git/info/refs"

    def fetch_status():
        return api4.client.get(url, params={"service": "git-upload-pack"}, auth=("bob", bob.token)).status_code

    assert fetch_status() == 200
    assert api4.as_(admin).post(f"/users/{bob.id}/deactivate").json() is True
    assert fetch_status() == 401
    api4.as_(admin).post(f"/users/{bob.id}/activate")
    assert fetch_status() == 200


def test_deactivation_ends_web_sessions_for_good(rt, _test_client, api4, admin, alice):
    laptop = WebClient(_test_client)
    laptop.sign_in(alice)
    assert laptop.get("/users/sign_in").status_code == 303  # signed in: sent on
    assert api4.as_(admin).post(f"/users/{alice.id}/deactivate").json() is True
    assert laptop.get("/users/sign_in").status_code == 200  # the cookie counts as nobody
    form = laptop.form_token("/users/sign_in")
    assert laptop.post("/users/sign_in", {"login": "alice", "password": alice.password}, token=form).status_code == 401
    assert api4.as_(admin).post(f"/users/{alice.id}/activate").json() is True
    assert laptop.get("/users/sign_in").status_code == 200  # activating brings no session back


def test_active_filter_leaves_out_deactivated_users(api4, admin, users):
    bob = users.create("bob")
    api4.as_(admin).post(f"/users/{bob.id}/deactivate")
    active = api4.as_(admin).get("/users", params={"active": True}).json()
    assert bob.id not in [u["id"] for u in active]
    assert api4.as_(admin).request("DELETE", f"/users/{bob.id}", json={}).status_code == 204
