"""Request bodies: bounded in bytes, fields, files, nesting and values; malformed ones are 400."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest

from codeyard.app import CodeyardApp, build_router

from .state import snapshot

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}


def refused(response, status: int, before, rt) -> None:
    assert response.status_code == status, response.text
    assert snapshot(rt) == before


def test_ten_megabytes_of_empty_form_fields_are_413_without_creating_anything(api, alice, rt):
    before = snapshot(rt)
    body = b"name=x&" + b"&" * (10 * 1024 * 1024)
    started = time.perf_counter()
    response = api.as_(alice).post("/projects", content=body, headers=FORM)
    assert time.perf_counter() - started < 1
    refused(response, 413, before, rt)
    assert response.json() == {"message": "413 Request Entity Too Large"}


def test_a_body_without_length_stops_at_the_limit(api, alice, rt):
    before = snapshot(rt)

    def chunks():
        yield b"name=x&"
        for _ in range(10 * 16):
            yield b"&" * (64 * 1024)

    response = api.as_(alice).post("/projects", content=chunks(), headers=FORM)
    refused(response, 413, before, rt)


def test_ten_megabytes_of_json_are_413(api, alice, rt):
    before = snapshot(rt)
    body = orjson.dumps({"name": "x", "description": "d" * (10 * 1024 * 1024)})
    refused(api.as_(alice).post("/projects", content=body, headers=JSON), 413, before, rt)


def test_form_fields_and_key_depth_are_bounded(api, alice, rt):
    before = snapshot(rt)
    many = "name=x&" + "&".join(f"f{i}=" for i in range(1000))
    response = api.as_(alice).post("/projects", content=many.encode(), headers=FORM)
    refused(response, 400, before, rt)
    assert "at most 1000 fields" in response.json()["message"]
    deep = "name=x&a" + "[b]" * 101 + "=1"
    refused(api.as_(alice).post("/projects", content=deep.encode(), headers=FORM), 400, before, rt)
    refused(api.as_(alice).post("/projects", params={"name": "x", "a" + "[b]" * 101: "1"}), 400, before, rt)
    # At the bounds the request goes through.
    fine = "name=ok&a" + "[b]" * 100 + "=1&" + "&".join(f"f{i}=" for i in range(998))
    assert api.as_(alice).post("/projects", content=fine.encode(), headers=FORM).status_code == 201


def test_json_depth_and_value_count_are_bounded(api, alice, rt):
    before = snapshot(rt)
    deep = b'{"name": "x", "a": ' + b"[" * 100 + b"]" * 100 + b"}"
    response = api.as_(alice).post("/projects", content=deep, headers=JSON)
    refused(response, 400, before, rt)
    assert "nest at most 100" in response.json()["message"]
    very_deep = b'{"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    refused(api.as_(alice).post("/projects", content=very_deep, headers=JSON), 400, before, rt)
    many = orjson.dumps({"name": "x", "tags": [0] * 10_000})
    response = api.as_(alice).post("/projects", content=many, headers=JSON)
    refused(response, 400, before, rt)
    assert "at most 10000 values" in response.json()["message"]
    fine = orjson.dumps({"name": "ok", "tags": [[0] * 98], "more": [0] * 9_000})
    assert api.as_(alice).post("/projects", content=fine, headers=JSON).status_code == 201


def multipart(boundary: str, parts: list[tuple[str, bytes]], files: int = 0, end: bool = True) -> bytes:
    out = []
    for name, value in parts:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() + value + b"\r\n")
    for number in range(files):
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="f{number}"; filename="f{number}.txt"\r\n'
                   f"Content-Type: text/plain\r\n\r\nx\r\n".encode())
    if end:
        out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/form-data", multipart("xyz", [("name", b"x")])),
        ("multipart/form-data; boundary=", multipart("", [("name", b"x")])),
        ("multipart/form-data; boundary=xyz", b"garbage"),
        ("multipart/form-data; boundary=xyz", multipart("xyz", [("name", b"x")], end=False)),
        ("multipart/form-data; boundary=xyz", multipart("xyz", [("name", b"x")])[:40]),
        ("multipart/form-data; boundary=xyz", b'--xyz\r\nContent-Disposition: form-data\r\n\r\nx\r\n--xyz--\r\n'),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\n\x00\x01: y\r\n\r\nx\r\n--xyz--\r\n"),
        ("multipart/form-data; boundary=xyz", multipart("xyz", [("name", b"x")] + [(f"f{i}", b"") for i in range(1000)])),
    ],
    ids=["no-boundary", "empty-boundary", "garbage", "unterminated", "truncated", "no-name", "bad-header", "1001-fields"],
)
def test_malformed_or_oversized_multipart_is_400(api, alice, rt, content_type, body):
    before = snapshot(rt)
    response = api.as_(alice).post("/projects", content=body, headers={"Content-Type": content_type})
    refused(response, 400, before, rt)
    assert response.json()["message"].startswith("400 (Bad request)")


def test_well_formed_multipart_goes_through(api, alice, rt):
    body = multipart("xyz", [("name", b"by-multipart")])
    response = api.as_(alice).post("/projects", content=body, headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    assert response.status_code == 201 and response.json()["name"] == "by-multipart"


def test_more_than_ten_files_is_400(api, alice, projects, rt):
    project = projects.create(alice)
    before = snapshot(rt)
    body = multipart("xyz", [], files=11)
    response = api.as_(alice).post(f"/projects/{project.id}/uploads", content=body,
                                   headers={"Content-Type": "multipart/form-data; boundary=xyz"})
    refused(response, 400, before, rt)


def test_files_api_takes_up_to_ten_megabytes(api, alice, projects, rt):
    project = projects.create(alice)
    url = f"/projects/{project.id}/repository/files"
    change = {"file_path": "big.txt", "branch_name": "master", "commit_message": "big"}
    before = snapshot(rt)
    too_big = orjson.dumps({**change, "content": "x" * (10 * 1024 * 1024)})
    refused(api.as_(alice).post(url, content=too_big, headers=JSON), 413, before, rt)
    response = api.as_(alice).post(url, json={**change, "content": "x" * (2 * 1024 * 1024)})
    assert response.status_code == 201
    # Elsewhere two megabytes are too many.
    refused_again = snapshot(rt)
    response = api.as_(alice).post("/projects", json={"name": "x", "description": "d" * (2 * 1024 * 1024)})
    refused(response, 413, refused_again, rt)


ABANDONED = {
    b"application/x-www-form-urlencoded": b"name=abandoned&descr",
    b"multipart/form-data; boundary=xyz": b'--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nab',
}


@pytest.mark.parametrize("content_type", list(ABANDONED), ids=["form", "multipart"])
def test_a_client_that_abandons_its_body_gets_400_and_nothing_runs(rt, alice, content_type):
    app = CodeyardApp(rt, build_router(), owns_runtime=False)
    before = snapshot(rt)
    messages = [{"type": "http.request", "body": ABANDONED[content_type], "more_body": True}, {"type": "http.disconnect"}]
    sent = []

    async def receive():
        return messages.pop(0)

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "method": "POST", "path": "/api/v3/projects", "raw_path": b"/api/v3/projects",
        "query_string": b"", "headers": [(b"content-type", content_type), (b"content-length", b"1000"),
                                         (b"private-token", alice.token.encode())],
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 400
    assert b"ended before its end" in sent[1]["body"]
    assert snapshot(rt) == before


def test_a_form_that_is_not_utf8_is_400_and_a_blank_body_is_no_body(api, alice, rt):
    before = snapshot(rt)
    refused(api.as_(alice).post("/projects", content=b"name=\xff\xfe", headers=FORM), 400, before, rt)
    response = api.as_(alice).post("/projects", content=b"  \r\n", headers=JSON)
    assert response.status_code == 400 and response.json() == {"message": '400 (Bad request) "name" not given'}
