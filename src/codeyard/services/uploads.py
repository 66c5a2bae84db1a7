"""Files attached to a project (for issues, merge requests, comments).

A file lives at `<uploads dir>/<project id>/<secret>/<filename>`: the secret is 32 random hex
digits, the filename is sanitised (letters, digits, `.`, `-`, `+`, `_`; no leading dots; at most
255 characters), so no name can leave its directory or hide. The `uploads` row records it with the
content type it will be served with. The file is written inside the request's transaction and
removed again if that rolls back; a deleted project takes its directory along (services/projects).

Size: at most `max_attachment_size` MB (an application setting). The request body is cut off at
that size plus a little multipart framing before anything is stored (`body_limit`), and the file
itself is measured again while it is copied.
"""

from __future__ import annotations

import mimetypes
import os
import re
import secrets
import shutil
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ..db.engine import Database
from ..db.hooks import on_rollback
from ..db.models import ApplicationSetting, Project, Upload
from ..errors import Invalid, NotFound
from . import settings as settings_service

MB = 1024 * 1024
MULTIPART_SLACK = 64 * 1024  # part headers and boundaries around the file
CHUNK = 1024 * 1024
IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "gif", "bmp", "tiff"})
UNSAFE_CHARACTERS = re.compile(r"[^A-Za-z0-9.\-+_]")
SECRET = re.compile(r"[0-9a-f]{32}")
MAX_NAME = 255
MAX_KEPT_EXTENSION = 16
# Types a browser would run or render as a document: served as opaque bytes instead.
ACTIVE_MARKERS = ("html", "xml", "javascript", "ecmascript", "svg", "css", "flash")
OPAQUE = "application/octet-stream"
DEFAULT_SIZE_MB = ApplicationSetting.__table__.c.max_attachment_size.default.arg
_SIZE_SETTING = select(ApplicationSetting.__table__.c.max_attachment_size).where(
    ApplicationSetting.__table__.c.id == settings_service.SETTINGS_ID
)


# --- names and types ------------------------------------------------------------------------------


def sanitize_filename(name: str) -> str:
    """The last path component of NAME, with unsafe characters replaced by `_`, leading dots
    dropped, cut to 255 characters (keeping a short extension); `file` if nothing is left."""
    base = re.split(r"[/\\]", name)[-1]
    clean = UNSAFE_CHARACTERS.sub("_", base).lstrip(".")
    if len(clean) > MAX_NAME:
        stem, dot, extension = clean.rpartition(".")
        if dot and stem and len(extension) <= MAX_KEPT_EXTENSION:
            clean = stem[: MAX_NAME - len(extension) - 1] + "." + extension
        else:
            clean = clean[:MAX_NAME]
    return clean or "file"


def is_image(filename: str) -> bool:
    stem, dot, extension = filename.rpartition(".")
    return bool(dot and stem) and extension.lower() in IMAGE_EXTENSIONS


def content_type(filename: str) -> str:
    """The type the file is served with: guessed from the name; never one a browser would execute
    or render as a page (html, svg, scripts...) unless it is one of the image types."""
    guessed = mimetypes.guess_type(filename, strict=False)[0] or OPAQUE
    if not is_image(filename) and any(marker in guessed for marker in ACTIVE_MARKERS):
        return OPAQUE
    return guessed


# --- size -----------------------------------------------------------------------------------------


def max_megabytes(session: Session) -> int:
    return settings_service.load(session).max_attachment_size


def too_big(megabytes: int) -> Invalid:
    return Invalid.field("file", f"is too big (should be at most {megabytes} MB)")


def body_limit(db: Database) -> int:
    """Bytes an upload request body may have: the size setting plus multipart framing. Read on the
    fast connection, outside any transaction (the body is read before the request's session opens)."""
    row = db.fast_first(_SIZE_SETTING, {})
    megabytes = row[0] if row is not None else DEFAULT_SIZE_MB
    return megabytes * MB + MULTIPART_SLACK


def body_too_large(limit: int) -> Invalid:
    return too_big((limit - MULTIPART_SLACK) // MB)


# --- storing --------------------------------------------------------------------------------------


def project_dir(rt, project_id: int) -> Path:
    return rt.config.uploads_dir / str(project_id)


def store(session: Session, rt, actor, project: Project, upload) -> Upload:
    """Copy UPLOAD (a Starlette UploadFile) into the project's uploads and record it.

    Raises 400 `{"file": ["is too big ..."]}` over the size setting; nothing stays on disk then.
    """
    megabytes = max_megabytes(session)
    limit = megabytes * MB
    if upload.size is not None and upload.size > limit:
        raise too_big(megabytes)
    filename = sanitize_filename(upload.filename or "")
    secret = secrets.token_hex(16)
    directory = project_dir(rt, project.id) / secret
    directory.mkdir(mode=0o700, parents=True)
    on_rollback(session, lambda: shutil.rmtree(directory, ignore_errors=True))
    size = copy_bounded(upload.file, directory / filename, limit)
    if size is None:
        shutil.rmtree(directory, ignore_errors=True)
        raise too_big(megabytes)
    row = Upload(
        project_id=project.id,
        secret=secret,
        filename=filename,
        size=size,
        content_type=content_type(filename),
        author_id=actor.id,
    )
    session.add(row)
    session.flush()
    return row


def copy_bounded(source, target: Path, limit: int) -> int | None:
    """Copy SOURCE into a new file TARGET; the size, or None once more than LIMIT bytes came."""
    source.seek(0)
    size = 0
    with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        while chunk := source.read(CHUNK):
            size += len(chunk)
            if size > limit:
                return None
            out.write(chunk)
    return size


# --- serving --------------------------------------------------------------------------------------


def locate(session: Session, rt, project_id: int, secret: str, filename: str) -> tuple[Upload, Path, os.stat_result]:
    """The upload row, file path and file status for a URL's SECRET and FILENAME in the project of
    PROJECT_ID; 404 when any is unknown, malformed, outside the uploads directory or missing on disk."""
    if not SECRET.fullmatch(secret) or sanitize_filename(filename) != filename:
        raise NotFound()
    row = session.scalars(
        select(Upload).where(Upload.project_id == project_id, Upload.secret == secret, Upload.filename == filename)
    ).first()
    if row is None:
        raise NotFound()
    root = rt.config.uploads_dir.resolve()
    path = (project_dir(rt, project_id) / secret / filename).resolve()
    if not path.is_relative_to(root):
        raise NotFound()
    try:
        status = path.stat()
    except OSError:
        raise NotFound() from None
    return row, path, status
