"""The ``answer`` group: checks of prose answers, a module per concern, imported here in the
order their checks are listed: right against the reference (`correct`), given when it should be
(`abstention`), held to its sources and the question (`grounding`), its cost (`cost`), the gap it
must own (`gap`), the clarification or correction an entry calls for (`behaviour`)."""

from assay.checks.answer import correct, abstention, grounding, cost, gap, behaviour  # isort: skip

__all__ = ["abstention", "behaviour", "correct", "cost", "gap", "grounding"]
