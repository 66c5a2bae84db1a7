"""What the repository pages show: README, files at any ref, highlighting, raw, big and binary
files, commits with paging, one commit's diff, branches and tags; hostile names and contents
arrive escaped, Markdown arrives sanitised."""

from __future__ import annotations

import re
import uuid

import pytest

from codeyard.git import storage
from codeyard.web import repository as web_repository
from tests.support import QueryCounter, WorkingCopy

PUBLIC = 20


@pytest.fixture
def repo(users, projects, rt, tmp_path):
    alice = users.create("alice")
    project = projects.create(alice, name="demo", visibility=PUBLIC, description="A <b>demo</b> & more")
    copy = WorkingCopy(rt, project, tmp_path / "wc")
    return alice, project, copy


def test_project_page_with_readme_clone_url_and_last_commit(repo, web):
    _alice, _project, copy = repo
    sha = copy.commit("Add the readme", {"README.md": "# Welcome\n\nSome *text* and `code`.\n", "src/main.py": "x = 1\n"})
    copy.push()
    page = web.get("/alice/demo")
    assert page.status_code == 200
    assert "A &lt;b&gt;demo&lt;/b&gt; &amp; more" in page.text
    assert 'value="http://testserver/alice/demo.git"' in page.text and 'data-copy="#clone-url"' in page.text
    assert "<h1>Welcome</h1>" in page.text and "<em>text</em>" in page.text
    assert f"/alice/demo/commit/{sha}" in page.text and "Add the readme" in page.text
    assert 'href="/alice/demo/tree/master/src"' in page.text
    assert ">master<" in page.text


def test_a_readme_is_rendered_once_per_content(repo, web, monkeypatch):
    _alice, _project, copy = repo
    rendered = []
    real = web_repository.markdown
    monkeypatch.setattr(web_repository, "markdown", lambda text: rendered.append(text) or real(text))
    marker = uuid.uuid4().hex  # content no earlier test rendered
    copy.commit("readme", {"README.md": f"# Notes {marker}\n"})
    copy.push()
    assert all(marker in web.get("/alice/demo").text for _ in range(3))
    assert len(rendered) == 1
    copy.commit("readme again", {"README.md": f"# Notes {marker} changed\n"})
    copy.push()
    assert f"Notes {marker} changed" in web.get("/alice/demo").text
    assert len(rendered) == 2


def test_the_overview_is_read_once_per_tip_of_the_default_branch(repo, web, monkeypatch):
    _alice, _project, copy = repo
    reads = []
    real = web_repository.repository.overview
    monkeypatch.setattr(web_repository.repository, "overview", lambda *args: reads.append(args[-1]) or real(*args))
    first = copy.commit("first", {"README.md": f"# First {uuid.uuid4().hex}\n"})
    copy.push()
    assert all("first" in web.get("/alice/demo").text for _ in range(3))
    second = copy.commit("second", {"notes.txt": "x\n"})
    copy.push()
    page = web.get("/alice/demo").text
    assert f"/alice/demo/commit/{second}" in page and 'href="/alice/demo/blob/master/notes.txt"' in page
    assert reads == [first, second]


def test_empty_repository_shows_how_to_push(repo, web):
    page = web.get("/alice/demo")
    assert page.status_code == 200 and "This repository is empty" in page.text
    assert web.get("/alice/demo/commits/master").status_code == 200
    assert web.get("/alice/demo/branches").status_code == 200


def test_markdown_is_sanitised(repo, web):
    _alice, _project, copy = repo
    hostile = (
        "# Hi\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n"
        '<a href="javascript:alert(4)">four</a> <a href="https://ok.example/" onclick="alert(5)">ok</a>\n\n'
        "<iframe src=https://evil.example></iframe><style>body{}</style>\n"
    )
    copy.commit("readme", {"README.md": hostile})
    copy.push()
    text = web.get("/alice/demo").text
    readme = text.split('class="body markdown">', 1)[1].split("</div>", 1)[0]
    assert "<script" not in readme and "alert(1)" not in readme
    assert "onerror" not in readme and "onclick" not in readme
    assert "href=\"javascript" not in readme.replace(" ", "").lower() and "<a href=\"javascript" not in readme
    assert "<iframe" not in readme and "<style" not in readme
    assert 'href="https://ok.example/"' in readme and 'rel="nofollow noopener noreferrer"' in readme


