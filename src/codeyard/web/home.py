"""The start page, signing in and out, users' and groups' pages, and the static files."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import joinedload
from starlette.responses import Response

from ..api.context import Ctx
from ..db.models import PUBLIC, Event, Namespace, Project
from ..errors import NotFound, TooManyRequests, Unauthorized, Unavailable
from ..policies import groups as group_policy
from ..services import events, groups, identity, signin, web_sessions
from ..services import projects as project_service
from ..services import settings as settings_service
from .core import PAGES, SESSION_COOKIE, action, form, page, redirect, render, set_cookie
from .markup import STYLE_SHEET, markdown

LIST_SIZE = 20


def visible_ids(actor):
    """Ids of the projects ACTOR may read; anonymous visitors: the public ones (as in the API)."""
    if actor is None:
        return select(Project.id).where(Project.visibility_level == PUBLIC)
    return project_service.visible(actor)


def _projects(ctx: Ctx, ids, order_by: str = "last_activity_at") -> list[Project]:
    """The first LIST_SIZE projects IDS selects, newest ORDER_BY first, with their namespaces (one query)."""
    newest = getattr(Project, order_by).desc()
    query = select(Project).where(Project.id.in_(ids)).order_by(newest, Project.id.desc()).limit(LIST_SIZE)
    return list(ctx.session.scalars(query))


def recent_events(ctx: Ctx, ids, limit: int = LIST_SIZE) -> list[Event]:
    """The newest events of the projects IDS selects, with their authors and projects (one query)."""
    query = (
        select(Event)
        .where(Event.project_id.in_(ids))
        .options(joinedload(Event.author), joinedload(Event.project).joinedload(Project.namespace))
        .order_by(Event.id.desc())
        .limit(limit)
    )
    return list(ctx.session.scalars(query).unique())


@page("/")
def home(ctx: Ctx) -> Response:
    if ctx.actor is None:
        return render(ctx, "home.html", projects=_projects(ctx, visible_ids(None)))
    mine = project_service.authorized(ctx.actor.id)
    return render(ctx, "home.html", projects=_projects(ctx, mine), events=recent_events(ctx, mine),
                  event_name=events.action_name)  # fmt: skip


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


@page("/users/sign_in")
def sign_in_form(ctx: Ctx) -> Response:
    if ctx.actor is not None:
        return redirect(local_target(ctx.query.get("redirect_to")))
    target = ctx.query.get("redirect_to")
    return _sign_in_form(ctx, target=local_target(target if isinstance(target, str) else None))


@action("/users/sign_in")
async def sign_in(ctx: Ctx) -> Response:
    """The same check as POST /session (gate, throttle, argon2, signin_enabled), then a session."""
    login, password, target = form(ctx, "login").strip(), form(ctx, "password"), local_target(form(ctx, "redirect_to"))
    if not login or not password:
        return _sign_in_form(ctx, 400, "Enter your username or e-mail and your password.", login, target)
    try:
        candidate = await signin.check_password(ctx.rt, login, password, ctx.client_address)
        if candidate.state != "active":
            raise Unauthorized()
        _user, secret = web_sessions.start(ctx.session, candidate.id)
    except Unauthorized:
        ctx.rollback()
        return _sign_in_form(ctx, 401, "Invalid login or password.", login, target)
    except (TooManyRequests, Unavailable) as refused:
        ctx.rollback()
        response = _sign_in_form(ctx, refused.status, "Too many attempts: wait a moment and try again.", login, target)
        response.headers.update(refused.headers)
        return response
    lifetime = signin.session_lifetime(ctx.session)
    set_cookie(ctx, SESSION_COOKIE, secret, int(lifetime.total_seconds()) if lifetime else None)
    return redirect(target)


@action("/users/sign_out")
def sign_out(ctx: Ctx) -> Response:
    web_sessions.end(ctx.session, ctx.web_secret)
    set_cookie(ctx, SESSION_COOKIE, "", 0)
    return redirect("/")


# --- users and groups ---------------------------------------------------------------------------


@page("/u/:username")
def user_page(ctx: Ctx) -> Response:
    user = identity.user_by_id_or_username(ctx.rt.db, ctx.path_params["username"])
    if user is None:
        raise NotFound()
    personal = (
        select(Project.id)
        .join(Namespace, Namespace.id == Project.namespace_id)
        .where(Namespace.owner_id == user.id, Namespace.kind == "user", Project.id.in_(visible_ids(ctx.actor)))
    )
    website = user.website_url if user.website_url.startswith(("https://", "http://")) else None
    return render(ctx, "user.html", user=user, website=website, projects=_projects(ctx, personal, "created_at"))


@page("/groups/:group")
def group_page(ctx: Ctx) -> Response:
    group = groups.find(ctx.session, ctx.path_params["group"])
    if group is None or group_policy.READ_GROUP not in groups.abilities(ctx.session, ctx.actor, group):
        raise NotFound()
    ids = select(Project.id).where(Project.namespace_id == group.id, Project.id.in_(visible_ids(ctx.actor)))
    return render(ctx, "group.html", group=group, projects=_projects(ctx, ids, "created_at"))


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


PAGES.add("GET", "/-/static/:name", static_file, kind="raw", auth="none", summary="The pages' style sheets and script")
