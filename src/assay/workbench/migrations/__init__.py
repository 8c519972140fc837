"""Alembic migrations of the workbench store, shipped inside the package."""
