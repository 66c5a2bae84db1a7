"""Merge requests in v4: named by `iid` (`/projects/:id/merge_requests/:merge_request_iid`), listed
with filters and scopes per project, per group and across what the caller reads; created, edited,
merged, rebased and deleted through the services v3 uses (`services/merge_requests`)."""

from __future__ import annotations

import datetime as dt
import functools
from typing import Any, TypedDict

from ...db.models.merge_requests import is_draft
from ...db.readers import now
from ...entities.common import iso
from ...entities.v4 import merge_requests as entities
from ...entities.v4.commits import Commit, commit, project_web_url
from ...entities.v4.users import UserV4Basic, user_basic
from ...errors import BadRequest, RecordNotFound
from ...http import paging
from ...http.context import Ctx
from ...http.params import Bool, Choice, GitText, Id, IntList, Param, ParamError, Str
from ...http.refusals import answered
from ...http.replies import encoded
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import protected_branches
from ...services.merge_requests import accept as merge_accept
from ...services.merge_requests import comparison, reads, rebase, records, status
from ..guards import group_guard, merge_request_iid, project_guard

routes = Routes()

READ = (project_guard(policy.READ_MERGE_REQUEST),)
ONE = (*READ, merge_request_iid)
# A request's commits and changes are the repository's code (as in v3).
ONE_CODE = (project_guard(policy.READ_MERGE_REQUEST, policy.DOWNLOAD_CODE), merge_request_iid)
CREATE = (project_guard(policy.CREATE_MERGE_REQUEST),)
UPDATE = (project_guard(policy.UPDATE_MERGE_REQUEST), merge_request_iid)
# GitLab lets a project's owner (and admins) delete a request.
DELETE = (project_guard(policy.REMOVE_PROJECT), merge_request_iid)
PIPELINES = (project_guard(policy.READ_MERGE_REQUEST, policy.READ_BUILD), merge_request_iid)
LIST = "/projects/:id/merge_requests"
SINGLE = LIST + "/:merge_request_iid"
MAX_LABELS = 64


class Time(Param):
    """An ISO 8601 time (`2019-03-15T08:00:00Z`, or a date); a time without a zone is UTC."""

    def convert(self, value: Any) -> dt.datetime:
        try:
            moment = dt.datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise ParamError("is invalid") from None
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _labels_filter(text: str | None):
    if text is None or text.strip() == "":
        return None
    if text.strip().lower() in ("any", "none"):
        return text.strip().capitalize()
    titles = tuple(sorted({title.strip() for title in text.split(",") if title.strip()}))
    if len(titles) > MAX_LABELS:
        raise BadRequest(f"at most {MAX_LABELS} labels")
    return titles or None


def _assignee_filter(value: str | None):
    if value is None or value.strip() == "":
        return None
    word = value.strip()
    if word.lower() in ("any", "none"):
        return word.capitalize()
    if not (word.isascii() and word.isdigit()) or len(word) > 18:
        raise BadRequest({"assignee_id": ["is invalid"]})
    return int(word)


LIST_PARAMS = (
    Choice("state", ("opened", "closed", "merged", "locked", "all"), doc="Default all"),
    Choice("order_by", tuple(reads.ORDERS), doc="Default created_at"),
    Choice("sort", ("asc", "desc"), doc="Default desc"),
    Str("labels", max_length=10_000, doc="Comma-separated titles, all required; None or Any"),
    Id("author_id"),
    Str("author_username", max_length=255),
    Str("assignee_id", max_length=20, doc="An id, None or Any"),
    GitText("source_branch", max_length=255),
    GitText("target_branch", max_length=255),
    Str("search", max_length=255, doc="In titles and descriptions"),
    Choice("scope", ("created_by_me", "assigned_to_me", "all", "created-by-me", "assigned-to-me")),
    IntList("iids", doc="Only the requests with these iids"),
    *(Time(name) for name in reads.TIME_BOUNDS),
    Choice("view", ("simple",)),
    Choice("wip", ("yes", "no")),
    Bool("draft"),
)


