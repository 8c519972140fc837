"""Alembic environment: runs on the connection handed over by `assay.workbench.db.migrate`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from assay.workbench.models import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:  # pragma: no cover - only when run through the alembic command line
    url = config.get_main_option("sqlalchemy.url")
    assert url, "set sqlalchemy.url"
    with create_engine(url).connect() as conn:
        context.configure(connection=conn, target_metadata=Base.metadata)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=Base.metadata)
    with context.begin_transaction():
        context.run_migrations()
