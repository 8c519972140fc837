"""The ``answer`` group: checks of prose answers, a module per concern, imported here in the
order their checks are listed (`correct`, `abstention`, `grounding`, `cost`, `gap`, `behaviour`)."""

from assay.checks.answer import correct, abstention, grounding, cost, gap, behaviour  # isort: skip

__all__ = ["abstention", "behaviour", "correct", "cost", "gap", "grounding"]
