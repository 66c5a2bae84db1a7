"""The start page, signing in and out, users' and groups' pages, and the static files."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import NamedTuple

from sqlalchemy import Integer, bindparam, select
from sqlalchemy.orm import aliased
from starlette.responses import Response

from ..db.models import Event, Namespace, Project, User
from ..errors import NotFound
from ..http.context import Ctx
from ..http.refusals import error_of
from ..services import events, identity, loader, signin, visibility, web_sessions
from ..services import projects as project_service
from ..services import settings as settings_service
from ..services.outcomes import Refusal
from .core import SESSION_COOKIE, Pages, form, redirect, render, set_cookie
from .markup import STYLE_SHEET, markdown

pages = Pages()

LIST_SIZE = 20

# The lists of these pages are Core statements built once per shape and run on the fast path
# (`Database.fast_all`), rows as named tuples: through ORM joinedloads the start page cost about
# six times its JSON endpoint. The caller is `:user_id`.
USER_ID = visibility.USER_ID
VISIBLE, MINE, PERSONAL, GROUP = "visible", "mine", "personal", "group"

_LIST_COLUMNS = (
    Project.id, Project.name, Project.description, Project.visibility_level,
    Namespace.name.label("ns_name"), (Namespace.path + "/" + Project.path).label("path_with_namespace"),
)  # fmt: skip


@functools.cache
def _list_statement(scope: str, viewer: str):
    """The first LIST_SIZE projects of SCOPE that VIEWER (a shape of `visibility.readable`) may read,
    newest first, with their namespace."""
    if scope == VISIBLE:  # newest activity first
        conditions, newest = [visibility.readable(viewer)], Project.last_activity_at
    elif scope == MINE:
        conditions, newest = [Project.id.in_(project_service.authorized(USER_ID))], Project.last_activity_at
    elif scope == PERSONAL:
        conditions = [Namespace.owner_id == bindparam("owner_id", type_=Integer), Namespace.kind == "user", visibility.readable(viewer)]
        newest = Project.created_at
    else:
        conditions, newest = [Project.namespace_id == bindparam("group_id", type_=Integer), visibility.readable(viewer)], Project.created_at
    return (
        select(*_LIST_COLUMNS).join(Namespace, Namespace.id == Project.namespace_id).where(*conditions)
        .order_by(newest.desc(), Project.id.desc()).limit(LIST_SIZE)
    )  # fmt: skip


def _projects(ctx: Ctx, scope: str, **params) -> list:
    actor = ctx.actor
    statement = _list_statement(scope, visibility.viewer(actor))
    params = {**visibility.params(actor), **params}
    return ctx.rt.db.fast_all(statement, params)


_author = aliased(User, name="author")
RECENT_EVENTS = (
    select(
        Event.id, Event.action, Event.target_type, Event.title, Event.data, Event.created_at,
        _author.name.label("author_name"), _author.username.label("author_username"),
        Project.name.label("project_name"), Namespace.name.label("ns_name"),
        (Namespace.path + "/" + Project.path).label("path_with_namespace"),
    )
    .join(Project, Project.id == Event.project_id)
    .join(Namespace, Namespace.id == Project.namespace_id)
    .outerjoin(_author, _author.id == Event.author_id)
    .where(Event.project_id.in_(project_service.authorized(USER_ID)))
    .order_by(Event.id.desc())
    .limit(LIST_SIZE)
)  # fmt: skip


class Person(NamedTuple):
    username: str
    name: str


def recent_events(ctx: Ctx) -> list[tuple]:
    """(event row, its author or None) of the newest events of the caller's projects (one statement)."""
    rows = ctx.rt.db.fast_all(RECENT_EVENTS, {"user_id": ctx.actor.id})
    return [(row, Person(row.author_username, row.author_name) if row.author_username else None) for row in rows]


@pages.page("/")
def home(ctx: Ctx) -> Response:
    if ctx.actor is None:
        return render(ctx, "home.html", projects=_projects(ctx, VISIBLE))
    return render(ctx, "home.html", projects=_projects(ctx, MINE), events=recent_events(ctx),
                  event_name=events.action_name, pushed_ref=events.pushed_ref)  # fmt: skip


# --- signing in and out -------------------------------------------------------------------------


def local_target(text: str | None) -> str:
    """Where to go after signing in: a path on this site, never another site (`//evil`, `/\\evil`)."""
    if not text or not text.startswith("/") or text.startswith("//") or "\\" in text or any(c < " " for c in text):
        return "/"
    return text


