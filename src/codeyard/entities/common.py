"""What every entity needs: the timestamp format and the request's view of the instance."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from typing import TypedDict
from urllib.parse import urlsplit


class Revoked(TypedDict):
    """A removal of what was not there (members): still a success."""

    message: str
    id: int


class DeletedBefore(TypedDict):
    """A second delete of a user, group or project: what the tombstone remembers."""

    id: int
    deleted_at: str | None


def iso(moment: dt.datetime | str | None) -> str | None:
    """`2016-01-04T15:31:46.176Z` for UTC times; other zones keep their offset (git commit times).
    A read path's timestamp (`db.queries.api_text`) is that text already."""
    if moment is None or isinstance(moment, str):
        return moment
    text = moment.isoformat(timespec="milliseconds")
    if moment.tzinfo is None:
        return text + "Z"
    return text[:-6] + "Z" if text.endswith("+00:00") else text


@dataclass(frozen=True)
class View:
    """Instance facts an entity renders with: the external URL and whether avatars are shown."""

    base_url: str
    avatars: bool = True

    @cached_property
    def host(self) -> str:
        return urlsplit(self.base_url).hostname or "localhost"
