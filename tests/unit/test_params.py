"""Parameter parsing and validation rules."""

from __future__ import annotations

import pytest

from codeyard.errors import Invalid, MissingParam
from codeyard.http.params import (
    Bool,
    Choice,
    Email,
    File,
    Int,
    IntList,
    Str,
    StrList,
    Url,
    as_list,
    parse_pairs,
    parse_query,
    validate,
)


def test_rack_style_keys():
    assert parse_query("a=1&b[]=x&b[]=y&c[k]=v&d[0]=p&d[1]=q&e") == {
        "a": "1", "b": ["x", "y"], "c": {"k": "v"}, "d": {"0": "p", "1": "q"}, "e": "",
    }
    assert parse_pairs([("info[name]", "runner"), ("info[version]", "1")]) == {"info": {"name": "runner", "version": "1"}}
    assert parse_query("x=1&x=2") == {"x": "2"}


def test_as_list():
    assert as_list({"1": "b", "0": "a", "10": "c"}) == ["a", "b", "c"]
    assert as_list("a, b\nc,") == ["a", "b", "c"]
    assert as_list(5) == [5]


@pytest.mark.parametrize("raw", [True, 1, "1", "t", "TRUE", "on", "yes"])
def test_true_values(raw):
    assert validate((Bool("b"),), {"b": raw}) == {"b": True}


@pytest.mark.parametrize("raw", [False, 0, "0", "f", "false", "OFF", "no"])
def test_false_values(raw):
    assert validate((Bool("b"),), {"b": raw}) == {"b": False}


def test_required_is_checked_first_in_declared_order():
    declared = (Str("a", required=True), Int("n"), Str("b", required=True))
    with pytest.raises(MissingParam) as caught:
        validate(declared, {"n": "x", "b": "ok"})
    assert caught.value.message == '400 (Bad request) "a" not given'
    for blank in ("", "   ", None):
        with pytest.raises(MissingParam):
            validate(declared, {"a": blank, "b": "x"})


def test_blank_and_null_are_absent_unless_nullable():
    declared = (Str("s"), Str("n", nullable=True))
    assert validate(declared, {"s": "", "n": ""}) == {"n": None}
    assert validate(declared, {"s": None, "n": None}) == {"n": None}


def test_conversions_and_messages():
    declared = (
        Int("i", minimum=0, maximum=10),
        Choice("c", (0, 10, 20)),
        Choice("w", ("asc", "desc")),
        IntList("l", choices=(1, 2)),
        StrList("t", item_pattern=r"[a-z]+"),
        Url("u"),
        Email("e"),
        Str("s", pattern=r"[a-z]+", pattern_message="lower case only"),
    )
    ok = validate(declared, {"i": " 7 ", "c": "10", "w": "asc", "l": "1,2", "t": ["ab"], "u": "https://h.example:8080/p",
                             "e": "a@b.example", "s": "abc"})
    assert ok == {"i": 7, "c": 10, "w": "asc", "l": [1, 2], "t": ["ab"], "u": "https://h.example:8080/p",
                  "e": "a@b.example", "s": "abc"}
    with pytest.raises(Invalid) as caught:
        validate(declared, {"i": 11, "c": 5, "w": "up", "l": [3], "t": ["A"], "u": "http://h:99999", "e": "x@", "s": "ABC"})
    assert caught.value.errors == {
        "i": ["must be less than or equal to 10"],
        "c": ["is not included in the list"],
        "w": ["is not included in the list"],
        "l": ["'3' is not a valid value"],
        "t": ["'A' is invalid"],
        "u": ["must be a valid URL"],
        "e": ["is invalid"],
        "s": ["lower case only"],
    }


def test_type_errors():
    with pytest.raises(Invalid) as caught:
        validate((Int("i"), Str("s"), File("f"), Bool("b")), {"i": True, "s": ["x"], "f": "text", "b": 2})
    assert caught.value.errors == {
        "i": ["is not a number"], "s": ["must be a string"], "f": ["is not a file"], "b": ["is not a boolean"],
    }


def test_aliases():
    assert validate((Bool("avatars", aliases=("gravatar",)),), {"gravatar": "1"}) == {"avatars": True}


def test_control_characters_by_kind_of_text():
    declared = (Str("line"), Str("text", multiline=True), Str("secret", verbatim=True), StrList("tags"))
    ok = validate(declared, {"line": "a b", "text": "a\r\n\tb", "secret": "\x00\x1b\x7f", "tags": ["x"]})
    assert ok == {"line": "a b", "text": "a\r\n\tb", "secret": "\x00\x1b\x7f", "tags": ["x"]}
    with pytest.raises(Invalid) as caught:
        validate(declared, {"line": "a\nb", "text": "a\x00b", "tags": ["x\x1by"]})
    reason = ["must not contain control characters"]
    assert caught.value.errors == {"line": reason, "text": reason, "tags": reason}
    for character in ("\t", "\x85", "\x7f", "\u009b"):
        with pytest.raises(Invalid):
            validate((Str("line"),), {"line": f"a{character}b"})


def test_checks_report_every_reason_with_the_other_fields():
    def odd(text):
        return ["is odd", "is long"] if len(text) % 2 else []

    declared = (Str("a", check=odd), Int("n", maximum=1), Str("b", check=odd))
    assert validate(declared, {"a": "xy", "b": "zz"}) == {"a": "xy", "b": "zz"}
    with pytest.raises(Invalid) as caught:
        validate(declared, {"a": "x", "n": 5, "b": "y"})
    assert caught.value.errors == {"a": ["is odd", "is long"], "n": ["must be less than or equal to 1"], "b": ["is odd", "is long"]}


def test_markup_is_refused_in_names_and_emails():
    from codeyard.http.params import plain_text

    declared = (Str("name", check=plain_text), Email("email"))
    assert validate(declared, {"name": "Ada O'Neil & co", "email": "ada@example.com"})["name"] == "Ada O'Neil & co"
    with pytest.raises(Invalid) as caught:
        validate(declared, {"name": "<b>Ada</b>", "email": "<a>@example.com"})
    assert caught.value.errors == {"name": ["cannot contain < or >"], "email": ["is invalid"]}
