"""Uploads: `POST /api/v3/projects/:id/uploads` stores a file for use in Markdown; the file is then
served at `/<namespace>/<project>/uploads/<secret>/<filename>` to whoever may read the project.

The serving route sits outside /api/v3 (the upload result's url is relative to the project's web
path) and authenticates like the API (private token or OAuth token, as a parameter or a header)
and like the pages (the web session's cookie: a browser showing a page fetches its images with
it), or nobody. The project and the caller's access come from the one loader
(`services.loader`): an anonymous caller may read files of public projects; any
project the caller cannot read answers 404, exactly like a missing file.
"""

from __future__ import annotations

from starlette.responses import FileResponse

from ...entities.uploads import UploadResult, upload_result
from ...errors import NotFound
from ...http.context import Ctx
from ...http.params import File
from ...http.routing import Routes
from ...policies import projects as policy
from ...services import loader, uploads
from ..guards import project_guard

routes = Routes()
root_routes = Routes()  # mounted at the root, outside the API

# Headers of every served file: no content sniffing, and nothing in it may run or load anything.
SERVE_HEADERS = {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cache-control": "private",
}


@routes.post(
    "/projects/:id/uploads",
    guards=(project_guard(policy.UPLOAD_FILE),),
    params=(File("file", required=True, doc="The file (multipart/form-data)"),),
    max_body=lambda ctx: uploads.body_limit(ctx.rt.db),
    too_large=uploads.body_too_large,
    summary="Upload a file to a project (at most max_attachment_size MB)",
)
def upload_file(ctx: Ctx) -> UploadResult:
    row = uploads.store(ctx.session, ctx.rt, ctx.actor, ctx.project, ctx.args["file"])
    return upload_result(row.secret, row.filename, uploads.is_image(row.filename))


@root_routes.get(
    "/:namespace/:project/uploads/:secret/:filename",
    auth="browser",
    summary="An uploaded file, to anyone who may read the project (anonymous callers: public projects)",
)
async def serve_upload(ctx: Ctx):
    ident = loader.path_ident(ctx.path_params["namespace"], ctx.path_params["project"])
    found = await loader.project(ctx.rt.db.loop, ident, ctx.actor)
    if found.refusal is not None:
        raise NotFound()
    row, file_path, status = uploads.locate(ctx.session, ctx.rt, found.row.id, ctx.path_params["secret"], ctx.path_params["filename"])
    image = uploads.is_image(row.filename)
    return FileResponse(
        file_path,
        media_type=row.content_type,
        headers=SERVE_HEADERS,
        filename=row.filename,
        stat_result=status,
        content_disposition_type="inline" if image else "attachment",
    )
