"""The version of assay (a module of its own, so that nothing imports it back from `assay`)."""

__version__ = "0.1.0"
