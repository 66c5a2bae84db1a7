"""The runner's configuration file: TOML, holding the server URL and the runner's secret token,
so it is written 0600 (atomically, never over an existing file) and read back with tomllib."""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

TAG = re.compile(r"^[^\x00-\x1f\x7f,]{1,255}$")


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class RunnerConfig:
    url: str
    token: str
    id: int | None = None
    description: str = ""
    tags: tuple[str, ...] = ()
    builds_dir: str = ""

    def builds_path(self, config_path: Path) -> Path:
        """Where builds run: `builds_dir`, relative to the configuration file, default `builds/` beside it."""
        return config_path.parent / (self.builds_dir or "builds")


def default_path() -> Path:
    """`CODEYARD_RUNNER_CONFIG`, else `codeyard/runner.toml` in the user's configuration directory
    (XDG: `$XDG_CONFIG_HOME` when absolute, else `~/.config`); never the working directory, which
    may be a checkout the secret token (and the builds beside it) must stay out of."""
    if named := os.environ.get("CODEYARD_RUNNER_CONFIG"):
        return Path(named)
    config_home = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config_home) if os.path.isabs(config_home) else Path.home() / ".config"
    return base / "codeyard" / "runner.toml"


def server_url(url: str) -> str:
    """The server's base URL: http(s) with a host; a trailing `/` or `/ci` (gitlab-runner style) dropped."""
    url = url.strip().rstrip("/")
    if url.endswith("/ci"):
        url = url[: -len("/ci")]
    if not re.match(r"^https?://[^/\s?#]+(/[^\s?#]*)?$", url):
        raise ConfigError(f"the server URL must be http:// or https:// with a host, not {url!r}")
    return url


def parse_tags(text: str) -> tuple[str, ...]:
    tags = tuple(dict.fromkeys(tag.strip() for tag in text.split(",") if tag.strip()))
    for tag in tags:
        if not TAG.match(tag):
            raise ConfigError(f"invalid tag {tag!r}")
    return tags


def write(path: Path, config: RunnerConfig) -> None:
    """Create PATH (0600, parents 0700) holding CONFIG; an existing file is never replaced."""
    lines = [
        "# codeyard runner: the server and this runner's secret token (keep this file private)",
        f"url = {_string(config.url)}",
        f"token = {_string(config.token)}",
    ]
    if config.id is not None:
        lines.append(f"id = {int(config.id)}")
    lines.append(f"description = {_string(config.description)}")
    lines.append(f"tags = [{', '.join(_string(tag) for tag in config.tags)}]")
    if config.builds_dir:
        lines.append(f"builds_dir = {_string(config.builds_dir)}")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise ConfigError(f"{path} already exists; remove it or pass another --config") from None
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def load(path: Path) -> RunnerConfig:
    try:
        with path.open("rb") as handle:
            raw = tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path} not found; run `codeyard runner register` first") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None
    for key in ("url", "token"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError(f"{path}: `{key}` is missing")
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ConfigError(f"{path}: `tags` must be a list of strings")
    runner_id = raw.get("id")
    if runner_id is not None and not isinstance(runner_id, int):
        raise ConfigError(f"{path}: `id` must be an integer")
    return RunnerConfig(
        url=server_url(raw["url"]),
        token=raw["token"],
        id=runner_id,
        description=str(raw.get("description", "")),
        tags=tuple(tags),
        builds_dir=str(raw.get("builds_dir", "")),
    )


def _string(value: str) -> str:
    # A JSON string is a TOML basic string once DEL, which JSON leaves raw, is escaped too.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
