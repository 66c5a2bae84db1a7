"""Entity helpers: timestamps and avatars."""

from __future__ import annotations

import datetime as dt
import hashlib
from types import SimpleNamespace

from codeyard.entities.common import View, iso
from codeyard.entities.users import avatar_url


def test_iso_timestamps():
    moment = dt.datetime(2016, 1, 4, 15, 31, 46, 176543, tzinfo=dt.UTC)
    assert iso(moment) == "2016-01-04T15:31:46.176Z"
    assert iso(moment.replace(tzinfo=None)) == "2016-01-04T15:31:46.176Z"
    offset = dt.datetime(2015, 12, 24, 16, 51, 14, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert iso(offset) == "2015-12-24T16:51:14.000+01:00"
    assert iso(None) is None


def test_avatar_url():
    user = SimpleNamespace(email=" Someone@Example.com ")
    digest = hashlib.md5(b"someone@example.com").hexdigest()
    assert avatar_url(user, View("http://h", True)) == f"http://www.gravatar.com/avatar/{digest}?s=80&d=identicon"
    assert avatar_url(user, View("https://h", True)).startswith("https://secure.gravatar.com/avatar/")
    assert avatar_url(user, View("http://h", False)) == ""
