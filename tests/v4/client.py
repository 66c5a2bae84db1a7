"""Today's python-gitlab (8.x), in-process: the v4 tests drive the API through the real client.

python-gitlab 8 and 1.4.0 (v3's tests) are both the package `gitlab`. 8 is installed apart (the
Makefile's GITLAB8 directory), loaded once with every submodule under its own copy of the
`gitlab` names, and put in place of 1.4.0 in `sys.modules` only while a v4 test runs, because
it imports some of its modules when first called (`gitlab.v4.objects`).

Its requests go through a transport adapter to the in-process application (the same TestClient
as `api`), and every successful JSON answer is checked against the schema its route declares.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from contextlib import contextmanager
from pathlib import Path

import httpx
import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict

from ..support import response_schemas

ROOT = Path(__file__).resolve().parents[2]
GITLAB8 = ROOT / ".venv" / "clients" / "python-gitlab-8"
BASE_URL = "http://testserver"
_OWN: dict[str, object] = {}  # python-gitlab 8's modules, by name


def _is_gitlab(name: str) -> bool:
    return name == "gitlab" or name.startswith("gitlab.")


def _load() -> dict[str, object]:
    if _OWN:
        return _OWN
    if not (GITLAB8 / "gitlab").is_dir():
        raise RuntimeError(f"python-gitlab 8 is not installed in {GITLAB8}: run `make test` (it installs it)")
    saved = {name: module for name, module in sys.modules.items() if _is_gitlab(name)}
    for name in saved:
        del sys.modules[name]
    sys.path.insert(0, str(GITLAB8))
    try:
        package = importlib.import_module("gitlab")
        for info in pkgutil.walk_packages(package.__path__, "gitlab."):
            if info.name.startswith(("gitlab.cli", "gitlab.v4.cli", "gitlab.__main__", "gitlab._backends.graphql")):
                continue  # the command line and GraphQL need packages the REST client does not
            importlib.import_module(info.name)
        _OWN.update({name: module for name, module in sys.modules.items() if _is_gitlab(name)})
    finally:
        sys.path.remove(str(GITLAB8))
        for name in [name for name in sys.modules if _is_gitlab(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        if str(GITLAB8) not in sys.path:
            sys.path.append(str(GITLAB8))  # requests_toolbelt, which 1.4.0 does not bring
    return _OWN


@contextmanager
def gitlab8():
    """python-gitlab 8's `gitlab` module, in `sys.modules` until the block ends."""
    own = _load()
    saved = {name: module for name, module in sys.modules.items() if _is_gitlab(name)}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(own)
    try:
        yield own["gitlab"]
    finally:
        for name in [name for name in sys.modules if _is_gitlab(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


class InProcess(BaseAdapter):
    """requests → the application, through the Starlette TestClient (httpx)."""

    def __init__(self, client: httpx.Client):
        super().__init__()
        self.client = client

    def send(self, request, stream=False, timeout=None, verify=True, cert=None, proxies=None):
        answer = self.client.request(request.method, request.url, headers=dict(request.headers), content=request.body or b"")
        response_schemas().check(answer)
        response = requests.Response()
        response.status_code = answer.status_code
        response.headers = CaseInsensitiveDict(answer.headers)
        response._content = answer.content
        response._content_consumed = True
        response.url = request.url
        response.request = request
        response.reason = answer.reason_phrase
        response.encoding = answer.encoding
        return response

    def close(self):
        pass


def client(module, http: httpx.Client, token: str | None = None, **options):
    """A `gitlab.Gitlab` of MODULE (python-gitlab 8) talking to the in-process application."""
    session = requests.Session()
    session.mount(BASE_URL, InProcess(http))
    return module.Gitlab(BASE_URL, private_token=token, session=session, **options)
