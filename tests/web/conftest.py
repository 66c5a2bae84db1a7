"""Fixtures of the page tests: a browser-like client (cookies, form tokens) per test."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.testclient import TestClient

from codeyard.app import CodeyardApp, build_router
from codeyard.services import web_sessions

TOKEN = re.compile(r'name="authenticity_token" value="([0-9a-f]+)"')


class WebClient:
    """Pages as a browser sees them: keeps cookies, follows no redirects, fills in form tokens."""

    def __init__(self, app):
        self.http = TestClient(app, base_url="http://testserver", raise_server_exceptions=False, follow_redirects=False)

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.http.get(path, **kwargs)

    def form_token(self, page: str = "/users/sign_in") -> str:
        found = TOKEN.search(self.get(page).text)
        assert found, f"no form on {page}"
        return found.group(1)

    def post(self, path: str, data: dict | None = None, token: str | None = None, **kwargs) -> httpx.Response:
        fields = dict(data or {})
        if token is not False:
            fields.setdefault("authenticity_token", token or self.form_token(self._form_page()))
        return self.http.post(path, data=fields, **kwargs)

    def _form_page(self) -> str:
        return "/" if self.signed_in else "/users/sign_in"

    @property
    def signed_in(self) -> bool:
        return bool(self.http.cookies.get("codeyard_session"))

    def sign_in(self, user, login: str | None = None) -> httpx.Response:
        response = self.post("/users/sign_in", {"login": login or user.username, "password": user.password})
        assert response.status_code == 303, response.text
        return response


@pytest.fixture(scope="session")
def _web_app(session_runtime):
    return CodeyardApp(session_runtime, build_router(), owns_runtime=False)


@pytest.fixture
def web(rt, _web_app) -> WebClient:
    return WebClient(_web_app)


@pytest.fixture
def browser_for(rt, _web_app):
    """WebClients signed in as the given users (None: anonymous); the session is opened through the
    service directly (the sign-in form itself is tested in test_sign_in)."""

    def make(user=None) -> WebClient:
        client = WebClient(_web_app)
        if user is not None:
            with rt.db.transaction() as session:
                _row, secret = web_sessions.start(session, user.id)
            client.http.cookies.set("codeyard_session", secret)
        return client

    return make