def test_hostile_names_and_contents_are_escaped(users, projects, rt, tmp_path, web, browser_for):
    evil = users.create("evil", name='Eve <script>alert("name")</script>')
    project = projects.create(evil, name="pwn", visibility=PUBLIC, description='<img src=x onerror=alert("d")>')
    copy = WorkingCopy(rt, project, tmp_path / "wc")
    copy.commit('<script>alert("message")</script>', {
        "<img src=x onerror=alert(7)>.txt": '<script>alert("content")</script>\n',
        "page.html": '<html><script>alert("html")</script></html>\n',
    })  # fmt: skip
    copy.git("branch", "<i>branch</i>")
    copy.push("master", "<i>branch</i>")
    pages = ["/evil/pwn", "/evil/pwn/tree/master", "/evil/pwn/blob/master/%3Cimg%20src%3Dx%20onerror%3Dalert(7)%3E.txt",
             "/evil/pwn/blob/master/page.html", "/evil/pwn/commits/master", "/evil/pwn/branches", "/u/evil"]  # fmt: skip
    for path in pages:
        response = web.get(path)
        assert response.status_code == 200, path
        assert "<script>alert" not in response.text, path
        assert "<i>branch</i>" not in response.text, path
        assert "<img src=x" not in response.text, path
    assert "&lt;img src=x onerror=alert(7)&gt;.txt" in web.get("/evil/pwn/tree/master").text
    assert "&lt;i&gt;branch&lt;/i&gt;" in web.get("/evil/pwn/branches").text
    assert "&lt;script&gt;alert(\"content\")&lt;/script&gt;" in web.get("/evil/pwn/blob/master/%3Cimg%20src%3Dx%20onerror%3Dalert(7)%3E.txt").text
    raw = web.get("/evil/pwn/raw/master/page.html")
    assert raw.headers["content-type"] == "text/plain; charset=utf-8"
    assert raw.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in raw.headers["content-security-policy"]
    assert raw.text == '<html><script>alert("html")</script></html>\n'


def test_tree_and_blob_at_refs_with_slashes_tags_and_shas(repo, web):
    _alice, _project, copy = repo
    first = copy.commit("one", {"docs/guide.md": "old guide\n"})
    copy.git("checkout", "-q", "-b", "feature/deep/x")
    copy.commit("two", {"docs/guide.md": "new guide\n", "docs/extra.txt": "extra\n"})
    copy.git("tag", "v1.0", first)
    copy.push("master", "feature/deep/x", "v1.0")
    assert "new guide" in web.get("/alice/demo/blob/feature/deep/x/docs/guide.md").text
    assert "new guide" in web.get("/alice/demo/-/blob/feature/deep/x/docs/guide.md").text
    assert "old guide" in web.get("/alice/demo/blob/master/docs/guide.md").text
    assert "old guide" in web.get("/alice/demo/blob/v1.0/docs/guide.md").text
    assert "old guide" in web.get(f"/alice/demo/blob/{first[:10]}/docs/guide.md").text
    tree = web.get("/alice/demo/-/tree/feature/deep/x/docs").text
    assert "extra.txt" in tree and 'href="/alice/demo/blob/feature/deep/x/docs/extra.txt"' in tree
    assert "extra.txt" not in web.get("/alice/demo/tree/master/docs").text
    assert web.get("/alice/demo/tree/nope/docs").status_code == 404
    assert web.get("/alice/demo/blob/master/docs/missing.md").status_code == 404
    assert web.get("/alice/demo/blob/master/docs").status_code == 404  # a directory is not a file
    assert web.get("/alice/demo/tree/--output=x/docs").status_code == 404
    tags = web.get("/alice/demo/tags").text
    assert "v1.0" in tags and first in tags
    branches = web.get("/alice/demo/branches").text
    assert "feature/deep/x" in branches and "master" in branches


def test_source_is_highlighted(repo, web):
    _alice, _project, copy = repo
    copy.commit("code", {"app.py": "def greet(name):\n    return f'hi {name}'\n"})
    copy.push()
    text = web.get("/alice/demo/blob/master/app.py").text
    assert 'class="highlight"' in text
    assert re.search(r'<span class="k">def</span>', text)
    assert 'href="#L-2"' in text and 'id="L-2"' in text  # line anchors


