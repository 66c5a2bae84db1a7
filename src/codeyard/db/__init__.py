"""Storage: the engine and sessions (`engine`), the tables (`models`), the schema's history (`migrations`)."""

from . import hooks  # noqa: F401 - registers the session event listeners