def _sign_in_form(ctx: Ctx, status: int = 200, error: str | None = None, login: str = "", target: str = "/") -> Response:
    settings = settings_service.load(ctx.session)
    return render(ctx, "sign_in.html", status, enabled=settings.signin_enabled, error=error, login=login,
                  redirect_to=target, sign_in_text=markdown(settings.sign_in_text))  # fmt: skip


@pages.page("/users/sign_in")
def sign_in_form(ctx: Ctx) -> Response:
    if ctx.actor is not None:
        return redirect(local_target(ctx.query.get("redirect_to")))
    target = ctx.query.get("redirect_to")
    return _sign_in_form(ctx, target=local_target(target if isinstance(target, str) else None))


@pages.action("/users/sign_in")
async def sign_in(ctx: Ctx) -> Response:
    """The same check as POST /session (gate, throttle, argon2, signin_enabled), then a session."""
    login, password, target = form(ctx, "login").strip(), form(ctx, "password"), local_target(form(ctx, "redirect_to"))
    if not login or not password:
        return _sign_in_form(ctx, 400, "Enter your username or e-mail and your password.", login, target)
    candidate = await signin.check_sign_in(ctx.rt, login, password, ctx.client_address)
    started = candidate if isinstance(candidate, Refusal) else web_sessions.start(ctx.session, candidate)
    if isinstance(started, Refusal):
        ctx.rollback()
        return _refused_sign_in(ctx, started, login, target)
    _user, secret = started
    lifetime = signin.session_lifetime(ctx.session)
    set_cookie(ctx, SESSION_COOKIE, secret, int(lifetime.total_seconds()) if lifetime else None)
    return redirect(target)


def _refused_sign_in(ctx: Ctx, refusal: Refusal, login: str, target: str) -> Response:
    """The form again: 401 for refused credentials; for load, the API's status and Retry-After."""
    if refusal.reason not in signin.FOR_LOAD:
        return _sign_in_form(ctx, 401, "Invalid login or password.", login, target)
    error = error_of(refusal)
    response = _sign_in_form(ctx, error.status, "Too many attempts: wait a moment and try again.", login, target)
    response.headers.update(error.headers)
    return response


@pages.action("/users/sign_out")
def sign_out(ctx: Ctx) -> Response:
    web_sessions.end(ctx.session, ctx.web_secret)
    set_cookie(ctx, SESSION_COOKIE, "", 0)
    return redirect("/")


# --- users and groups ---------------------------------------------------------------------------


@pages.page("/u/:username")
def user_page(ctx: Ctx) -> Response:
    user = identity.user_by_id_or_username(ctx.rt.db, ctx.path_params["username"])
    if user is None:
        raise NotFound()
    website = user.website_url if user.website_url.startswith(("https://", "http://")) else None
    return render(ctx, "user.html", user=user, website=website, projects=_projects(ctx, PERSONAL, owner_id=user.id))


@pages.page("/groups/:group")
async def group_page(ctx: Ctx) -> Response:
    found = await loader.group(ctx.rt.db, ctx.path_params["group"], ctx.actor)
    if found.refusal is not None:
        raise NotFound()
    return render(ctx, "group.html", group=found.row, projects=_projects(ctx, GROUP, group_id=found.row.id))


# --- static files -------------------------------------------------------------------------------

STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


def _static_files() -> dict[str, tuple[bytes, str, str]]:
    """name -> (bytes, type, ETag) of every static file, read once."""
    folder = Path(__file__).parent / "static"
    found = {path.name: path.read_bytes() for path in folder.iterdir() if path.suffix in STATIC_TYPES}
    found["pygments.css"] = STYLE_SHEET.encode()
    return {name: (data, STATIC_TYPES[Path(name).suffix], '"' + hashlib.sha256(data).hexdigest()[:16] + '"')
            for name, data in found.items()}  # fmt: skip


STATIC = _static_files()


async def static_file(ctx: Ctx, receive, send) -> None:
    found = STATIC.get(ctx.path_params["name"])
    if found is None:
        raise NotFound()
    data, media_type, etag = found
    headers = {"etag": etag, "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff"}
    if ctx.header("if-none-match") == etag:
        await Response(status_code=304, headers=headers)(ctx.scope, receive, send)
        return
    await Response(data, media_type=media_type, headers=headers)(ctx.scope, receive, send)


pages.add("GET", "/-/static/:name", static_file, kind="raw", auth="none", summary="The pages' style sheets and script")