def test_a_file_is_highlighted_once_per_blob_and_name(repo, web, monkeypatch):
    _alice, _project, copy = repo
    highlighted = []
    real = web_repository.code
    monkeypatch.setattr(web_repository, "code", lambda text, name: highlighted.append(name) or real(text, name))
    marker = uuid.uuid4().hex
    copy.commit("code", {"a.py": f"A = '{marker}'\n", "b.txt": f"A = '{marker}'\n", "bin.dat": "\0binary"})
    copy.push()
    assert all(marker in web.get("/alice/demo/blob/master/a.py").text for _ in range(3))
    assert marker in web.get("/alice/demo/blob/master/b.txt").text  # the same blob under another name
    assert all("Binary file" in web.get("/alice/demo/blob/master/bin.dat").text for _ in range(2))
    copy.commit("change", {"a.py": f"A = '{marker} changed'\n"})
    copy.push()
    assert f"{marker} changed" in web.get("/alice/demo/blob/master/a.py").text
    assert highlighted == ["a.py", "b.txt", "a.py"]


def test_big_and_binary_files_are_not_shown_whole(repo, web, rt):
    _alice, project, copy = repo
    big = "0123456789abcdef\n" * (70 * 1024)  # 1.2 MB
    (copy.path / "blob.bin").write_bytes(b"\x00\x01\x02binary" * 100)
    copy.git("add", "blob.bin")
    copy.commit("files", {"big.txt": big})
    copy.push()
    page = web.get("/alice/demo/blob/master/big.txt")
    assert page.status_code == 200 and "too large to show" in page.text and "0123456789abcdef" not in page.text
    raw = web.get("/alice/demo/raw/master/big.txt")
    assert raw.status_code == 200 and raw.headers["content-length"] == str(len(big)) and raw.text == big
    binary = web.get("/alice/demo/blob/master/blob.bin")
    assert binary.status_code == 200 and "Binary file" in binary.text
    assert web.get("/alice/demo/raw/master/blob.bin").content == b"\x00\x01\x02binary" * 100
    assert storage.repository_path(rt.config.repositories_dir, project.id).exists()


def test_commits_are_paged_and_a_commit_shows_its_diff(repo, web, rt):
    _alice, _project, copy = repo
    shas = [copy.commit(f"change {n}", {"counter.txt": f"{n}\n"}) for n in range(25)]
    copy.push()
    first_page = web.get("/alice/demo/commits/master").text
    assert "change 24" in first_page and "change 5" in first_page and "change 4<" not in first_page
    assert "page 1 of 2" in first_page and 'href="?page=2"' in first_page
    second = web.get("/alice/demo/commits/master?page=2").text
    assert "change 4" in second and "change 0" in second and "change 5<" not in second
    commit = web.get(f"/alice/demo/commit/{shas[10]}").text
    assert "change 10" in commit and "counter.txt" in commit
    assert '<span class="del">-9</span>' in commit and '<span class="add">+10</span>' in commit
    assert web.get("/alice/demo/commit/" + "0" * 40).status_code == 404
    assert web.get("/alice/demo/commit/--all").status_code == 404

    with QueryCounter(rt) as counter:
        web.get("/alice/demo/commits/master?page=2")
    assert counter.count <= 4  # session, project, access: git pages do not query per commit


def test_big_diffs_start_collapsed(repo, web):
    _alice, _project, copy = repo
    copy.commit("base", {"small.txt": "a\n", "large.txt": "x\n"})
    sha = copy.commit("grow", {"small.txt": "b\n", "large.txt": "".join(f"line {n}\n" for n in range(3000))})
    copy.push()
    text = web.get(f"/alice/demo/commit/{sha}").text
    small = text.split('id="file-')[1:]
    opened = {part.split('"', 1)[0]: "open>" in part.split(">", 1)[0] + ">" for part in small}
    names = {part.split('"', 1)[0]: ("large.txt" in part.split("</summary>", 1)[0]) for part in small}
    large_index = next(index for index, is_large in names.items() if is_large)
    small_index = next(index for index, is_large in names.items() if not is_large)
    assert opened[small_index] and not opened[large_index]
    assert "large diff, collapsed" in text
