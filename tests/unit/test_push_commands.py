"""The command list of a receive-pack request, read by the transport before git starts (to vet the
push, githooks.vet): exactly git's lines, or nothing when anything is unusual."""

from __future__ import annotations

import asyncio
import gzip
from types import SimpleNamespace

import pytest

from codeyard.githttp import transport

OLD, NEW = "1" * 40, "2" * 40


def pkt(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return b"%04x" % (len(data) + 4) + data


FIRST = pkt(f"{OLD} {NEW} refs/heads/topic\0 report-status side-band-64k agent=git/2.39\n")
SECOND = pkt(f"{OLD} {NEW} refs/heads/master\n")


def test_the_lines_up_to_the_flush():
    assert transport.push_commands(FIRST + SECOND + b"0000PACK\x00\x00") == [f"{OLD} {NEW} refs/heads/topic", f"{OLD} {NEW} refs/heads/master"]


@pytest.mark.parametrize("body", [FIRST, FIRST + SECOND[:10], FIRST[:3], b""])
def test_a_list_not_yet_flushed_is_not_read(body):
    assert transport.push_commands(body) is None


@pytest.mark.parametrize(
    "body",
    [
        pkt(f"shallow {OLD}\n") + FIRST + b"0000",  # a shallow client: the hook judges
        pkt("push-cert\0 report-status\n") + b"0000",
        pkt(f"{OLD} {NEW} refs/heads/a b\n") + b"0000",  # not a ref git would take
        pkt(f"{'A' * 40} {NEW} refs/heads/x\n") + b"0000",
        pkt(f"{OLD} {NEW} refs/heads/x\tX\n") + b"0000",
        b" 032" + FIRST[4:] + b"0000",  # a length git would not read
        b"0001" + FIRST + b"0000",
    ],
)
def test_anything_unusual_is_left_to_the_hook(body):
    assert transport.push_commands(body) == []


def read(body_messages, encoding=None):
    headers = {"content-encoding": encoding} if encoding else {}
    ctx = SimpleNamespace(header=headers.get)
    messages = iter(body_messages)

    async def receive():
        return next(messages)

    return asyncio.run(transport.read_commands(ctx, receive))


def test_commands_spread_over_messages_and_gzip():
    body = gzip.compress(FIRST + SECOND + b"0000PACK")
    chunks = [body[:7], body[7:30], body[30:]]
    received, commands = read([{"type": "http.request", "body": c, "more_body": n < 2} for n, c in enumerate(chunks)], "gzip")
    assert commands == [f"{OLD} {NEW} refs/heads/topic", f"{OLD} {NEW} refs/heads/master"]
    assert [m["body"] for m in received] == chunks  # given to git again as they came


def test_a_long_list_or_a_bomb_is_left_to_the_hook():
    many = b"".join(pkt(f"{OLD} {NEW} refs/tags/t{n}\n") for n in range(300)) + b"0000"
    assert len(many) > transport.COMMANDS_LIMIT
    assert read([{"type": "http.request", "body": many, "more_body": False}])[1] is None
    bomb = gzip.compress(b"0" * 50_000_000)
    received, commands = read([{"type": "http.request", "body": bomb, "more_body": False}], "gzip")
    assert commands is None and received[0]["body"] is bomb
    assert read([{"type": "http.request", "body": b"not gzip", "more_body": False}], "gzip")[1] is None
    assert read([{"type": "http.disconnect"}])[1] is None
