"""Alembic environment: migrates the database named by the config's `url` attribute."""

from alembic import context

from codeyard.db.engine import WRITE_OPTION, make_engine
from codeyard.db.models import Base

config = context.config


def run_migrations_offline() -> None:
    context.configure(url=config.attributes["url"], target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(config.attributes["url"])
    try:
        with engine.connect() as connection:
            connection = connection.execution_options(**{WRITE_OPTION: True})
            context.configure(
                connection=connection,
                target_metadata=Base.metadata,
                render_as_batch=connection.dialect.name == "sqlite",
                compare_type=True,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
