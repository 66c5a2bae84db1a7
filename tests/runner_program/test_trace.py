"""The in-memory trace: masked build token (also when split across chunks), bounded size."""

from __future__ import annotations

from codeyard.runner.trace import MASK, Trace

TOKEN = "0123456789abcdef0123456789abcd"


def test_a_secret_is_masked_also_across_chunks():
    trace = Trace(secrets=(TOKEN,))
    trace.write(b"clone http://gitlab-ci-token:" + TOKEN[:10].encode())
    assert TOKEN[:10].encode() not in trace.since(0)  # held back: it may be the start of the token
    trace.write(TOKEN[10:].encode() + b"@host/x.git\n")
    trace.write(TOKEN.encode())
    trace.flush()
    assert trace.since(0) == b"clone http://gitlab-ci-token:" + MASK + b"@host/x.git\n" + MASK
    assert TOKEN.encode() not in trace.since(0)


def test_a_held_prefix_that_is_not_the_secret_comes_out():
    trace = Trace(secrets=(TOKEN,))
    trace.write(b"value 0123")
    assert trace.since(0) == b"value "
    trace.write(b"xyz\n")
    assert trace.since(0) == b"value 0123xyz\n"
    trace.write(b"ends with 01")
    trace.flush()
    assert trace.since(0).endswith(b"ends with 01")


def test_the_trace_stops_at_its_limit_with_a_notice():
    trace = Trace(limit=100)
    trace.write(b"a" * 60)
    trace.write(b"b" * 60)
    trace.write(b"c" * 10)
    data = trace.since(0)
    assert data.startswith(b"a" * 60 + b"b" * 40 + b"\nJob's log exceeded limit of 100 bytes.")
    assert b"cc" not in data and trace.truncated
    assert len(trace) == len(data)


def test_since_reads_in_chunks():
    trace = Trace()
    trace.line("hello")
    trace.write(b"world")
    assert trace.since(0, 3) == b"hel"
    assert trace.since(3, 100) == b"lo\nworld"
    assert trace.since(len(trace)) == b""
    assert trace.text() == "hello\nworld"
