"""Uploads: POST /projects/:id/uploads stores a file; /<namespace>/<project>/uploads/... serves it."""

from __future__ import annotations

import io

import gitlab
import pytest
from sqlalchemy import select
from starlette.datastructures import UploadFile

from codeyard.db.models import Project, Upload, User
from codeyard.errors import Invalid
from codeyard.services import uploads as upload_service

from ..support import ROLES, make_team

PRIVATE, INTERNAL, PUBLIC = 0, 10, 20
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
MB = 1024 * 1024


def rows(rt) -> list[Upload]:
    with rt.db.session() as session:
        return list(session.scalars(select(Upload).order_by(Upload.id)))


def files_on_disk(rt) -> list[str]:
    root = rt.config.uploads_dir
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def upload(api, who, project, name="dk.png", content=PNG, content_type="image/png"):
    return api.as_(who).post(f"/projects/{project.id}/uploads", files={"file": (name, content, content_type)})


def web(api, path, who=None, **kwargs):
    """GET a path outside /api/v3 (the file URLs)."""
    return api.as_(who).get(f"http://testserver{path}", **kwargs)


@pytest.fixture
def owner(users):
    return users.create("owner")


@pytest.fixture
def project(projects, owner):
    return projects.create(owner, name="Demo")


# --- upload ---------------------------------------------------------------------------------------


def test_upload_an_image(api, owner, project, rt):
    response = upload(api, owner, project)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"alt", "url", "is_image", "markdown"}
    assert body["alt"] == "dk" and body["is_image"] is True
    secret = body["url"].split("/")[2]
    assert len(secret) == 32 and int(secret, 16) >= 0
    assert body["url"] == f"/uploads/{secret}/dk.png"
    assert body["markdown"] == f"![dk](/uploads/{secret}/dk.png)"
    assert files_on_disk(rt) == [f"{project.id}/{secret}/dk.png"]
    assert (rt.config.uploads_dir / str(project.id) / secret / "dk.png").read_bytes() == PNG
    [row] = rows(rt)
    assert (row.project_id, row.secret, row.filename, row.size) == (project.id, secret, "dk.png", len(PNG))
    assert row.content_type == "image/png" and row.author_id == owner.id


def test_upload_other_files(api, owner, project):
    body = upload(api, owner, project, "notes.tar.gz", b"data", "application/gzip").json()
    assert body["alt"] == "notes.tar.gz" and body["is_image"] is False
    assert body["markdown"] == f"[notes.tar.gz]({body['url']})"
    for name, alt in (("Photo.JPEG", "Photo"), ("scan.tiff", "scan"), ("a.b.gif", "a.b"), ("x.bmp", "x"), ("p.jpg", "p")):
        body = upload(api, owner, project, name).json()
        assert body["is_image"] is True and body["alt"] == alt, name
        assert body["markdown"].startswith(f"![{alt}](")
    for name in ("vector.svg", "page.html", "png", "archive.png.zip"):
        assert upload(api, owner, project, name).json()["is_image"] is False, name


def test_each_upload_gets_its_own_secret(api, owner, project, rt):
    first = upload(api, owner, project).json()["url"]
    second = upload(api, owner, project).json()["url"]
    assert first != second
    assert len(files_on_disk(rt)) == 2


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        (".htaccess", "htaccess"),
        ("...", "file"),
        ("a b;c'd.txt", "a_b_c_d.txt"),
        ("héllo wörld.png", "h_llo_w_rld.png"),
        ("x]y[z.txt", "x_y_z.txt"),
        ("ok-1+2_3.tar.gz", "ok-1+2_3.tar.gz"),
        ("%2e%2e%2fsecret", "_2e_2e_2fsecret"),
        ("a" * 300 + ".png", "a" * 251 + ".png"),
        ("b" * 300, "b" * 255),
    ],
)
def test_file_names_are_sanitised(api, owner, project, rt, given, stored):
    response = upload(api, owner, project, given)
    assert response.status_code == 201
    assert response.json()["url"].endswith(f"/{stored}")
    [path] = files_on_disk(rt)
    assert path.split("/") == [str(project.id), response.json()["url"].split("/")[2], stored]
    assert rows(rt)[0].filename == stored


