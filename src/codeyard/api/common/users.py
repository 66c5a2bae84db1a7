"""User parameters both API versions declare alike."""

from __future__ import annotations

from ...http.params import Bool, Email, Int, Str, plain_text
from ...services import users

NAME = Str("name", max_length=255, check=plain_text, doc="Display name")
USERNAME = Str("username", max_length=255, strip=True, check=users.namespace_path_errors)
EMAIL = Email("email")
PASSWORD = Str("password", min_length=8, max_length=128, verbatim=True)
PROFILE_PARAMS = (
    Str("bio", max_length=255, nullable=True, multiline=True),
    Str("website_url", max_length=255, nullable=True),
    Str("profnet", max_length=255, aliases=("linkedin",), nullable=True, doc="Professional network handle"),
    Str("messenger", max_length=255, aliases=("skype",), nullable=True, doc="Messenger handle"),
    Str("microblog", max_length=255, aliases=("twitter",), nullable=True, doc="Microblog handle"),
    Int("projects_limit", minimum=0),
    Bool("can_create_group"),
    Bool("admin", doc="Make the user an administrator"),
    Bool("external", doc="External users see only projects they are members of"),
)
CREATE_PARAMS = (EMAIL.as_required(), PASSWORD.as_required(), NAME.as_required(), USERNAME.as_required(), *PROFILE_PARAMS)


def fields_from(args: dict) -> dict:
    fields = {key: value for key, value in args.items() if key not in ("password", "admin")}
    for key in ("profnet", "messenger", "microblog", "website_url"):
        if key in fields and fields[key] is None:
            fields[key] = ""
    if "admin" in args:
        fields["is_admin"] = args["admin"]
    return fields
