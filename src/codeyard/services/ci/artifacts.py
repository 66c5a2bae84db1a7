"""Build artifacts: one file per build, `<data>/builds/<project id>/<build id>.artifacts`, beside
the trace (so it goes with the project's builds directory when the project is deleted).

The runner uploads it while the build runs (multipart field `file`, at most `max_artifacts_size`
MB: the request body is cut off at that size plus multipart framing, and the file is measured again
while it is copied); a new upload replaces the previous one once the transaction commits. The name
the runner gave is kept (sanitised, like uploads) for the download's Content-Disposition.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from ...db.hooks import on_commit, on_rollback
from ...db.models import ApplicationSetting, Build
from ...errors import MissingParam, NotFound, PayloadTooLarge
from .. import settings as settings_service
from ..uploads import copy_bounded, sanitize_filename

MB = 1024 * 1024
MULTIPART_SLACK = 64 * 1024
DEFAULT_SIZE_MB = ApplicationSetting.__table__.c.max_artifacts_size.default.arg
_SIZE_SETTING = select(ApplicationSetting.__table__.c.max_artifacts_size).where(
    ApplicationSetting.__table__.c.id == settings_service.SETTINGS_ID
)


def directory(rt, project_id: int) -> Path:
    return rt.config.data_dir / "builds" / str(project_id)


def path(rt, build: Build) -> Path:
    return directory(rt, build.project_id) / f"{build.id}.artifacts"


def max_bytes(session: Session) -> int:
    return settings_service.load(session).max_artifacts_size * MB


def body_limit(db) -> int:
    """Bytes an upload request body may have (read outside any transaction, before the body)."""
    row = db.fast_first(_SIZE_SETTING, {})
    megabytes = row[0] if row is not None else DEFAULT_SIZE_MB
    return megabytes * MB + MULTIPART_SLACK


def too_large(_limit: int | None = None) -> PayloadTooLarge:
    return PayloadTooLarge("413 Artifacts file is too large")


def check_size(session: Session, size) -> None:
    """The `filesize` an authorize request announces: 413 over the limit."""
    if size is not None and size > max_bytes(session):
        raise too_large()


def store(session: Session, rt, build: Build, upload) -> None:
    """Copy UPLOAD (a Starlette UploadFile) as BUILD's artifacts; 413 over the size limit."""
    if upload is None or not hasattr(upload, "read"):
        raise MissingParam("Missing artifacts file!")  # GitLab 8.6's words, through the same helper
    limit = max_bytes(session)
    target = path(rt, build)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = target.with_name(f".{build.id}.{secrets.token_hex(8)}.upload")
    on_rollback(session, lambda: temporary.unlink(missing_ok=True))
    size = copy_bounded(upload.file, temporary, limit)
    if size is None:
        temporary.unlink(missing_ok=True)
        raise too_large()
    on_commit(session, lambda: os.replace(temporary, target))
    build.artifacts_file = sanitize_filename(upload.filename or "artifacts.zip")
    build.artifacts_size = size


def remove(session: Session, rt, build: Build) -> None:
    """Forget BUILD's artifacts; the file goes once that commits."""
    target = path(rt, build)
    build.artifacts_file = None
    build.artifacts_size = None
    on_commit(session, lambda: target.unlink(missing_ok=True))


def locate(rt, build: Build) -> tuple[Path, os.stat_result]:
    """The file of BUILD's artifacts and its status; 404 when there are none."""
    if not build.artifacts_file:
        raise NotFound()
    target = path(rt, build)
    try:
        return target, target.stat()
    except OSError:
        raise NotFound() from None