def _listing(ctx: Ctx, where: str, default_scope: str, **ids) -> reads.Listing:
    args = ctx.args
    state = args.get("state", "all")
    scope = args.get("scope", default_scope).replace("-", "_")
    author_id, assignee = args.get("author_id"), _assignee_filter(args.get("assignee_id"))
    if ctx.actor is not None and scope == "created_by_me":
        author_id = ctx.actor.id
    elif ctx.actor is not None and scope == "assigned_to_me":
        assignee = ctx.actor.id
    draft = args.get("draft")
    if "wip" in args:
        draft = args["wip"] == "yes"
    return reads.Listing(
        where=where, state=None if state == "all" else state, order_by=args.get("order_by", "created_at"),
        sort=args.get("sort", "desc"), author_id=author_id, author_username=args.get("author_username"),
        assignee=assignee, source_branch=args.get("source_branch"), target_branch=args.get("target_branch"),
        search=args.get("search") or None, labels=_labels_filter(args.get("labels")), iids=tuple(args.get("iids") or ()),
        times=tuple((name, args[name]) for name in reads.TIME_BOUNDS if name in args), draft=draft, **ids,
    )  # fmt: skip


async def _page(ctx: Ctx, listing: reads.Listing) -> paging.Page:
    window = paging.window(ctx)
    total, found = await reads.read_listing(ctx.rt.db.loop, listing, ctx.actor, window.offset, window.limit)
    if ctx.args.get("view") == "simple":
        return paging.Page([entities.simple(row, ctx.view) for row, _, _ in found], total, window)
    heads = await ctx.off_loop(lambda: [comparison.head_of(ctx.rt, row) for row, _, _ in found])
    listed = [entities.merge_request(parts[0], ctx.view, reads.people_of(parts), head, is_draft(parts[0].title))
              for parts, head in zip(found, heads, strict=True)]  # fmt: skip
    return paging.Page(listed, total, window)


@routes.get(LIST, auth="optional", guards=READ, paginated=True, params=LIST_PARAMS, summary="Merge requests of a project (its target)")
async def list_merge_requests(ctx: Ctx) -> paging.Page[entities.MergeRequestV4 | entities.MergeRequestV4Simple]:
    return await _page(ctx, _listing(ctx, reads.PROJECT, "all", project_id=ctx.project_id))


@routes.get("/groups/:id/merge_requests", auth="optional", guards=(group_guard(),), paginated=True, params=LIST_PARAMS,
            summary="Merge requests of a group's projects the caller reads")  # fmt: skip
async def list_group_merge_requests(ctx: Ctx) -> paging.Page[entities.MergeRequestV4 | entities.MergeRequestV4Simple]:
    return await _page(ctx, _listing(ctx, reads.GROUP, "all", group_id=ctx.group_id))


@routes.get("/merge_requests", paginated=True, params=LIST_PARAMS,
            summary="Merge requests of every project the caller reads; scope default created_by_me")  # fmt: skip
async def list_all_merge_requests(ctx: Ctx) -> paging.Page[entities.MergeRequestV4 | entities.MergeRequestV4Simple]:
    return await _page(ctx, _listing(ctx, reads.EVERYWHERE, "created_by_me"))


def _full(ctx: Ctx, parts, changes_count: int | None = None, refs=None, can_merge=None) -> entities.MergeRequestV4Full:
    """The single-request form of PARTS; REFS its `comparison.diff_refs` and CAN_MERGE whether the
    caller may merge it, when read already on the read path (an open request's merge base walks
    history: off the loop), else read here in the request's transaction."""
    row = parts[0]
    base, head, start = refs or comparison.diff_refs(ctx.rt, row)
    if can_merge is None:
        can_merge = _may_merge(ctx, row, protected_branches.protections(ctx.session, ctx.project_row))
    data = entities.merge_request_full(
        row, ctx.view, reads.people_of(parts), head, is_draft(row.title), can_merge=can_merge,
        diff_refs={"base_sha": base, "head_sha": head, "start_sha": start}, changes_count=changes_count,
    )  # fmt: skip
    if ctx.args.get("include_rebase_in_progress"):
        data["rebase_in_progress"] = rebase.in_progress(row)
    return data


def _may_merge(ctx: Ctx, row, protections) -> bool:
    return ctx.actor is not None and row.state in ("opened", "reopened") and merge_accept.may_merge_under(
        protections, ctx.access, row.target_branch, ctx.by_admin
    )


def _rendered(ctx: Ctx) -> entities.MergeRequestV4Full:
    """The request as this request's transaction holds it (after a write: what it wrote)."""
    return _full(ctx, now(reads.read_wide(ctx.reader, ctx.project_id, _mr_id(ctx))))


def _mr_id(ctx: Ctx) -> int:
    return ctx.path_int("merge_request_id")