def test_empty_file_name_becomes_file(api, owner, project, rt):
    boundary = "cyboundary"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename=""\r\n'
            f"Content-Type: text/plain\r\n\r\nhello\r\n--{boundary}--\r\n").encode()  # fmt: skip
    response = api.as_(owner).post(
        f"/projects/{project.id}/uploads", content=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 201
    assert response.json()["url"].endswith("/file") and response.json()["alt"] == "file"
    assert rows(rt)[0].filename == "file"


def test_sanitise_function():
    assert upload_service.sanitize_filename("C:\\Users\\me\\.secret.doc") == "secret.doc"
    assert upload_service.sanitize_filename("dir/.") == "file"
    assert upload_service.sanitize_filename("x" * 10 + "." + "y" * 300) == ("x" * 10 + "." + "y" * 300)[:255]


def test_empty_file_is_accepted(api, owner, project, rt):
    response = upload(api, owner, project, "empty.txt", b"", "text/plain")
    assert response.status_code == 201
    assert rows(rt)[0].size == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, '400 (Bad request) "file" not given'),
        ({"data": {"file": ""}}, '400 (Bad request) "file" not given'),
        ({"data": {"file": "just text"}}, {"file": ["is not a file"]}),
        ({"json": {"file": "just text"}}, {"file": ["is not a file"]}),
        ({"files": {"other": ("x.txt", b"x", "text/plain")}}, '400 (Bad request) "file" not given'),
    ],
)
def test_missing_or_wrong_file_changes_nothing(api, owner, project, rt, kwargs, message):
    response = api.as_(owner).post(f"/projects/{project.id}/uploads", **kwargs)
    assert response.status_code == 400
    assert response.json() == {"message": message}
    assert rows(rt) == [] and files_on_disk(rt) == []


def set_limit(api, admin, megabytes: int) -> None:
    assert api.as_(admin).put("/application/settings", json={"max_attachment_size": megabytes}).status_code == 200


def test_size_limit(api, owner, project, admin, rt):
    set_limit(api, admin, 1)
    assert upload(api, owner, project, "exact.bin", b"x" * MB, "application/octet-stream").status_code == 201
    too_big = {"message": {"file": ["is too big (should be at most 1 MB)"]}}
    # Just over: the body passes the transport limit (multipart slack), the file check refuses it.
    response = upload(api, owner, project, "over.bin", b"x" * (MB + 1), "application/octet-stream")
    assert response.status_code == 400 and response.json() == too_big
    # Far over: refused from Content-Length, before reading the body.
    response = upload(api, owner, project, "huge.bin", b"x" * (3 * MB), "application/octet-stream")
    assert response.status_code == 400 and response.json() == too_big
    assert [row.filename for row in rows(rt)] == ["exact.bin"]
    assert [path.rsplit("/", 1)[1] for path in files_on_disk(rt)] == ["exact.bin"]
    set_limit(api, admin, 2)
    response = upload(api, owner, project, "huge.bin", b"x" * (3 * MB), "application/octet-stream")
    assert response.json() == {"message": {"file": ["is too big (should be at most 2 MB)"]}}
    assert upload(api, owner, project, "fits.bin", b"x" * (2 * MB - 10), "application/octet-stream").status_code == 201


