"""A project's page and its repository: tree and file pages at any ref, raw files, commits, one
commit's diff, branches and tags. Git reads run off the event loop (`Ctx.off_loop`); files over
1 MiB and binary files are never read whole into a page (raw downloads stream from git)."""

from __future__ import annotations

import math

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from ..http.context import Ctx
from ..policies import projects as policy
from ..services import protected_branches, repository
from ..services.ci import pipelines
from .core import Pages, render
from .kept import Kept
from .markup import code, is_binary, is_markdown, markdown
from .projects import ProjectPage, load

pages = Pages()

PER_PAGE = 20
PROJECT = "/:namespace/:project"


def _render(ctx: Ctx, template: str, p: ProjectPage, tab: str, **context) -> Response:
    return render(ctx, template, p=p, tab=tab, **context)


def _page_number(ctx: Ctx) -> int:
    text = ctx.query.get("page")
    return min(int(text), 100_000) if isinstance(text, str) and text.isascii() and text.isdigit() and int(text) > 0 else 1


MEMO_BYTES = 64 * 1024  # overviews are kept when their README is this small


_readmes = Kept(128, 32 * 1024 * 1024)


def _readme(blob_id: str, name: str, data: bytes | None):
    """A README's HTML, kept by (blob id, name) for the last 128 (at most 32 MiB of HTML): rendering
    and sanitising was half of a project page, and up to a second for a big one (docs/MEASUREMENTS.md)."""
    if data is None:
        return None
    if (kept := _readmes.get((blob_id, name))) is None:
        kept = _render_readme(name, data)
        _readmes.put((blob_id, name), kept, len(kept))
    return kept


def _render_readme(name: str, data: bytes):
    text = data.decode("utf-8", "replace")
    return markdown(text) if is_markdown(name) or name.lower() == "readme" else code(text, name)


_overviews = Kept(64)


def _overview(rt, project):
    """The repository part of a project's page, README rendered (in the thread pool: Markdown of a
    1 MiB README takes a while). It depends on the default branch's tip only, so the last 64 are
    kept by (project, tip) when their README is small: then a page reads one ref (reading the
    commit, the tree and the README was a fifth of the page; docs/MEASUREMENTS.md)."""
    tip = repository.default_tip(rt, project)
    key = (project.id, tip)
    if (kept := _overviews.get(key)) is not None:
        return kept
    overview = repository.overview(rt, project, tip)
    shown = overview, _readme(overview.readme_id, *overview.readme) if overview.readme else None
    if overview.readme is None or (overview.readme[1] is not None and len(overview.readme[1]) <= MEMO_BYTES):
        _overviews.put(key, shown)
    return shown


@pages.page(PROJECT)
async def project_page(ctx: Ctx) -> Response:
    p = load(ctx)
    overview, readme = await ctx.off_loop(_overview, ctx.rt, p.info) if p.can_code else (None, None)
    return _render(ctx, "project.html", p, "project", overview=overview, readme=readme, ref=p.default_branch)


def _crumbs(path: str) -> list[tuple[str, str]]:
    """(name, path up to it) of each directory of PATH, for the breadcrumb."""
    parts = [part for part in path.split("/") if part]
    return [(part, "/".join(parts[: index + 1])) for index, part in enumerate(parts)]


def _tree(rt, project, ref_path: str):
    ref, path = repository.split_ref(rt, project, ref_path)
    return ref, path, repository.tree(rt, project, ref, path)


async def tree_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    ref, path, entries = await ctx.off_loop(_tree, ctx.rt, p.info, ctx.path_params["ref_path"])
    return _render(ctx, "tree.html", p, "files", ref=ref, path=path, crumbs=_crumbs(path), entries=entries)


SHOWN_UP_TO = 1024 * 1024  # bigger files get a download link, not a page


_highlighted = Kept(256, 64 * 1024 * 1024)


def _blob(rt, project, ref_path: str):
    """(ref, path, blob, highlighted text or None, binary?) in one trip to the thread pool: the
    highlighting is CPU work too. What a blob shows is kept by (blob id, file name) for the last
    256 (at most 64 MiB of HTML): highlighting a file costs far more than the rest of its page (docs/MEASUREMENTS.md)."""
    ref, path = repository.split_ref(rt, project, ref_path)
    found = repository.file_blob(rt, project, ref, path)
    if found.size > SHOWN_UP_TO or found.streamed:
        return ref, path, found, None, None
    name = path.rsplit("/", 1)[-1]
    shown = _highlighted.get((found.id, name))
    if shown is None:
        shown = _show(repository.blob_content(rt, project, found), name)
        _highlighted.put((found.id, name), shown, len(shown[0] or ""))
    return ref, path, found, *shown


