"""db.queries.joined_part: a joined table's columns taken back from a read path's row by their labels."""

from __future__ import annotations

from collections import namedtuple

import pytest

from codeyard.db.queries import joined_part

Contact = namedtuple("Contact", ("id", "username"))


def test_the_labelled_columns_make_the_part_or_none():
    row_type = namedtuple("Row", ("id", "title", "author_id", "author_username", "assignee_id", "assignee_username"))
    row = row_type(7, "t", 3, "alice", None, None)
    assert joined_part(Contact, row, "author_") == Contact(3, "alice")
    assert joined_part(Contact, row, "assignee_") is None  # the outer join found nothing


def test_a_label_taken_twice_is_an_error_not_a_wrong_part():
    # The statement's own author_id column comes first: its named tuple renamed the joined one.
    row_type = namedtuple("Row", ("id", "author_id", "action", "author_id", "author_username"), rename=True)
    with pytest.raises(ValueError, match="are not"):
        joined_part(Contact, row_type(1, 2, 3, 4, "x"), "author_")
