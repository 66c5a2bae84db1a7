"""Every page route; importing a module registers its pages."""

from __future__ import annotations

from ..api.routing import Route


def all_pages() -> list[Route]:
    from . import builds, home, merge_requests, pipelines, repository, settings  # noqa: F401
    from .core import PAGES

    return PAGES.routes
