"""Trace files: replace, append with its offset check, reads bounded by the recorded size."""

from __future__ import annotations

import stat

import pytest

from codeyard.db.models import Build
from codeyard.errors import PayloadTooLarge
from codeyard.services import projects as project_service
from codeyard.services.ci import traces

from .conftest import job


@pytest.fixture
def build_id(ci, projects, alice):
    project = projects.create(alice)
    pipeline_id = ci.pipeline(project, [job("rspec")])
    return ci.builds(pipeline_id)["rspec"].id


def _with_build(rt, build_id, action):
    with rt.db.transaction() as session:
        return action(session.get(Build, build_id))


def test_a_new_build_has_an_empty_trace(rt, build_id):
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b""


def test_replace_then_append_and_read(rt, build_id):
    _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"line 1\n"))
    assert _with_build(rt, build_id, lambda b: b.trace_size) == 7
    assert _with_build(rt, build_id, lambda b: traces.append(rt, b, 7, b"line 2\n")) == 14
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b"line 1\nline 2\n"
    path = _with_build(rt, build_id, lambda b: traces.path(rt, b))
    assert path.parent.parent.name == "builds" and path.name == f"{build_id}.log"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_append_at_the_wrong_offset_is_refused_with_the_current_size(rt, build_id):
    _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"abc"))
    for offset in (0, 2, 4):
        with pytest.raises(traces.RangeMismatch) as caught:
            _with_build(rt, build_id, lambda b, offset=offset: traces.append(rt, b, offset, b"x"))
        assert caught.value.current_size == 3
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b"abc"


def test_a_rolled_back_append_leaves_the_recorded_trace(rt, build_id):
    _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"kept"))
    with pytest.raises(RuntimeError), rt.db.transaction() as session:
        traces.append(rt, session.get(Build, build_id), 4, b" lost")
        raise RuntimeError("rolled back")
    assert _with_build(rt, build_id, lambda b: (b.trace_size, traces.read(rt, b))) == (4, b"kept")
    # The next append cuts the bytes the rolled-back one wrote.
    _with_build(rt, build_id, lambda b: traces.append(rt, b, 4, b"!"))
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b"kept!"
    assert _with_build(rt, build_id, lambda b: traces.path(rt, b).read_bytes()) == b"kept!"


def test_traces_are_bounded(rt, build_id, monkeypatch):
    monkeypatch.setattr(traces, "MAX_SIZE", 10)
    with pytest.raises(PayloadTooLarge):
        _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"x" * 11))
    _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"x" * 8))
    with pytest.raises(PayloadTooLarge):
        _with_build(rt, build_id, lambda b: traces.append(rt, b, 8, b"yyy"))
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b"x" * 8


def test_a_missing_file_reads_empty(rt, build_id):
    _with_build(rt, build_id, lambda b: traces.replace(rt, b, b"gone"))
    _with_build(rt, build_id, lambda b: traces.remove(rt, b))
    assert _with_build(rt, build_id, lambda b: traces.read(rt, b)) == b""


def test_traces_go_with_their_project(rt, build_id, alice):
    from codeyard.db.models import Project, User

    path = _with_build(rt, build_id, lambda b: (traces.replace(rt, b, b"x"), traces.path(rt, b))[1])
    assert path.exists()
    with rt.db.transaction() as session:
        build = session.get(Build, build_id)
        project_service.delete(session, rt, session.get(User, alice.id), session.get(Project, build.project_id))
    assert not path.exists() and not path.parent.exists()
