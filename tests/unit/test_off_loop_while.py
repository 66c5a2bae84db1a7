"""Ctx.off_loop_while: the thread's work starts before the loop's database work (a handler's git runs
beside its queries), and no transaction is open while the handler waits for the thread."""

from __future__ import annotations

import asyncio
import threading

import pytest
from sqlalchemy import text

from codeyard.http.context import Ctx


def request(rt) -> Ctx:
    return Ctx(rt, {"type": "http", "method": "GET", "headers": []}, None, {})


def test_the_work_runs_beside_the_queries_and_no_transaction_is_open_while_waiting(rt):
    ctx = request(rt)
    started, release = threading.Event(), threading.Event()
    seen = {}

    def work():
        started.set()
        assert release.wait(5)
        seen["in transaction while waiting"] = ctx._session.in_transaction()
        return "diffs"

    def here():
        assert started.wait(5), "the work had not started when the queries ran"
        seen["query"] = ctx.session.execute(text("SELECT 1")).scalar()
        asyncio.get_running_loop().call_soon(release.set)  # once the handler waits for the work
        return "entity"

    async def handler():
        try:
            return await ctx.off_loop_while(work, here)
        finally:
            await ctx.close()

    assert asyncio.run(handler()) == ("entity", "diffs")
    assert seen == {"query": 1, "in transaction while waiting": False}


def test_a_failure_beside_the_work_is_the_request_s_and_the_work_s_outcome_is_dropped(rt):
    ctx = request(rt)

    def work():
        raise RuntimeError("git failed after the request did")

    def here():
        raise LookupError("the request failed")

    async def handler():
        try:
            with pytest.raises(LookupError):
                await ctx.off_loop_while(work, here)
            await asyncio.sleep(0.1)  # the work's failure is settled, not left for the loop to log
        finally:
            await ctx.close()

    logged = []

    async def run():
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: logged.append(context))
        await handler()

    asyncio.run(run())
    assert logged == []
