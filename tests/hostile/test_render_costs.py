"""Cheap requests that cost a lot to render: hostile Markdown (quadratic in markdown-it-py, deep
nesting in the sanitiser) and hostile source files (quadratic Pygments lexers), viewed anonymously.

Each page must answer 200 in bounded time, show the content (escaped), and the work must be the
bounded one: cmark-gfm for Markdown, plain text beyond the highlighting bounds, one rendering per
blob or text. The time bounds are generous (the unbounded renderings took 8-80 s)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from codeyard.web import markup
from tests.support import WorkingCopy
from tests.web.conftest import WebClient

PUBLIC = 20
GENEROUS = 5.0  # seconds; every page below takes well under one now


@pytest.fixture
def web(rt, _test_client) -> WebClient:
    return WebClient(_test_client)


@pytest.fixture
def public(users, projects, rt, tmp_path):
    alice = users.create("alice")
    project = projects.create(alice, name="demo", visibility=PUBLIC)
    copy = WorkingCopy(rt, project, tmp_path / "wc")
    copy.commit("first", {"notes.txt": "x\n"})
    copy.push()
    return alice, project, copy


def _timed_get(web, path: str):
    start = time.monotonic()
    page = web.get(path)
    return page, time.monotonic() - start


def test_a_html_file_of_unclosed_comments_is_shown_plain(api, web, public):
    alice, project, _copy = public
    hostile = "<!--" * (64 * 1024)  # 256 KiB: Pygments' HTML lexer took about 80 s on it
    created = api.as_(alice).post(f"/projects/{project.id}/repository/files", json={
        "file_path": "page.html", "branch_name": "master", "content": hostile, "commit_message": "page"})  # fmt: skip
    assert created.status_code == 201, created.text
    page, took = _timed_get(web, "/alice/demo/blob/master/page.html")
    assert page.status_code == 200 and took < GENEROUS
    assert '<pre class="plain">' + "&lt;!--" * 100 in page.text


def test_highlighting_stops_after_its_time(api, web, public, monkeypatch):
    alice, project, _copy = public
    hostile = ("<!--" * 100 + "\n") * 300  # 120 KiB in short lines: under the size bounds, over the time
    api.as_(alice).post(f"/projects/{project.id}/repository/files", json={
        "file_path": "lines.html", "branch_name": "master", "content": hostile, "commit_message": "lines"})  # fmt: skip
    page, took = _timed_get(web, "/alice/demo/blob/master/lines.html")
    assert page.status_code == 200 and took < GENEROUS
    assert '<pre class="plain">' in page.text and "&lt;!--" * 100 in page.text


@pytest.mark.parametrize("name, text", [
    ("a.ng2", ("[" * 1999 + "\n") * 60),  # a delegating lexer lexes all before its first token; quadratic per line
    ("a.html", "<!--" * 4000),
    ("a.py", ("(" * 1000 + "\n") * 120),
    ("a.html", "<a " * 20000),
])  # fmt: skip
def test_hostile_source_is_bounded(name, text):
    start = time.thread_time()
    shown = markup.code(text, name)
    assert time.thread_time() - start < 2.0
    assert str(shown).startswith('<pre class="plain">')


def test_a_readme_of_a_megabyte_of_image_brackets(web, public):
    _alice, _project, copy = public
    copy.commit("readme", {"README.md": "![[" * 333_333})  # 1 MB: markdown-it-py took 12 s
    copy.push()
    page, took = _timed_get(web, "/alice/demo")
    assert page.status_code == 200 and took < GENEROUS
    assert '<pre class="plain">' + "![[" * 100 in page.text


def test_a_big_readme_is_rendered_once_by_cmark(web, public, monkeypatch):
    _alice, _project, copy = public
    rendered = []
    real = markup.cmark_html
    monkeypatch.setattr(markup, "cmark_html", lambda *args, **kw: rendered.append(1) or real(*args, **kw))
    marker = uuid.uuid4().hex  # content no earlier test rendered (the rendering is kept per process)
    copy.commit("readme", {"README.md": f"# Big {marker}\n\n" + "![[" * 130_000})  # 390 KB: over the overview's memo
    copy.push()
    for _ in range(3):
        page, took = _timed_get(web, "/alice/demo")
        assert page.status_code == 200 and took < GENEROUS
        assert f"<h1>Big {marker}</h1>" in page.text and "<p>![[![[" in page.text
    assert len(rendered) == 1


def test_a_comment_of_a_megabyte_of_image_brackets(api, web, public, monkeypatch):
    alice, project, copy = public
    copy.git("checkout", "-q", "-b", "feature")
    copy.commit("feature", {"a.txt": "a\n"})
    copy.push("feature")
    created = api.as_(alice).post(f"/projects/{project.id}/merge_requests", json={
        "source_branch": "feature", "target_branch": "master", "title": "Brackets", "description": "![[" * 300_000})  # fmt: skip
    assert created.status_code == 200, created.text
    mr = api.as_(alice).get(f"/projects/{project.id}/merge_requests/{created.json()['id']}").json()
    note = api.as_(alice).post(f"/projects/{project.id}/merge_requests/{mr['id']}/comments",
                               json={"note": uuid.uuid4().hex + "![[" * 170_000})  # fmt: skip
    assert note.status_code in (200, 201), note.text
    rendered = []
    real = markup.cmark_html
    monkeypatch.setattr(markup, "cmark_html", lambda *args, **kw: rendered.append(1) or real(*args, **kw))
    for _ in range(2):
        page, took = _timed_get(web, f"/alice/demo/merge_requests/{mr['iid']}")
        assert page.status_code == 200 and took < GENEROUS
        assert '<pre class="plain">' + "![[" * 100 in page.text  # the description, over the Markdown bound
        assert "![[![[" in page.text.split('<pre class="plain">', 2)[-1] and "<p>" in page.text  # the comment
    assert len(rendered) == 1  # the comment, once


MEGABYTE = 1_000_000
HALF = 500_000


@pytest.mark.parametrize("label, text, rendered", [
    ("tables", "|a|b|\n|-|-|\n" + "|x|y|\n" * (HALF // 6), "<table>"),
    ("emphasis", "*a_" * (HALF // 3), "<p>"),
    ("brackets", "[a" * (HALF // 2), "<p>"),
    ("autolinks", "<a" * (HALF // 2), "<p>"),
    ("image brackets", "![[" * (HALF // 3), "<p>"),
    ("links", "[a](" * (HALF // 4), "<p>"),
    ("blockquotes", ">" * HALF, None),
    ("list items", "* " * (HALF // 2), None),
    ("nested lists", "".join("  " * n + "- a\n" for n in range(600)), None),
    ("raw divs", "<div>" * (HALF // 5), None),
    ("raw formatting", "".join(f"<b id={n}>x" for n in range(HALF // 12)), None),
    ("raw mis-nesting", "<i></p>" * (HALF // 7), None),
    ("a megabyte", "![[" * (MEGABYTE // 3), None),
])  # fmt: skip
def test_hostile_markdown_is_bounded(label, text, rendered, monkeypatch):
    calls = []
    real = markup.cmark_html
    monkeypatch.setattr(markup, "cmark_html", lambda *args, **kw: calls.append(1) or real(*args, **kw))
    start = time.thread_time()
    shown = str(markup.markdown(text))
    assert time.thread_time() - start < GENEROUS, label
    assert calls or len(text) > markup.MARKDOWN_UP_TO, label  # cmark-gfm renders it
    if rendered is not None:
        assert shown.startswith(rendered), (label, shown[:80])
    assert "<script" not in shown


def _resident_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


def test_cmark_frees_what_it_allocates():
    text = "# Title\n\nSome *text* with [a link](http://x) and `code`.\n\n" * 8000  # 460 KB
    markup.cmark_html(text)
    before = _resident_bytes()
    for _ in range(20):
        markup.cmark_html(text)
    assert _resident_bytes() - before < 100 * 1024 * 1024  # cmarkgfm's own wrapper kept about 25 MB a call


def test_markdown_keeps_its_features_and_safety():
    shown = str(markup.markdown(
        "| a | b |\n|:-|-:|\n| ~~x~~ | <https://ok.example/> |\n\n<details><summary>s</summary>\n\n*in*\n</details>\n\n"
        '<img src=x onerror=alert(1)> [j](javascript:alert(1)) <script>alert(1)</script>\n'))  # fmt: skip
    assert '<th align="left">a</th>' in shown and '<td align="right">' in shown and "<del>x</del>" in shown
    assert '<a href="https://ok.example/" rel="nofollow noopener noreferrer">' in shown
    assert "<details><summary>s</summary>" in shown and "<em>in</em>" in shown
    assert "onerror" not in shown and "javascript" not in shown and "<script" not in shown
