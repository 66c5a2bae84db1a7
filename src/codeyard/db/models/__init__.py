"""All tables. Import models from here; each area keeps its own module."""

from .base import Base, utcnow
from .settings import ApplicationSetting
from .users import Namespace, Token, Tombstone, User

__all__ = ["ApplicationSetting", "Base", "Namespace", "Token", "Tombstone", "User", "utcnow"]