def request_of(ctx: Ctx):
    return records.find(ctx.session, ctx.project_id, _mr_id(ctx))


@routes.get(SINGLE, auth="optional", guards=ONE, params=(Bool("include_rebase_in_progress"), Bool("render_html"),
                                        Bool("include_diverged_commits_count")),
            summary="A merge request")  # fmt: skip
async def get_merge_request(ctx: Ctx) -> entities.MergeRequestV4Full:
    parts = await reads.read_wide(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx))
    refs = await ctx.off_loop(comparison.diff_refs, ctx.rt, parts[0])
    can_merge = _may_merge(ctx, parts[0], await protected_branches.read_protections(ctx.rt.db, ctx.project_id))
    return _full(ctx, parts, refs=refs, can_merge=can_merge)


TITLE = Str("title", max_length=255, doc="The title; Draft: (or WIP:) marks a draft")
DESCRIPTION = Str("description", max_length=1_000_000, multiline=True, nullable=True)
class Labels(Str):
    """Label titles: a comma-separated string, or an array of titles (python-gitlab 8 sends JSON arrays)."""

    def convert(self, value: Any) -> str:
        if isinstance(value, list):
            if not all(isinstance(each, str) for each in value):
                raise ParamError("must be a string or an array of strings")
            value = ",".join(value)
        return super().convert(value)

    def schema(self) -> dict:
        return {"oneOf": [super().schema(), {"type": "array", "items": {"type": "string"}}]}


LABELS = Labels("labels", max_length=10_000, nullable=True, doc="A comma-separated list of titles, or an array")
ASSIGNEES = (Id("assignee_id", nullable=True), IntList("assignee_ids", doc="The first is the assignee (one per request)"))


def _fields(ctx: Ctx) -> dict:
    """v4's parameters as the services' fields: `assignee_ids` names the assignee (the first, or
    none), `add_labels` / `remove_labels` edit the labels, `remove_source_branch` is kept with it."""
    fields = {key: value for key, value in ctx.args.items()
              if key not in ("assignee_ids", "add_labels", "remove_labels", "remove_source_branch")}  # fmt: skip
    if "assignee_ids" in ctx.args:
        ids = ctx.args["assignee_ids"]
        fields["assignee_id"] = ids[0] if ids and ids[0] else None
    return fields


def _edit_labels(ctx: Ctx, mr, fields: dict) -> None:
    if "add_labels" not in ctx.args and "remove_labels" not in ctx.args:
        return
    labels = set(records.parse_labels(fields.get("labels")) if "labels" in fields else (mr.labels or []))
    labels |= set(records.parse_labels(ctx.args.get("add_labels")))
    labels -= set(records.parse_labels(ctx.args.get("remove_labels")))
    fields["labels"] = ",".join(sorted(labels))


@routes.post(
    LIST,
    guards=CREATE,
    params=(
        GitText("source_branch", required=True, max_length=255),
        GitText("target_branch", required=True, max_length=255),
        TITLE.as_required(),
        *ASSIGNEES,
        DESCRIPTION,
        Id("target_project_id", doc="The upstream of this fork; default this project"),
        LABELS,
        Bool("remove_source_branch", doc="Remove the source branch once merged"),
        Bool("squash", doc="Accepted; requests are merged without squashing"),
    ),
    summary="Create a merge request (:id is the source project)",
)
async def create_merge_request(ctx: Ctx) -> entities.MergeRequestV4Full:
    mr, check = records.create(ctx.session, ctx.rt, ctx.actor, ctx.project, _fields(ctx))
    if ctx.args.get("remove_source_branch"):
        records.force_remove_source_branch(ctx.session, mr, True)
    mr = await status.checked(ctx.session, ctx.rt, ctx.actor, mr, check, ctx.off_loop)
    return _full(ctx, now(reads.read_wide(ctx.reader, mr.target_project_id, mr.id)))


@routes.put(
    SINGLE,
    guards=UPDATE,
    params=(
        GitText("target_branch", max_length=255),
        GitText("source_branch", doc="Refused: the source branch cannot change"),
        *ASSIGNEES,
        TITLE,
        DESCRIPTION,
        Choice("state_event", ("close", "reopen")),
        LABELS,
        Labels("add_labels", max_length=10_000),
        Labels("remove_labels", max_length=10_000),
        Bool("remove_source_branch"),
        Bool("squash"),
        Bool("discussion_locked"),
    ),
    summary="Update a merge request; state_event close or reopen",
)
async def update_merge_request(ctx: Ctx) -> entities.MergeRequestV4Full:
    mr = request_of(ctx)
    fields = _fields(ctx)
    _edit_labels(ctx, mr, fields)
    mr, check = records.update(ctx.session, ctx.rt, ctx.actor, ctx.project, mr, fields)
    if "remove_source_branch" in ctx.args:
        records.force_remove_source_branch(ctx.session, mr, ctx.args["remove_source_branch"])
    await status.checked(ctx.session, ctx.rt, ctx.actor, mr, check, ctx.off_loop)
    return _rendered(ctx)


