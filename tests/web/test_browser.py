"""The main flows in a real browser (Debian's `chromium`, headless, over the DevTools protocol)
against a real server process: sign in, open a project, browse a file, open a merge request,
comment, accept it; and watch a build that a real runner process runs. Each step ends in a
screenshot that must not be blank. Skipped when no browser is installed (`apt-get install
chromium`, or CODEYARD_CHROMIUM=<path>)."""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from codeyard.git.refs import ZERO_SHA
from tests.support import WorkingCopy, record_push

from ..ci.conftest import wait_for
from .browser import Browser, find_chromium, is_blank

CHROMIUM = find_chromium()
NEEDS_BROWSER = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium browser installed (apt-get install chromium, or set CODEYARD_CHROMIUM)"
)


@pytest.fixture
def shots(tmp_path):
    """Where screenshots go; CODEYARD_SCREENSHOTS=<dir> keeps a copy (the docs' pictures)."""
    keep = os.environ.get("CODEYARD_SCREENSHOTS")

    def take(browser: Browser, name: str) -> None:
        path = tmp_path / f"{name}.png"
        small = browser.screenshot(path)
        assert not is_blank(small), f"the screenshot of {name} is blank"
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)

    return take


@NEEDS_BROWSER
def test_main_flows_in_a_browser(live, users, projects, rt, tmp_path, browser, shots):
    alice = users.create("alice", name="Alice Liddell")
    bob = users.create("bob", name="Bob Builder")
    project = projects.create(alice, name="wonderland", visibility=10,
                              description="A small service with a README, some code and a merge request.")  # fmt: skip
    projects.add_member(project, bob, 40)  # a master: the pushed master branch is protected
    work = WorkingCopy(rt, project, tmp_path / "work")
    start = work.commit("Start the project", {
        "README.md": "# Wonderland\n\nA *tiny* example service.\n\n- `app.py` answers requests\n- `tests/` checks it\n",
        "app.py": "import json\n\n\ndef handle(request):\n    \"\"\"Answer with a greeting.\"\"\"\n"
                  "    return json.dumps({'hello': request.get('name', 'world')})\n",
        "tests/test_app.py": "from app import handle\n\n\ndef test_handle():\n    assert 'world' in handle({})\n",
    })  # fmt: skip
    work.git("checkout", "-q", "-b", "polite-greeting")
    greeting = work.commit("Greet politely", {"app.py": "import json\n\n\ndef handle(request):\n    \"\"\"Answer with a polite greeting.\"\"\"\n"
                                              "    name = request.get('name', 'world')\n"
                                              "    return json.dumps({'hello': f'dear {name}'})\n"})  # fmt: skip
    work.push("master", "polite-greeting")
    record_push(rt, project, alice, ("refs/heads/master", ZERO_SHA, start), ("refs/heads/polite-greeting", ZERO_SHA, greeting))
    created = live.api.as_(bob).post(f"/projects/{project.id}/merge_requests", json={
        "source_branch": "polite-greeting", "target_branch": "master", "title": "Greet politely",
        "description": "Adds **dear** before the name.",
    })  # fmt: skip
    assert created.status_code == 200, created.text
    base = live.base_url

    browser.open(base + "/users/sign_in")
    shots(browser, "sign-in")
    browser.submit("form[action='/users/sign_in']", {"login": "bob", "password": bob.password})
    assert "Your projects" in browser.text() and "Alice Liddell pushed new branch polite-greeting at" in browser.text()
    shots(browser, "dashboard")

    browser.open(f"{base}/alice/wonderland")
    assert "A tiny example service." in browser.text() and "Wonderland" in browser.text()
    shots(browser, "project")

    browser.click("a[href='/alice/wonderland/blob/master/app.py']")
    assert browser.url().endswith("/alice/wonderland/blob/master/app.py")
    assert "def handle(request):" in browser.text()
    shots(browser, "file")

    browser.open(f"{base}/alice/wonderland/merge_requests")
    assert "Greet politely" in browser.text()
    browser.click("a[href='/alice/wonderland/merge_requests/1']")
    assert "Adds dear before the name." in browser.text() and "can be merged" in browser.text()
    shots(browser, "merge-request")

    browser.submit("form[action$='/notes']", {"note": "Looks good to me :+1:"})
    assert "Looks good to me" in browser.text()
    browser.evaluate("document.getElementById('notes').scrollIntoView({block: 'center'})")  # the comment in the picture
    shots(browser, "comment")

    browser.submit("form[action$='/accept']", button="button[name=accept]")
    assert "Merged" in browser.text() and "Accept merge request" not in browser.text()
    shots(browser, "accepted")
    merged = live.api.as_(alice).get(f"/projects/{project.id}/merge_requests/{created.json()['id']}").json()
    assert merged["state"] == "merged"


