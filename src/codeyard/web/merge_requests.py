"""Merge requests: the list by state, one request (description, commits, diff, comments) and its
actions. Buttons are shown only to those the services would let act, and every action calls the
same service as the API (accept goes through services.merge_requests.accept.accept, as the API's does)."""

from __future__ import annotations

import functools
import math

from starlette.responses import Response

from ..db.models.merge_requests import CLOSED, MERGED, OPENED
from ..db.readers import now
from ..errors import BadRequest
from ..http.context import Ctx
from ..http.refusals import answered
from ..policies import projects as policy
from ..services import notes as note_service
from ..services.merge_requests import accept as merge_accept
from ..services.merge_requests import comparison, reads, records, status
from .core import Pages, form, redirect, shown, signed_in
from .markup import markdown_kept
from .projects import load
from .repository import COLLAPSE_ABOVE, PER_PAGE, PROJECT, _page_number, _render, _statuses

pages = Pages()

STATES = ("opened", "merged", "closed", "all")
ONE = PROJECT + "/merge_requests/:iid"
MAX_COMMENT = 1_000_000
MAX_NOTES_SHOWN = 500  # the oldest ones; the API pages through all


@pages.page(PROJECT + "/merge_requests")
def list_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_MERGE_REQUEST)
    state = ctx.query.get("state") if ctx.query.get("state") in STATES else "opened"
    number = _page_number(ctx)
    total, found = now(reads.read_page(
        ctx.reader, p.project.id, state={"opened": OPENED, "merged": MERGED, "closed": CLOSED}.get(state),
        order_by="created_at", sort="desc", offset=(number - 1) * PER_PAGE, limit=PER_PAGE,
    ))  # fmt: skip
    requests = [shown(row, author=author, assignee=assignee) for row, author, assignee in found]
    return _render(ctx, "merge_requests.html", p, "merge_requests", requests=requests, state=state, states=STATES,
                   page=number, pages=max(1, math.ceil(total / PER_PAGE)), total=total)  # fmt: skip


def _iid(ctx: Ctx) -> int:
    return ctx.path_int("iid")


@pages.page(ONE)
async def request_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.READ_MERGE_REQUEST)
    mr = records.find_by_iid(ctx.session, p.project, _iid(ctx))
    _total, found = now(note_service.read_comments(ctx.reader, p.project.id, mr.id, 0, MAX_NOTES_SHOWN))
    notes = [shown(row, author=author) for row, author in found]
    may_merge = ctx.actor is not None and merge_accept.may_merge(ctx.session, p.project, p.access, mr)
    buttons = {
        "accept": may_merge and mr.open and not mr.work_in_progress and mr.merge_status != "cannot_be_merged",
        "close": p.can(policy.UPDATE_MERGE_REQUEST) and mr.open,
        "reopen": p.can(policy.UPDATE_MERGE_REQUEST) and mr.state == CLOSED,
        "cancel_auto": mr.open and mr.merge_when_build_succeeds and (may_merge or (ctx.actor is not None and mr.author_id == ctx.actor.id)),
        "comment": ctx.actor is not None and p.can(policy.CREATE_NOTE),
    }  # fmt: skip
    found, texts = await ctx.off_loop(_read, ctx.rt, p.project if p.can_code else None, mr,
                                      [mr.description, *(note.note for note in notes)])  # fmt: skip
    shas = [info.id for info in ([found.head] if found and found.head else []) + (found.commits if found else [])]
    statuses = _statuses(ctx, p, shas, mr.source_project_id)
    return _render(ctx, "merge_request.html", p, "merge_requests", mr=mr, description=texts[0],
                   notes=list(zip(notes, texts[1:], strict=True)), comparison=found, buttons=buttons, statuses=statuses,
                   collapse_above=COLLAPSE_ABOVE)  # fmt: skip


def _read(rt, project, mr, texts: list[str | None]) -> tuple:
    """(the request's comparison, or None without PROJECT, the code's project; TEXTS as sanitised
    Markdown) in one trip to the thread pool: git, and a long description takes a while."""
    found = comparison.comparison(rt, project, mr) if project is not None else None
    return found, [markdown_kept(text) for text in texts]


def _acting(ctx: Ctx, *abilities: str):
    """The project and its request for a form: 404 when unreadable, then 401 for anonymous visitors,
    then 403 without ABILITIES."""
    p = load(ctx, policy.READ_MERGE_REQUEST)
    signed_in(ctx)
    return p.need(*abilities), records.find_by_iid(ctx.session, p.project, _iid(ctx))


def _back(ctx: Ctx, p, mr) -> Response:
    return redirect(f"{p.url}/merge_requests/{mr.iid}")


@pages.action(ONE + "/notes")
def add_comment(ctx: Ctx) -> Response:
    p, mr = _acting(ctx, policy.CREATE_NOTE)
    text = form(ctx, "note")
    if not text.strip() or len(text) > MAX_COMMENT:
        raise BadRequest("A comment needs some text (at most 1,000,000 characters).")
    note_service.comment_on_merge_request(ctx.session, ctx.rt, p.project, ctx.actor, mr, text)
    return _back(ctx, p, mr)


@pages.action(ONE + "/accept")
async def accept(ctx: Ctx) -> Response:
    p, mr = _acting(ctx)
    args = {"should_remove_source_branch": form(ctx, "should_remove_source_branch") == "1",
            "merged_when_build_succeeds": form(ctx, "merge_when_build_succeeds") == "1",
            "sha": form(ctx, "sha") or None}  # fmt: skip
    outcome = await ctx.off_loop(functools.partial(merge_accept.accept, access=p.access), ctx.rt, mr.id, ctx.actor.id, args)
    answered(outcome.refusal)
    return _back(ctx, p, mr)


def _state_event(event: str):
    async def change(ctx: Ctx) -> Response:
        p, mr = _acting(ctx, policy.UPDATE_MERGE_REQUEST)
        mr, check = records.update(ctx.session, ctx.rt, ctx.actor, p.project, mr, {"state_event": event})
        mr = await status.checked(ctx.session, ctx.rt, ctx.actor, mr, check, ctx.off_loop)
        return _back(ctx, p, mr)

    change.__name__ = f"{event}_request"
    return change


pages.action(ONE + "/close")(_state_event("close"))
pages.action(ONE + "/reopen")(_state_event("reopen"))


@pages.action(ONE + "/cancel_merge_when_build_succeeds")
def cancel_automatic_merge(ctx: Ctx) -> Response:
    p, mr = _acting(ctx)
    answered(merge_accept.cancel_merge_when_build_succeeds(ctx.session, p.project, p.access, ctx.actor, mr))
    return _back(ctx, p, mr)
