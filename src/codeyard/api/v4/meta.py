"""`/version` and `/metadata`: what a v4 client asks first to learn what it talks to."""

from __future__ import annotations

from importlib.metadata import version as installed_version
from typing import TypedDict

from ...http.context import Ctx
from ...http.routing import Routes

routes = Routes()

# The GitLab release whose v4 API this edge follows: clients compare it to enable features
# (python-gitlab asks for 15 or later for some protected branch fields). docs/DECISIONS.md V1.
GITLAB_VERSION = "17.0.0"
CODEYARD_VERSION = installed_version("codeyard")


class Version(TypedDict):
    version: str
    revision: str


class Kas(TypedDict):
    enabled: bool
    externalUrl: str | None
    version: str | None


class Metadata(Version):
    kas: Kas
    enterprise: bool


@routes.get("/version", summary="The GitLab version this API follows and codeyard's own")
def version(ctx: Ctx) -> Version:
    return {"version": GITLAB_VERSION, "revision": f"codeyard-{CODEYARD_VERSION}"}


@routes.get("/metadata", summary="The version, and which optional services run (none)")
def metadata(ctx: Ctx) -> Metadata:
    return {
        **version(ctx),
        "kas": {"enabled": False, "externalUrl": None, "version": None},
        "enterprise": False,
    }
