"""Every main page in a real browser at a desktop and a phone's width, signed in and not: nothing
wider than the window, no empty boxes, the actions of a row in line, the page's key elements shown
(browser.LAYOUT_PROBE). CODEYARD_SCREENSHOTS=<dir> keeps a whole-page screenshot of each."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from codeyard.db.models import Build
from codeyard.git.refs import ZERO_SHA
from codeyard.services.ci import traces
from tests.builds.conftest import CiFactory
from tests.support import WorkingCopy, record_push

from .browser import Browser
from .test_browser import CHROMIUM, NEEDS_BROWSER

PUBLIC = 20
DESKTOP, NARROW = 1280, 420
CI_CONFIG = """\
stages: [build, test]
compile:
  stage: build
  script: [make]
lint:
  stage: build
  script: [make lint]
  allow_failure: true
rspec:
  stage: test
  script: [make test]
"""
APP = '''import json


def handle(request):
    """Answer with a polite greeting; the name comes from the request, and the world is greeted when there is none."""
    name = request.get("name", "world")
    return json.dumps({"hello": f"dear {name}", "length_of_the_name_for_the_statistics_we_keep": len(name)})
'''
TRACE = b"$ make\ncc -O2 -Wall -Wextra -o wonderland main.c greeting.c --some-rather-long-option=with-a-long-value\nBuild succeeded.\n"


@pytest.fixture
def site(live, rt, users, projects, tmp_path):
    """A public project with files, a tag, a pipeline, a webhook and an open merge request with a
    comment; alice owns it, bob develops in it. Returns (alice, page paths by name)."""
    alice = users.create("alice", name="Alice Liddell")
    bob = users.create("bob", name="Bob Builder")
    group = projects.group(alice, "tea-party", visibility=PUBLIC, name="Tea Party")
    projects.create(alice, group=group, name="teapot", visibility=PUBLIC, description="Holds the tea.")
    project = projects.create(alice, name="wonderland", visibility=PUBLIC,
                              description="A small service with a README, some code and a merge request.")  # fmt: skip
    projects.add_member(project, bob, 30)
    work = WorkingCopy(rt, project, tmp_path / "work")
    first = work.commit("Start the project", {
        "README.md": "# Wonderland\n\nA *tiny* example service.\n\n- `app.py` answers requests\n- `tests/` checks it\n",
        "app.py": APP.replace("polite", "plain").replace("dear ", ""), "tests/test_app.py": "def test_handle():\n    pass\n",
        ".gitlab-ci.yml": CI_CONFIG,
    })  # fmt: skip
    branch = "feature/polite-greeting-for-every-visitor"
    work.git("checkout", "-q", "-b", branch)
    second = work.commit("Greet every visitor politely, with the name they gave or the whole world", {"app.py": APP})
    work.git("tag", "-a", "v1.0", "-m", "The first release", first)
    work.push("master", branch, "v1.0")
    record_push(rt, project, alice, ("refs/heads/master", ZERO_SHA, first), ("refs/heads/" + branch, ZERO_SHA, second))
    api = live.api.as_(alice)
    created = live.api.as_(bob).post(f"/projects/{project.id}/merge_requests", json={
        "source_branch": branch, "target_branch": "master", "title": "Greet politely",
        "description": "Adds **dear** before the name.",
    })  # fmt: skip
    assert created.status_code == 200, created.text
    noted = api.post(f"/projects/{project.id}/merge_requests/{created.json()['id']}/notes", json={"body": "Looks good to me."})
    assert noted.status_code == 201, noted.text
    hook = api.post(f"/projects/{project.id}/hooks", json={"url": "https://hooks.example/wonderland"}).json()
    builds = api.get(f"/projects/{project.id}/builds").json()
    compile_build = next(b for b in builds if b["name"] == "compile" and b["ref"] == "master")
    with rt.db.transaction() as session:
        build = session.get(Build, compile_build["id"])
        traces.replace(rt, build, TRACE)
        pipeline_id = build.pipeline_id
    CiFactory(rt).finish(compile_build["id"], "success")
    base = "/alice/wonderland"
    quoted = urllib.parse.quote(branch)
    paths = {
        "home": "/", "sign-in": "/users/sign_in", "project": base, "files": f"{base}/tree/master",
        "folder": f"{base}/tree/master/tests", "file": f"{base}/blob/master/app.py", "commits": f"{base}/commits/master",
        "commit": f"{base}/commit/{second}", "branches": f"{base}/branches", "tags": f"{base}/tags",
        "merge-requests": f"{base}/merge_requests", "merge-request": f"{base}/merge_requests/1",
        "builds": f"{base}/builds", "build": f"{base}/builds/{compile_build['id']}",
        "pending-build": f"{base}/builds/{next(b['id'] for b in builds if b['name'] == 'lint')}",
        "pipeline": f"{base}/pipelines/{pipeline_id}", "commit-builds": f"{base}/commit/{second}/builds",
        "branch-commits": f"{base}/commits/{quoted}", "user": "/u/alice", "group": "/groups/tea-party",
        "not-found": f"{base}/blob/master/missing.txt",
        "members": f"{base}/project_members", "hooks": f"{base}/hooks", "hook": f"{base}/hooks/{hook['id']}",
        "protected-branches": f"{base}/protected_branches", "access-tokens": "/-/user_settings/personal_access_tokens",
    }  # fmt: skip
    return alice, paths


# What each page must show inside the window besides the header and its first heading.
KEY_ELEMENTS = {
    "sign-in": ("#login", "#password", "form[action='/users/sign_in'] button"),
    "project": ("nav.tabs a.active", "#clone-url", "[data-copy]", ".markdown h1"),
    "files": ("table.list a[href$='/app.py']",),
    "file": (".highlight", "a.button[href*='/raw/']"),
    "merge-request": ("#merge-box", "#notes li[id^=note-]"),
    "build": ("#build-status", "#build-trace"),
    "pipeline": (".stage h4",),
}
SIGNED_IN_ELEMENTS = {
    "merge-request": ("form[action$='/close'] button", "button[name=accept]", "#note"),
    "members": ("#username", "form[action$='/project_members'] button.primary"),
    "access-tokens": ("#name", "#expires_at", "form[action$='/personal_access_tokens'] button.primary"),
}
SIGNED_IN_ONLY = {"members", "hooks", "hook", "protected-branches", "access-tokens"}


@NEEDS_BROWSER
@pytest.mark.parametrize("width", [DESKTOP, NARROW])
def test_every_main_page_is_laid_out_whole(live, site, width):
    alice, paths = site
    keep = os.environ.get("CODEYARD_SCREENSHOTS")
    browser = Browser(CHROMIUM, width=width)
    problems = []
    try:
        for who in ("anonymous", "signed-in"):
            if who == "signed-in":
                browser.open(live.base_url + "/users/sign_in")
                browser.submit("form[action='/users/sign_in']", {"login": "alice", "password": alice.password})
            for name, path in paths.items():
                if (name in SIGNED_IN_ONLY and who == "anonymous") or (name == "sign-in" and who == "signed-in"):
                    continue
                browser.open(live.base_url + path)
                wanted = ("header.top", "main h1, main h2", *KEY_ELEMENTS.get(name, ()))
                if who == "signed-in":
                    wanted += SIGNED_IN_ELEMENTS.get(name, ())
                problems += [f"{who} {name} at {width} px: {problem}" for problem in browser.layout_problems(wanted)]
                if keep:
                    Path(keep).mkdir(parents=True, exist_ok=True)
                    browser.whole_page(Path(keep) / f"{name}-{who}-{width}.png")
    finally:
        browser.close()
    assert problems == [], "\n".join(problems)


BROKEN = """<!doctype html><meta charset=utf-8><style>.actions { display: flex; gap: 4px; } .body { padding: 8px; }</style>
<p>a page with what the probe must find</p>
<div style="width: 3000px">too wide</div>
<div class="box"><div class="head">head</div><div class="body"></div></div>
<div class="actions"><form><button>Accept</button></form><form style="margin-top: 30px"><button>Close</button></form></div>
<p>\N{OPEN FILE FOLDER} tests</p>"""
FINE = """<!doctype html><meta charset=utf-8><style>.actions { display: flex; gap: 4px; flex-wrap: wrap; width: 90px; }</style>
<p>a page with nothing the probe may find</p>
<div class="box"><div class="head">head</div><div class="body"><input></div></div>
<div class="actions"><button>Accept</button><button>Close</button><button>Reopen</button></div>"""


@NEEDS_BROWSER
def test_layout_probe_finds_what_looks_broken(browser):
    browser.resize(400)
    browser.open("data:text/html," + urllib.parse.quote(BROKEN))
    problems = browser.layout_problems(("#missing", "div[style]"))
    assert len(problems) == 6, problems
    assert problems[0].startswith("the page is 30") and problems[0].endswith("in a 400 px window")
    assert problems[1] == "an empty div.body"
    assert problems[2] == 'button "Close" sits 30 px off the line of button "Accept"'
    assert problems[3] == "the text needs an emoji font: \N{OPEN FILE FOLDER}"
    assert problems[4] == "no #missing shown"
    assert problems[5] == "div[style] reaches outside the window (8 to 3008 px)"
    browser.open("data:text/html," + urllib.parse.quote(FINE))
    assert browser.layout_problems(("p",)) == []  # the wrapped third button starts its own line
