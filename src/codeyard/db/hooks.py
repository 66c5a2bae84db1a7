"""Work tied to a transaction's outcome: file removal after a commit, cleanup after a rollback.

Services register callbacks on the session; they run once the transaction has committed (or rolled
back), so files on disk follow what the database says. A failing callback is logged, not raised:
the transaction's outcome is already decided.
"""

from __future__ import annotations

import logging

from sqlalchemy import event
from sqlalchemy.orm import Session

log = logging.getLogger("codeyard.db")
_COMMIT = "codeyard.after_commit"
_ROLLBACK = "codeyard.after_rollback"


def on_commit(session: Session, callback) -> None:
    session.info.setdefault(_COMMIT, []).append(callback)


def on_rollback(session: Session, callback) -> None:
    session.info.setdefault(_ROLLBACK, []).append(callback)


def _run(session: Session, key: str) -> None:
    callbacks = session.info.pop(key, [])
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("callback after transaction failed: %r", callback)


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    session.info.pop(_ROLLBACK, None)
    _run(session, _COMMIT)


@event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is None:  # the outermost transaction only
        session.info.pop(_COMMIT, None)
        _run(session, _ROLLBACK)
