"""The Link header of a paginated list: absolute URLs keeping the caller's other parameters, the
query sorted by name."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from codeyard.http import paging


def _ctx(query: str):
    return SimpleNamespace(query_string=query, raw_path="/api/v3/projects", absolute_url=lambda path: f"http://h{path}")


@pytest.mark.parametrize(
    ("query", "expected_first"),
    [
        ("", "http://h/api/v3/projects?page=1&per_page=20"),
        ("page=3&per_page=20", "http://h/api/v3/projects?page=1&per_page=20"),
        ("order_by=name&sort=asc", "http://h/api/v3/projects?order_by=name&page=1&per_page=20&sort=asc"),
        ("z=1&a=%20b+c&pa=&pagf=x", "http://h/api/v3/projects?a=+b+c&pa=&page=1&pagf=x&per_page=20&z=1"),
        ("search=%26page%3D2&a=1&a=2", "http://h/api/v3/projects?a=1&a=2&page=1&per_page=20&search=%26page%3D2"),
    ],
)
def test_links_keep_the_other_parameters_sorted_by_name(query, expected_first):
    page = paging.Page([], 100, paging.Window(2, 20))
    links = page.headers(_ctx(query))[-1][1].split(", ")
    assert links[2] == f'<{expected_first}>; rel="first"'
    for link, number, rel in zip(links, (1, 3, 1, 5), ("prev", "next", "first", "last"), strict=True):
        assert link == f'<{expected_first.replace("page=1&", f"page={number}&")}>; rel="{rel}"'