def test_size_limit_without_content_length(api, owner, project, admin, rt):
    """A chunked body is cut off once it passes the limit; nothing reaches the uploads directory."""
    set_limit(api, admin, 1)
    boundary = "cyboundary"
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n").encode()  # fmt: skip
    tail = f"\r\n--{boundary}--\r\n".encode()

    def chunks():
        yield head
        for _ in range(40):
            yield b"x" * (64 * 1024)
        yield tail

    response = api.as_(owner).post(
        f"/projects/{project.id}/uploads", content=chunks(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 400
    assert response.json() == {"message": {"file": ["is too big (should be at most 1 MB)"]}}
    assert rows(rt) == [] and files_on_disk(rt) == []


def test_failed_transaction_leaves_no_file(rt, owner, project):
    with rt.db.session() as session:
        actor = session.get(User, owner.id)
        target = session.get(Project, project.id)
        upload_service.store(session, rt, actor, target, UploadFile(io.BytesIO(b"abc"), filename="a.txt"))
        assert len(files_on_disk(rt)) == 1
        session.rollback()
    assert files_on_disk(rt) == []
    assert rows(rt) == []


def test_size_is_measured_while_copying(rt, owner, project, api, admin):
    """A file whose size the multipart parser did not report is still measured."""
    set_limit(api, admin, 1)
    with rt.db.session() as session:
        actor, target = session.get(User, owner.id), session.get(Project, project.id)
        source = UploadFile(io.BytesIO(b"x" * (MB + 1)), filename="big.bin")
        assert source.size is None
        with pytest.raises(Invalid) as caught:
            upload_service.store(session, rt, actor, target, source)
        assert caught.value.errors == {"file": ["is too big (should be at most 1 MB)"]}
        session.rollback()
    assert files_on_disk(rt) == [] and rows(rt) == []


def test_files_reached_through_a_link_out_of_the_uploads_dir_are_404(api, owner, project, rt, tmp_path):
    secret = "a" * 32
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("not yours")
    (rt.config.uploads_dir / str(project.id)).mkdir(parents=True)
    (rt.config.uploads_dir / str(project.id) / secret).symlink_to(outside)
    with rt.db.transaction() as session:
        session.add(Upload(project_id=project.id, secret=secret, filename="x.txt", size=9, content_type="text/plain"))
    assert web(api, f"/{project.path_with_namespace}/uploads/{secret}/x.txt", owner).status_code == 404


def test_project_deletion_removes_its_uploads(api, owner, project, rt):
    upload(api, owner, project)
    assert api.as_(owner).delete(f"/projects/{project.id}").status_code == 200
    assert files_on_disk(rt) == [] and rows(rt) == []


# --- serving --------------------------------------------------------------------------------------


def test_serve_an_image(api, owner, project):
    url = upload(api, owner, project).json()["url"]
    response = web(api, f"/{project.path_with_namespace}{url}", owner)
    assert response.status_code == 200
    assert response.content == PNG
    assert response.headers["content-type"] == "image/png"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-disposition"].startswith("inline")
    assert response.headers["content-length"] == str(len(PNG))
    head = api.as_(owner).request("HEAD", f"http://testserver/{project.path_with_namespace}{url}")
    assert head.status_code == 200 and head.content == b""


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("page.html", "application/octet-stream"),
        ("page.htm", "application/octet-stream"),
        ("vector.svg", "application/octet-stream"),
        ("script.js", "application/octet-stream"),
        ("doc.xhtml", "application/octet-stream"),
        ("notes.txt", "text/plain"),
        ("report.pdf", "application/pdf"),
        ("noextension", "application/octet-stream"),
    ],
)
def test_active_content_is_never_rendered(api, owner, project, rt, name, content_type):
    payload = b"<html><script>alert(1)</script></html>"
    url = upload(api, owner, project, name, payload, "text/html").json()["url"]
    assert rows(rt)[0].content_type == content_type
    response = web(api, f"/{project.path_with_namespace}{url}", owner)
    assert response.status_code == 200 and response.content == payload
    assert response.headers["content-type"].split(";")[0] == content_type
    assert response.headers["content-disposition"].startswith("attachment")
    assert response.headers["x-content-type-options"] == "nosniff"


def test_serving_follows_project_visibility(api, users, projects, owner):
    outsider, member = users.create("outsider"), users.create("member")
    private = projects.create(owner, name="hidden")
    internal = projects.create(owner, name="inside", visibility=INTERNAL)
    public = projects.create(owner, name="open", visibility=PUBLIC)
    projects.add_member(private, member, 10)
    paths = {p.name: f"/{p.path_with_namespace}{upload(api, owner, p).json()['url']}" for p in (private, internal, public)}
    not_found = {"message": "404 Not Found"}
    assert web(api, paths["open"]).status_code == 200
    for name in ("hidden", "inside"):
        response = web(api, paths[name])
        assert response.status_code == 404 and response.json() == not_found
    assert web(api, paths["hidden"], outsider).status_code == 404
    assert web(api, paths["inside"], outsider).status_code == 200
    assert web(api, paths["hidden"], member).status_code == 200
    # The API's credentials work here too: query parameter and OAuth-less header both.
    assert web(api, paths["hidden"], params={"private_token": member.token}).status_code == 200
    assert web(api, paths["hidden"], "not-a-token").status_code == 404
    # Blocked users count as anonymous; external users do not see internal projects.
    blocked = users.create("blocked", state="blocked")
    assert web(api, paths["hidden"], blocked).status_code == 404
    assert web(api, paths["open"], blocked).status_code == 200
    external = users.create("external", external=True)
    assert web(api, paths["inside"], external).status_code == 404
    assert web(api, paths["open"], external).status_code == 200


