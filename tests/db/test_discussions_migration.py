"""Migration 0021 on both backends: the notes written before it each get a discussion of their own
(40 hex characters, distinct), comments as they were (no type, not resolvable)."""

from __future__ import annotations

import re

from sqlalchemy import inspect, text

from codeyard.db import migrate
from codeyard.db.engine import Database
from codeyard.db.models import AwardEmoji, MergeRequest, Namespace, Note, Project, User

from . import test_storage

fresh_url = test_storage.fresh_url  # an empty database of each backend


def test_existing_notes_get_discussions_of_their_own(fresh_url):
    """Notes written, the migration taken back (its columns dropped) and run again over them."""
    migrate.upgrade(fresh_url)
    db = Database(fresh_url)
    try:
        with db.transaction() as session:
            user = User(username="u", email="u@example.com", name="U", projects_limit=10)
            namespace = Namespace(path="u", name="u", kind="user")
            session.add_all([user, namespace])
            session.flush()
            project = Project(namespace_id=namespace.id, name="p", path="p", runners_token_nonce="0" * 32,
                              runners_token_digest="1" * 64)  # fmt: skip
            session.add(project)
            session.flush()
            mr = MergeRequest(iid=1, target_project_id=project.id, source_project_id=project.id, source_branch="f",
                              target_branch="master", title="t", author_id=user.id)  # fmt: skip
            session.add(mr)
            session.flush()
            session.add_all([Note(project_id=project.id, merge_request_id=mr.id, author_id=user.id, note=f"n{at}") for at in range(3)])
            session.add(Note(project_id=project.id, commit_id="a" * 40, author_id=user.id, note="on a commit"))
            session.add(AwardEmoji(project_id=project.id, user_id=user.id, awardable_type="MergeRequest", awardable_id=mr.id, name="tada"))
        migrate.downgrade(fresh_url, "0016")
        with db.engine.connect() as connection:
            assert "discussion_id" not in {column["name"] for column in inspect(connection).get_columns("notes")}
            assert not inspect(connection).has_table("award_emoji")
        migrate.upgrade(fresh_url)
        with db.engine.connect() as connection:
            rows = list(connection.execute(text("SELECT discussion_id, type, resolvable, resolved_at, position FROM notes")))
        assert len(rows) == 4
        assert all(re.fullmatch(r"[0-9a-f]{40}", row[0]) for row in rows) and len({row[0] for row in rows}) == 4
        assert {tuple(row[1:]) for row in rows} == {(None, False, None, None)}
    finally:
        db.dispose()
