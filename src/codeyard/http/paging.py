"""Pagination: `page` and `per_page` in, the list plus GitLab's headers out.

Headers on every paginated list: X-Total, X-Total-Pages, X-Per-Page, X-Page, X-Next-Page,
X-Prev-Page (empty strings at the ends) and Link with rel prev/next/first/last, whose URLs are
absolute and keep the caller's other query parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, TypeVar
from urllib.parse import parse_qsl, urlencode

from ..db.models import MAX_INTEGER
from .context import Ctx

DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100


def _positive_int(value) -> int | None:
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


@dataclass(frozen=True)
class Window:
    page: int
    per_page: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def limit(self) -> int:
        return self.per_page


def window(ctx: Ctx) -> Window:
    page = min(_positive_int(ctx.param("page")) or 1, MAX_INTEGER)  # beyond: the offset would overflow
    per_page = min(_positive_int(ctx.param("per_page")) or DEFAULT_PER_PAGE, MAX_PER_PAGE)
    return Window(page, per_page)


Item = TypeVar("Item")


@dataclass
class Page(Generic[Item]):
    """What a handler returns for a paginated list: the rendered items of one page and the total.
    `Page[Entity]` in a handler's annotation declares the answer a list of Entity."""

    items: list[Item]
    total: int
    window: Window

    def headers(self, ctx: Ctx) -> list[tuple[str, str]]:
        page, per_page = self.window.page, self.window.per_page
        total_pages = math.ceil(self.total / per_page)
        next_page = page + 1 if page < total_pages else None
        prev_page = page - 1 if page > 1 else None
        return [
            ("x-total", str(self.total)),
            ("x-total-pages", str(total_pages)),
            ("x-per-page", str(per_page)),
            ("x-page", str(page)),
            ("x-next-page", str(next_page or "")),
            ("x-prev-page", str(prev_page or "")),
            ("link", self._links(ctx, prev_page, next_page, total_pages)),
        ]

    def _links(self, ctx: Ctx, prev_page, next_page, total_pages) -> str:
        base = ctx.absolute_url(ctx.raw_path)
        kept = [(k, v) for k, v in parse_qsl(ctx.query_string, keep_blank_values=True) if k not in ("page", "per_page")]
        # Every link's query is these pairs sorted by name, its page number in the place of "page"
        # (the sort is stable and no other pair is named so): encoded once around that place.
        pairs = sorted([*kept, ("page", ""), ("per_page", str(self.window.per_page))], key=lambda p: p[0])
        place = pairs.index(("page", ""))
        before, after = urlencode(pairs[:place]), urlencode(pairs[place + 1 :])
        before = f"{base}?{before}&page=" if before else f"{base}?page="
        after = f"&{after}" if after else ""

        def url(page: int) -> str:
            return f"{before}{page}{after}"

        links = []
        if prev_page:
            links.append(f'<{url(prev_page)}>; rel="prev"')
        if next_page:
            links.append(f'<{url(next_page)}>; rel="next"')
        links.append(f'<{url(1)}>; rel="first"')
        links.append(f'<{url(total_pages)}>; rel="last"')
        return ", ".join(links)
