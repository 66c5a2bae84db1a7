"""Blobs read by size: found and sized from their object header first, then read whole when small
or streamed from `git cat-file` when big, so a 100 MB file never sits in the server's memory.

Paths in, plain data out; no imports of the app.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pygit2

from .refs import is_sha_prefix
from .repo import NotInRepository, open_repository, resolve

STREAM_ABOVE = 1024 * 1024
CHUNK = 384 * 1024  # a multiple of 3: the base64 of consecutive chunks joins without padding


@dataclass(frozen=True)
class Blob:
    """A blob found but not read."""

    repository: Path
    id: str
    size: int
    commit_id: str | None = None  # the commit it was found at, for a file at a ref
    mode: int | None = None  # its tree entry's mode, for a file at a ref

    @property
    def streamed(self) -> bool:
        return self.size > STREAM_ABOVE


def _header(repository: pygit2.Repository, oid: pygit2.Oid) -> tuple[int, int]:
    try:
        kind, size = repository.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError) as error:
        raise NotInRepository(str(oid)) from error
    return kind, size


def file_at(path: Path, ref: str, file_path: str) -> Blob:
    """The blob at FILE_PATH in the commit REF names."""
    repository = open_repository(path)
    target = resolve(repository, ref)
    if "\x00" in file_path:  # libgit2 would cut the path there
        raise NotInRepository(file_path)
    try:
        entry = target.tree[file_path.strip("/")]
    except (KeyError, ValueError) as error:
        raise NotInRepository(file_path) from error
    kind, size = _header(repository, entry.id)
    if kind != pygit2.enums.ObjectType.BLOB:
        raise NotInRepository(file_path)
    return Blob(path, str(entry.id), size, str(target.id), entry.filemode)


def blob_by_id(path: Path, sha: str) -> Blob:
    """The blob whose id is SHA or starts with it (4 to 40 hex digits; anything else is not found)."""
    if not is_sha_prefix(sha):
        raise NotInRepository(sha)
    repository = open_repository(path)
    if len(sha) == 40:
        kind, size = _header(repository, pygit2.Oid(hex=sha))
        found = sha.lower()
    else:
        found, kind, size = _by_prefix(path, sha)
    if kind != pygit2.enums.ObjectType.BLOB:
        raise NotInRepository(sha)
    return Blob(path, found, size)


def _by_prefix(path: Path, prefix: str) -> tuple[str, int, int]:
    """(id, type, size) of the one object whose id starts with PREFIX, from its header."""
    checked = subprocess.run(
        ["git", "--git-dir", str(path), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)"],
        input=prefix + "\n", capture_output=True, text=True, check=False,
    )  # fmt: skip
    fields = checked.stdout.split()
    if checked.returncode != 0 or len(fields) != 3:  # "<prefix> missing" or "<prefix> ambiguous"
        raise NotInRepository(prefix)
    kind = pygit2.enums.ObjectType.BLOB if fields[1] == "blob" else pygit2.enums.ObjectType.ANY
    return fields[0], kind, int(fields[2])


def read(blob: Blob) -> bytes:
    """The whole content: for blobs that are not `streamed`."""
    return open_repository(blob.repository)[pygit2.Oid(hex=blob.id)].data


async def chunks(blob: Blob) -> AsyncIterator[bytes]:
    """The content as `git cat-file` writes it; git is stopped if the reader goes away."""
    process = await asyncio.create_subprocess_exec(
        "git", "--git-dir", str(blob.repository), "cat-file", "blob", blob.id,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=CHUNK,
    )  # fmt: skip
    try:
        while chunk := await _read_full(process.stdout):
            yield chunk
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def _read_full(stream: asyncio.StreamReader) -> bytes:
    """Up to CHUNK bytes, fewer only at the end: base64 needs whole groups of 3."""
    try:
        return await stream.readexactly(CHUNK)
    except asyncio.IncompleteReadError as short:
        return short.partial


async def base64_chunks(source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    async for chunk in source:
        yield base64.b64encode(chunk)


def sha256(blob: Blob) -> str:
    """The SHA-256 of the content, read whole when small, from `git cat-file` a chunk at a time when big."""
    digest = hashlib.sha256()
    if not blob.streamed:
        digest.update(read(blob))
        return digest.hexdigest()
    with subprocess.Popen(["git", "--git-dir", str(blob.repository), "cat-file", "blob", blob.id],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as process:  # fmt: skip
        while chunk := process.stdout.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
