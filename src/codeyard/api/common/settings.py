"""Settings parameters both API versions declare alike."""

from __future__ import annotations

from ...http.params import StrList

DOMAIN = r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+"


def domain_list(name: str, **options) -> StrList:
    return StrList(name, item_pattern=DOMAIN, item_message="'{value}' is not a valid domain", **options)
