"""Imports every command module so that each registers its commands on `assay.cli.app`."""

from assay.cli import (
    core_cmds,  # noqa: F401
    groups,  # noqa: F401
)
