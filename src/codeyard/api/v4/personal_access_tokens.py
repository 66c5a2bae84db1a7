"""Personal access tokens and impersonation tokens in v4: a user lists, reads, revokes and rotates
their own personal access tokens (admins everyone's); admins create them for a user, and manage
impersonation tokens (tokens that act as the user, with scopes). The secret is in the answer to
create and rotate only; the scopes are enforced by `http/auth.check_scope` and git's transport."""

from __future__ import annotations

from ...entities.v4 import tokens as entities
from ...errors import NotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, Int, Str, StrList
from ...http.routing import Routes
from ...services import credentials, identity

routes = Routes()

PERSONAL = "/personal_access_tokens"
IMPERSONATION = "/users/:id/impersonation_tokens"  # `:id` as every route under /users/:id

NAME = Str("name", required=True, max_length=255, doc="The token's name")
SCOPES = StrList("scopes", required=True, item_pattern="|".join(credentials.SCOPES), item_message="does not have a valid value",
                 doc="Any of " + ", ".join(credentials.SCOPES))  # fmt: skip
EXPIRES_AT = Str("expires_at", pattern=r"\d{4}-\d{2}-\d{2}", doc="YYYY-MM-DD: the token works until that day ends (UTC)")
STATE = Choice("state", credentials.STATES, doc="active or inactive (revoked or expired)")


def shown(token) -> entities.PersonalAccessToken:
    return entities.personal_access_token(token, credentials.is_active(token), credentials.expiry_date(token))


def shown_impersonation(token) -> entities.ImpersonationToken:
    return {**shown(token), "impersonation": True}


def _expiry(ctx: Ctx):
    return credentials.parse_expiry(ctx.args.get("expires_at"))


# --- the caller's personal access tokens (admins: everyone's) ----------------------------------


@routes.get(PERSONAL, paginated=True, params=(Int("user_id", doc="Admins: that user's tokens"), STATE, Bool("revoked")),
            summary="Personal access tokens: the caller's (admins: everyone's)")  # fmt: skip
def list_tokens(ctx: Ctx) -> paging.Page[entities.PersonalAccessToken]:
    window = paging.window(ctx)
    owner = ctx.args.get("user_id")
    if not ctx.actor.is_admin:
        if owner not in (None, ctx.actor.id):
            return paging.Page([], 0, window)  # another user's: none the caller may see
        owner = ctx.actor.id
    total, found = credentials.scoped_page(ctx.session, credentials.PERSONAL, owner, ctx.args.get("state"),
                                           ctx.args.get("revoked"), window.offset, window.limit)  # fmt: skip
    return paging.Page([shown(token) for token in found], total, window)


def _own_or_any(ctx: Ctx, token_id: int):
    """A personal access token of the caller (any, for admins), or 404."""
    owner = None if ctx.actor.is_admin else ctx.actor.id
    return credentials.scoped_token(ctx.session, (credentials.PERSONAL,), token_id, owner)


def _self(ctx: Ctx):
    """The personal or impersonation token this request authenticated with, or 404."""
    return credentials.scoped_token(ctx.session, credentials.SCOPED, ctx.token_id or 0)


@routes.get(PERSONAL + "/self", summary="The personal access token of this request")
def get_self(ctx: Ctx) -> entities.PersonalAccessToken:
    return shown(_self(ctx))


@routes.get(PERSONAL + "/:id", summary="One personal access token: the caller's (admins: anyone's)")
def get_token(ctx: Ctx) -> entities.PersonalAccessToken:
    return shown(_own_or_any(ctx, ctx.path_int("id")))


@routes.delete(PERSONAL + "/self", status=204, summary="Revoke the personal access token of this request")
def revoke_self(ctx: Ctx) -> None:
    credentials.revoke(ctx.session, _self(ctx))


@routes.delete(PERSONAL + "/:id", status=204, summary="Revoke a personal access token")
def revoke_token(ctx: Ctx) -> None:
    credentials.revoke(ctx.session, _own_or_any(ctx, ctx.path_int("id")))


def _rotated(ctx: Ctx, token) -> entities.PersonalAccessTokenWithToken:
    fresh, secret = credentials.rotate(ctx.session, token, _expiry(ctx))
    return {**shown(fresh), "token": secret}


@routes.post(PERSONAL + "/self/rotate", status=200, params=(EXPIRES_AT,),
             summary="A new secret for the token of this request; the old one is revoked")  # fmt: skip
def rotate_self(ctx: Ctx) -> entities.PersonalAccessTokenWithToken:
    return _rotated(ctx, _self(ctx))


@routes.post(PERSONAL + "/:id/rotate", status=200, params=(EXPIRES_AT,),
             summary="A new secret for a personal access token; the old one is revoked")  # fmt: skip
def rotate_token(ctx: Ctx) -> entities.PersonalAccessTokenWithToken:
    return _rotated(ctx, _own_or_any(ctx, ctx.path_int("id")))


# --- a user's tokens, for admins ----------------------------------------------------------------


def _user_id(ctx: Ctx) -> int:
    user = identity.user_by_id(ctx.rt.db, ctx.path_int("id", lambda: NotFound("User")))
    if user is None:
        raise NotFound("User")
    return user.id


@routes.post("/users/:id/personal_access_tokens", admin=True, params=(NAME, SCOPES, EXPIRES_AT),
             summary="Create a personal access token for a user (admins)")  # fmt: skip
def create_for_user(ctx: Ctx) -> entities.PersonalAccessTokenWithToken:
    token, secret = credentials.issue_scoped(ctx.session, _user_id(ctx), credentials.PERSONAL, ctx.args["name"],
                                             ctx.args["scopes"], _expiry(ctx))  # fmt: skip
    return {**shown(token), "token": secret}


@routes.get(IMPERSONATION, admin=True, paginated=True, params=(Choice("state", ("all", *credentials.STATES)),),
            summary="A user's impersonation tokens (admins)")  # fmt: skip
def list_impersonation(ctx: Ctx) -> paging.Page[entities.ImpersonationToken]:
    window = paging.window(ctx)
    state = ctx.args.get("state")
    total, found = credentials.scoped_page(ctx.session, credentials.IMPERSONATION, _user_id(ctx),
                                           None if state == "all" else state, None, window.offset, window.limit)  # fmt: skip
    return paging.Page([shown_impersonation(token) for token in found], total, window)


@routes.post(IMPERSONATION, admin=True, params=(NAME, SCOPES, EXPIRES_AT),
             summary="Create an impersonation token: it acts as the user, within its scopes (admins)")  # fmt: skip
def create_impersonation(ctx: Ctx) -> entities.ImpersonationTokenWithToken:
    token, secret = credentials.issue_scoped(ctx.session, _user_id(ctx), credentials.IMPERSONATION, ctx.args["name"],
                                             ctx.args["scopes"], _expiry(ctx))  # fmt: skip
    return {**shown_impersonation(token), "token": secret}


@routes.get(IMPERSONATION + "/:token_id", admin=True, summary="One impersonation token of a user (admins)")
def get_impersonation(ctx: Ctx) -> entities.ImpersonationToken:
    token = credentials.scoped_token(ctx.session, (credentials.IMPERSONATION,), ctx.path_int("token_id"), _user_id(ctx))
    return shown_impersonation(token)


@routes.delete(IMPERSONATION + "/:token_id", admin=True, status=204, summary="Revoke an impersonation token (admins)")
def revoke_impersonation(ctx: Ctx) -> None:
    credentials.revoke(ctx.session, credentials.scoped_token(ctx.session, (credentials.IMPERSONATION,), ctx.path_int("token_id"), _user_id(ctx)))
