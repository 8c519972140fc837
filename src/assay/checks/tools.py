"""The ``tools`` group: an agent's tool calls against the expected ones (selection, arguments,
order, forbidden calls, the whole trajectory)."""

from assay.judge import tools

__all__ = ["tools"]
