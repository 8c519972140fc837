"""Importing this module registers every command on `assay.cli.app`, each behind the one error
route (`assay.cli._commands.register`): what the tests, the docs and ``assay --help`` see."""

from assay.cli._commands import register

register()
