"""The runner protocol as the runner calls it (/ci/api/v1, reference 12.1-12.4), over httpx.

Answers the server may give become results the runner acts on (a job or none, a build gone);
transport failures and unexpected answers raise ServerError, which the caller retries later.
The runner's and the build's tokens travel in bodies and headers, never in logged URLs.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from pathlib import Path

import httpx

from . import VERSION

API = "/ci/api/v1"
INFO = {"name": "codeyard-runner", "version": VERSION, "revision": "", "platform": platform.system().lower(),
        "architecture": platform.machine()}  # fmt: skip


class ServerError(Exception):
    """The server could not be reached or gave an answer the protocol does not allow."""


class Forbidden(ServerError):
    """The server refused the token."""


@dataclass(frozen=True)
class TraceAnswer:
    accepted: bool
    gone: bool = False  # the build no longer runs (canceled, or finished elsewhere)
    unsupported: bool = False  # no incremental traces on this server
    server_size: int | None = None  # after a range mismatch (416): the size the server holds
    build_status: str | None = None


class Client:
    def __init__(self, url: str, timeout: float = 30.0):
        self.url = url
        self.http = httpx.Client(base_url=url + API, timeout=timeout, follow_redirects=False,
                                 headers={"User-Agent": f"codeyard-runner/{VERSION}"})  # fmt: skip

    def close(self) -> None:
        self.http.close()

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            return self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ServerError(f"{method} {API}{path}: {type(error).__name__}: {error}") from None

    @staticmethod
    def _unexpected(response: httpx.Response) -> ServerError:
        text = response.text[:200].strip()
        return ServerError(f"{response.request.method} {response.request.url.path}: HTTP {response.status_code} {text}")

    # --- runners ----------------------------------------------------------------------------------

    def register_runner(self, registration_token: str, description: str, tags: tuple[str, ...]) -> tuple[int, str]:
        body = {"token": registration_token, "description": description, "tag_list": ", ".join(tags), "info": INFO}
        response = self._send("POST", "/runners/register", json=body)
        if response.status_code == 403:
            raise Forbidden("the server refused the registration token")
        if response.status_code != 201:
            raise self._unexpected(response)
        data = response.json()
        if not isinstance(data, dict) or not isinstance(data.get("token"), str) or not isinstance(data.get("id"), int):
            raise self._unexpected(response)
        return data["id"], data["token"]

    def request_job(self, runner_token: str) -> dict | None:
        """The next build for this runner, or None when there is nothing to do (404, or 204)."""
        response = self._send("POST", "/builds/register", json={"token": runner_token, "info": INFO})
        if response.status_code in (204, 404):
            return None
        if response.status_code == 403:
            raise Forbidden("the server refused the runner's token (was the runner deleted?)")
        if response.status_code != 201:
            raise self._unexpected(response)
        job = response.json()
        if not isinstance(job, dict):
            raise self._unexpected(response)
        return job

    # --- a running build --------------------------------------------------------------------------

    def update_build(self, build_id: int, runner_token: str, state: str, trace: str | None = None) -> bool:
        """PUT the build's state (and the whole trace); False when the build is gone (canceled)."""
        body = {"token": runner_token, "state": state}
        if trace is not None:
            body["trace"] = trace
        response = self._send("PUT", f"/builds/{build_id}", json=body)
        if response.status_code in (403, 404):
            return False
        if response.status_code != 200:
            raise self._unexpected(response)
        return True

    def append_trace(self, build_id: int, token: str, offset: int, data: bytes) -> TraceAnswer:
        """PATCH DATA onto the trace at OFFSET (Content-Range)."""
        headers = {"BUILD-TOKEN": token, "Content-Range": f"{offset}-{offset + len(data) - 1}",
                   "Content-Type": "text/plain"}  # fmt: skip
        response = self._send("PATCH", f"/builds/{build_id}/trace.txt", content=data, headers=headers)
        status = response.headers.get("Build-Status")
        if response.status_code == 202:
            return TraceAnswer(True, gone=status not in (None, "running"), build_status=status)
        if response.status_code == 416:
            return TraceAnswer(False, server_size=_range_end(response.headers.get("Range")), build_status=status)
        if response.status_code == 403:
            return TraceAnswer(False, gone=True)
        if response.status_code in (404, 405):
            return TraceAnswer(False, unsupported=True)
        raise self._unexpected(response)

    def upload_artifacts(self, build_id: int, token: str, archive: Path) -> str | None:
        """POST the artifacts zip; None when stored, else why not (too large, refused)."""
        with archive.open("rb") as handle:
            files = {"file": ("artifacts.zip", handle, "application/zip")}
            response = self._send("POST", f"/builds/{build_id}/artifacts", files=files, data={"token": token},
                                  headers={"BUILD-TOKEN": token})  # fmt: skip
        if response.status_code in (200, 201):
            return None
        if response.status_code == 413:
            return "the archive is larger than the server accepts"
        if response.status_code in (400, 403, 404, 405):
            return f"the server refused it (HTTP {response.status_code} {response.text[:200].strip()})"
        raise self._unexpected(response)

    def download_artifacts(self, build_id: int, token: str, destination: Path, max_bytes: int) -> bool:
        """Save build BUILD_ID's artifacts to DESTINATION (at most MAX_BYTES); False when it has none."""
        try:
            with self.http.stream("GET", f"/builds/{build_id}/artifacts", headers={"BUILD-TOKEN": token}) as response:
                if response.status_code == 404:
                    return False
                if response.status_code != 200:
                    response.read()
                    raise self._unexpected(response)
                size = 0
                with destination.open("wb") as sink:
                    for chunk in response.iter_bytes(1024 * 1024):
                        size += len(chunk)
                        if size > max_bytes:
                            raise ServerError(f"artifacts of build {build_id} exceed {max_bytes} bytes")
                        sink.write(chunk)
        except httpx.HTTPError as error:
            raise ServerError(f"GET artifacts of build {build_id}: {type(error).__name__}: {error}") from None
        return True


def _range_end(value: str | None) -> int | None:
    """The size in a `Range: 0-<size>` header."""
    if not value or "-" not in value:
        return None
    end = value.rsplit("-", 1)[1].strip()
    return int(end) if end.isdigit() else None