def _show(data: bytes, name: str) -> tuple:
    """(highlighted text or None, binary?) of a file NAME holding DATA."""
    if is_binary(data):
        return None, True
    return code(data.decode("utf-8", "replace"), name), False


async def blob_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    ref, path, found, shown, binary = await ctx.off_loop(_blob, ctx.rt, p.info, ctx.path_params["ref_path"])
    return _render(ctx, "blob.html", p, "files", ref=ref, path=path, crumbs=_crumbs(path), blob=found,
                   shown=shown, binary=binary, too_large=found.size > SHOWN_UP_TO)  # fmt: skip


RAW_HEADERS = {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cache-control": "private, no-cache",
}


async def raw_file(ctx: Ctx) -> Response:
    """The file's bytes as plain text (never a type a browser would run), streamed when big."""
    p = load(ctx, policy.DOWNLOAD_CODE)
    ref, path = await ctx.off_loop(repository.split_ref, ctx.rt, p.info, ctx.path_params["ref_path"])
    found = await ctx.off_loop(repository.file_blob, ctx.rt, p.info, ref, path)
    media_type = "text/plain; charset=utf-8"
    if found.streamed:
        headers = {**RAW_HEADERS, "content-length": str(found.size)}
        return StreamingResponse(repository.blob_chunks(found), media_type=media_type, headers=headers)
    data = await run_in_threadpool(repository.blob_content, ctx.rt, p.info, found)
    return Response(data, media_type=media_type, headers=RAW_HEADERS)


for _prefix in ("", "/-"):
    pages.page(f"{PROJECT}{_prefix}/tree/*ref_path")(tree_page)
    pages.page(f"{PROJECT}{_prefix}/blob/*ref_path")(blob_page)
    pages.page(f"{PROJECT}{_prefix}/raw/*ref_path")(raw_file)


@pages.page(PROJECT + "/commits/*ref")
async def commits_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    ref, number = ctx.path_params["ref"], _page_number(ctx)
    total, found = await ctx.off_loop(repository.commits, ctx.rt, p.info, ref, (number - 1) * PER_PAGE, PER_PAGE)
    statuses = _statuses(ctx, p, [info.id for info in found])
    return _render(ctx, "commits.html", p, "commits", ref=ref, commits=found, statuses=statuses, page=number,
                   pages=max(1, math.ceil(total / PER_PAGE)), total=total)  # fmt: skip


def _statuses(ctx: Ctx, p: ProjectPage, shas: list[str], project_id: int | None = None) -> dict[str, str]:
    """sha -> its newest pipeline's status (one query), for those who may read commit statuses."""
    if not p.can(policy.READ_COMMIT_STATUS):
        return {}
    return pipelines.commit_statuses(ctx.session, p.info.id if project_id is None else project_id, shas)


def _commit(rt, project, sha: str):
    info = repository.commit(rt, project, sha)
    return info, repository.commit_diff(rt, project, info.id)


@pages.page(PROJECT + "/commit/:sha")
async def commit_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    info, changes = await ctx.off_loop(_commit, ctx.rt, p.info, ctx.path_params["sha"])
    return _render(ctx, "commit.html", p, "commits", commit=info, changes=changes, collapse_above=COLLAPSE_ABOVE,
                   statuses=_statuses(ctx, p, [info.id]))  # fmt: skip


COLLAPSE_ABOVE = 20_000  # characters of one file's patch shown open; bigger ones start collapsed


@pages.page(PROJECT + "/branches")
async def branches_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    number = _page_number(ctx)
    protected = await protected_branches.read_protections(ctx.rt.db, p.info.id)
    total, found = await ctx.off_loop(repository.branches, ctx.rt, p.info, (number - 1) * PER_PAGE, PER_PAGE)
    return _render(ctx, "branches.html", p, "branches", branches=found, protected=protected, page=number,
                   pages=max(1, math.ceil(total / PER_PAGE)))  # fmt: skip


@pages.page(PROJECT + "/tags")
async def tags_page(ctx: Ctx) -> Response:
    p = load(ctx, policy.DOWNLOAD_CODE)
    number = _page_number(ctx)
    total, found = await ctx.off_loop(repository.tags, ctx.rt, p.info, (number - 1) * PER_PAGE, PER_PAGE)
    return _render(ctx, "tags.html", p, "tags", tags=found, page=number, pages=max(1, math.ceil(total / PER_PAGE)))