def test_unknown_or_forged_paths_are_404(api, owner, project, projects, rt):
    url = upload(api, owner, project, "a.txt", b"hello", "text/plain").json()["url"]
    secret = url.split("/")[2]
    other = projects.create(owner, name="Other")
    ns = project.path_with_namespace.split("/")[0]
    for path in (
        f"/{ns}/{project.path}/uploads/{secret}/b.txt",
        f"/{ns}/{project.path}/uploads/{'0' * 32}/a.txt",
        f"/{ns}/{project.path}/uploads/{secret[:-1]}/a.txt",
        f"/{ns}/{project.path}/uploads/..%2F..%2F..%2Fsecret_key/a.txt",
        f"/{ns}/{project.path}/uploads/{secret}/..%2F..%2F..%2Fsecret_key",
        f"/{ns}/{project.path}/uploads/{secret}/%2E%2E",
        f"/{ns}/{other.path}/uploads/{secret}/a.txt",
        f"/{ns}/nothing/uploads/{secret}/a.txt",
        f"/{ns}%2F{project.path}/x/uploads/{secret}/a.txt",
        f"/nobody/{project.path}/uploads/{secret}/a.txt",
    ):
        response = web(api, path, owner)
        assert response.status_code == 404, path
    assert web(api, f"/{ns}/{project.path}/uploads/{secret}/a.txt", owner).content == b"hello"
    # Case-insensitive project path, like the API's namespace%2Fpath.
    assert web(api, f"/{ns.upper()}/{project.path.upper()}/uploads/{secret}/a.txt", owner).status_code == 200
    # A file that vanished from disk is a 404, not a 500.
    (rt.config.uploads_dir / str(project.id) / secret / "a.txt").unlink()
    assert web(api, f"/{ns}/{project.path}/uploads/{secret}/a.txt", owner).status_code == 404


# --- permissions ----------------------------------------------------------------------------------


def upload_status(role: str, visibility: int) -> int:
    if role == "anonymous":
        return 401
    if role == "outsider" and visibility == PRIVATE:
        return 404
    return 201


def serve_status(role: str, visibility: int) -> int:
    if role == "anonymous":
        return 200 if visibility == PUBLIC else 404
    if role == "outsider" and visibility == PRIVATE:
        return 404
    return 200


@pytest.mark.parametrize("visibility", [PRIVATE, INTERNAL, PUBLIC])
def test_permissions(api, users, projects, admin, rt, visibility):
    team = make_team(users, projects, admin, visibility)
    project = team.project
    url = upload(api, team.user("owner"), project).json()["url"]
    for role in ROLES:
        who = team.user(role)
        response = upload(api, who, project, f"{role}.txt", b"x", "text/plain")
        assert response.status_code == upload_status(role, visibility), role
        served = web(api, f"/{project.path_with_namespace}{url}", who)
        assert served.status_code == serve_status(role, visibility), role
    uploaded = sorted(row.filename for row in rows(rt))
    assert uploaded == sorted(["dk.png"] + [f"{r}.txt" for r in ROLES if upload_status(r, visibility) == 201])
    assert len(files_on_disk(rt)) == len(uploaded)


# --- python-gitlab 1.4.0 against a real server ---------------------------------------------------


def test_python_gitlab_upload(live, owner, project, rt):
    gl = gitlab.Gitlab(live.base_url, private_token=owner.token, api_version="3")
    remote = gl.projects.get(project.id)
    result = remote.upload("dk.png", filedata=PNG)
    assert result["alt"] == "dk" and result["url"].endswith("/dk.png")
    assert result["markdown"] == f"![dk]({result['url']})"
    served = live.http.get(f"/{project.path_with_namespace}{result['url']}", headers={"PRIVATE-TOKEN": owner.token})
    assert served.status_code == 200 and served.content == PNG
    assert live.http.get(f"/{project.path_with_namespace}{result['url']}").status_code == 404
    assert len(rows(rt)) == 1
