"""The one loader's verdicts (`services.loader.judge`): what every edge maps to its own answer."""

from __future__ import annotations

import asyncio

import pytest

from codeyard.policies import projects as policy
from codeyard.services import loader
from codeyard.services.loader import LoadRefused

ROW = object()
READER = policy.Access(frozenset({policy.READ_PROJECT}))
PUSHER = policy.Access(frozenset({policy.READ_PROJECT, policy.PUSH_CODE}))
SOMEONE = object()


def judged(access, caller=SOMEONE, row=ROW, needed=(), sign_in=False):
    return loader.judge(caller, row, needed, access_of=lambda _caller, _row: access, sign_in=sign_in)


def test_a_readable_project_with_every_ability_asked_is_loaded():
    assert judged(PUSHER, needed=(policy.PUSH_CODE,)) == (ROW, PUSHER, None)


def test_missing_and_unreadable_are_one_answer_without_the_row():
    assert judged(PUSHER, row=None).refusal is LoadRefused.NOT_FOUND
    unreadable = judged(policy.NO_ACCESS)
    assert unreadable.refusal is LoadRefused.NOT_FOUND and unreadable.row is None


def test_a_readable_project_without_an_ability_is_forbidden():
    assert judged(READER, needed=(policy.PUSH_CODE,)) == (ROW, READER, LoadRefused.FORBIDDEN)


@pytest.mark.parametrize("access", [policy.NO_ACCESS, READER])
def test_anonymous_callers_are_asked_to_sign_in_when_the_edge_says_so(access):
    assert judged(access, caller=None, needed=(policy.PUSH_CODE,), sign_in=True).refusal is LoadRefused.UNAUTHENTICATED
    assert judged(access, caller=SOMEONE, needed=(policy.PUSH_CODE,), sign_in=True).refusal is not LoadRefused.UNAUTHENTICATED
    assert judged(access, caller=None, needed=(policy.PUSH_CODE,)).refusal is not LoadRefused.UNAUTHENTICATED


def test_a_path_with_a_slash_in_a_segment_names_nothing_and_reads_nothing():
    assert loader.path_ident("group", "project") == "group/project"
    assert loader.path_ident("a/b", "c") is None and loader.path_ident("a", "b/c") is None

    class Unread:
        async def first(self, _statement, _params):
            raise AssertionError("read")

    assert asyncio.run(loader.project(Unread(), None, SOMEONE)).refusal is LoadRefused.NOT_FOUND