WATCHED = """\
stages: [build, test]
watched:
  stage: build
  script:
    - echo "step one"
    - sleep 6
    - echo "step two" | tee out.txt
  artifacts:
    paths: [out.txt]
lint:
  stage: build
  script: [echo lint]
check:
  stage: test
  script: [cat out.txt]
"""

TRACE = "document.getElementById('build-trace').textContent"


@NEEDS_BROWSER
def test_watch_a_build_in_a_browser(live, runner, pusher, project, owner, browser, shots):
    """The build page of a running build follows its trace (static/builds.js, no reload) until the
    runner reports success; then its pipeline page and its artifacts link."""
    base, url = live.base_url, f"{live.base_url}/{project.path_with_namespace}"
    api = live.api.as_(owner)
    browser.open(base + "/users/sign_in")
    browser.submit("form[action='/users/sign_in']", {"login": owner.username, "password": owner.password})
    pusher.commit({".gitlab-ci.yml": WATCHED}, "a slow job")
    pusher.push()

    def started():
        found = {b["name"]: b for b in api.get(f"/projects/{project.id}/builds").json()}
        watched = found.get("watched")
        return watched and "step one" in api.get(f"/projects/{project.id}/builds/{watched['id']}/trace").text and watched

    build = wait_for(started, "the job to print its first line", runner)
    browser.open(f"{url}/builds/{build['id']}")
    browser.evaluate("window.__sameDocument = true")
    # The page polls every data-poll-ms (3 s); after its first poll, every 0.2 s here: the end shows sooner.
    browser.evaluate("document.getElementById('build-trace').dataset.pollMs = '200'")
    text = browser.evaluate(TRACE)
    assert "step one" in text and "\nstep two" not in text and browser.evaluate("document.getElementById('build-status').textContent") == "running"
    assert browser.evaluate("document.getElementById('build-cancel') !== null")
    shots(browser, "build-running")

    def finished():
        status = browser.evaluate("document.getElementById('build-status').textContent")
        return status == "success" and "Build succeeded" in browser.evaluate(TRACE)

    wait_for(finished, "the page to show the build's end", runner, timeout=40)
    assert browser.evaluate("window.__sameDocument") is True  # followed without a reload
    assert "\nstep two\n" in browser.evaluate(TRACE)
    assert browser.evaluate("document.getElementById('build-cancel')") is None  # nothing left to cancel
    shots(browser, "build-finished")

    browser.open(f"{url}/builds/{build['id']}")  # once finished, the page shows the artifacts
    link = f"a[href='/{project.path_with_namespace}/builds/{build['id']}/artifacts/download']"
    fetched = browser.evaluate(f"fetch(document.querySelector({link!r}).href).then(r => r.arrayBuffer()"
                               ".then(b => [r.status, String.fromCharCode(...new Uint8Array(b.slice(0, 2)))]))")  # fmt: skip
    assert fetched == [200, "PK"]  # the zip the runner uploaded

    def all_passed():
        builds = api.get(f"/projects/{project.id}/builds").json()
        return len(builds) == 3 and all(b["status"] == "success" for b in builds)

    wait_for(all_passed, "the test stage to pass", runner)
    browser.click("dd a[href*='/pipelines/']")
    stages = browser.evaluate("[...document.querySelectorAll('.stage h4')].map(h => h.textContent.trim())")
    assert stages == ["success build", "success test"], stages
    assert all(name in browser.text() for name in ("Pipeline #", "watched", "lint", "check"))
    shots(browser, "pipeline")


def _png(width: int, height: int, pixel) -> bytes:
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_blank_check_tells_blank_from_drawn():
    assert is_blank(_png(60, 40, lambda x, y: (255, 255, 255)))
    assert not is_blank(_png(60, 40, lambda x, y: (x * 4, y * 6, (x + y) % 256)))