@routes.delete(SINGLE, guards=DELETE, status=204, summary="Delete a merge request (owners and admins)")
def delete_merge_request(ctx: Ctx) -> None:
    records.delete(ctx.session, request_of(ctx))


@routes.put(
    SINGLE + "/merge",
    guards=ONE,
    params=(
        Str("merge_commit_message", max_length=100_000, multiline=True, nullable=True),
        Str("squash_commit_message", max_length=100_000, multiline=True, nullable=True),
        Bool("should_remove_source_branch"),
        Bool("merge_when_pipeline_succeeds", aliases=("auto_merge",),
             doc="Merge when the pipeline succeeds; with no unfinished builds, merge now"),
        Str("sha", max_length=64, doc="The source head the caller saw (409 when it moved)"),
        Bool("squash"),
    ),
    summary="Merge a merge request: 401 may not merge, 405 not open, draft or not mergeable, 409 stale sha",
)  # fmt: skip
async def merge_merge_request(ctx: Ctx) -> entities.MergeRequestV4Full:
    args = {**ctx.args, "merged_when_build_succeeds": ctx.args.get("merge_when_pipeline_succeeds")}
    accept = functools.partial(merge_accept.accept, access=ctx.access, ready=merge_accept.refuse_drafts)
    outcome = await ctx.off_loop(accept, ctx.rt, _mr_id(ctx), ctx.actor.id, args)
    answered(outcome.refusal)
    return _rendered(ctx)


@routes.post(SINGLE + "/cancel_merge_when_pipeline_succeeds", guards=ONE, status=201,
             summary="The request no longer merges when its pipeline succeeds")  # fmt: skip
def cancel_merge_when_pipeline_succeeds(ctx: Ctx) -> entities.MergeRequestV4Full:
    answered(merge_accept.cancel_merge_when_build_succeeds(ctx.session, ctx.project, ctx.access, ctx.actor, request_of(ctx)))
    return _rendered(ctx)


class RebaseV4Started(TypedDict):
    rebase_in_progress: bool


@routes.put(SINGLE + "/rebase", guards=ONE, params=(Bool("skip_ci"),), status=202,
            summary="Rebase the source branch onto the target, in the background (403 may not push to it)")  # fmt: skip
def rebase_merge_request(ctx: Ctx) -> RebaseV4Started:
    answered(rebase.request(ctx.session, ctx.actor, request_of(ctx)))
    return {"rebase_in_progress": True}


@routes.get(SINGLE + "/changes", auth="optional", guards=ONE_CODE, params=(Bool("access_raw_diffs"), Bool("unidiff")),
            summary="The request with its changes (merge base to source head)")  # fmt: skip
async def merge_request_changes(ctx: Ctx) -> entities.MergeRequestV4Changes:
    mr = await reads.compared(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx))
    work = comparison.comparer(ctx.rt, ctx.project_id, mr, commits=False,
                               shape=lambda change: encoded(entities.diff(change)))  # fmt: skip

    def entity() -> entities.MergeRequestV4Full:
        return _full(ctx, now(reads.read_wide(ctx.rt.db.fast, ctx.project_id, _mr_id(ctx))))

    data, found = await ctx.off_loop_while(work, entity)
    data["changes"] = found.diffs
    data["changes_count"] = str(len(found.diffs))
    data["overflow"] = found.timed_out
    return data


@routes.get(SINGLE + "/diffs", auth="optional", guards=ONE_CODE, paginated=True, params=(Bool("unidiff"),),
            summary="The request's changes, a page of files at a time")  # fmt: skip
async def merge_request_diffs(ctx: Ctx) -> paging.Page[entities.DiffV4]:
    window = paging.window(ctx)
    mr = await reads.compared(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx))
    found = await ctx.off_loop(comparison.comparer(ctx.rt, ctx.project_id, mr, commits=False))
    return paging.Page([entities.diff(change) for change in found.diffs[window.offset : window.offset + window.limit]],
                       len(found.diffs), window)  # fmt: skip


