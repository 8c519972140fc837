"""The ``conversation`` group: a turn judged with the turns before it (`Entry.conversation`),
whose answers are read from the run (`CheckContext.turn_answer`; without the run the checks
abstain). A conversation whose ``criteria`` name checks is rated only by those; one without by
each where it applies. Its modules are imported here in the order their checks are listed."""

from assay.checks.conversation import context, contradiction, clarification  # isort: skip

__all__ = ["clarification", "context", "contradiction"]
