"""What every page shares: the route registry, the request pipeline, templates, security headers.

Pipeline of a page (route kind "page", dispatched by app.py):
  read a form body (POST) -> the caller from the session cookie -> the form token (POST)
  -> handler(ctx) -> Response -> commit -> security headers and cookies -> send.
A CodeyardError becomes an HTML error page with its status; anything else is a logged 500 page.
"""

from __future__ import annotations

import inspect
import logging
import secrets
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import jinja2
from markupsafe import Markup
from sqlalchemy.exc import IntegrityError
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ..entities.common import iso
from ..errors import CodeyardError, NotFound, Unauthorized
from ..http.bodies import read_body
from ..http.context import Ctx
from ..http.routing import Routes
from ..policies.projects import VISIBILITY_NAMES
from ..services import web_sessions

log = logging.getLogger("codeyard.web")

SESSION_COOKIE = web_sessions.COOKIE
VISITOR_COOKIE = "codeyard_visitor"  # an anonymous visitor's random value: the basis of their form token
FORM_TOKEN = "authenticity_token"  # GitLab's name for the field

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "private, no-cache",
}


class Pages(Routes):
    """The pages one module declares (`codeyard.routes` mounts them at the root)."""

    def page(self, template: str, method: str = "GET", **options):
        """Declare a page handler: `handler(ctx) -> Response` (sync or async)."""
        return self.route(method, template, kind="page", auth="optional", **options)

    def action(self, template: str, **options):
        """Declare a form's target (POST): checked for the form token before the handler runs."""
        return self.page(template, "POST", **options)


# --- templates ----------------------------------------------------------------------------------

# Templates are compiled once per process and never looked at again: with auto_reload each render
# stat()ed every template it extends, includes or imports.
TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
    auto_reload=False,
)


def _short_time(moment) -> str:
    """`2016-01-04 15:31` of a datetime or of the API's text (a read path's, `db.queries.api_text`)."""
    if isinstance(moment, str):
        return moment[:16].replace("T", " ")
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else ""


def _url_path(text: str) -> str:
    """Path segments for a URL: every character but `/` and the unreserved ones escaped."""
    return quote(text, safe="/")


TEMPLATES.globals.update(visibility=VISIBILITY_NAMES)
TEMPLATES.filters.update(time=_short_time, iso=iso, urlpath=_url_path, short=lambda sha: (sha or "")[:8])


def shown(row, **parts) -> SimpleNamespace:
    """ROW (a reader's named tuple) for a template, with PARTS (its joined rows: `author=...`) as
    attributes beside its columns."""
    return SimpleNamespace(**row._asdict(), **parts)


def render(ctx: Ctx, template: str, status: int = 200, **context) -> HTMLResponse:
    body = TEMPLATES.get_template(template).render(
        me=ctx.actor, base_url=ctx.base_url, form_token=lambda: form_token_field(ctx), **context
    )
    return HTMLResponse(body, status_code=status)


def redirect(location: str) -> Response:
    """See Other: after a form, the browser GETs the result."""
    return RedirectResponse(location, status_code=303)


# --- the caller and form tokens -----------------------------------------------------------------


def identify(ctx: Ctx) -> None:
    jar = ctx.cookies
    ctx.web_secret = jar.get(SESSION_COOKIE)
    ctx.actor = web_sessions.user_for(ctx.rt.db, ctx.web_secret)
    if ctx.actor is None:
        ctx.web_secret = None
    ctx.visitor = jar.get(VISITOR_COOKIE) or None
    ctx.new_cookies = []


def _form_basis(ctx: Ctx) -> str:
    if ctx.web_secret:
        return ctx.web_secret
    if not ctx.visitor:
        ctx.visitor = secrets.token_urlsafe(24)
        set_cookie(ctx, VISITOR_COOKIE, ctx.visitor, None)
    return ctx.visitor


def form_token_field(ctx: Ctx) -> Markup:
    token = web_sessions.form_token(ctx.rt.secret_key, _form_basis(ctx))
    return Markup('<input type="hidden" name="{}" value="{}">').format(FORM_TOKEN, token)


class BadFormToken(CodeyardError):
    status = 403
    default_message = "This form has expired or did not come from this site: reload the page and try again."


def check_form_token(ctx: Ctx) -> None:
    basis = ctx.web_secret or ctx.visitor
    if not web_sessions.token_matches(ctx.rt.secret_key, basis, ctx.body.get(FORM_TOKEN)):
        raise BadFormToken()


def set_cookie(ctx: Ctx, name: str, value: str, max_age: int | None) -> None:
    parts = [f"{name}={value}", "Path=/", "HttpOnly", "SameSite=Lax"]
    if max_age is not None:
        parts.append(f"Max-Age={max_age}")
    if ctx.base_url.startswith("https:"):
        parts.append("Secure")
    ctx.new_cookies.append("; ".join(parts))


def signed_in(ctx: Ctx):
    """The caller; anonymous visitors are 401 (GET pages send them to the sign-in form)."""
    if ctx.actor is None:
        raise Unauthorized()
    return ctx.actor


def form(ctx: Ctx, name: str, default: str = "") -> str:
    value = ctx.body.get(name, default)
    return value if isinstance(value, str) else default


# --- the pipeline -------------------------------------------------------------------------------


async def handle(ctx: Ctx, receive, send) -> None:
    ctx.web_secret, ctx.visitor, ctx.new_cookies = None, None, []
    try:
        identify(ctx)
        if ctx.method == "POST":
            await read_body(ctx, receive)
            check_form_token(ctx)
        response = ctx.route.handler(ctx)
        if inspect.isawaitable(response):
            response = await response
        ctx.commit()
    except Exception as error:
        ctx.rollback()
        response = error_page(ctx, error)
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    for cookie in ctx.new_cookies:
        response.raw_headers.append((b"set-cookie", cookie.encode("latin-1")))
    await response(ctx.scope, receive, send)


TITLES = {400: "Bad request", 401: "Sign in required", 403: "Forbidden", 404: "Page not found",
          405: "Not allowed", 409: "Conflict", 413: "Too large", 429: "Too many attempts"}  # fmt: skip


NOT_FOUND = "The page you were looking for doesn't exist, or you may not see it."


def error_page(ctx: Ctx, error: Exception) -> Response:
    if isinstance(error, Unauthorized) and ctx.method == "GET":
        return redirect("/users/sign_in?redirect_to=" + quote(ctx.raw_path + _query(ctx), safe="/"))
    if isinstance(error, CodeyardError):
        status = error.status
        message = NOT_FOUND if isinstance(error, NotFound) else error.message
        response = render(ctx, "error.html", status, title=TITLES.get(status, "Error"), message=_text(message))
        response.headers.update(error.headers)
        return response
    if isinstance(error, IntegrityError):
        return render(ctx, "error.html", 409, title="Conflict", message="Someone else changed this at the same time; try again.")
    log.exception("unhandled error on %s %s", ctx.method, ctx.raw_path)
    return render(ctx, "error.html", 500, title="Something went wrong", message="The error was logged.")


def _query(ctx: Ctx) -> str:
    return "?" + ctx.query_string if ctx.query_string else ""


def _text(message) -> str:
    """An error's message as one line: field maps (`{"name": ["is taken"]}`) joined."""
    if isinstance(message, dict):
        return "; ".join(f"{field} {' and '.join(map(str, reasons)) if isinstance(reasons, list) else reasons}"
                         for field, reasons in message.items())  # fmt: skip
    return str(message)