@routes.get(SINGLE + "/commits", auth="optional", guards=ONE_CODE, paginated=True,
            summary="Commits of the source not on the target, newest first")  # fmt: skip
async def merge_request_commits(ctx: Ctx) -> paging.Page[Commit]:
    window = paging.window(ctx)
    mr = await reads.compared(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx))
    found = await ctx.off_loop(comparison.comparer(ctx.rt, ctx.project_id, mr, files=False))
    web = project_web_url(ctx.view, f"{ctx.project_row.ns_path}/{ctx.project_row.path}")
    newest_first = list(reversed(found.commits))
    return paging.Page([commit(info, web) for info in newest_first[window.offset : window.offset + window.limit]],
                       len(newest_first), window)  # fmt: skip


async def _version(ctx: Ctx, *, commits: bool) -> tuple[entities.MergeRequestVersionV4, object]:
    """The request's one version (its current diff) and the comparison it was made of."""
    row = (await reads.read_wide(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx)))[0]
    found = await ctx.off_loop(comparison.comparer(ctx.rt, ctx.project_id, row, commits=commits))
    refs = await ctx.off_loop(lambda: comparison.diff_refs(ctx.rt, row))
    return entities.version(row, refs, len(found.diffs)), found


@routes.get(SINGLE + "/versions", auth="optional", guards=ONE_CODE, paginated=True,
            summary="Versions of the request's diff: the current one (codeyard keeps no earlier ones)")  # fmt: skip
async def merge_request_versions(ctx: Ctx) -> paging.Page[entities.MergeRequestVersionV4]:
    window = paging.window(ctx)
    version, _found = await _version(ctx, commits=False)
    return paging.Page([version][window.offset : window.offset + window.limit], 1, window)


@routes.get(SINGLE + "/versions/:version_id", auth="optional", guards=ONE_CODE,
            summary="A version of the request's diff, with its commits (newest first) and diffs")  # fmt: skip
async def merge_request_version(ctx: Ctx) -> entities.MergeRequestVersionV4Detail:
    if ctx.path_int("version_id") != _mr_id(ctx):
        raise RecordNotFound()
    version, found = await _version(ctx, commits=True)
    web = project_web_url(ctx.view, f"{ctx.project_row.ns_path}/{ctx.project_row.path}")
    return {**version, "commits": [commit(info, web) for info in reversed(found.commits)],
            "diffs": [entities.diff(change) for change in found.diffs]}  # fmt: skip


class PipelineV4Short(TypedDict):
    id: int
    iid: int
    project_id: int
    sha: str
    ref: str
    status: str
    source: str
    created_at: str | None
    updated_at: str | None
    web_url: str


@routes.get(SINGLE + "/pipelines", auth="optional", guards=PIPELINES, paginated=True,
            summary="Pipelines of the request's source branch, newest first")  # fmt: skip
async def merge_request_pipelines(ctx: Ctx) -> paging.Page[PipelineV4Short]:
    window = paging.window(ctx)
    row, _author, _assignee = await reads.read_wide(ctx.rt.db.loop, ctx.project_id, _mr_id(ctx))
    total, found = await reads.read_pipelines(ctx.rt.db.loop, row.source_project_id, row.source_branch,
                                              window.offset, window.limit)  # fmt: skip
    return paging.Page([_pipeline(ctx, each) for each in found], total, window)


def _pipeline(ctx: Ctx, row) -> PipelineV4Short:
    return {
        "id": row.id, "iid": row.id, "project_id": row.project_id, "sha": row.sha, "ref": row.ref,
        "status": row.status, "source": "push", "created_at": iso(row.created_at), "updated_at": iso(row.updated_at),
        "web_url": f"{ctx.view.base_url}/{row.namespace_path}/{row.project_path}/pipelines/{row.id}",
    }  # fmt: skip


@routes.get(SINGLE + "/participants", auth="optional", guards=ONE, paginated=True,
            summary="The request's author, assignee and commenters")  # fmt: skip
async def merge_request_participants(ctx: Ctx) -> paging.Page[UserV4Basic]:
    window = paging.window(ctx)
    total, found = await reads.read_participants(ctx.rt.db.loop, _mr_id(ctx), window.offset, window.limit)
    return paging.Page([user_basic(user, ctx.view) for user in found], total, window)

