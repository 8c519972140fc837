"""Imports every command module so that each registers its commands on `assay.cli.app`."""

from assay.cli import groups  # noqa: F401
